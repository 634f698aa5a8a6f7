// Placeholders: a decided call's arguments made concrete. A decision's `args` are JSON values,
// some of them placeholders (decision.schema.json `PlaceholderJson`): {"$": "meta", key, at?} a
// token from the shown result's _meta (one named by id also from the host's result), {"$":
// "key", draft, or} the idempotency key kept for the draft, else `or` (then kept from now on),
// {"$": "answer"} the order id the payment sheet answered, {"$": "basket"} the basket the view
// keeps (the last draft it showed), left out when it keeps none. With `over` the arguments
// start from the screen's call (else the model's), with `form` the delivery form's fields join
// them.
function placeholders(env, st, rt) {
  const { box } = env;
  // [the call's arguments, placeholders filled; the checkout entry its key needs kept], or null
  // when one cannot be filled (a token lost with a reload).
  function fill(c) {
    const a = c.over ? { ...(st.screen.args || st.input) } : {}, f = c.form && box.querySelector("fieldset");
    let s = null;
    for (const k in c.args) { if (c.args[k] === null) delete a[k]; else a[k] = c.args[k]; }
    if (f) f.querySelectorAll("input[name], textarea[name]").forEach(i => field(a, i));
    for (const k in a) {
      const v = a[k];
      if (!v || typeof v !== "object" || !v.$) continue;
      if (v.$ === "basket") { if (rt.basket()) a[k] = rt.basket(); else delete a[k]; continue; }
      let t = v.$ === "key" ? rt.kept(v.draft) : v.$ === "answer" ? st.answer : [st.screen.meta, v.at && st.host.meta]
        .map(m => (v.at ? m?.[v.key]?.[v.at] : m?.[v.key])).find(x => typeof x === "string" && x);
      if (v.$ === "key" && !t) s = { draft_id: v.draft, idempotency_key: (t = v.or) };
      if (!t) return null;
      a[k] = t;
    }
    return [a, s];
  }
  // A form input into the arguments: its name is a field path (recipient.address.city); left
  // out when empty, unless aria-required (the server then names it as missing).
  function field(a, i) {
    const val = i.type === "checkbox" ? i.checked || undefined : i.value.trim(), path = i.name.split(".");
    if (val === undefined || (val === "" && i.getAttribute("aria-required") !== "true")) return;
    path.slice(0, -1).forEach(p => { a = a[p] = a[p] || {}; });
    a[path.pop()] = val;
  }
  // Whether `v` holds a placeholder anywhere (a call with none can be repeated as it was made).
  const placed = v => !!v && typeof v === "object" && ("$" in v || Object.values(v).some(placed));
  return { fill, placed };
}
