// Keep and restore: what the view keeps so a reload (the host re-rendering the message, the
// frame loaded again) comes back to the same screen and the same purchase. Two places: the
// frame's storage (localStorage, else sessionStorage; under the keys of the data block's `wire`)
// and, with window.openai, widget state, which the host keeps (an opaque frame has no storage)
// and the model reads. The idempotency key of the draft being bought is kept in both, so a
// retry or a second click reuses it. Never a token: those stay in memory, in the screen's meta.
function keepRestore(env, st, rt) {
  const { w, box, oa, wire } = env;
  let ws = null;
  const store = f => ["localStorage", "sessionStorage"].forEach(n => {
    try { if (w[n]) f(w[n]); } catch {}
  });
  const read = (s, k) => { try { return JSON.parse(s.getItem(k)); } catch { return null; } };
  const state = () => ws || oa?.widgetState || {};
  // Widget state with `k` set to `v` (null: removed; no `k`: all cleared), written to the host,
  // and its checkout entry mirrored into storage.
  function save(k, v) {
    const next = k ? { ...state() } : {}, was = state()[wire.checkout];
    if (k && v == null) delete next[k]; else if (k) next[k] = v;
    const now = next[wire.checkout];
    store(s => {
      if (was && (!now || now.draft_id !== was.draft_id)) s.removeItem(wire.store + was.draft_id);
      if (now) s.setItem(wire.store + now.draft_id, now.idempotency_key);
    });
    ws = next;
    return rt.ask("setWidgetState", [next], "ui/update-model-context", { structuredContent: next })
      .catch(() => {});
  }
  // The shown screen, kept for a reload: in storage under this view's id (the newest
  // `wire.maxViews` views), and on window.openai in widget state too. The model reads widget
  // state, so there every element the views mark data-private is emptied (the delivery form); a
  // card restored from it gets them back when its Confirm reopens the draft by id (the
  // decision's `lost` call).
  function keep() {
    const k = wire.viewStore + "html/" + st.view, html = box.innerHTML, own = st.screen.meta === st.host.meta,
      entry = { html, args: st.screen.args || null, home: st.home, host: own, last: st.last?.plain ? st.last : null };
    if (!st.view) return;
    store(s => {
      const index = read(s, wire.viewIndex), keys = (Array.isArray(index) ? index : [])
        .filter(i => typeof i === "string" && i !== k && i.startsWith(wire.viewStore)).concat(k);
      while (keys.length > wire.maxViews) s.removeItem(keys.shift());
      s.setItem(k, JSON.stringify(entry));
      s.setItem(wire.viewIndex, JSON.stringify(keys));
    });
    if (!oa) return;
    const t = rt.inert(html);
    rt.each("[data-private]", e => { e.removeAttribute("value"); e.textContent = ""; }, t.content);
    save(wire.screen, { view: st.view, html: t.innerHTML, host: own });
  }
  // The first result names the view; a screen kept under that name before a reload wins (it is
  // shown, and true returned).
  function restore(res) {
    const m = res._meta || {}, id = m[wire.viewUuid], ow = oa && state()[wire.screen];
    let e = null;
    st.first = false;
    if (typeof id !== "string" || !/^[A-Za-z0-9-]{8,64}$/.test(id)) return false;
    st.view = id;
    store(s => { e = e || read(s, wire.viewStore + "html/" + id); });
    if (!e && ow?.view === id) e = ow;
    if (typeof e?.html !== "string") return false;
    rt.own();
    st.last = e.last || null;
    st.home = e.home || (/^[^>]*data-home/.test(m[wire.html]) ? { html: m[wire.html], args: st.input } : null);
    rt.show(e.html, e.host && m, e.args);
    return true;
  }
  // The idempotency key kept for draft `id` (widget state, else storage), or null.
  function kept(id) {
    const c = state()[wire.checkout];
    let k = c?.draft_id === id ? c.idempotency_key : null;
    store(s => { k = k || s.getItem(wire.store + id); });
    return k;
  }
  // The basket the results' Add adds to: the last draft shown (widget state, else storage, where
  // it outlives this view: the next results' Add adds to it too), or null. Cancel forgets it;
  // the server starts a new one instead of adding to a basket already ordered.
  function basket() {
    let b = state()[wire.basket];
    store(s => { b = b || s.getItem(wire.store + wire.basket); });
    return typeof b === "string" && b ? b : null;
  }
  // Kept only when it changes: a screen restored after a reload says nothing to the host.
  function keepBasket(id) {
    if (basket() === id) return;
    store(s => (id ? s.setItem(wire.store + wire.basket, id) : s.removeItem(wire.store + wire.basket)));
    return save(wire.basket, id);
  }
  // Delete my data: every screen and key this view kept goes too.
  function forget() {
    const mine = k => k.startsWith(wire.viewStore) || k.startsWith(wire.store) || k === wire.viewIndex;
    store(s => Object.keys(s).filter(mine).forEach(k => s.removeItem(k)));
    st.screen = { meta: {} };
    st.last = null;
    save();
  }
  return { save, keep, restore, kept, basket, keepBasket, forget };
}
