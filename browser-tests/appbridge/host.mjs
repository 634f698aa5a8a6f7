// The AppBridge host page (lib/appbridge.mjs serves it): a chat host reduced to what MCP Apps
// asks of one, built on the real host-side `AppBridge` of @modelcontextprotocol/ext-apps (the
// version named by ?ext=, bundled by lib/appbridge.mjs). It speaks MCP to the giftgenius server
// over /mcp (relayed), reads the tool's UI resource (`_meta.ui.resourceUri`, resources/read),
// embeds that HTML in a sandboxed frame, connects an AppBridge to it with PostMessageTransport,
// and answers the view through the bridge's handlers: its tool calls go to the server, its links,
// logs, model context and size are recorded on `window.gg` for the tests.
const ext = new URLSearchParams(location.search).get("ext");
const { AppBridge, PostMessageTransport } = await import(`/${ext}.js`);
const status = (t) => { document.getElementById("status").textContent = t; };

// ------------------------------------------------------------------ MCP over Streamable HTTP
let session = null;
let protocol = null;
let nextId = 1;
async function send(message) {
  const headers = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };
  if (session) headers["Mcp-Session-Id"] = session;
  if (protocol) headers["Mcp-Protocol-Version"] = protocol;
  const res = await fetch("/mcp", { method: "POST", headers, body: JSON.stringify(message) });
  session = res.headers.get("mcp-session-id") || session;
  if (!("id" in message)) return null;
  if (!res.ok) throw new Error(`HTTP ${res.status} for ${message.method}`);
  if (!(res.headers.get("content-type") || "").includes("text/event-stream")) return res.json();
  // An SSE answer: the message with our id.
  const text = await res.text();
  for (const block of text.replace(/\r\n/g, "\n").split("\n\n")) {
    const data = block.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).join("\n");
    if (!data) continue;
    const msg = JSON.parse(data);
    if (msg.id === message.id) return msg;
  }
  throw new Error(`no answer to ${message.method}`);
}
async function request(method, params) {
  const reply = await send({ jsonrpc: "2.0", id: nextId++, method, params });
  if (reply.error) throw Object.assign(new Error(reply.error.message), { rpc: reply.error });
  return reply.result;
}
const init = await request("initialize", {
  protocolVersion: "2025-06-18",
  capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } },
  clientInfo: { name: "giftgenius-appbridge-host", version: "1.0.0" },
});
protocol = init.protocolVersion;
await send({ jsonrpc: "2.0", method: "notifications/initialized" });
const tools = (await request("tools/list", {})).tools;

// This page's user: drafts, keys and orders are its own (as a preview tab's).
const subject = `appbridge-${Array.from(crypto.getRandomValues(new Uint8Array(6)), (b) => b.toString(16).padStart(2, "0")).join("")}`;
const gg = {
  ext,
  calls: [], // every tools/call: {from: "model" | "view", name, arguments, result?, error?}
  links: [], // ui/open-link urls
  logs: [], // the view's log notifications (params)
  modelContext: [], // ui/update-model-context params
  sizes: [], // ui/notifications/size-changed params
  initialized: 0, // ui/notifications/initialized received
  appInfo: null, // the view's ui/initialize appInfo, as the bridge read it
  refuseViewCalls: false, // while set, the host answers the view's tools/call with an error
  bridge: null,
};
window.gg = gg;

async function callTool(name, args, from) {
  const record = { from, name, arguments: args };
  gg.calls.push(record);
  try {
    record.result = await request("tools/call", { name, arguments: args, _meta: { "openai/subject": subject } });
    return record.result;
  } catch (e) {
    record.error = String(e.message || e);
    throw e;
  }
}

/**
 * The model calls `tool` with `args`; the host shows the tool's view for that call: the
 * resource read, the frame made, the bridge connected, then the input and the result sent
 * once the view says it is initialized. Resolves with the CallToolResult.
 */
gg.run = async (tool, args) => {
  const result = await callTool(tool, args, "model");
  const uri = tools.find((t) => t.name === tool)?._meta?.ui?.resourceUri;
  if (!uri) throw new Error(`${tool} has no ui.resourceUri`);
  const html = (await request("resources/read", { uri })).contents[0].text;
  const stage = document.getElementById("stage");
  if (gg.bridge) await gg.bridge.close().catch(() => {});
  stage.textContent = "";
  const frame = document.createElement("iframe");
  frame.id = "view";
  frame.title = "GiftGenius view";
  frame.setAttribute("sandbox", "allow-scripts");
  stage.appendChild(frame);
  const bridge = new AppBridge(
    null,
    { name: "giftgenius-appbridge-host", version: "1.0.0" },
    { openLinks: {}, serverTools: {}, logging: {}, updateModelContext: { text: {}, structuredContent: {} } },
    { hostContext: { theme: "light", locale: "en-US", displayMode: "inline", availableDisplayModes: ["inline"] } },
  );
  gg.bridge = bridge;
  bridge.oncalltool = async (params) => {
    if (gg.refuseViewCalls) {
      gg.calls.push({ from: "view", name: params.name, arguments: params.arguments, error: "refused by the host" });
      throw new Error("refused by the host");
    }
    return callTool(params.name, params.arguments, "view");
  };
  bridge.onopenlink = async ({ url }) => { gg.links.push(url); return {}; };
  bridge.onloggingmessage = (params) => { gg.logs.push(params); };
  bridge.onupdatemodelcontext = async (params) => { gg.modelContext.push(params); return {}; };
  bridge.onsizechange = (params) => { gg.sizes.push(params); };
  bridge.onrequestdisplaymode = async () => ({ mode: "inline" });
  bridge.oninitialized = async () => {
    gg.initialized++;
    gg.appInfo = bridge.getAppVersion() || null;
    await bridge.sendToolInput({ arguments: args });
    await bridge.sendToolResult(result);
  };
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  frame.srcdoc = html;
  status(`${tool}: view loaded under ${ext}`);
  return result;
};
/** The host's theme changes: the bridge tells the view (ui/notifications/host-context-changed). */
gg.setTheme = (theme) => gg.bridge.setHostContext({ theme, locale: "en-US", displayMode: "inline", availableDisplayModes: ["inline"] });
gg.ledger = async () => (await (await fetch("/preview/ledger", { cache: "no-store" })).json()).count;
status(`ready (${ext})`);
gg.ready = true;
