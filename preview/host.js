// GiftGenius preview host: emulates ChatGPT (window.openai) and an MCP Apps host (postMessage
// JSON-RPC 2.0, SEP-1865) around the packed widget, against the real MCP server at /mcp.
//
// - The widget runs in a sandboxed iframe. For window.openai: sandbox="allow-scripts" only, an
//   opaque origin (no storage, cookies or parent DOM; nothing the widget needs requires more,
//   since its widget state lives in the host). For MCP Apps: the spec's web-host sandbox,
//   "allow-scripts allow-same-origin" on an origin other than the host page's
//   (sandbox.localhost), because MCP Apps gives no widget state back and the view keeps its idempotency key
//   in its own origin's storage. The Sandbox selector forces either mode for both bridges.
// - For the openai bridge the server injects a shim into the served copy that turns
//   window.openai calls into postMessages to this page; the MCP Apps bridge is plain postMessage.
// - Every message is shown in the log, including the view's own log lines (notifications/message).
//   window.ggPreview is the API the browser tests drive.
// - As an MCP Apps host it sends what real hosts send: a hostContext with the spec's style
//   variables and font CSS, safe-area insets, display modes and toolInfo; tool-input-partial
//   while "Stream arguments" is on; tool-cancelled on "Cancel run"; and it answers
//   ui/request-display-mode (full screen = the frame over the whole page).
// - As window.openai it announces a changed widgetState with openai:set_globals when
//   "announce widgetState" is on (?announceWidgetState=1), as a globals API does.
// - An answer goes only to the document that asked: after "Reload view" a late answer to the
//   old document is dropped, as a real host's would be. "Hold answers" (tests only, through
//   window.ggPreview) keeps the answers to one tool's calls until released, while the server
//   has done the work: a commit_order in flight across a reload.
// - "On isError" mimics what documented hosts do when a model-initiated call returns
//   isError: true: keep the view with its error state (Goose), unmount it (ChatGPT), or never
//   mount it (Claude). Every such result's text is shown as what the model would relay.
// - Sign-in (only when the server runs in verified mode, e.g. `cargo xtask preview --auth`):
//   the flow a real host runs. Our protected resource metadata (RFC 9728) names the
//   authorization server; its metadata (RFC 8414, else OpenID discovery) gives the endpoints;
//   authorization code + PKCE S256 with `state` and `resource` (RFC 8707); the redirect URI is
//   /preview/callback (callback.html, this same script), which exchanges the code and keeps the
//   access token in sessionStorage. Every MCP request then carries it; a 401 drops it.
// - Chat (when `cargo xtask preview` runs the chat process): a conversation with a real model,
//   whose loop runs in that process (keys stay there); the page reads its turns from
//   /preview/chat/state and renders each tool result that has a view in the widget, inline in the
//   conversation, through the same bridges. The widget's Confirm commits through this page's
//   bridge as always; the page then reports the order to the chat process, which reads it back.
"use strict";

