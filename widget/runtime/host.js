// The host bridge: the one place that speaks to the host. With window.openai, its methods; else
// MCP Apps JSON-RPC over postMessage to the parent frame, as ext-apps 1.x and 2.x hosts speak
// it: requests with a deadline, the host's own requests answered (ping, ui/resource-teardown,
// and the view's tools, which 2.x asks for as ui/list-view-tools / ui/call-view-tool and 1.x as
// tools/list / tools/call: none, never -32601), the ui/initialize handshake, the view's size,
// log lines (2.x's ui/log, or 1.x's notifications/message), and the host's capabilities read
// from the ui/initialize reply (1.x: hostCapabilities) and from
// capabilities.extensions["io.modelcontextprotocol/ui"] (2.x's BREAKING.md), so a host that
// moved them keeps its links and logs.
function hostBridge(env, st, rt) {
  const { w, root, oa, parent, limit, data } = env, wait = {};
  let ids = 1;
  const post = m => parent.postMessage({ ...m, jsonrpc: "2.0" }, "*");
  // One host request: window.openai's `method` with `arg`, else JSON-RPC's `rpc` with `params`;
  // rejected once the host has left it unanswered for `limit` ms.
  const ask = (method, arg, rpc, params) => new Promise((ok, no) => {
    const id = ids++, late = new Error("the host did not answer in time"),
      t = setTimeout(() => { delete wait[id]; no(late); }, limit),
      done = [v => { clearTimeout(t); ok(v); }, e => { clearTimeout(t); no(e); }];
    if (!oa) { wait[id] = done; return post({ id, method: rpc, params }); }
    Promise.resolve().then(() => oa[method](arg[0], arg[1])).then(...done);
  });
  const ext = () => st.init?.capabilities?.extensions?.["io.modelcontextprotocol/ui"];
  const caps = () => ({ ...(ext() || {}), ...(st.init?.hostCapabilities || {}) });
  // A log line `what` at `level` to a host that takes them (MCP Apps, `logging`): ext-apps 2.x
  // names it ui/log; a host that still answers with hostCapabilities (1.x) knows only the old name.
  function log(level, what) {
    if (oa || !caps().logging) return;
    post({ method: ext() && !st.init?.hostCapabilities ? "ui/log" : "notifications/message",
      params: { level, logger: data.initialize.appInfo.name, data: what } });
  }
  // The host's request `m`, answered. The view offers the host no tools of its own: listing
  // them answers none, calling one answers a tool error.
  function answer(m) {
    const p = m.params || {}, listed = m.method === "ui/list-view-tools" || m.method === "tools/list",
      called = m.method === "ui/call-view-tool" || m.method === "tools/call";
    post(m.method === "ping" || m.method === "ui/resource-teardown" ? { id: m.id, result: {} }
      : listed ? { id: m.id, result: { tools: [] } }
      : called ? { id: m.id, result: { isError: true,
        content: [{ type: "text", text: "This view has no tool named " + String(p.name).slice(0, 64) + "." }] } }
      : { id: m.id, error: { code: -32601, message: "method not found" } });
  }
  // The parent's JSON-RPC, and nobody else's: its requests answered, the answers to ours
  // settled, each notification handed to `notice(method, params)`; `after()` after each message.
  function listen(notice, after) {
    w.addEventListener("message", e => {
      const m = e.data, f = m && !m.method && wait[m.id];
      if (e.source !== parent || m?.jsonrpc !== "2.0") return;
      if (m.method && m.id != null) answer(m);
      else if (m.method) notice(m.method, m.params || {});
      else if (f) {
        delete wait[m.id];
        f[m.error ? 1 : 0](m.error || m.result);
      }
      after();
    });
  }
  // The handshake: ui/initialize with the widget's params, its reply kept (`st.init`, null when
  // refused or late), the host's context applied, then initialized and the view's height as it
  // changes. Resolves either way.
  function initialize() {
    return ask(0, 0, "ui/initialize", data.initialize).then(r => {
      let h;
      st.init = r || null;
      rt.context(r?.hostContext);
      post({ method: "ui/notifications/initialized", params: {} });
      if (w.ResizeObserver) (new w.ResizeObserver(() => {
        const b = root.getBoundingClientRect(), size = { width: Math.ceil(b.width),
          height: Math.ceil(b.height) };
        if (size.height !== h) post({ method: "ui/notifications/size-changed", params: size });
        h = size.height;
      })).observe(root);
    }, () => { st.init = null; });
  }
  return { ask, caps, log, listen, initialize };
}
