// The runtime's entry: the packed widget's first <script> is this file and the modules beside it
// (host.js, keep.js, placeholders.js, executor.js, screen.js, wasm.js), each one function, inside
// the one closure the packer writes around them (crates/xtask/src/pack.rs), without their
// full-line `//` comments. Plain ES2020, no framework, no module syntax.
//
// It decides nothing: each control of the server's markup carries its decision as `data-call`
// (widget/src/decide.rs, widget/runtime/decision.schema.json, docs/widget-decisions.md). The
// runtime paints the result's server markup first, asks the host (window.openai, or MCP Apps
// JSON-RPC over postMessage), hands what the host says to the wasm to render
// (widget/src/hosted.rs) while nobody has acted, and on a press takes the screen, fills the
// decision's placeholders, makes the call and shows the answer's markup; it keeps the screen for
// a reload. Strings, keys and markup of its own come from #giftgenius-fallback-data.
//
// Here: the hooks the wasm's module script calls, the wasm's fate in <html data-wasm> ("loading",
// "ready" (it started), "failed" or "fallback" (WebAssembly refused; the server's markup is
// shown)), the runtime's state in one object, and the wiring of the modules to the document's
// events and the host's.
const d = document, w = window, root = d.documentElement;
// The runtime's state, read and written by the modules (no other variable outlives a call):
// failed: the wasm did not start or its view threw; input/complete/partial/cancelled: the
// model's call as the host tells it (`complete` is null until known, `input` is it or {},
// `partial` the arguments as they stream, `cancelled` the host's cancellation); screen: the
// shown screen's result `meta` (tokens stay in memory) and the `args` of the call it answers;
// home: the results screen to go back to; host: the host's newest result {html, meta, res};
// last: the call that led here {tool, args, plain}; busy: a call in flight; view: this view's
// id (viewUUID); first: no result yet; acted: the person pressed or typed, the screen is this
// runtime's; init: the ui/initialize reply (undefined while asked, null if none); wv: the wasm's
// render, live: it shows the view, due: on MCP Apps it may; answer: the order id a payment sheet
// answered; theme, vars, hc: the host's context (theme, CSS variables set, all it said).
const st = {
  failed: false, input: {}, complete: null, partial: null, cancelled: null, screen: { meta: {} },
  home: null, host: {}, last: null, busy: false, view: undefined, first: true, acted: false,
  init: undefined, wv: null, live: false, due: false, answer: undefined, theme: undefined, vars: [], hc: {},
};
let face = null;
root.dataset.wasm = "loading";
w.giftgeniusWasmFailed = reason => {
  if (st.failed || root.dataset.wasm === "ready") return;
  st.failed = true;
  root.dataset.wasm = "failed";
  w.console?.error("giftgenius: WebAssembly did not start", reason);
  face?.fail();
};
// The wasm, once started (bridge.rs `start`), hands over its `render(told)`.
w.giftgeniusHandover = render => {
  root.dataset.wasm = "ready";
  face?.handover(render);
};
// A CSP without 'wasm-unsafe-eval' refuses the wasm or the module script; listen here, as the
// module's own try/catch cannot see the second case.
d.addEventListener("securitypolicyviolation", e => {
  const u = e.blockedURI;
  if (e.disposition !== "report" && (u === "wasm-eval" || u === "inline")) {
    w.giftgeniusWasmFailed((e.effectiveDirective || "") + " blocked " + u);
  }
});
face = runtime();
// The modules made over one environment `env` (the document's elements, the host, the data
// block), the state `st` and one namespace `rt` of their functions; null without a host.
function runtime() {
  const box = d.getElementById("giftgenius-fallback"), app = d.getElementById("giftgenius-root"),
    oa = w.openai, parent = w.parent !== w && w.parent,
    m = /[?&]gg-call-timeout-ms=(\d+)/.exec(location.search), limit = m && +m[1] >= 100 ? +m[1] : 20000;
  let data = d.getElementById("giftgenius-fallback-data");
  if (!box || !(oa || parent)) return null;
  try { data = JSON.parse(data.textContent); } catch { data = {}; }
  const env = { d, w, root, box, app, oa, parent, limit, data, wire: data.wire || {} }, rt = {};
  for (const make of [hostBridge, keepRestore, placeholders, screenOf, wasmView, executor]) {
    Object.assign(rt, make(env, st, rt));
  }
  // Typing in the wasm's view makes the screen this runtime's too, so a new screen from the
  // host (or its theme) cannot redraw what was typed away.
  d.addEventListener("input", e => { if (st.live && app.contains(e.target) && e.target.name) rt.take(e.target); });
  // A press: in this runtime's view, on a control with a decision; in the wasm's, on any
  // control (one without a decision is followed through its twin, see screen.js `take`).
  d.addEventListener("click", e => {
    const wasm = st.live && app.contains(e.target);
    let b = e.target.closest?.(wasm ? "button, a[href]" : "[data-call]"), c;
    if (!b || !(wasm || box.contains(b))) return;
    if (wasm && !b.hasAttribute("data-call")) b = rt.take(b);
    const raw = b?.getAttribute("data-call");
    try { c = JSON.parse(raw) || {}; } catch { return; }
    rt.press(c, raw, b, e);
  });
  if (oa) {
    const globals = () => {
      st.complete = oa.toolInput || null;
      st.input = st.complete || {};
      rt.hosted({ structuredContent: oa.toolOutput, _meta: oa.toolResponseMetadata });
      rt.context(oa);
      rt.offer();
    };
    w.addEventListener("openai:set_globals", globals);
    globals();
    return rt;
  }
  // MCP Apps: what the host tells the view, then the wasm fed and offered the view.
  rt.listen((method, p) => {
    const args = p.arguments;
    // Arguments streaming in: the wasm shows them as they come (this runtime shows nothing).
    if (method === "ui/notifications/tool-input-partial") {
      st.due = true;
      st.partial = args && typeof args === "object" ? args : null;
    } else if (method === "ui/notifications/tool-input") st.input = st.complete = args && typeof args === "object" ? args : {};
    else if (method === "ui/notifications/tool-result") rt.hosted(p);
    else if (method === "ui/notifications/tool-cancelled") {
      st.cancelled = { reason: p.reason };
      if (!st.host.html && !st.busy && !st.live) {
        st.first = false;
        rt.show(rt.said(data.toolCancelled));
      }
    } else if (method === "ui/notifications/host-context-changed") rt.context(p);
  }, () => {
    rt.feed();
    // After the next frame, so markup just put in is on screen before the wasm renders it.
    w.requestAnimationFrame?.(() => setTimeout(rt.offer, 0));
    setTimeout(rt.offer, 100);
  });
  rt.initialize().then(() => {
    // A result the host has not sent by then is still running: the wasm's loading view.
    setTimeout(() => { st.due = true; rt.offer(); }, 150);
    rt.offer();
  });
  return rt;
}
