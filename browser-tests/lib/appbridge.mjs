// A second host for the widget's MCP Apps path: the real host-side `AppBridge` of npm
// @modelcontextprotocol/ext-apps, at each pinned version (package.json aliases `ext-apps-2` =
// 2.0.4 and `ext-apps-1` = 1.7.5). Its app-bridge entry (dist/src/app-bridge.js) imports its
// peer packages (the MCP SDK, zod), so esbuild bundles it once per version for the page, as a
// host's build would. A small HTTP server on 127.0.0.1 serves the host page (appbridge/), the
// bundles, and relays /mcp and /preview/ledger to the real giftgenius server, so the page
// reads the widget resource and calls tools over the same origin.
import { createServer } from "node:http";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const PAGE = path.join(HERE, "..", "appbridge");

/** The ext-apps packages under test: npm alias, and the version it must be. */
export const EXT_APPS = [
  { alias: "ext-apps-2", version: "2.0.4" },
  { alias: "ext-apps-1", version: "1.7.5" },
];

/** The installed version of the ext-apps package behind `alias` (its own package.json). */
export function installedVersion(alias) {
  const pkg = JSON.parse(readFileSync(path.join(HERE, "..", "node_modules", alias, "package.json"), "utf8"));
  if (pkg.name !== "@modelcontextprotocol/ext-apps") throw new Error(`${alias} is ${pkg.name}, not @modelcontextprotocol/ext-apps`);
  return pkg.version;
}

/** `alias`'s app-bridge entry and its dependencies as one browser ES module. */
async function bundle(alias) {
  const out = await build({
    stdin: { contents: `export { AppBridge, PostMessageTransport } from "${alias}/app-bridge";`, resolveDir: HERE, loader: "js" },
    bundle: true, format: "esm", platform: "browser", write: false, logLevel: "silent", legalComments: "none",
  });
  return out.outputFiles[0].text;
}

/**
 * Starts the AppBridge host in front of `server` (harness.mjs startServer). Resolves with
 * `{ url(alias), stop() }`: the page for one ext-apps version.
 */
export async function startAppBridgeHost(server) {
  const bundles = {};
  for (const { alias } of EXT_APPS) bundles[alias] = await bundle(alias);
  const files = {
    "/host.html": ["text/html; charset=utf-8", readFileSync(path.join(PAGE, "host.html"))],
    "/host.mjs": ["text/javascript; charset=utf-8", readFileSync(path.join(PAGE, "host.mjs"))],
  };
  for (const [alias, js] of Object.entries(bundles)) files[`/${alias}.js`] = ["text/javascript; charset=utf-8", js];
  const http = createServer(async (req, res) => {
    const url = new URL(req.url, "http://host");
    try {
      if (req.method === "GET" && files[url.pathname]) {
        const [type, body] = files[url.pathname];
        res.writeHead(200, { "Content-Type": type, "Cache-Control": "no-store" });
        return res.end(body);
      }
      if (url.pathname === "/mcp" || url.pathname === "/preview/ledger") return await relay(req, res, `${server.base}${url.pathname}`);
      res.writeHead(404).end();
    } catch (e) {
      res.writeHead(502, { "Content-Type": "text/plain" }).end(String(e));
    }
  });
  await new Promise((resolve) => http.listen(0, "127.0.0.1", resolve));
  const base = `http://localhost:${http.address().port}`;
  return {
    url: (alias) => `${base}/host.html?ext=${alias}`,
    stop: () => new Promise((resolve) => http.close(resolve)),
  };
}

/** Passes the request on to `target` with the MCP headers, and its answer back (streamed). */
async function relay(req, res, target) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const headers = {};
  for (const h of ["content-type", "accept", "mcp-session-id", "mcp-protocol-version", "authorization"]) {
    if (req.headers[h]) headers[h] = req.headers[h];
  }
  const body = chunks.length ? Buffer.concat(chunks) : undefined;
  const answer = await fetch(target, { method: req.method, headers, body });
  const back = {};
  for (const h of ["content-type", "mcp-session-id"]) if (answer.headers.get(h)) back[h] = answer.headers.get(h);
  res.writeHead(answer.status, back);
  if (answer.body) for await (const c of answer.body) res.write(c);
  res.end();
}
