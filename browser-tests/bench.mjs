// Measurement, not a test: time from the widget iframe's navigation start to rendered results
// (the visible .gg-root[data-state=results]: the server-rendered first paint), and to the wasm
// view holding them (`data-wasm="ready"`, results inside #giftgenius-root: interactive with wasm),
// median of 20 reloads, for the wasm path (ChatGPT-like CSP) and the no-WebAssembly fallback (MCP
// Apps default CSP, where the first paint stays interactive), per bridge. Also the artifact size.
//
//   cargo build -p giftgenius-server && cargo xtask widget && node browser-tests/bench.mjs [runs]
import { readFileSync } from "node:fs";
import { gzipSync, brotliCompressSync, constants } from "node:zlib";
import path from "node:path";
import { startServer, launchBrowser, openPreview, ROOT } from "./lib/harness.mjs";

const RUNS = Number(process.argv[2] || 20);
const BRIDGES = (process.env.BENCH_BRIDGES || "openai,mcp-apps").split(",");

// Runs in every frame before its scripts: records when results first become visible.
const OBSERVER = () => {
  if (window === window.top) return;
  const seen = () => {
    for (const el of document.querySelectorAll('.gg-root[data-state="results"]')) {
      if (el.checkVisibility ? el.checkVisibility() : el.offsetParent !== null) return true;
    }
    return false;
  };
  const mark = () => {
    if (window.__ggRendered === undefined && seen()) {
      window.__ggRendered = performance.now();
    }
    if (window.__ggReady === undefined && document.documentElement.dataset.wasm === "ready" &&
      document.querySelector('#giftgenius-root .gg-root[data-state="results"]')) {
      window.__ggReady = performance.now();
    }
  };
  new MutationObserver(mark).observe(document, { subtree: true, childList: true, attributes: true });
};

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

async function measure(browser, server, bridge, csp) {
  const h = await openPreview(browser, server, { bridge, csp });
  await h.context.addInitScript(OBSERVER);
  try {
    await h.fixture("results");
    const times = [];
    const ready = [];
    let pathSeen = "";
    for (let i = 0; i < RUNS + 1; i++) {
      await h.reload();
      const handle = await h.page.waitForSelector("#widget");
      const frame = await handle.contentFrame();
      const end = Date.now() + 20000;
      let t;
      while (Date.now() < end) {
        t = await frame.evaluate(() => window.__ggRendered).catch(() => undefined);
        if (t !== undefined) break;
        await new Promise((r) => setTimeout(r, 25));
      }
      if (t === undefined) throw new Error(`${bridge}/${csp}: results never rendered (data-wasm=${await h.wasmState()})`);
      pathSeen = await h.wasmState();
      let r;
      while (csp === "chatgpt" && Date.now() < end) {
        r = await frame.evaluate(() => window.__ggReady).catch(() => undefined);
        if (r !== undefined) break;
        await new Promise((res) => setTimeout(res, 25));
      }
      if (i > 0) times.push(t); // the first load warms caches
      if (i > 0 && r !== undefined) ready.push(r);
    }
    return {
      median: median(times), min: Math.min(...times), max: Math.max(...times), path: pathSeen,
      ready: ready.length ? median(ready) : undefined,
    };
  } finally {
    await h.close();
  }
}

const html = readFileSync(process.env.GIFTGENIUS_WIDGET_HTML || path.join(ROOT, "dist/giftgenius-widget.html"));
const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
console.log(`artifact: ${html.length} B raw (${kib(html.length)}), ` +
  `${gzipSync(html, { level: 9 }).length} B gzip -9 (${kib(gzipSync(html, { level: 9 }).length)}), ` +
  `${brotliCompressSync(html, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length} B brotli q11 ` +
  `(${kib(brotliCompressSync(html, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length)})`);

const server = await startServer();
const browser = await launchBrowser();
try {
  console.log(`iframe navigation start → visible results, ${RUNS} runs each (ms):`);
  for (const bridge of BRIDGES) {
    for (const [csp, label] of [["chatgpt", "wasm"], ["mcp-apps", "fallback"]]) {
      try {
        const r = await measure(browser, server, bridge, csp);
        const interactive = r.ready === undefined ? "" : `  wasm interactive median ${r.ready.toFixed(1)}`;
        console.log(`  ${bridge.padEnd(8)} ${label.padEnd(8)} first paint median ${r.median.toFixed(1)}  min ${r.min.toFixed(1)}  max ${r.max.toFixed(1)}${interactive}  (data-wasm=${r.path})`);
      } catch (e) {
        console.log(`  ${bridge.padEnd(8)} ${label.padEnd(8)} FAILED: ${e.message.split("\n")[0]}`);
      }
    }
  }
} finally {
  await browser.close();
  await server.stop();
}
