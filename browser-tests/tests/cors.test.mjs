// A browser-based MCP host (MCP Apps' examples/basic-host, web inspectors) runs on its own origin
// and calls /mcp with fetch. Here a page served from another origin (a tiny static server on a
// second port, reached as localhost while the server is 127.0.0.1) initializes and lists the
// tools cross-origin, as such a host does: it works for the origin in --cors-origins (preflight,
// the session id readable), and the browser refuses the answer to an origin not listed.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { startServer, launchBrowser } from "../lib/harness.mjs";

let server;
let browser;
let pages;
let pagePort;

before(async () => {
  pages = createServer((_, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end("<!doctype html><title>host</title><p>a browser-based MCP host</p>");
  });
  await new Promise((resolve) => pages.listen(0, "127.0.0.1", resolve));
  pagePort = pages.address().port;
  server = await startServer({ extraArgs: ["--cors-origins", `http://localhost:${pagePort}`] });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close().catch(() => {});
  await server?.stop();
  await new Promise((resolve) => pages?.close(resolve));
});

/** In the page: initialize, then tools/list in the session, with the headers an SDK client sends. */
async function connectFrom(pageOrigin) {
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    await page.goto(`${pageOrigin}/`);
    return await page.evaluate(async (mcp) => {
      const message = async (response) => {
        const text = await response.text();
        // A JSON reply, or SSE whose last data line is the reply.
        const data = text.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).filter(Boolean);
        return JSON.parse(data.length ? data[data.length - 1] : text);
      };
      const headers = {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
      };
      try {
        const init = await fetch(mcp, {
          method: "POST",
          headers,
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "cors-page", version: "1" } } }),
        });
        const session = init.headers.get("mcp-session-id");
        const server = (await message(init)).result.serverInfo.name;
        const sessionHeaders = { ...headers, "mcp-session-id": session };
        await fetch(mcp, { method: "POST", headers: sessionHeaders, body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) });
        const list = await fetch(mcp, { method: "POST", headers: sessionHeaders, body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }) });
        const tools = (await message(list)).result.tools.map((t) => t.name);
        return { ok: true, session: Boolean(session), server, tools };
      } catch (e) {
        return { ok: false, error: String(e) };
      }
    }, `${server.base}/mcp`);
  } finally {
    await context.close();
  }
}

test("a page on a listed origin initializes and lists the tools cross-origin", async () => {
  const result = await connectFrom(`http://localhost:${pagePort}`);
  assert.equal(result.ok, true, `${result.error}\nserver output (tail):\n${server.output().slice(-2000)}`);
  assert.equal(result.session, true, "the Mcp-Session-Id header is exposed to the page");
  assert.equal(result.server, "giftgenius");
  assert.ok(result.tools.includes("suggest_gifts") && result.tools.includes("prepare_order"), result.tools.join(", "));
});

test("a page on an origin not listed gets no answer it may read", async () => {
  // The same static server as 127.0.0.1: another origin, not in --cors-origins.
  const result = await connectFrom(`http://127.0.0.1:${pagePort}`);
  assert.equal(result.ok, false, "the browser must refuse the answer");
  assert.match(result.error, /TypeError|Failed to fetch/);
});
