// host.js, the host bridge: MCP Apps JSON-RPC over postMessage as ext-apps 1.x and 2.x hosts
// speak it, and window.openai's methods, with fake parent frames and windows.
import { test } from "node:test";
import assert from "node:assert/strict";
import { load, settle } from "./load.mjs";

const { hostBridge } = load(["host.js"]);
const INITIALIZE = { appInfo: { name: "giftgenius-widget", version: "0.0.0" }, protocolVersion: "2026-01-26" };

/** A view inside a fake MCP Apps parent: what it posted, and a way to deliver a message. */
function mcpApps({ init, limit = 1000 } = {}) {
  const sent = [];
  const listeners = [];
  const contexts = [];
  const parent = { postMessage: (m, origin) => sent.push({ ...m, origin }) };
  const w = { addEventListener: (type, f) => type === "message" && listeners.push(f) };
  const st = { init };
  const bridge = hostBridge({ w, root: {}, parent, limit, data: { initialize: INITIALIZE } }, st, { context: (c) => contexts.push(c) });
  const deliver = (data, source = parent) => listeners.forEach((f) => f({ source, data }));
  return { bridge, sent, deliver, st, contexts, parent, w };
}

test("a request goes to the parent as JSON-RPC and settles with its answer, not another frame's", async () => {
  const h = mcpApps();
  const notices = [];
  h.bridge.listen((method) => notices.push(method), () => {});
  const asked = h.bridge.ask("callTool", ["get_order", {}], "tools/call", { name: "get_order", arguments: {} });
  assert.equal(h.sent.length, 1);
  const { id, method, params, jsonrpc, origin } = h.sent[0];
  assert.deepEqual({ method, params, jsonrpc }, { method: "tools/call", params: { name: "get_order", arguments: {} }, jsonrpc: "2.0" });
  assert.equal(origin, "*");
  h.deliver({ jsonrpc: "2.0", id, result: { from: "elsewhere" } }, {});
  h.deliver({ id, result: { not: "json-rpc" } });
  h.deliver({ jsonrpc: "2.0", id, result: { structuredContent: { ok: true } } });
  assert.deepEqual(await asked, { structuredContent: { ok: true } });
  assert.deepEqual(notices, [], "an answer is no notification");
});

test("an error answer rejects with the host's error, and so does a host that never answers", async () => {
  const h = mcpApps({ limit: 30 });
  h.bridge.listen(() => {}, () => {});
  const refused = h.bridge.ask(0, 0, "ui/open-link", { url: "https://a.example/" });
  h.deliver({ jsonrpc: "2.0", id: h.sent[0].id, error: { code: -32000, message: "no" } });
  await assert.rejects(refused, (e) => e.code === -32000);
  const late = h.bridge.ask(0, 0, "tools/call", {});
  await assert.rejects(late, /did not answer in time/);
  // An answer after the deadline settles nothing (and throws nothing).
  h.deliver({ jsonrpc: "2.0", id: h.sent[1].id, result: {} });
});

test("with window.openai a request calls its method with the arguments and posts nothing", async () => {
  const seen = [];
  const oa = { callTool: async (name, args) => (seen.push([name, args]), { structuredContent: { ok: true } }) };
  const bridge = hostBridge({ w: {}, oa, limit: 1000, data: {} }, {}, {});
  assert.deepEqual(await bridge.ask("callTool", ["list_orders", { a: 1 }], "tools/call", {}), { structuredContent: { ok: true } });
  assert.deepEqual(seen, [["list_orders", { a: 1 }]]);
  await assert.rejects(bridge.ask("requestDisplayMode", [{ mode: "fullscreen" }]), TypeError, "a method the host lacks rejects");
});

test("the host's requests are answered: view tools none under 2.x's and 1.x's names, never -32601 for them", () => {
  const h = mcpApps();
  const after = [];
  h.bridge.listen(() => assert.fail("a request is no notification"), () => after.push(1));
  const ask = (method, params) => {
    h.deliver({ jsonrpc: "2.0", id: 7, method, params });
    return h.sent.at(-1);
  };
  assert.deepEqual(ask("ping"), { id: 7, result: {}, jsonrpc: "2.0", origin: "*" });
  assert.deepEqual(ask("ui/resource-teardown", {}).result, {});
  for (const m of ["ui/list-view-tools", "tools/list"]) assert.deepEqual(ask(m, {}).result, { tools: [] }, m);
  for (const m of ["ui/call-view-tool", "tools/call"]) {
    const r = ask(m, { name: "nope", arguments: {} });
    assert.equal(r.error, undefined, m);
    assert.equal(r.result.isError, true);
    assert.equal(r.result.content[0].text, "This view has no tool named nope.");
  }
  assert.deepEqual(ask("ui/unknown", {}).error, { code: -32601, message: "method not found" });
  assert.equal(after.length, 7, "after() follows every message");
});

