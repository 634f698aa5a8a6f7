// Shared helpers: start the real server with --preview, drive Debian's Chromium with
// playwright-core (never a downloaded browser), open the preview host, save screenshots.
// `startServer({ auth: true })` also starts the local authorization server (preview/oidc/,
// oidc-provider; needs `npm ci` there) and runs the server in verified mode against it.
import { spawn, spawnSync } from "node:child_process";
import { createInterface } from "node:readline";
import { mkdtempSync, mkdirSync, rmSync, existsSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import { wasmGate } from "./wasm-gate.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(here, "../..");
export const ARTIFACTS = process.env.GIFTGENIUS_BROWSER_ARTIFACTS || path.join(ROOT, "target/browser-artifacts");
const CHROMIUM = process.env.GIFTGENIUS_CHROMIUM || "/usr/bin/chromium";
// As on these machines: no sandbox as root, no GPU, no background traffic to Google.
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

function serverBinary() {
  if (process.env.GIFTGENIUS_SERVER_BIN) return process.env.GIFTGENIUS_SERVER_BIN;
  const target = process.env.CARGO_TARGET_DIR ? path.resolve(ROOT, process.env.CARGO_TARGET_DIR) : path.join(ROOT, "target");
  return path.join(target, "debug/giftgenius-server");
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.unref();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const OIDC_DIR = path.join(ROOT, "preview/oidc");
/** The public client the preview page signs in as (as `cargo xtask preview --auth`). */
export const PREVIEW_CLIENT_ID = "giftgenius-preview";

/**
 * Starts preview/oidc/server.mjs on a free loopback port with fresh keys in `dir`, the preview's
 * client and `redirectUris`; resolves once its first line names the issuer.
 */
async function startOidc(dir, { redirectUris, resource }) {
  if (!existsSync(path.join(OIDC_DIR, "node_modules/oidc-provider"))) {
    throw new Error("oidc-provider is not installed: run `npm ci --ignore-scripts` in preview/oidc (cargo xtask browser-test does)");
  }
  const keys = spawnSync(process.execPath, [path.join(OIDC_DIR, "keys.mjs"), dir, "rsa-1:rsa"], { encoding: "utf8" });
  if (keys.status !== 0) throw new Error(`keys.mjs failed: ${keys.stderr}`);
  const args = [path.join(OIDC_DIR, "server.mjs"), "--jwks", path.join(dir, "jwks.json"), "--port", "0",
    "--client-id", PREVIEW_CLIENT_ID, "--resource", resource, ...redirectUris.flatMap((u) => ["--redirect-uri", u])];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stderr.on("data", (d) => { output += d; });
  let exited = false;
  child.on("exit", () => { exited = true; });
  const lines = createInterface({ input: child.stdout });
  const first = await Promise.race([
    new Promise((resolve) => lines.once("line", resolve)),
    new Promise((resolve) => child.once("exit", () => resolve(null))),
    sleep(30000).then(() => null),
  ]);
  lines.on("line", () => {}); // keep the pipe drained
  if (!first || !first.startsWith("listening ")) {
    child.kill("SIGKILL");
    throw new Error(`the authorization server did not start (${first}):\n${output}`);
  }
  return {
    issuer: first.slice("listening ".length).trim(),
    output: () => output,
    async stop() {
      if (!exited) {
        child.kill("SIGTERM");
        for (let j = 0; j < 50 && !exited; j++) await sleep(100);
        if (!exited) child.kill("SIGKILL");
      }
    },
  };
}

/**
 * Starts `giftgenius-server --preview` on a free port with a fresh database. With `auth`, also
 * the local authorization server, and the server in verified mode (`--auth-issuer`,
 * `--token-secret-file`); the page's redirect URIs are /preview/callback on localhost and 127.0.0.1.
 */
export async function startServer({ extraArgs = [], auth = false } = {}) {
  const bin = serverBinary();
  if (!existsSync(bin)) throw new Error(`${bin} is missing; run \`cargo build -p giftgenius-server\` (cargo xtask test does)`);
  const widget = process.env.GIFTGENIUS_WIDGET_HTML || path.join(ROOT, "dist/giftgenius-widget.html");
  if (!existsSync(widget)) throw new Error(`${widget} is missing; run \`cargo xtask widget\``);
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const dir = mkdtempSync(path.join(tmpdir(), "gg-browser-"));
    const base = `http://127.0.0.1:${port}`;
    let oidc = null;
    const authArgs = [];
    if (auth) {
      oidc = await startOidc(dir, {
        redirectUris: [`http://localhost:${port}/preview/callback`, `${base}/preview/callback`],
        resource: `${base}/mcp`,
      });
      const secret = path.join(dir, "token-secret");
      writeFileSync(secret, `preview-1 ${randomBytes(32).toString("hex")}\n`);
      authArgs.push("--auth-issuer", oidc.issuer, "--token-secret-file", secret);
    }
    const args = [
      "--preview",
      "--host", "127.0.0.1",
      "--port", String(port),
      "--db", path.join(dir, "giftgenius.db"),
      "--widget-html", widget,
      "--sandbox-latency-ms", "30",
      // An injected provider timeout holds the answer until the server gives up: 2 s, not 10.
      "--payments-timeout-ms", "2000",
      "--catalog-url", `${base}/preview/catalog`,
      // Every page, widget, picture and tool call comes from 127.0.0.1: the suite (and
      // bench.mjs) test the widget, not the per-address rate limit, which has tests of its own.
      "--rate-limit-per-minute", "0",
      ...authArgs,
      ...extraArgs,
    ];
    const child = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, RUST_LOG: process.env.RUST_LOG || "warn" } });
    let output = "";
    child.stdout.on("data", (d) => { output += d; });
    child.stderr.on("data", (d) => { output += d; });
    let exited = false;
    child.on("exit", () => { exited = true; });
    for (let i = 0; i < 100 && !exited; i++) {
      try {
        const res = await fetch(`${base}/healthz`);
        if (res.ok) {
          return {
            base,
            port,
            issuer: oidc ? oidc.issuer : null,
            output: () => output + (oidc ? `\n--- authorization server ---\n${oidc.output()}` : ""),
            async ledger() {
              const r = await fetch(`${base}/preview/ledger`);
              return (await r.json()).count;
            },
            /** How many refunds the sandbox payment provider made. */
            async refunds() {
              const r = await fetch(`${base}/preview/ledger`);
              return (await r.json()).refunds;
            },
            async stop() {
              if (!exited) {
                child.kill("SIGTERM");
                for (let j = 0; j < 50 && !exited; j++) await sleep(100);
                if (!exited) child.kill("SIGKILL");
              }
              await oidc?.stop();
              rmSync(dir, { recursive: true, force: true });
            },
          };
        }
      } catch (_) { /* not up yet */ }
      await sleep(100);
    }
    if (!exited) child.kill("SIGKILL");
    await oidc?.stop();
    rmSync(dir, { recursive: true, force: true });
    if (!/address|in use|bind/i.test(output)) throw new Error(`server did not start:\n${output}`);
  }
  throw new Error("server did not start after 3 attempts (ports taken?)");
}

