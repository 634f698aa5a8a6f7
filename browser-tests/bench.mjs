// Measurement, not a test: time from the widget iframe's navigation start to rendered results
// (the visible .gg-root[data-state=results]), median of 20 reloads, for the wasm path (ChatGPT-like
// CSP) and the no-WebAssembly fallback (MCP Apps default CSP), per bridge. Also the artifact size.
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
      if (i > 0) times.push(t); // the first load warms caches
    }
    return { median: median(times), min: Math.min(...times), max: Math.max(...times), path: pathSeen };
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
        console.log(`  ${bridge.padEnd(8)} ${label.padEnd(8)} median ${r.median.toFixed(1)}  min ${r.min.toFixed(1)}  max ${r.max.toFixed(1)}  (data-wasm=${r.path})`);
      } catch (e) {
        console.log(`  ${bridge.padEnd(8)} ${label.padEnd(8)} FAILED: ${e.message.split("\n")[0]}`);
      }
    }
  }
} finally {
  await browser.close();
  await server.stop();
}
