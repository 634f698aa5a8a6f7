// The screen: what this runtime shows in #giftgenius-fallback (the server's markup of a result,
// never markup of its own) and how: painting it for the host's context (theme, display mode,
// busy controls, the controls a host method allows), an answer's markup shown and kept, inline
// notes and a refused form's field errors in the person's language, focus after a press, the
// host's styling applied to the document, and taking the screen over from the wasm's view (the
// same components' other markup) with what was typed.
function screenOf(env, st, rt) {
  const { d, root, box, app, oa, data, wire } = env;
  const each = (sel, f, at) => (at || box).querySelectorAll(sel).forEach(f);
  function paint() {
    const r = box.firstElementChild, mode = st.hc.displayMode;
    if (r && st.theme) r.setAttribute("data-theme", st.theme);
    if (r && /^(fullscreen|pip)$/.test(mode)) r.setAttribute("data-display-mode", mode);
    else if (r) r.removeAttribute("data-display-mode");
    box.setAttribute("aria-busy", st.busy);
    // The display toggle for the mode the host reports, where it offers full screen.
    const full = modes().includes("fullscreen");
    each("[data-when]", t => {
      t.hidden = !(full && t.getAttribute("data-when") === (mode === "fullscreen" ? mode : "inline"));
    });
    // A control that needs a host method (the payment sheet) shows where the host has it.
    each("[data-needs]", b => {
      if (typeof oa?.[b.getAttribute("data-needs")] === "function") b.hidden = false;
    });
    // Keep shopping, where there are results to go back to.
    each("[data-home-only]", b => { b.hidden = !st.home; });
    each("button[data-call]", b => {
      if (st.busy && !b.disabled) { b.disabled = true; b.dataset.ggBusy = 1; }
      if (!st.busy && b.dataset.ggBusy) { b.disabled = false; delete b.dataset.ggBusy; }
    });
  }
  // Shows markup; `meta` (tokens) stays in memory for its controls, `args` (the arguments of
  // the call it answers, when they hold no token) are kept with it. A `failure` is not kept:
  // a reload comes back to the screen before it.
  function show(html, meta, args, failure) {
    st.screen = { meta: meta || {}, args };
    box.innerHTML = html;
    box.hidden = false;
    if (app) app.hidden = true;
    if (st.failed) root.dataset.wasm = "fallback";
    if (box.querySelector("[data-home]")) st.home = { html, args };
    if (!failure) basket();
    paint();
    if (!failure && (st.failed || st.acted)) rt.keep();
  }
  // A draft on screen is the basket the results' Add adds to.
  function basket() {
    const id = box.querySelector("[data-basket]")?.getAttribute("data-basket");
    if (id) rt.keepBasket(id);
  }
  // A result's markup shown (false: it has none).
  function result(res, args) {
    const m = res?._meta || {}, html = m[wire.html], has = typeof html === "string";
    if (has) show(html, m, args, res.structuredContent?.ok === false);
    return has;
  }
  // Markup parsed inert (a template: nothing in it loads or runs).
  const inert = html => Object.assign(d.createElement("template"), { innerHTML: html || "" });
  const markup = res => inert(res?._meta?.[wire.html]).content;
  const controls = at => [...at.querySelectorAll("button, a[href]")],
    named = (at, b) => at.querySelector('[name="' + b.name.replace(/[^A-Za-z0-9_.]/g, "") + '"]'),
    like = (x, e) => {
      const its = [...x.attributes].filter(a => /^data-(?!call$)/.test(a.name));
      return its.length > 0 && its.every(a => e.getAttribute(a.name) === a.value);
    };
  // `b`'s twin in `to` (the same components' other markup): the input of its name, else the
  // control whose data-* attributes (but its decision) `b` has too, of the same rank among such.
  function twin(b, from, to) {
    if (b.name) return named(to, b);
    const t = controls(to).filter(x => like(x, b));
    return t[controls(from).filter(y => t[0] && like(t[0], y)).indexOf(b)];
  }
  // A press (or typing) on the wasm's view: the screen becomes this runtime's. The wasm shows
  // the host's result, whose server markup (the same components, each call's decision on its
  // control) is shown instead, with what was typed; a screen of the wasm's own (a cancelled
  // call) is cloned. `b`'s twin there takes the focus (and the caret) and is returned.
  function take(b) {
    if (st.host.html) {
      box.innerHTML = st.host.html;
      each("input[name], textarea[name]", i => {
        const o = named(app, i);
        if (o) { i.value = o.value; i.checked = o.checked; }
      });
    } else box.replaceChildren(app.firstElementChild.cloneNode(true));
    const t = twin(b, app, box), caret = [b.selectionStart, b.selectionEnd];
    rt.own();
    st.screen = { meta: st.host.meta || {}, args: null };
    if (box.querySelector("[data-home]")) st.home = { html: box.innerHTML, args: null };
    basket();
    box.hidden = false;
    paint();
    t?.focus();
    try { if (b.name) t.setSelectionRange(...caret); } catch {}
    return t;
  }
  // The pressed control is gone with its screen: focus goes on from the new screen's heading.
  function refocus() {
    const a = d.activeElement, t = box.querySelector("#gg-title");
    if (t && (!a || a === d.body || !a.isConnected)) {
      t.tabIndex = -1;
      t.focus();
    }
  }
  const para = (cls, text) => Object.assign(d.createElement("p"), { className: cls, textContent: text });
  // An alert on the screen (after `at`, else at its end): by default "could not be reached".
  function note(text, at) {
    const p = para("gg-inline-error", text || say("unreachable"));
    p.setAttribute("role", "alert");
    if (at) at.after(p); else (box.firstElementChild || box).appendChild(p);
  }
  // Its markup's (else the host's) language (en, es, pt): `o` in it, `say(k)` its sentence k.
  function said(o) {
    const r = box.querySelector(".gg-root[lang]"),
      l = String((r && r.getAttribute("lang")) || (oa || st.hc).locale || "").slice(0, 2).toLowerCase();
    return (o || {})[data.text?.[l] ? l : "en"] || "";
  }
  const say = k => said(data.text)[k] || "";
  // A checkbox's value is "on" without a value attribute (defaultValue ""): compare checked.
  const edited = () => [...box.querySelectorAll("input, textarea")]
    .some(i => (i.type === "checkbox" ? i.checked !== i.defaultChecked : i.value !== i.defaultValue));
  // A refused form keeps the card: each field error of the answer (worded in the person's
  // language by the server's markup) next to the input it names, what was typed kept, and
  // gone the controls whose decision would send the edited form (Confirm) until the details
  // are updated: read from each decision, not matched in its JSON text.
  function fieldErrors(answer) {
    const fs = box.querySelector("fieldset");
    each(".gg-field-error, .gg-inline-error", x => x.remove());
    each("[data-call]", b => { try { if (JSON.parse(b.getAttribute("data-call"))?.edited) b.remove(); } catch {} });
    each("[data-field]", f => {
      const name = f.getAttribute("data-field"), p = para("gg-field-error", f.textContent),
        i = box.querySelector('[name="' + name.replace(/[^A-Za-z0-9_.]/g, "") + '"]');
      if (!i) return fs.appendChild(p).prepend(name + ": ");
      p.id = i.id + "-error";
      i.setAttribute("aria-invalid", "true");
      i.setAttribute("aria-describedby", p.id);
      i.parentNode.setAttribute("data-invalid", "true");
      i.parentNode.appendChild(p);
    }, answer);
    note(say("needsFix"), fs);
    paint();
  }
  // The display modes the host offers: MCP Apps lists them; window.openai has full screen
  // wherever it has requestDisplayMode.
  function modes() {
    const m = oa ? typeof oa.requestDisplayMode === "function" && ["inline", "fullscreen"] : st.hc.availableDisplayModes;
    return Array.isArray(m) ? m : [];
  }
  // The host's context `c`: theme and display mode on the root, and its styling on the
  // document (variables, safe-area insets, font CSS as text).
  function context(c) {
    const rs = root.style;
    let f = d.getElementById("gg-host-fonts");
    if (!c || typeof c !== "object") return;
    for (const k in c) st.hc[k] = c[k];
    if (c.theme) st.theme = c.theme === "dark" ? "dark" : "light";
    const s = st.hc.styles || {}, v = s.variables || {}, css = s.css?.fonts,
      fonts = typeof css === "string" && css.length <= 65536 ? css.trim() : "";
    st.vars.forEach(n => rs.removeProperty(n));
    st.vars = Object.keys(v).filter(n => /^--[\w-]{1,62}$/.test(n) && typeof v[n] === "string"
      && /\S/.test(v[n]) && v[n].length <= 512 && !/[\u0000-\u001f\u007f]/.test(v[n]));
    st.vars.forEach(n => rs.setProperty(n, v[n].trim()));
    for (const side of ["top", "right", "bottom", "left"]) {
      const px = +st.hc.safeAreaInsets?.[side], safe = isFinite(px) ? Math.min(Math.max(px, 0), 400) : 0;
      rs.setProperty("--gg-safe-" + side, Math.round(safe) + "px");
    }
    if (fonts && !f) (d.head || root).appendChild((f = d.createElement("style"))).id = "gg-host-fonts";
    if (f) f.textContent = fonts;
    paint();
    rt.feed();
  }
  return { each, paint, show, result, inert, markup, twin, take, refocus, note, said, edited, fieldErrors, modes, context };
}