/**
 * Debian's Chromium on a fresh profile whose third-party storage setting is a desktop browser's
 * default (allowed, partitioned: `profile.cookie_controls_mode` 0). Playwright's own launch
 * profile blocks third-party cookies, and with them all storage in a cross-site frame; an MCP
 * Apps view runs in one (the host's sandbox domain), and keeps its idempotency key and its
 * screen in that storage. Tests still make their own (incognito) context each, which follows
 * the profile's setting. `close()` also removes the profile.
 */
export async function launchBrowser() {
  const profile = mkdtempSync(path.join(tmpdir(), "gg-chromium-"));
  mkdirSync(path.join(profile, "Default"), { recursive: true });
  writeFileSync(path.join(profile, "Default/Preferences"), JSON.stringify({ profile: { cookie_controls_mode: 0 } }));
  const persistent = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  const browser = persistent.browser();
  return {
    newContext: (options) => browser.newContext(options),
    async close() {
      await persistent.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Opens the preview host with a bridge/csp/theme. Collects dialogs (none may fire), console
 * errors and page errors of both the host page and the widget frame. `host`: more of the
 * preview's query parameters (onError, styles, safeArea, displayModes, stream,
 * announceWidgetState). `holdWasm`: every widget document's WebAssembly start waits for
 * `releaseWasm()` (wasm-gate.mjs), so the first paint can be used before the wasm takes over.
 */
export async function openPreview(browser, server, { bridge = "openai", csp = "chatgpt", theme = "light", sandbox = "auto", callTimeoutMs = "", host = {}, holdWasm = false } = {}) {
  const context = await browser.newContext({ viewport: { width: 1500, height: 1000 } });
  if (holdWasm) await context.addInitScript(wasmGate);
  const page = await context.newPage();
  const dialogs = [];
  const consoleErrors = [];
  page.on("dialog", async (d) => { dialogs.push(d.message()); await d.dismiss().catch(() => {}); });
  page.on("console", (m) => { if (m.type() === "error") consoleErrors.push(m.text()); });
  page.on("pageerror", (e) => consoleErrors.push(String(e)));
  // localhost (not 127.0.0.1): the MCP Apps sandbox is then sandbox.localhost, same-site.
  const extra = Object.entries(host).map(([k, v]) => `&${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("");
  await page.goto(`${server.base.replace("127.0.0.1", "localhost")}/preview?bridge=${bridge}&csp=${csp}&theme=${theme}&sandbox=${sandbox}&callTimeoutMs=${callTimeoutMs}${extra}`);
  await page.evaluate(() => window.ggPreview.ready);
  const frame = () => page.frameLocator("#widget");
  const widgetFrame = async () => {
    const handle = await page.$("#widget");
    return handle && (await handle.contentFrame());
  };
  return {
    page,
    context,
    dialogs,
    consoleErrors,
    frame,
    bridge,
    csp,
    /** Runs a fixture or a tool call as the model; resolves with the CallToolResult. */
    fixture: (name) => page.evaluate((n) => window.ggPreview.fixture(n), name),
    run: (tool, args) => page.evaluate(([t, a]) => window.ggPreview.run(t, a), [tool, args]),
    setTheme: (t) => page.evaluate((x) => window.ggPreview.setTheme(x), t),
    reload: () => page.evaluate(() => window.ggPreview.reload()),
    setFaults: (plan) => page.evaluate((p) => window.ggPreview.setFaults(p), plan),
    /** Links the view asked the host to open: [{via, url}]. */
    openedLinks: () => page.evaluate(() => window.ggPreview.openedLinks.slice()),
    /** While on, the host never answers the view's tool calls. */
    setDropViewCalls: (drop) => page.evaluate((d) => window.ggPreview.setDropViewCalls(d), drop),
    /** The host keeps the answers to the view's calls of `tool` (null: stop holding new ones). */
    holdAnswers: (tool) => page.evaluate((t) => window.ggPreview.holdAnswers(t), tool),
    /** Delivers the held answers (dropped by the host if the view that asked is gone). */
    releaseHeld: () => page.evaluate(() => window.ggPreview.releaseHeld()),
    /** A tool call of the host itself for this page's user; resolves with the CallToolResult. */
    callAsHost: (tool, args) => page.evaluate(([t, a]) => window.ggPreview.callAsHost(t, a), [tool, args]),
    /** The view's tool calls so far: [{name, arguments, answered, ok}]. */
    viewCalls: () => page.evaluate(() => window.ggPreview.calls.filter((c) => c.from === "view")
      .map((c) => ({ name: c.name, arguments: c.arguments, answered: !!(c.result || c.error), ok: !!c.result && !c.result.isError, result: c.result || null }))),
    /** With `holdWasm`: lets the current widget document's WebAssembly start. */
    releaseWasm: async () => {
      const f = await widgetFrame();
      assert(f, "no widget frame to release the wasm in");
      assert(await f.evaluate(() => typeof window.__ggReleaseWasm === "function" && window.__ggReleaseWasm()), "the wasm gate is not installed in the widget frame");
    },
    /** The widget frame's current URL (a navigation of the frame would change it). */
    frameUrl: async () => {
      const handle = await page.$("#widget");
      const f = handle && (await handle.contentFrame());
      return f ? f.url() : "";
    },
    commits: () => page.evaluate(() => window.ggPreview.commits().map((c) => ({ arguments: c.arguments, ok: c.result ? !c.result.isError : false }))),
    /** The widget document's `data-wasm` (ready | failed | fallback | loading). */
    wasmState: async () => {
      const f = await widgetFrame();
      return f ? f.evaluate(() => document.documentElement.dataset.wasm || "") : "";
    },
    /**
     * Resolves once the widget frame has painted two more frames with every image loaded or
     * failed: whatever the last step started in the frame (an element, an image's onerror, a
     * navigation) has had its turn. The positive event a "nothing happened" check waits for,
     * instead of a guessed pause. Returns the frame's URL then.
     */
    settled: async () => {
      const f = await (await page.$("#widget")).contentFrame();
      await f.evaluate(() => new Promise((resolve) => {
        const loaded = () => Array.from(document.images).every((i) => i.complete);
        const paint = (frames) => requestAnimationFrame(() => (frames > 1 || !loaded() ? paint(frames - 1) : resolve()));
        paint(2);
      }));
      return f.url();
    },
    /** The visible element matching `selector` inside the widget (wasm root or fallback). */
    visible: (selector) => frame().locator(`${selector}:visible`).first(),
    close: () => context.close(),
  };
}

export async function screenshot(h, name) {
  mkdirSync(ARTIFACTS, { recursive: true });
  const safe = name.replace(/[^a-z0-9._-]+/gi, "_");
  await h.page.screenshot({ path: path.join(ARTIFACTS, `${safe}.png`), fullPage: true });
  const el = await h.page.$("#widget");
  if (el) await el.screenshot({ path: path.join(ARTIFACTS, `${safe}.widget.png`) }).catch(() => {});
}

export async function until(fn, { timeout = 10000, interval = 50, message = "condition" } = {}) {
  const end = Date.now() + timeout;
  let last;
  while (Date.now() < end) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    await sleep(interval);
  }
  throw new Error(`timed out waiting for ${message} (last: ${last})`);
}
