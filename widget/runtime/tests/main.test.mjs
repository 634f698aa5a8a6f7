// main.js, the entry, with every module as the packer joins them: the wasm's fate in
// <html data-wasm>, and the wiring of the document's and the host's events to the modules, on a
// fake page (MCP Apps parent frame, or window.openai).
import { test } from "node:test";
import assert from "node:assert/strict";
import { load, MODULES, settle } from "./load.mjs";
import { El, FakeStorage, WIRE } from "./fakes.mjs";

const DATA = { wire: WIRE, initialize: { appInfo: { name: "giftgenius-widget", version: "0" }, protocolVersion: "2026-01-26" },
  text: { en: { unreachable: "unreachable" } }, cancelled: { en: "<p>cancelled</p>" }, toolCancelled: { en: "<p>stopped</p>" } };

/** A page with the packed document's elements; `host`: "mcp-apps", "openai" or none. */
function page({ host = "mcp-apps", openai = {} } = {}) {
  const listeners = {};
  const on = (type, f) => (listeners[type] ||= []).push(f);
  const fire = (type, e) => (listeners[type] || []).forEach((f) => f(e));
  const root = new El("html", {}, { style: { setProperty() {}, removeProperty() {} } });
  const box = new El("div", { id: "giftgenius-fallback" }, { hidden: true });
  const app = new El("div", { id: "giftgenius-root" });
  const data = Object.assign(new El("script"), { textContent: JSON.stringify(DATA) });
  const elements = { "giftgenius-fallback": box, "giftgenius-root": app, "giftgenius-fallback-data": data };
  const document = { documentElement: root, body: new El("body"), head: { appendChild: (e) => e }, activeElement: null,
    getElementById: (id) => elements[id] || null, addEventListener: on, createElement: (t) => new El(t) };
  const sent = [];
  const window = { addEventListener: on, console: { error() {} }, localStorage: new FakeStorage() };
  window.parent = host === "mcp-apps" ? { postMessage: (m) => sent.push(m) } : window;
  if (host === "openai") window.openai = { callTool: async () => ({}), setWidgetState: async () => {}, ...openai };
  const timers = [];
  load(MODULES.filter((f) => f !== "main.js").concat("main.js"), {
    document, window, location: { search: "" }, setTimeout: (f) => (timers.push(f), timers.length), clearTimeout() {},
  });
  const deliver = (m) => fire("message", { source: window.parent, data: { jsonrpc: "2.0", ...m } });
  return { root, box, app, window, document, sent, fire, deliver, timers };
}

test("the wasm's fate is recorded on the root, whether or not a host is there", () => {
  const p = page({ host: "none" });
  assert.equal(p.root.dataset.wasm, "loading");
  p.window.giftgeniusWasmFailed("CompileError");
  assert.equal(p.root.dataset.wasm, "failed");
  p.window.giftgeniusHandover(() => {});
  assert.equal(p.root.dataset.wasm, "ready");
  const q = page({ host: "none" });
  q.window.giftgeniusHandover(() => {});
  q.window.giftgeniusWasmFailed("late");
  assert.equal(q.root.dataset.wasm, "ready", "a wasm that started does not fail afterwards");
});

test("a CSP that refuses the wasm or the module script is a failure; a report-only one is not", () => {
  const p = page({ host: "none" });
  p.fire("securitypolicyviolation", { blockedURI: "wasm-eval", disposition: "report" });
  assert.equal(p.root.dataset.wasm, "loading");
  p.fire("securitypolicyviolation", { blockedURI: "https://elsewhere.example/x.js", disposition: "enforce" });
  assert.equal(p.root.dataset.wasm, "loading");
  p.fire("securitypolicyviolation", { blockedURI: "wasm-eval", disposition: "enforce", effectiveDirective: "script-src" });
  assert.equal(p.root.dataset.wasm, "failed");
});

test("MCP Apps: the handshake with the data block's params, then the host's result painted", async () => {
  const p = page();
  assert.deepEqual([p.sent[0].method, p.sent[0].params], ["ui/initialize", DATA.initialize]);
  p.deliver({ id: p.sent[0].id, result: { hostCapabilities: {}, hostContext: { theme: "dark" } } });
  await settle();
  assert.equal(p.sent.at(-1).method, "ui/notifications/initialized");
  p.deliver({ method: "ui/notifications/tool-input", params: { arguments: { relationship_type: "friend" } } });
  p.deliver({ method: "ui/notifications/tool-result", params: { structuredContent: { ok: true }, _meta: { [WIRE.html]: "<p>cards</p>" } } });
  assert.equal(p.box.innerHTML, "<p>cards</p>");
  assert.equal(p.box.hidden, false);
  assert.equal(p.app.hidden, true);
});

test("MCP Apps: a host that cancels the call before any result gets the stopped screen", () => {
  const p = page();
  p.deliver({ method: "ui/notifications/tool-cancelled", params: { reason: "stopped" } });
  assert.equal(p.box.innerHTML, "<p>stopped</p>");
});

test("a press on a control of the runtime's screen runs its decision through the host", async () => {
  const p = page();
  p.deliver({ id: p.sent[0].id, result: { hostCapabilities: {} } });
  await settle();
  const b = new El("button", { "data-call": JSON.stringify({ tool: "list_orders", args: {} }) });
  b.closest = () => b;
  p.box.q["[data-call]"] = [b];
  p.fire("click", { target: b, preventDefault() {} });
  await settle();
  const call = p.sent.at(-1);
  assert.deepEqual([call.method, call.params], ["tools/call", { name: "list_orders", arguments: {} }]);
  const outside = new El("button", { "data-call": "{\"back\":true}" });
  outside.closest = () => outside;
  p.fire("click", { target: outside, preventDefault() {} });
  await settle();
  assert.equal(p.sent.at(-1), call, "a control outside the widget's views is not the runtime's");
});

test("window.openai: its globals are painted, and painted again when they change", () => {
  const p = page({ host: "openai", openai: { toolOutput: { ok: true }, toolResponseMetadata: { [WIRE.html]: "<p>one</p>" } } });
  assert.equal(p.box.innerHTML, "<p>one</p>");
  assert.deepEqual(p.sent, []);
  p.window.openai.toolResponseMetadata = { [WIRE.html]: "<p>two</p>" };
  p.fire("openai:set_globals", {});
  assert.equal(p.box.innerHTML, "<p>two</p>");
});
