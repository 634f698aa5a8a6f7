// The wasm's view: while nobody has acted, the wasm (widget/src/bridge.rs) renders what the host
// has said (widget/src/hosted.rs `read`: the context, the model's arguments as they stream, its
// result, a cancellation) in #giftgenius-root, and this runtime's screen steps aside; on the
// first press or keystroke the screen becomes this runtime's and the wasm's view goes. Also the
// host's results as they come: only news is shown, and the first one may restore a kept screen.
function wasmView(env, st, rt) {
  const { root, box, app, oa, wire } = env;
  // A result the host announces (the one the view was opened for, or a new one). Only news
  // is shown: the host repeating its result (globals set again) leaves the person's screen.
  function hosted(res) {
    const m = res?._meta, html = m?.[wire.html];
    if (typeof html !== "string" || html === st.host.html || html === st.screen.meta[wire.html]) return;
    st.host = { html, meta: m, res: { structuredContent: res.structuredContent, _meta: m } };
    if ((st.first && rt.restore(res)) || st.busy) return;
    st.first = false;
    st.last = { tool: res.structuredContent?.tool, args: null, plain: true };
    if (!st.live) rt.result(res, null);
  }
  // What the host has said, for the wasm to render (widget/src/hosted.rs `read`).
  const told = () => ({
    context: oa ? { theme: oa.theme, locale: oa.locale, displayMode: oa.displayMode,
      availableDisplayModes: rt.modes() } : st.hc,
    checkout: typeof oa?.requestCheckout === "function",
    input: st.complete, partial: st.partial, cancelled: st.cancelled, result: st.host.res || null,
  });
  // The wasm renders `t` (null: it unmounts). One that throws is given up on: the host's
  // result is shown here instead.
  function draw(t) {
    try { st.wv?.(t); } catch (e) {
      env.w.console?.error("giftgenius: the wasm's view failed", e);
      st.wv = null;
      st.failed = true;
      root.dataset.wasm = "failed";
      if (!st.live) return;
      st.live = false;
      if (app) app.hidden = true;
      if (!st.host.res || !rt.result(st.host.res, null)) box.hidden = false;
    }
  }
  const feed = () => st.live && draw(told());
  // The person's: this runtime keeps the view from now on, and the wasm's goes (unmounted).
  function own() {
    st.acted = true;
    st.live = false;
    draw(null);
    st.wv = null;
    if (app) app.hidden = true;
  }
  // The wasm did not start: a shown screen is the fallback's, and kept.
  function fail() {
    if (!box.hidden) { root.dataset.wasm = "fallback"; rt.keep(); }
  }
  function handover(render) {
    st.wv = render;
    if (st.acted || rt.edited()) own();
    offer();
  }
  // Shows the wasm's view once the host's ui/initialize answer is in, if nobody has acted or
  // typed here: it renders the same screen in this task, which takes the focus of the same
  // control. On MCP Apps it waits until the first result is painted here, arguments stream
  // in, or the result is late.
  function offer() {
    if (!st.wv || st.live || !app) return;
    if (!oa && (st.init === undefined || !(st.due || !box.hidden))) return;
    if (st.acted || st.busy || rt.edited()) return own();
    const a = env.d.activeElement;
    st.live = true;
    feed();
    if (!st.live) return;
    const c = a !== box && box.contains(a) && rt.twin(a, box, app);
    app.hidden = false;
    box.hidden = true;
    box.textContent = "";
    if (c) c.focus();
  }
  return { hosted, told, feed, own, fail, handover, offer };
}