test("notifications from the parent reach the listener with their params; other frames' do not", () => {
  const h = mcpApps();
  const got = [];
  let after = 0;
  h.bridge.listen((method, params) => got.push([method, params]), () => after++);
  h.deliver({ jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: { a: 1 } } });
  h.deliver({ jsonrpc: "2.0", method: "ui/notifications/tool-result" });
  h.deliver({ jsonrpc: "2.0", method: "ui/notifications/tool-input" }, { postMessage() {} });
  h.deliver({ method: "ui/notifications/tool-input" });
  assert.deepEqual(got, [["ui/notifications/tool-input", { arguments: { a: 1 } }], ["ui/notifications/tool-result", {}]]);
  assert.equal(after, 2);
});

test("the host's capabilities: from the ui/initialize reply (1.x), from extensions (2.x), or both", () => {
  const ui = "io.modelcontextprotocol/ui";
  assert.deepEqual(mcpApps({ init: { hostCapabilities: { openLinks: {} } } }).bridge.caps(), { openLinks: {} });
  assert.deepEqual(mcpApps({ init: { capabilities: { extensions: { [ui]: { logging: {} } } } } }).bridge.caps(), { logging: {} });
  assert.deepEqual(mcpApps({ init: { hostCapabilities: { openLinks: {} }, capabilities: { extensions: { [ui]: { logging: {} } } } } }).bridge.caps(),
    { logging: {}, openLinks: {} });
  assert.deepEqual(mcpApps({ init: null }).bridge.caps(), {});
});

test("a log line: notifications/message to a 1.x host, ui/log to a 2.x one, nothing without logging", () => {
  const ui = "io.modelcontextprotocol/ui";
  const line = (init) => {
    const h = mcpApps({ init });
    h.bridge.log("error", { event: "tool_call_failed" });
    return h.sent;
  };
  const v1 = line({ hostCapabilities: { logging: {} } });
  assert.deepEqual(v1.map((m) => [m.method, m.params]), [["notifications/message", { level: "error", logger: "giftgenius-widget", data: { event: "tool_call_failed" } }]]);
  assert.equal(line({ capabilities: { extensions: { [ui]: { logging: {} } } } })[0].method, "ui/log");
  // A host that moved its capabilities but still sends hostCapabilities is taken for 1.x.
  assert.equal(line({ hostCapabilities: {}, capabilities: { extensions: { [ui]: { logging: {} } } } })[0].method, "notifications/message");
  assert.deepEqual(line({ hostCapabilities: { openLinks: {} } }), []);
  assert.deepEqual(line(null), []);
  const oa = hostBridge({ w: {}, oa: {}, data: {} }, { init: { hostCapabilities: { logging: {} } } }, {});
  assert.equal(oa.log("error", {}), undefined, "window.openai takes no log lines");
});

test("the handshake: ui/initialize with the widget's params, the host's context applied, then initialized", async () => {
  const h = mcpApps();
  h.bridge.listen(() => {}, () => {});
  const done = h.bridge.initialize();
  assert.deepEqual([h.sent[0].method, h.sent[0].params], ["ui/initialize", INITIALIZE]);
  assert.equal(h.st.init, undefined, "unknown while asked");
  const reply = { protocolVersion: "2026-01-26", hostContext: { theme: "dark" }, hostCapabilities: {} };
  h.deliver({ jsonrpc: "2.0", id: h.sent[0].id, result: reply });
  await done;
  assert.deepEqual(h.st.init, reply);
  assert.deepEqual(h.contexts, [{ theme: "dark" }]);
  assert.deepEqual(h.sent.slice(1).map((m) => m.method), ["ui/notifications/initialized"]);
});

test("the view's height goes to the host when it changes, once per height", async () => {
  const h = mcpApps();
  let observe;
  let height = 300;
  h.w.ResizeObserver = class { constructor(f) { observe = f; } observe() {} };
  const root = { getBoundingClientRect: () => ({ width: 400.2, height }) };
  const bridge = hostBridge({ w: h.w, root, parent: h.parent, limit: 1000, data: { initialize: INITIALIZE } }, {}, { context() {} });
  bridge.listen(() => {}, () => {});
  const done = bridge.initialize();
  h.deliver({ jsonrpc: "2.0", id: h.sent[0].id, result: {} });
  await done;
  observe();
  observe();
  height = 420.5;
  observe();
  const sizes = h.sent.filter((m) => m.method === "ui/notifications/size-changed").map((m) => m.params);
  assert.deepEqual(sizes, [{ width: 401, height: 300 }, { width: 401, height: 421 }]);
});

test("a handshake the host refuses leaves no capabilities and the view goes on", async () => {
  const h = mcpApps();
  h.bridge.listen(() => {}, () => {});
  const done = h.bridge.initialize();
  h.deliver({ jsonrpc: "2.0", id: h.sent[0].id, error: { code: -32601, message: "no" } });
  await done;
  assert.equal(h.st.init, null);
  assert.deepEqual(h.bridge.caps(), {});
  await settle();
  assert.equal(h.sent.length, 1, "no initialized without an answer");
});