(function () {
  const OPENAI_TAG = "giftgenius-preview/openai";
  const LOG_LIMIT = 300;
  const $ = (id) => document.getElementById(id);

  // ---------------------------------------------------------------- sign-in (verified mode)
  const OAUTH = {
    clientId: "giftgenius-preview",
    scope: "orders:read orders:write",
    tokenKey: "giftgenius-preview/access-token",
    pendingKey: "giftgenius-preview/pending-sign-in",
    prmPath: "/.well-known/oauth-protected-resource/mcp",
  };
  const redirectUri = () => `${location.origin}/preview/callback`;

  function b64url(bytes) {
    let s = "";
    for (const b of bytes) s += String.fromCharCode(b);
    return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }
  function randomB64url(n) {
    const b = new Uint8Array(n);
    crypto.getRandomValues(b);
    return b64url(b);
  }
  function storage(op, key, value) {
    try {
      if (op === "get") return sessionStorage.getItem(key);
      if (op === "set") sessionStorage.setItem(key, value);
      else sessionStorage.removeItem(key);
    } catch (_) { /* storage blocked: sign-in cannot survive the redirect */ }
    return null;
  }
  // The token's `sub`, for display only: the server verifies the token, the page never does.
  function tokenSubject(token) {
    try {
      const part = token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
      const bytes = Uint8Array.from(atob(part + "=".repeat((4 - (part.length % 4)) % 4)), (c) => c.charCodeAt(0));
      return JSON.parse(new TextDecoder().decode(bytes)).sub || "(no sub)";
    } catch (_) {
      return "(unreadable token)";
    }
  }
  async function getJson(url) {
    const res = await fetch(url, { cache: "no-store", headers: { Accept: "application/json" } });
    if (!res.ok) {
      const err = new Error(`${url}: HTTP ${res.status}`);
      err.status = res.status;
      throw err;
    }
    return res.json();
  }
  // Our RFC 9728 document: 200 → verified mode, 404 → local mode (null).
  async function protectedResourceMetadata() {
    try {
      return await getJson(OAUTH.prmPath);
    } catch (e) {
      if (e.status === 404) return null;
      throw e;
    }
  }
  // RFC 8414 first (well-known segment before the issuer's path), then OpenID discovery. The
  // document must name exactly the issuer we asked (RFC 8414 §3.3).
  async function authorizationServerMetadata(issuer) {
    const u = new URL(issuer);
    const path = u.pathname.replace(/\/$/, "");
    const urls = [
      `${u.origin}/.well-known/oauth-authorization-server${path}`,
      `${issuer.replace(/\/$/, "")}/.well-known/openid-configuration`,
    ];
    for (const url of urls) {
      let meta;
      try {
        meta = await getJson(url);
      } catch (_) {
        continue; // 404, or no CORS on the error answer: try the next one
      }
      if (meta.issuer !== issuer) throw new Error(`${url} names the issuer ${meta.issuer}, not ${issuer}`);
      return meta;
    }
    throw new Error(`no authorization server metadata for ${issuer}`);
  }

  // Step 1 (host page): to the authorization server, with what the callback needs kept here.
  async function startSignIn() {
    const prm = await protectedResourceMetadata();
    if (!prm) throw new Error("the server runs in local mode: there is nothing to sign in to");
    const issuer = prm.authorization_servers && prm.authorization_servers[0];
    if (!issuer || !prm.resource) throw new Error("the protected resource metadata names no issuer or resource");
    const meta = await authorizationServerMetadata(issuer);
    if (!(meta.code_challenge_methods_supported || []).includes("S256")) throw new Error(`${issuer} does not support PKCE S256`);
    if (!crypto.subtle) throw new Error("crypto.subtle needs a secure context: open the preview at http://localhost");
    const verifier = randomB64url(32);
    const challenge = b64url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))));
    const state = randomB64url(16);
    storage("set", OAUTH.pendingKey, JSON.stringify({
      state,
      verifier,
      issuer,
      resource: prm.resource,
      tokenEndpoint: meta.token_endpoint,
      returnTo: location.pathname + location.search,
    }));
    const url = new URL(meta.authorization_endpoint);
    url.search = new URLSearchParams({
      response_type: "code",
      client_id: OAUTH.clientId,
      redirect_uri: redirectUri(),
      scope: OAUTH.scope,
      state,
      code_challenge: challenge,
      code_challenge_method: "S256",
      resource: prm.resource,
    }).toString();
    location.assign(url.toString());
  }

  // Step 2 (callback page): check state (and iss, RFC 9207), exchange the code, back to /preview.
  async function finishSignIn() {
    const q = new URLSearchParams(location.search);
    const pending = JSON.parse(storage("get", OAUTH.pendingKey) || "null");
    storage("remove", OAUTH.pendingKey);
    if (!pending) throw new Error("no sign-in was started in this tab");
    if (q.get("state") !== pending.state) throw new Error("the state does not match the sign-in this tab started: ignored");
    if (q.get("error")) throw new Error(`the authorization server answered ${q.get("error")}: ${q.get("error_description") || ""}`);
    if (q.has("iss") && q.get("iss") !== pending.issuer) throw new Error(`the answer comes from ${q.get("iss")}, not ${pending.issuer}`);
    const code = q.get("code");
    if (!code) throw new Error("the callback carries no code");
    const res = await fetch(pending.tokenEndpoint, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/json" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code,
        redirect_uri: redirectUri(),
        client_id: OAUTH.clientId,
        code_verifier: pending.verifier,
        resource: pending.resource,
      }),
    });
    const body = await res.json().catch(() => ({}));
    if (!res.ok || !body.access_token) {
      throw new Error(`the token endpoint answered HTTP ${res.status} ${body.error || ""} ${body.error_description || ""}`);
    }
    if (String(body.token_type || "").toLowerCase() !== "bearer") throw new Error(`unexpected token_type ${body.token_type}`);
    storage("set", OAUTH.tokenKey, body.access_token);
    // Only back into the preview, whatever the stored value says.
    const back = new URL(pending.returnTo || "/preview", location.origin);
    location.replace(back.pathname === "/preview" ? back.pathname + back.search : "/preview");
  }

  if (location.pathname === "/preview/callback") {
    finishSignIn().catch((e) => { $("callback-status").textContent = `Sign-in failed: ${e.message}`; });
    return;
  }

  // The page's account state; the token lives in sessionStorage (this tab only).
  const auth = {
    mode: "unknown", // verified | local | unknown
    token: storage("get", OAUTH.tokenKey),
    setToken(token) {
      this.token = token;
      if (token) storage("set", OAUTH.tokenKey, token);
      else storage("remove", OAUTH.tokenKey);
      renderAccount();
    },
  };

  // ---------------------------------------------------------------- MCP over Streamable HTTP
  class McpClient {
    constructor(url) {
      this.url = url;
      this.session = null;
      this.protocolVersion = null;
      this.nextId = 1;
      this.connecting = null;
      this.tools = [];
    }

    headers() {
      const h = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };
      if (auth.token) h.Authorization = `Bearer ${auth.token}`;
      if (this.session) h["Mcp-Session-Id"] = this.session;
      if (this.protocolVersion) h["Mcp-Protocol-Version"] = this.protocolVersion;
      return h;
    }

    // Sends one JSON-RPC message; for a request, resolves with its response message.
    async send(message) {
      const headers = this.headers();
      const res = await fetch(this.url, { method: "POST", headers, body: JSON.stringify(message) });
      if (res.status === 401 && headers.Authorization) {
        // The token was refused (expired, revoked, another server's): signed out. The request
        // never reached a tool, so it is sent once more without a token.
        auth.setToken(null);
        log("host", "the server refused the access token (HTTP 401): signed out", { "www-authenticate": res.headers.get("www-authenticate") });
        status("signed out: the server refused the token; Sign in again");
        return this.send(message);
      }
      const sid = res.headers.get("mcp-session-id");
      if (sid) this.session = sid;
      if (!("id" in message)) {
        if (!res.ok && res.status !== 202) throw new Error(`HTTP ${res.status} for ${message.method}`);
        return null;
      }
      if (res.status === 404 && this.session) {
        const err = new Error("MCP session expired");
        err.sessionExpired = true;
        throw err;
      }
      if (!res.ok) throw new Error(`HTTP ${res.status}: ${(await res.text()).slice(0, 300)}`);
      const type = res.headers.get("content-type") || "";
      if (type.includes("text/event-stream")) return readSse(res, message.id);
      return res.json();
    }

    async connect() {
      if (!this.connecting) {
        this.connecting = (async () => {
          this.session = null;
          this.protocolVersion = null;
          const init = await this.send({
            jsonrpc: "2.0",
            id: this.nextId++,
            method: "initialize",
            params: {
              protocolVersion: "2025-06-18",
              capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } },
              clientInfo: { name: "giftgenius-preview", version: "1.0.0" },
            },
          });
          if (init.error) throw new Error(`initialize: ${init.error.message}`);
          this.protocolVersion = init.result.protocolVersion;
          await this.send({ jsonrpc: "2.0", method: "notifications/initialized" });
          const list = await this.request("tools/list", {}, false);
          this.tools = list.tools || [];
          return init.result;
        })();
        this.connecting.catch(() => { this.connecting = null; });
      }
      return this.connecting;
    }

    // A request; a session that expired (server restarted) is re-established once.
    async request(method, params, connect = true) {
      if (connect) await this.connect();
      const attempt = () => this.send({ jsonrpc: "2.0", id: this.nextId++, method, params });
      let reply;
      try {
        reply = await attempt();
      } catch (e) {
        if (!e.sessionExpired) throw e;
        this.connecting = null;
        await this.connect();
        reply = await attempt();
      }
      if (reply.error) {
        const err = new Error(reply.error.message || "JSON-RPC error");
        err.rpc = reply.error;
        throw err;
      }
      return reply.result;
    }
  }

  // Reads an SSE response until the JSON-RPC response with `id` arrives (ignores pings/others).
  async function readSse(res, id) {
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (value) buffer += decoder.decode(value, { stream: true });
        buffer = buffer.replace(/\r\n/g, "\n");
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const data = block.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, "")).join("\n");
          if (!data) continue;
          let msg;
          try { msg = JSON.parse(data); } catch (_) { continue; }
          if (msg && msg.id === id && ("result" in msg || "error" in msg)) return msg;
        }
        if (done) throw new Error("the SSE stream ended without a response");
      }
    } finally {
      reader.cancel().catch(() => {});
    }
  }

  const mcp = new McpClient(new URL("/mcp", location.href).toString());

  // ---------------------------------------------------------------- log
  const logEntries = [];
  function log(dir, label, data) {
    const entry = { at: Date.now(), dir, label, data };
    logEntries.push(entry);
    const li = document.createElement("li");
    const head = document.createElement("span");
    head.className = "dir " + (dir.includes("error") ? "error" : dir.startsWith("view") || dir.startsWith("model") ? "up" : "down");
    head.textContent = `${new Date(entry.at).toISOString().slice(11, 23)} ${dir} ${label}`;
    li.appendChild(head);
    if (data !== undefined) {
      const details = document.createElement("details");
      const summary = document.createElement("summary");
      const text = JSON.stringify(data, null, 2) || String(data);
      summary.textContent = text.length > 90 ? text.replace(/\s+/g, " ").slice(0, 90) + "…" : text.replace(/\s+/g, " ");
      const pre = document.createElement("pre");
      pre.textContent = text;
      details.append(summary, pre);
      li.appendChild(details);
    }
    const list = $("log");
    list.appendChild(li);
    while (list.children.length > LOG_LIMIT) list.removeChild(list.firstChild);
    list.scrollTop = list.scrollHeight;
  }
  function status(text) { $("status").textContent = text; }

  // ---------------------------------------------------------------- settings and instance
  const params = new URLSearchParams(location.search);
  // The documented behaviours of hosts for a model-initiated call that returns isError: true.
  const ON_ERROR = {
    keep: "keep the view, with its error state (Goose)",
    unmount: "unmount the view (ChatGPT)",
    "never-mount": "never mount the view (Claude)",
  };
  function safeAreaOf(text) {
    const n = String(text || "").split(",").map(Number);
    const at = (i) => (Number.isFinite(n[i]) && n[i] >= 0 ? n[i] : 0);
    return { top: at(0), right: at(1), bottom: at(2), left: at(3) };
  }
  const settings = {
    bridge: params.get("bridge") === "mcp-apps" ? "mcp-apps" : "openai",
    csp: params.get("csp") === "mcp-apps" ? "mcp-apps" : "chatgpt",
    theme: params.get("theme") === "dark" ? "dark" : "light",
    locale: params.get("locale") || "en-US",
    // auto: openai → opaque; mcp-apps → the spec's sandbox (see sandboxFor).
    sandbox: ["opaque", "spec"].includes(params.get("sandbox")) ? params.get("sandbox") : "auto",
    // How long the view waits for an unanswered request (passed to it as ?gg-call-timeout-ms=);
    // empty = the widget's own default (20 s). The tests shorten it.
    callTimeoutMs: /^\d+$/.test(params.get("callTimeoutMs") || "") ? params.get("callTimeoutMs") : "",
    // What happens to the view when a model-initiated call returns isError: true.
    onError: ON_ERROR[params.get("onError")] ? params.get("onError") : "keep",
    // host: send the preview's palette and font as hostContext.styles; none: no styles.
    styles: params.get("styles") === "none" ? "none" : "host",
    // hostContext.safeAreaInsets as "top,right,bottom,left" in px.
    safeArea: safeAreaOf(params.get("safeArea")),
    // hostContext.availableDisplayModes; the preview can show inline and fullscreen.
    displayModes: (params.get("displayModes") || "inline,fullscreen").split(",").filter((m) => ["inline", "fullscreen", "pip"].includes(m)),
    displayMode: "inline",
    // Run sends the arguments as tool-input-partial notifications first, as a streaming model.
    stream: params.get("stream") === "1",
    // window.openai: after setWidgetState the host dispatches openai:set_globals with the new
    // widgetState, as a globals API does (ChatGPT's useWidgetState listens for it).
    announceWidgetState: params.get("announceWidgetState") === "1",
    // window.openai: the host offers its payment sheet (requestCheckout), emulated below.
    sheet: params.get("sheet") === "1",
    // MCP Apps: the wire of ext-apps 1.x (default) or what its BREAKING.md announces for 2.x
    // (?appsWire=2): the host's capabilities in capabilities.extensions["io.modelcontextprotocol/ui"]
    // instead of hostCapabilities, and the view's logs accepted as ui/log as well.
    appsWire: params.get("appsWire") === "2" ? 2 : 1,
  };
  // "Drop tools/call": the host takes the view's tool calls and never answers them, as a host
  // that lost them would (the view must time out into a retryable error).
  let dropViewCalls = false;
  // Every link the view asked the host to open: {via: "ui/open-link" | "openai.openExternal", url}.
  const openedLinks = [];
  // Another origin on the same server for the spec's sandbox: from http://localhost:P it is
  // http://sandbox.localhost:P. Chromium 156 counts it as another site (each *.localhost name is
  // its own site), as a real host's sandbox domain is: the view's localStorage is third-party,
  // partitioned storage, which browsers give by default but not where third-party cookies are
  // blocked (incognito, or that setting): there it throws "Access is denied for this document"
  // and the view can keep nothing (browser-tests/lib/harness.mjs starts Chromium with the
  // default). From 127.0.0.1:P the twin is localhost:P.
  const twinHost = location.hostname === "localhost" ? "sandbox.localhost" : location.hostname === "127.0.0.1" ? "localhost" : null;

  // opaque: sandbox="allow-scripts", same URL origin but an opaque document origin — the widget
  //   can reach nothing (no storage, no cookies, no parent DOM). Enough for window.openai, whose
  //   widget state lives in the host.
  // spec: SEP-1865's web-host sandbox: "allow-scripts allow-same-origin" on an origin different
  //   from the host's (sandbox.localhost). MCP Apps gives no widget state back, so a view
  //   keeps its idempotency key in its own origin's storage; that needs a real origin.
  function sandboxFor() {
    const mode = settings.sandbox === "auto" ? (settings.bridge === "mcp-apps" ? "spec" : "opaque") : settings.sandbox;
    if (mode === "spec" && twinHost) {
      return { mode, attr: "allow-scripts allow-same-origin", origin: `${location.protocol}//${twinHost}:${location.port}` };
    }
    return { mode: "opaque", attr: "allow-scripts", origin: "" };
  }
  // One widget instance = one model tool call: its input, result and widget state. Reloading
  // the iframe keeps the instance (as a host re-rendering the same message would).
  let runSeq = 0;
  let instance = newInstance(null);
  function newInstance(name) {
    // partials: tool-input-partial arguments; cancelled: the reason (a string) once cancelled;
    // mounts: how many times a frame was loaded for it (never-mount keeps it 0 on isError).
    return { toolName: name, toolInput: null, partials: [], toolResult: null, cancelled: null, widgetState: null,
      modelContext: null, callId: ++runSeq, mounts: 0 };
  }
  // Per iframe load. The frame lives in the stage (#frame-box), or in a chat turn's slot while
  // the view shows a result of the chat's model.
  let frame = null;
  let frameBox = null;
  const stageBox = () => frameBox || $("frame-box");
  let frameSeq = 0;
  let view = freshView();
  function freshView() {
    return { openaiReady: false, mcpInitialized: false, sentPartials: 0, sentInput: false, sentResult: false, sentCancelled: false, appModes: null };
  }
  const calls = []; // every tools/call: {from, name, arguments, result|error}
  const viewLogs = []; // every notifications/message the view sent: its params
  // Requests the host sent to the view (ui/resource-teardown), waiting for the answer.
  const hostPending = {};
  let hostRequestSeq = 0;

  function frameUrl(origin) {
    const timeout = settings.callTimeoutMs ? `&gg-call-timeout-ms=${settings.callTimeoutMs}` : "";
    const sheet = settings.sheet && settings.bridge === "openai" ? "&sheet=1" : "";
    return `${origin}/preview/widget?csp=${settings.csp}&bridge=${settings.bridge}${timeout}${sheet}&n=${++frameSeq}`;
  }

  function loadFrame() {
    const box = stageBox();
    box.textContent = "";
    frame = document.createElement("iframe");
    frame.id = "widget";
    frame.title = "GiftGenius widget";
    // Never forms, popups or top navigation; allow-same-origin only in the spec's sandbox.
    const sandbox = sandboxFor();
    frame.setAttribute("sandbox", sandbox.attr);
    frame.dataset.sandbox = sandbox.mode;
    frame.src = frameUrl(sandbox.origin);
    view = freshView();
    instance.mounts++;
    box.appendChild(frame);
    frameInfo();
    log("host", `load iframe ${frame.src.replace(location.origin, "")}`);
  }

  // A request of the host's to the MCP Apps view (ui/list-view-tools, ui/call-view-tool…):
  // resolves with its JSON-RPC answer (result or error), or null after a second without one.
  async function askView(method, params) {
    const id = `host-${++hostRequestSeq}`;
    const answered = new Promise((resolve) => { hostPending[id] = resolve; });
    log("host→view", `${method} #${id}`, params);
    postToView({ jsonrpc: "2.0", id, method, params: params || {} });
    const answer = await Promise.race([answered, new Promise((r) => setTimeout(() => r(null), 1000))]);
    delete hostPending[id];
    return answer && { result: answer.result, error: answer.error };
  }

  // Takes the view down. An MCP Apps view first gets ui/resource-teardown (the spec: the host
  // SHOULD wait for its answer), here for at most one second.
  async function unmountFrame(why) {
    if (!frame) return;
    // Nothing may go to a view before it said initialized; a view still starting gets 2 s.
    for (let waited = 0; settings.bridge === "mcp-apps" && !view.mcpInitialized && waited < 2000; waited += 25) {
      await new Promise((r) => setTimeout(r, 25));
    }
    if (settings.bridge === "mcp-apps" && view.mcpInitialized) {
      const id = `host-${++hostRequestSeq}`;
      const answered = new Promise((resolve) => { hostPending[id] = resolve; });
      log("host→view", `ui/resource-teardown #${id}`, { reason: why });
      postToView({ jsonrpc: "2.0", id, method: "ui/resource-teardown", params: { reason: why } });
      const answer = await Promise.race([answered, new Promise((r) => setTimeout(() => r(null), 1000))]);
      delete hostPending[id];
      if (!answer) log("host error", "ui/resource-teardown: no answer within 1 s; unmounting anyway");
    }
    stageBox().textContent = "";
    frame = null;
    log("host", `view unmounted: ${why}`);
    frameInfo();
  }

  // What the model would tell the user: the text content of a model-initiated error result.
  function relay(result) {
    const text = (result && Array.isArray(result.content) ? result.content : [])
      .filter((c) => c && c.type === "text").map((c) => c.text).join("\n");
    $("relay-text").textContent = text;
    $("relay").hidden = false;
    log("host", "isError: the model would relay the result's text", text);
  }
  function clearRelay() {
    $("relay-text").textContent = "";
    $("relay").hidden = true;
  }

  function frameInfo() {
    if (frame) {
      const where = new URL(frame.src, location.href).origin;
      $("frame-info").textContent = `bridge=${settings.bridge} csp=${settings.csp} theme=${settings.theme} on isError: ${settings.onError} — sandbox="${frame.getAttribute("sandbox")}" at ${where}`;
    } else {
      $("frame-info").textContent = `no view mounted (on isError: ${ON_ERROR[settings.onError]})`;
    }
  }

  function postToView(message) {
    if (frame && frame.contentWindow) frame.contentWindow.postMessage(message, "*");
  }
  // An answer goes to the document that asked, as a real host's promise is bound to it: once the
  // view was reloaded (or unmounted) the answer is dropped, never handed to the new document,
  // whose own requests reuse the same ids.
  // (A reload makes a new iframe element, so the element is the document's identity here.)
  function answerTo(asker, message, what) {
    if (asker && asker === frame && asker.contentWindow) asker.contentWindow.postMessage(message, "*");
    else log("host", `dropped ${what}: the view that asked is gone (reloaded or unmounted)`);
  }

  // "Hold answers": the host sends the view's calls of one tool to the server as usual but keeps
  // their answers until released, as a host whose message to the view is still in flight. A test
  // reloads the view meanwhile: the server has done the work, the view never hears of it.
  let holdAnswersOf = null;
  const heldAnswers = [];
  function deliverOrHold(name, deliver) {
    if (holdAnswersOf !== name) return deliver();
    log("host", `holding the answer to ${name} until released`);
    heldAnswers.push(deliver);
  }
  function holdAnswers(name) {
    holdAnswersOf = name || null;
    log("host", holdAnswersOf ? `answers to the view's ${holdAnswersOf} calls: held` : "answers: no longer held (already held ones wait for release)");
  }
  function releaseHeld() {
    const n = heldAnswers.length;
    for (const deliver of heldAnswers.splice(0)) deliver();
    log("host", `released ${n} held answer(s)`);
    return n;
  }

  // ---------------------------------------------------------------- tool calls
  // In local mode (no authorization server) a call may name its user with
  // _meta["openai/subject"]: each page load is its own preview user, so every test and every
  // tab starts with fresh drafts and orders, as a new ChatGPT user would.
  const PREVIEW_USER = `preview-${Array.from(crypto.getRandomValues(new Uint8Array(6)), (x) => x.toString(16).padStart(2, "0")).join("")}`;

  // A view showing a chat result acts for the chat process's user: the one local user (no
  // subject), whose drafts the chat's model prepared.
  async function callTool(name, args, from, subject = PREVIEW_USER) {
    const record = { from, name, arguments: args };
    calls.push(record);
    log(`${from}→server`, `tools/call ${name}`, args);
    try {
      const params = subject ? { name, arguments: args, _meta: { "openai/subject": subject } } : { name, arguments: args };
      const result = await mcp.request("tools/call", params);
      record.result = result;
      log(`server→${from}`, `${name} ${result.isError ? "isError" : "ok"}`, result);
      if (isAuthRequired(result)) offerSignIn(name);
      refreshLedger();
      if (from === "view") chatSawViewCall(name, args, result);
      return result;
    } catch (e) {
      record.error = String(e.message || e);
      log(`server→${from} error`, name, e.rpc || record.error);
      throw e;
    }
  }

  function toolAllowedFromView(name) {
    const tool = mcp.tools.find((t) => t.name === name);
    if (!tool) return false;
    const visibility = tool._meta && tool._meta.ui && tool._meta.ui.visibility;
    return !Array.isArray(visibility) || visibility.includes("app");
  }

  // ---------------------------------------------------------------- openai bridge (host side)
  function openaiGlobals() {
    const r = instance.toolResult;
    return {
      toolInput: instance.toolInput,
      toolOutput: r ? r.structuredContent ?? null : null,
      toolResponseMetadata: r ? r._meta ?? null : null,
      widgetState: instance.widgetState,
      theme: settings.theme,
      locale: settings.locale,
      displayMode: settings.displayMode,
    };
  }
  function pushGlobals(globals) {
    if (settings.bridge !== "openai" || !view.openaiReady) return;
    log("host→view", "openai:set_globals", globals);
    postToView({ tag: OPENAI_TAG, kind: "set_globals", globals });
  }
  async function onOpenaiMessage(msg, asker) {
    const reply = (result, error) => answerTo(asker, { tag: OPENAI_TAG, kind: "reply", id: msg.id, result, error }, `the answer to openai ${msg.kind} #${msg.id}`);
    switch (msg.kind) {
      case "ready":
        view.openaiReady = true;
        pushGlobals(openaiGlobals());
        return;
      case "callTool": {
        const { name, arguments: args } = msg.payload || {};
        log("view→host", `openai.callTool ${name}`, args);
        if (!toolAllowedFromView(name)) return reply(null, `tool ${name} is not callable from the widget`);
        if (dropViewCalls) return log("host", `dropped openai.callTool ${name} (never answered)`);
        try {
          const result = await callTool(name, args || {}, "view", viewSubject());
          deliverOrHold(name, () => reply(result));
        } catch (e) {
          reply(null, String(e.message || e));
        }
        return;
      }
      case "setWidgetState":
        instance.widgetState = msg.payload ? msg.payload.state : null;
        log("view→host", "openai.setWidgetState", instance.widgetState);
        // A globals API (as ChatGPT's) announces the changed global to the view as well.
        if (settings.announceWidgetState) pushGlobals({ widgetState: instance.widgetState });
        return reply(null);
      case "sendFollowUpMessage":
        log("view→host", "openai.sendFollowUpMessage", msg.payload);
        return reply(null);
      case "openExternal": {
        const href = msg.payload && msg.payload.href;
        log("view→host", "openai.openExternal", msg.payload);
        if (typeof href !== "string" || !/^https?:/.test(href)) return reply(null, "openExternal needs an http(s) href");
        openedLinks.push({ via: "openai.openExternal", url: href });
        // A real host opens a new tab; the preview records it and leaves the page alone.
        return reply(null);
      }
      case "requestDisplayMode": {
        // Like ChatGPT: the mode is granted when the host has it, and the view learns the
        // mode in effect from the displayMode global (set_globals), as well as from the answer.
        log("view→host", "openai.requestDisplayMode", msg.payload);
        const want = msg.payload && msg.payload.mode;
        if (settings.displayModes.includes(want)) setDisplayMode(want);
        else log("host", `display mode ${want} refused (host offers ${settings.displayModes.join(", ")})`);
        return reply({ mode: settings.displayMode });
      }
      case "requestCheckout":
        log("view→host", "openai.requestCheckout", msg.payload);
        if (!settings.sheet) return reply(null, "this host has no payment sheet");
        return openSheet(msg.payload, reply);
      default:
        log("view→host error", `unknown openai message ${msg.kind}`, msg);
    }
  }

  // ---------------------------------------------------------------- the payment sheet (emulated)
  // What ChatGPT's sheet does for requestCheckout(session) (docs/acp.md §14), in test mode: the
  // person types a test card; the host gets a delegated-payment vault token for it (here through
  // the server's local relay /preview/sheet/delegate, which holds the provider's key), then calls
  // the app's complete_checkout itself and resolves with its result. A decline stays on the
  // sheet with the server's words; closing the sheet rejects; other errors reject with them.
  // Each sheet: {session, state: "open"|"paying"|"paid"|"closed", error, results: [...]}.
  const sheets = [];
  function openSheet(session, reply) {
    const total = Array.isArray(session && session.totals) && session.totals.find((t) => t.type === "total");
    if (!session || typeof session.id !== "string" || !total) return reply(null, "requestCheckout needs a checkout session");
    const sheet = { session, state: "open", error: null, results: [] };
    sheets.push(sheet);
    const box = document.createElement("div");
    box.id = "pay-sheet";
    box.className = "pay-sheet";
    box.setAttribute("role", "dialog");
    box.setAttribute("aria-modal", "true");
    box.setAttribute("aria-labelledby", "pay-sheet-title");
    const amount = new Intl.NumberFormat(settings.locale, { style: "currency", currency: session.currency }).format(total.amount / 100);
    // Static markup; every value from the session goes in as text.
    box.innerHTML = `<h2 id="pay-sheet-title"></h2>
      <p class="hint" id="sheet-mode"></p>
      <label>Card number <input id="sheet-number" autocomplete="off" value="4242424242424242"></label>
      <label>Expiry <input id="sheet-exp" value="12/34"></label>
      <label>CVC <input id="sheet-cvc" value="123"></label>
      <p id="sheet-error" class="sheet-error" role="alert" hidden></p>
      <div class="sheet-actions"><button id="sheet-pay" type="button"></button> <button id="sheet-cancel" type="button">Cancel</button></div>`;
    box.querySelector("#pay-sheet-title").textContent = `Pay ${amount}`;
    box.querySelector("#sheet-pay").textContent = `Pay ${amount}`;
    box.querySelector("#sheet-mode").textContent =
      `Payment mode: ${session.payment_mode || "live"} (emulated sheet: 4242 4242 4242 4242 pays, 4000 0000 0000 0002 is declined).`;
    document.body.appendChild(box);
    const close = () => { box.remove(); };
    const fail = (text) => { sheet.error = text; $("sheet-error").textContent = text; $("sheet-error").hidden = false; };
    $("sheet-cancel").addEventListener("click", () => {
      if (sheet.state === "paying") return;
      sheet.state = "closed";
      close();
      log("host", "payment sheet closed by the person");
      reply(null, "the person closed the payment sheet");
    });
    $("sheet-pay").addEventListener("click", async () => {
      if (sheet.state !== "open") return;
      sheet.state = "paying";
      $("sheet-pay").disabled = true;
      $("sheet-error").hidden = true;
      try {
        const [month, year] = $("sheet-exp").value.split("/").map((x) => x.trim());
        const delegated = await fetch("/preview/sheet/delegate", {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ checkout_session_id: session.id, max_amount: total.amount, currency: session.currency.toLowerCase(),
            number: $("sheet-number").value.replace(/\s+/g, ""), exp_month: month, exp_year: year && year.length === 2 ? `20${year}` : year,
            cvc: $("sheet-cvc").value }),
        });
        const body = await delegated.json().catch(() => ({}));
        if (!delegated.ok || typeof body.token !== "string") {
          sheet.state = "open";
          return fail(body.error || "The card could not be used.");
        }
        const result = await callTool("complete_checkout", { checkout_session_id: session.id,
          buyer: { first_name: "Preview", last_name: "Buyer", email: "buyer@example.com" },
          payment_data: { token: body.token, provider: session.payment_provider && session.payment_provider.provider } }, "host", viewSubject());
        sheet.results.push(result);
        const error = result.isError && result.structuredContent && result.structuredContent.error;
        if (error && error.code === "PAYMENT_DECLINED") {
          sheet.state = "open";
          return fail(error.message);
        }
        sheet.state = error ? "closed" : "paid";
        close();
        if (error) reply(null, error.message);
        else deliverOrHold("complete_checkout", () => reply(result));
      } catch (e) {
        sheet.state = "open";
        fail(String(e.message || e));
      } finally {
        if ($("sheet-pay")) $("sheet-pay").disabled = false;
      }
    });
    $("sheet-number").focus();
  }

  // ---------------------------------------------------------------- MCP Apps bridge (host side)
  // The preview's own look, as a host passes it (SEP-1865 "Theming"): the spec's variable names,
  // light-dark() values, and a font defined from a local face (no download under any CSP).
  const PREVIEW_STYLES = {
    variables: {
      "--color-background-primary": "light-dark(#fbfaff, #17151f)",
      "--color-background-secondary": "light-dark(#f1eefb, #221f2e)",
      "--color-background-tertiary": "light-dark(#e4dff5, #2e2a3d)",
      "--color-text-primary": "light-dark(#1d1a27, #eeeaf7)",
      "--color-text-secondary": "light-dark(#5b5670, #aaa3c0)",
      "--color-border-primary": "light-dark(#d6d0ea, #3b3650)",
      "--color-ring-primary": "light-dark(#6a4fd8, #a996ff)",
      "--font-sans": "\"GG Preview Sans\", system-ui, sans-serif",
      "--border-radius-lg": "10px",
    },
    css: { fonts: "@font-face { font-family: \"GG Preview Sans\"; src: local(\"DejaVu Sans\"), local(\"Liberation Sans\"), local(\"Arial\"); }" },
  };
  function containerDimensions() {
    return settings.displayMode === "fullscreen" ? { height: window.innerHeight, width: window.innerWidth } : { maxHeight: 2000 };
  }
  function hostContext() {
    const tool = mcp.tools.find((t) => t.name === instance.toolName);
    return {
      theme: settings.theme,
      locale: settings.locale,
      timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      displayMode: settings.displayMode,
      availableDisplayModes: settings.displayModes,
      containerDimensions: containerDimensions(),
      platform: "web",
      userAgent: "giftgenius-preview",
      deviceCapabilities: { touch: false, hover: true },
      safeAreaInsets: settings.safeArea,
      ...(settings.styles === "host" ? { styles: PREVIEW_STYLES } : {}),
      ...(tool ? { toolInfo: { id: instance.callId, tool } } : {}),
    };
  }
  function sendToView(method, params) {
    const message = { jsonrpc: "2.0", method, params };
    log("host→view", method, params);
    postToView(message);
  }
  // The spec: nothing goes to the view before `ui/notifications/initialized`; partial inputs
  // (0..n), then the complete tool-input, then the result or tool-cancelled.
  function deliverToMcpView() {
    if (settings.bridge !== "mcp-apps" || !view.mcpInitialized || !frame) return;
    while (!view.sentInput && view.sentPartials < instance.partials.length) {
      sendToView("ui/notifications/tool-input-partial", { arguments: instance.partials[view.sentPartials++] });
    }
    if (!view.sentInput && instance.toolInput) {
      view.sentInput = true;
      sendToView("ui/notifications/tool-input", { arguments: instance.toolInput });
    }
    if (view.sentInput && !view.sentResult && instance.toolResult) {
      view.sentResult = true;
      sendToView("ui/notifications/tool-result", instance.toolResult);
    }
    if (!view.sentResult && !view.sentCancelled && instance.cancelled !== null) {
      view.sentCancelled = true;
      sendToView("ui/notifications/tool-cancelled", instance.cancelled ? { reason: instance.cancelled } : {});
    }
  }
  function setDisplayMode(mode) {
    if (settings.displayMode === mode) return;
    settings.displayMode = mode;
    stageBox().classList.toggle("fullscreen", mode === "fullscreen");
    $("exit-fullscreen").hidden = mode !== "fullscreen";
    log("host", `display mode: ${mode}`);
    if (settings.bridge === "mcp-apps" && view.mcpInitialized) {
      sendToView("ui/notifications/host-context-changed", { displayMode: mode, containerDimensions: containerDimensions() });
    } else if (settings.bridge !== "mcp-apps" && frame) {
      pushGlobals({ displayMode: mode });
    }
  }
  async function onJsonRpc(msg, asker) {
    const respond = (result) => { log("host→view", `response #${msg.id}`, result); answerTo(asker, { jsonrpc: "2.0", id: msg.id, result }, `response #${msg.id}`); };
    const fail = (code, message) => { log("host→view error", `response #${msg.id}`, { code, message }); answerTo(asker, { jsonrpc: "2.0", id: msg.id, error: { code, message } }, `response #${msg.id}`); };
    const isRequest = msg.id !== undefined && msg.id !== null;
    if (!msg.method) {
      // The answer to a request of ours (ui/resource-teardown); anything else is dropped.
      const waiting = hostPending[msg.id];
      if (waiting) {
        log("view→host", `response #${msg.id}`, msg.result || msg.error);
        waiting(msg);
      }
      return;
    }
    log("view→host", msg.method + (isRequest ? ` #${msg.id}` : ""), msg.params);
    if (!isRequest) {
      if (msg.method === "ui/notifications/initialized") {
        view.mcpInitialized = true;
        deliverToMcpView();
      } else if (msg.method === "ui/notifications/size-changed" && msg.params && frame && settings.displayMode === "inline") {
        const h = Number(msg.params.height);
        if (h > 0) frame.style.height = `${Math.min(Math.max(h, 120), 2000)}px`;
      } else if (msg.method === "notifications/message" || (msg.method === "ui/log" && settings.appsWire === 2)) {
        // The view's own log line (MCP logging; ui/log on the 2.x wire): shown, never acted upon.
        const p = msg.params || {};
        viewLogs.push({ ...p, via: msg.method });
        log(`view log ${p.level || "?"}`, `${p.logger || "view"}: ${JSON.stringify(p.data)}`.slice(0, 160), p);
      }
      return;
    }
    switch (msg.method) {
      case "ui/initialize": {
        view.appModes = (msg.params && msg.params.appCapabilities && msg.params.appCapabilities.availableDisplayModes) || null;
        const capabilities = {
          openLinks: {},
          serverTools: { listChanged: false },
          serverResources: { listChanged: false },
          logging: {},
          updateModelContext: { text: {}, structuredContent: {} },
          message: { text: {} },
        };
        return respond({
          protocolVersion: (msg.params && msg.params.protocolVersion) || "2025-06-18",
          hostInfo: { name: "giftgenius-preview", version: "1.0.0" },
          ...(settings.appsWire === 2
            ? { capabilities: { extensions: { "io.modelcontextprotocol/ui": capabilities } } }
            : { hostCapabilities: capabilities }),
          hostContext: hostContext(),
        });
      }
      case "ping":
        return respond({});
      case "tools/call": {
        const name = msg.params && msg.params.name;
        if (!toolAllowedFromView(name)) return fail(-32602, `tool ${name} is not callable from the app`);
        if (dropViewCalls) return log("host", `dropped tools/call ${name} #${msg.id} (never answered)`);
        try {
          const result = await callTool(name, (msg.params && msg.params.arguments) || {}, "view", viewSubject());
          return deliverOrHold(name, () => respond(result));
        } catch (e) {
          return fail((e.rpc && e.rpc.code) || -32603, String(e.message || e));
        }
      }
      case "tools/list":
      case "resources/list":
      case "resources/read":
        try {
          return respond(await mcp.request(msg.method, msg.params || {}));
        } catch (e) {
          return fail((e.rpc && e.rpc.code) || -32603, String(e.message || e));
        }
      case "ui/message":
        return respond({});
      case "ui/update-model-context":
        instance.modelContext = msg.params || null;
        return respond({});
      case "ui/open-link": {
        const url = msg.params && msg.params.url;
        if (typeof url !== "string" || !/^https?:/.test(url)) return fail(-32602, "ui/open-link needs an http(s) url");
        openedLinks.push({ via: "ui/open-link", url });
        // A real host opens a new tab; the preview records it and leaves the page alone.
        return respond({});
      }
      case "ui/request-display-mode": {
        // The spec: only a mode both sides declared; the answer is the mode now in effect.
        const want = msg.params && msg.params.mode;
        const appOk = !Array.isArray(view.appModes) || view.appModes.includes(want);
        if (settings.displayModes.includes(want) && appOk) setDisplayMode(want);
        else log("host", `display mode ${want} refused (host offers ${settings.displayModes.join(", ")})`);
        return respond({ mode: settings.displayMode });
      }
      default:
        return fail(-32601, `method not found: ${msg.method}`);
    }
  }

  window.addEventListener("message", (event) => {
    if (!frame || event.source !== frame.contentWindow) return; // only our view
    const msg = event.data;
    if (!msg || typeof msg !== "object") return;
    if (msg.tag === OPENAI_TAG) {
      if (settings.bridge === "openai") onOpenaiMessage(msg, frame);
      return;
    }
    if (msg.jsonrpc === "2.0") {
      if (settings.bridge === "mcp-apps") onJsonRpc(msg, frame);
      else log("view→host", `ignored JSON-RPC ${msg.method || "response"} (bridge is openai)`, msg);
    }
  });

  // ---------------------------------------------------------------- account UI
  function isAuthRequired(result) {
    if (!result || !result.isError) return false;
    const error = result.structuredContent && result.structuredContent.error;
    return (error && error.code === "AUTH_REQUIRED") || !!(result._meta && result._meta["mcp/www_authenticate"]);
  }
  // As ChatGPT starts account linking on the challenge in `_meta["mcp/www_authenticate"]`.
  function offerSignIn(tool) {
    if (auth.mode !== "verified" || auth.token) return;
    $("auth-offer").hidden = false;
    log("host", `${tool} needs an account: offering Sign in`);
  }
  function renderAccount() {
    const box = $("account");
    box.dataset.mode = auth.mode;
    const signedIn = auth.mode === "verified" && !!auth.token;
    $("account-name").textContent =
      auth.mode === "local" ? "local mode (no sign-in)" :
      auth.mode !== "verified" ? "" :
      signedIn ? `Signed in as ${tokenSubject(auth.token)}` : "Signed out";
    $("sign-in").hidden = auth.mode !== "verified" || signedIn;
    $("sign-out").hidden = !signedIn;
    if (signedIn || auth.mode !== "verified") $("auth-offer").hidden = true;
  }
  async function detectAuthMode() {
    try {
      const prm = await protectedResourceMetadata();
      auth.mode = prm ? "verified" : "local";
      if (prm) log("host", `verified mode: accounts from ${(prm.authorization_servers || []).join(", ")}`, prm);
    } catch (e) {
      auth.mode = "unknown";
      log("host error", `cannot read ${OAUTH.prmPath}: ${e.message}`);
    }
    if (auth.mode !== "verified" && auth.token) auth.setToken(null);
    renderAccount();
  }
  function signIn() {
    log("host", "sign-in: to the authorization server");
    status("signing in…");
    return startSignIn().catch((e) => {
      status(`sign-in failed: ${e.message}`);
      log("host error", "sign-in", String(e.message || e));
      throw e;
    });
  }
  function signOut() {
    auth.setToken(null);
    log("host", "signed out (the access token is dropped)");
  }

  // ---------------------------------------------------------------- model runs and fixtures
  // A model tool call, in steps a host goes through: begin (a new widget instance, shown at once
  // unless the host mounts views only for a result), partial arguments while the model streams
  // them, the complete input, then the call's result, or a cancellation instead.
  function begin(name) {
    if (frame && settings.displayMode !== "inline") setDisplayMode("inline");
    leaveChatSlot();
    instance = newInstance(name);
    $("auth-offer").hidden = true;
    clearRelay();
    if (settings.onError === "never-mount") {
      // Claude-like: no view until the result says it is not an error.
      $("frame-box").textContent = "";
      frame = null;
      frameInfo();
    } else {
      loadFrame();
    }
    status(`${name}: model is calling…`);
    return instance;
  }
  function partial(args) {
    instance.partials.push(JSON.parse(JSON.stringify(args || {})));
    deliverToMcpView();
  }
  function input(args) {
    instance.toolInput = args || {};
    if (settings.bridge === "openai") pushGlobals({ toolInput: instance.toolInput });
    else deliverToMcpView();
  }
  // The cumulative prefixes of `args`, one key (or list item) more each time, as a model
  // streams JSON: what tool-input-partial carries.
  function partialsOf(args) {
    const out = [];
    const acc = {};
    for (const [key, value] of Object.entries(args || {})) {
      if (Array.isArray(value)) {
        acc[key] = [];
        for (const item of value) {
          acc[key].push(item);
          out.push(JSON.parse(JSON.stringify(acc)));
        }
      } else {
        acc[key] = value;
        out.push(JSON.parse(JSON.stringify(acc)));
      }
    }
    return out;
  }
  // The host cancels the model's call: the view gets tool-cancelled, a late result is dropped.
  function cancel(reason) {
    if (instance.toolResult || instance.cancelled !== null) return false;
    instance.cancelled = reason || "";
    status(`${instance.toolName}: cancelled`);
    log("host", `cancelled the model's ${instance.toolName}`, { reason: instance.cancelled });
    if (settings.bridge === "mcp-apps") deliverToMcpView();
    else log("host", "window.openai has no cancellation event: the view keeps waiting");
    return true;
  }
  // Runs the instance's call and hands the result over, as the "On isError" setting says.
  async function finish(inst = instance) {
    const name = inst.toolName;
    status(`running ${name}…`);
    let result;
    try {
      result = await callTool(name, inst.toolInput || {}, "model");
    } catch (e) {
      status(`${name} failed: ${e.message}`);
      throw e;
    }
    if (instance !== inst || inst.cancelled !== null) {
      log("host", `${name}: the result came after a cancellation and is dropped`);
      return result;
    }
    inst.toolResult = result;
    status(`${name}: ${result.isError ? "error result" : "ok"}`);
    if (result.isError) {
      relay(result);
      if (settings.onError === "unmount") {
        await unmountFrame("the model's call returned isError (ChatGPT unmounts the view)");
        return result;
      }
      if (settings.onError === "never-mount") {
        log("host", "the model's call returned isError: the view is never mounted (as Claude)");
        return result;
      }
    }
    if (!frame) loadFrame(); // never-mount: a successful result is mounted now
    if (settings.bridge === "openai") {
      pushGlobals({ toolOutput: result.structuredContent ?? null, toolResponseMetadata: result._meta ?? null });
    } else {
      deliverToMcpView();
    }
    return result;
  }
  async function run(name, args, opts = {}) {
    const inst = begin(name);
    if (opts.stream ?? settings.stream) {
      for (const p of partialsOf(args)) {
        if (instance !== inst || inst.cancelled !== null) return null;
        partial(p);
        await new Promise((r) => setTimeout(r, opts.stepMs ?? 300));
      }
    }
    if (instance !== inst || inst.cancelled !== null) return null;
    input(args);
    return finish(inst);
  }

  async function postJson(path, body) {
    const res = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`${path}: HTTP ${res.status} ${await res.text()}`);
    return res.json();
  }
  async function setFaults(plan) {
    const r = await postJson("/preview/faults", { plan });
    log("host", `sandbox payment faults: ${plan || "(none)"}`);
    return r;
  }
  async function setCatalog(mode) {
    const r = await postJson("/preview/catalog", { mode });
    log("host", `preview catalog source: ${mode}`);
    return r;
  }
  async function ledgerCount() {
    const res = await fetch("/preview/ledger", { cache: "no-store" });
    return (await res.json()).count;
  }
  function refreshLedger() {
    ledgerCount().then((n) => { $("ledger").textContent = String(n); }, () => {});
  }
  function newKey() {
    const b = new Uint8Array(16);
    crypto.getRandomValues(b);
    return "preview_" + Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  }
  // Where the fixtures' gifts go: what a person would have told the model (commit_order refuses
  // a draft without a recipient).
  const RECIPIENT = { name: "Ana Sousa", address: { line1: "Rua Augusta 12", city: "Lisboa", postal_code: "1100-053", country: "PT" } };
  // A draft made by the host itself (not shown), for the commit_order fixtures.
  async function hiddenDraft(giftId) {
    const r = await callTool("prepare_order", { gift_id: giftId, recipient: RECIPIENT }, "host");
    const draft = r.structuredContent && r.structuredContent.draft;
    // The server fills in giftgenius_types::wire::META_CONFIRMATION_TOKEN when it serves this file.
    const token = r._meta && r._meta["__META_CONFIRMATION_TOKEN__"];
    if (!draft || !token) throw new Error(`prepare_order ${giftId} gave no draft/token`);
    return { draft_id: draft.id, token };
  }

  // A paid order placed by the host itself (not shown).
  async function hiddenOrder(giftId) {
    const d = await hiddenDraft(giftId);
    return callTool("commit_order", { draft_id: d.draft_id, idempotency_key: newKey(), confirmation_token: d.token }, "host");
  }

  const XSS = "<img src=x onerror=alert(1)>";
  const FIXTURES = {
    results: () => run("suggest_gifts", { relationship_type: "friend", age: 30, interests: ["hiking"], budget_max: 100 }),
    empty: () => run("suggest_gifts", { relationship_type: "friend", budget_max: 1 }),
    partial: async () => {
      await setCatalog("down");
      try {
        return await run("suggest_gifts", { relationship_type: "friend", interests: ["camping"] });
      } finally {
        await setCatalog("ok");
      }
    },
    validation: () => run("suggest_gifts", { relationship_type: "friend", age: 200, interests: [XSS] }),
    business: () => run("prepare_order", { gift_id: "tr-011", recipient: RECIPIENT }),
    transient: async () => {
      const d = await hiddenDraft("tr-006");
      await setFaults("5xx*1");
      return run("commit_order", { draft_id: d.draft_id, idempotency_key: newKey(), confirmation_token: d.token });
    },
    permission: async () => {
      const d = await hiddenDraft("tr-006");
      return run("commit_order", { draft_id: d.draft_id, idempotency_key: newKey(), confirmation_token: "not-the-token" });
    },
    confirm: () => run("prepare_order", { gift_id: "tr-007", recipient: RECIPIENT, gift_message: "Happy birthday, Ana!" }),
    // Needed by the last day express may arrive (asked of a hidden draft first, so it holds on
    // any day the page runs): standard misses it, express makes it.
    "needed by": async () => {
      const r = await callTool("prepare_order", { gift_id: "tr-007", recipient: RECIPIENT }, "host");
      const options = (r.structuredContent && r.structuredContent.draft.delivery_options) || [];
      const express = options.find((o) => o.shipping === "express");
      if (!express) throw new Error("prepare_order gave no express option");
      return run("prepare_order", { gift_id: "tr-007", recipient: RECIPIENT, needed_by: express.latest });
    },
    // Two of a Hearth & Home gift (it wraps, at $5.99 a gift), neither wrapped yet.
    "gift options": () => run("prepare_order", { gift_id: "hh-010", quantity: 2, recipient: RECIPIENT }),
    "product checkout": () => run("checkout_session", {
      checkout_session: { items: [{ id: "hh-010", quantity: 2 }, { id: "pp-001", quantity: 1, offerId: "pp-001" }] },
    }),
    "basket": () => run("prepare_order", {
      items: [{ gift_id: "hh-010", quantity: 2 }, { gift_id: "pp-001", quantity: 1 }],
      recipient: RECIPIENT,
    }),
    "order placed": async () => {
      const d = await hiddenDraft("tr-012");
      return run("commit_order", { draft_id: d.draft_id, idempotency_key: newKey(), confirmation_token: d.token });
    },
    "markup in text": () => run("suggest_gifts", { relationship_type: "friend", interests: [XSS] }),
    checkout: () => run("create_checkout_session", { gift_id: "tr-007", idempotency_key: newKey() }),
    // One paid order (placed by the host, not shown), then the person's order list.
    orders: async () => {
      await hiddenOrder("tr-012");
      return run("list_orders", {});
    },
    // Two paid orders, then the list (the newest first): one to cancel, one left to cancel later.
    "two orders": async () => {
      await hiddenOrder("tr-012");
      await hiddenOrder("tr-007");
      return run("list_orders", {});
    },
  };


  // ---------------------------------------------------------------- chat panel
  // The conversation lives in the chat process (`giftgenius-chat --listen`, relayed by the
  // server at /preview/chat/*); the page polls its turns and renders them. One view is live at a
  // time: the newest result with a view is mounted in its turn, and an older one leaves a note.
  const chat = { on: null, seq: 0, turns: [], busy: false, pending: null, reported: new Set(), slot: null, timer: null };
  function viewSubject() { return instance.chat ? null : PREVIEW_USER; }
  function leaveChatSlot() {
    if (!frameBox) return;
    frameBox.textContent = "(this view was replaced by a newer one)";
    frameBox = null;
  }
  function chatStatus(text) { $("chat-status").textContent = text; }
  async function chatFetch(path, body) {
    const init = body === undefined ? { cache: "no-store" }
      : { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
    const res = await fetch(`/preview/chat${path}`, init);
    const data = await res.json().catch(() => ({}));
    return { status: res.status, data };
  }
  // The widget committed a chat draft through this page's bridge: tell the chat process which
  // order it became (once per draft; the view's retries reuse the same key and the same order).
  function chatSawViewCall(name, args, result) {
    if (name !== "commit_order" || !instance.chat || !result || result.isError) return;
    const draftId = args && args.draft_id;
    const order = result.structuredContent && result.structuredContent.order;
    if (!draftId || !order || !order.id || chat.reported.has(draftId)) return;
    chat.reported.add(draftId);
    log("host→chat", `purchase ${draftId}: placed by the view`, { order_id: order.id });
    chatFetch(`/purchases/${encodeURIComponent(draftId)}`, { decision: "placed", order_id: order.id })
      .then((r) => { if (r.status !== 200) log("host error", `the chat process refused the report (HTTP ${r.status})`, r.data); })
      .catch((e) => log("host error", "reporting the order to the chat process", String(e.message || e)));
  }
  function chatDecline(draftId) {
    chat.reported.add(draftId);
    log("host→chat", `purchase ${draftId}: declined`);
    return chatFetch(`/purchases/${encodeURIComponent(draftId)}`, { decision: "declined" });
  }
  // Mounts the view for a chat result in `slot`, as a host renders a tool result in its message.
  function showChatResult(slot, turn) {
    if (frame && settings.displayMode !== "inline") setDisplayMode("inline");
    leaveChatSlot();
    frameBox = slot;
    instance = newInstance(turn.name);
    instance.chat = { seq: turn.seq };
    instance.toolInput = turn.arguments || {};
    instance.toolResult = turn.result;
    clearRelay();
    loadFrame();
    status(`chat: ${turn.name} ${turn.is_error ? "error result" : "ok"}`);
  }
  function renderChatTurn(turn) {
    const li = document.createElement("li");
    li.dataset.kind = turn.kind;
    li.dataset.seq = String(turn.seq);
    switch (turn.kind) {
      case "user": li.textContent = `You: ${turn.text}`; break;
      case "call": li.textContent = `[turn ${turn.turn}] calls ${turn.name} ${JSON.stringify(turn.arguments)}`; break;
      case "refused": li.textContent = `[turn ${turn.turn}] ${turn.name} not run: ${turn.text}`; break;
      case "tool_error": li.textContent = `[turn ${turn.turn}] ${turn.name} failed: ${turn.text}`; break;
      case "result": {
        if (turn.has_view) {
          const slot = document.createElement("div");
          slot.className = "chat-view frame-box";
          li.appendChild(slot);
          showChatResult(slot, turn);
        } else {
          const details = document.createElement("details");
          const summary = document.createElement("summary");
          summary.textContent = `${turn.name} result${turn.is_error ? " (error)" : ""}`;
          const pre = document.createElement("pre");
          pre.textContent = JSON.stringify(turn.result && (turn.result.structuredContent ?? turn.result.content), null, 2);
          details.append(summary, pre);
          li.appendChild(details);
        }
        break;
      }
      case "confirm": {
        const p = document.createElement("p");
        p.textContent = "The model prepared this order. Confirm it in the view above, or:";
        const decline = document.createElement("button");
        decline.type = "button";
        decline.className = "chat-decline";
        decline.textContent = "Decline";
        decline.addEventListener("click", () => {
          decline.disabled = true;
          chatDecline(turn.draft_id).catch((e) => chatStatus(`decline failed: ${e.message}`));
        });
        const card = document.createElement("pre");
        card.textContent = turn.card;
        li.append(p, decline, card);
        break;
      }
      case "answer": li.textContent = `Model: ${turn.text}`; break;
      default: li.textContent = turn.text || JSON.stringify(turn);
    }
    $("chat-turns").appendChild(li);
    $("chat-turns").scrollTop = $("chat-turns").scrollHeight;
  }
  async function chatPoll() {
    let r;
    try {
      r = await chatFetch("/state");
    } catch (e) {
      chatStatus(`the chat is unreachable: ${e.message}`);
      return;
    }
    if (r.status === 404) {
      chat.on = false;
      chatStatus(r.data.error || "The chat panel is off.");
      $("chat-send").disabled = true;
      clearInterval(chat.timer);
      return;
    }
    if (r.status !== 200) {
      chatStatus(r.data.error || `the chat answered HTTP ${r.status}`);
      return;
    }
    chat.on = true;
    const s = r.data;
    for (const turn of s.turns || []) {
      if (turn.seq <= chat.seq) continue;
      chat.seq = turn.seq;
      chat.turns.push(turn);
      renderChatTurn(turn);
    }
    chat.busy = !!s.busy;
    chat.pending = s.pending ? s.pending.draft_id : null;
    for (const b of document.querySelectorAll(".chat-decline")) {
      const seq = Number(b.closest("li").dataset.seq);
      const turn = chat.turns.find((t) => t.seq === seq);
      if (!turn || turn.draft_id !== chat.pending) b.disabled = true;
    }
    $("chat-send").disabled = chat.busy;
    chatStatus(s.problem ? `The chat cannot run: ${s.problem}`
      : chat.pending ? "Waiting for you: confirm or decline the order."
      : chat.busy ? "The model is working…"
      : `Ready. Tools offered to the model: ${(s.tools || []).join(", ") || "(connecting…)"}`);
  }
  async function chatSend(text) {
    text = String(text || "").trim();
    if (!text) return null;
    const r = await chatFetch("/messages", { text });
    if (r.status !== 202) {
      chatStatus(r.data.error || `the chat answered HTTP ${r.status}`);
      return r;
    }
    chat.busy = true;
    $("chat-send").disabled = true;
    await chatPoll();
    return r;
  }
  function wireChat() {
    const send = () => {
      const text = $("chat-input").value;
      $("chat-input").value = "";
      chatSend(text).catch((e) => chatStatus(`send failed: ${e.message}`));
    };
    $("chat-send").addEventListener("click", send);
    $("chat-input").addEventListener("keydown", (e) => { if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); send(); } });
    chat.timer = setInterval(() => { if (chat.on !== false) chatPoll(); }, 700);
    chatPoll();
  }

  // ---------------------------------------------------------------- settings changes
  function setTheme(theme) {
    settings.theme = theme === "dark" ? "dark" : "light";
    $("theme").value = settings.theme;
    document.documentElement.dataset.theme = settings.theme;
    frameInfo();
    if (settings.bridge === "openai") pushGlobals({ theme: settings.theme });
    else if (view.mcpInitialized) sendToView("ui/notifications/host-context-changed", { theme: settings.theme });
  }
  function setBridge(bridge) {
    settings.bridge = bridge === "mcp-apps" ? "mcp-apps" : "openai";
    $("bridge").value = settings.bridge;
    loadFrame();
  }
  function setSandbox(mode) {
    settings.sandbox = ["opaque", "spec"].includes(mode) ? mode : "auto";
    $("sandbox").value = settings.sandbox;
    loadFrame();
  }
  function setOnError(mode) {
    settings.onError = ON_ERROR[mode] ? mode : "keep";
    $("on-error").value = settings.onError;
    frameInfo();
  }
  function setStyles(mode) {
    settings.styles = mode === "none" ? "none" : "host";
    $("styles").value = settings.styles;
    // A changed top-level field replaces the view's copy; {} (no variables) clears them.
    if (settings.bridge === "mcp-apps" && view.mcpInitialized) {
      sendToView("ui/notifications/host-context-changed", { styles: settings.styles === "host" ? PREVIEW_STYLES : {} });
    }
  }
  function setCsp(csp) {
    settings.csp = csp === "mcp-apps" ? "mcp-apps" : "chatgpt";
    $("csp").value = settings.csp;
    loadFrame();
  }

  // ---------------------------------------------------------------- UI wiring
  function exampleArgs(tool) {
    const examples = {
      suggest_gifts: { relationship_type: "friend", age: 30, interests: ["hiking"], budget_max: 100 },
      prepare_order: { gift_id: "tr-007", recipient: RECIPIENT },
      checkout_session: { checkout_session: { items: [{ id: "tr-007", quantity: 1 }, { id: "pp-001", quantity: 2 }] } },
      commit_order: { draft_id: "", idempotency_key: newKey(), confirmation_token: "" },
      create_checkout_session: { gift_id: "tr-007", idempotency_key: newKey() },
      get_order: { order_id: "" },
      list_orders: {},
    };
    return examples[tool.name] || {};
  }

  function wire() {
    $("bridge").value = settings.bridge;
    $("csp").value = settings.csp;
    $("theme").value = settings.theme;
    $("sandbox").value = settings.sandbox;
    $("on-error").value = settings.onError;
    $("styles").value = settings.styles;
    $("stream").checked = settings.stream;
    $("announce").checked = settings.announceWidgetState;
    document.documentElement.dataset.theme = settings.theme;
    $("on-error").addEventListener("change", (e) => setOnError(e.target.value));
    $("styles").addEventListener("change", (e) => setStyles(e.target.value));
    $("stream").addEventListener("change", (e) => { settings.stream = e.target.checked; });
    $("announce").addEventListener("change", (e) => { settings.announceWidgetState = e.target.checked; });
    $("cancel-run").addEventListener("click", () => cancel("the user stopped the request"));
    $("exit-fullscreen").addEventListener("click", () => setDisplayMode("inline"));
    document.addEventListener("keydown", (e) => { if (e.key === "Escape" && settings.displayMode !== "inline") setDisplayMode("inline"); });
    $("sandbox").addEventListener("change", (e) => setSandbox(e.target.value));
    $("bridge").addEventListener("change", (e) => setBridge(e.target.value));
    $("csp").addEventListener("change", (e) => setCsp(e.target.value));
    $("theme").addEventListener("change", (e) => setTheme(e.target.value));
    $("reload").addEventListener("click", () => loadFrame());
    $("clear-log").addEventListener("click", () => { $("log").textContent = ""; });
    $("ledger-refresh").addEventListener("click", refreshLedger);
    $("sign-in").addEventListener("click", () => signIn().catch(() => {}));
    $("auth-offer-sign-in").addEventListener("click", () => signIn().catch(() => {}));
    $("sign-out").addEventListener("click", signOut);
    $("faults-set").addEventListener("click", () => setFaults($("faults").value.trim()).catch((e) => status(e.message)));
    $("tool").addEventListener("change", () => {
      const tool = mcp.tools.find((t) => t.name === $("tool").value);
      if (tool) $("args").value = JSON.stringify(exampleArgs(tool), null, 2);
    });
    $("run").addEventListener("click", () => {
      let args;
      try {
        args = JSON.parse($("args").value || "{}");
      } catch (e) {
        status(`arguments are not JSON: ${e.message}`);
        return;
      }
      run($("tool").value, args).catch(() => {});
    });
    for (const name of Object.keys(FIXTURES)) {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = name;
      b.dataset.fixture = name;
      b.addEventListener("click", () => FIXTURES[name]().catch((e) => status(`${name}: ${e.message}`)));
      $("fixtures").appendChild(b);
    }
  }

  // Live reload: a rebuilt artifact (cargo xtask widget) reloads the iframe, instance kept.
  let artifactStamp = null;
  async function pollArtifact() {
    try {
      const res = await fetch("/preview/artifact", { cache: "no-store" });
      const stamp = JSON.stringify(await res.json());
      if (artifactStamp !== null && stamp !== artifactStamp && $("live").checked && frame) {
        log("host", "widget artifact changed: reloading the view");
        loadFrame();
      }
      artifactStamp = stamp;
    } catch (_) { /* server restarting */ }
  }

  async function start() {
    wire();
    wireChat();
    await detectAuthMode();
    const info = await mcp.connect();
    log("host", `MCP session ${mcp.session} (${info.serverInfo && info.serverInfo.name} ${info.protocolVersion})`);
    const picker = $("tool");
    for (const tool of mcp.tools) {
      const opt = document.createElement("option");
      opt.value = tool.name;
      const vis = tool._meta && tool._meta.ui && tool._meta.ui.visibility;
      opt.textContent = Array.isArray(vis) && !vis.includes("model") ? `${tool.name} (app-only)` : tool.name;
      picker.appendChild(opt);
    }
    if (mcp.tools.some((t) => t.name === "suggest_gifts")) picker.value = "suggest_gifts";
    picker.dispatchEvent(new Event("change"));
    refreshLedger();
    status("ready");
    setInterval(pollArtifact, 1500);
    pollArtifact();
  }

  const ready = start();
  ready.catch((e) => status(`cannot reach the MCP server: ${e.message}`));

  window.ggPreview = {
    ready,
    settings,
    calls,
    log: logEntries,
    get instance() { return instance; },
    get view() { return view; },
    /** Whether a view is mounted right now. */
    get mounted() { return !!frame; },
    /** The text shown as what the model would relay (null when none). */
    get relayed() { return $("relay").hidden ? null : $("relay-text").textContent; },
    viewLogs,
    run,
    begin,
    partial,
    input,
    finish: () => finish(instance),
    cancel,
    setOnError,
    setStyles,
    setDisplayMode,
    fixture: (name) => {
      if (!FIXTURES[name]) throw new Error(`no fixture ${name}`);
      return FIXTURES[name]();
    },
    fixtures: Object.keys(FIXTURES),
    setTheme,
    setBridge,
    setCsp,
    setSandbox,
    reload: () => loadFrame(),
    setFaults,
    setCatalog,
    ledgerCount,
    auth: {
      get mode() { return auth.mode; },
      get account() { return auth.token ? tokenSubject(auth.token) : null; },
      signIn,
      signOut,
    },
    commits: () => calls.filter((c) => c.name === "commit_order" && c.from === "view"),
    /** Every payment sheet the view opened (requestCheckout), oldest first. */
    sheets,
    chat: {
      get on() { return chat.on; },
      get turns() { return chat.turns; },
      get busy() { return chat.busy; },
      get pending() { return chat.pending; },
      send: chatSend,
      poll: chatPoll,
      decline: chatDecline,
    },
    openedLinks,
    /** The host's own tool call for this page's user (not the model's, not the view's). */
    callAsHost: (name, args) => callTool(name, args || {}, "host"),
    /** A host→view request on the MCP Apps bridge; its answer ({result} or {error}), or null. */
    askView,
    holdAnswers,
    releaseHeld,
    get heldAnswers() { return heldAnswers.length; },
    setDropViewCalls: (drop) => {
      dropViewCalls = !!drop;
      log("host", `view tool calls: ${dropViewCalls ? "dropped (never answered)" : "answered"}`);
    },
  };
})();
