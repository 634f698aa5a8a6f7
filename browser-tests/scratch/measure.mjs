import { startServer, launchBrowser, openPreview, until } from "../lib/harness.mjs";
const server = await startServer();
const browser = await launchBrowser();
try {
  for (const bridge of ["openai", "mcp-apps"]) for (const locale of ["en-US", "es-ES"]) {
    const h = await openPreview(browser, server, { bridge, host: { locale } });
    await h.fixture(process.argv[2] || "results");
    await until(async () => (await h.frame().locator(".gg-root:visible").getAttribute("data-state")) === (process.argv[3] || "results"), { timeout: 15000 });
    for (const width of [360, 768]) {
      await h.page.evaluate((w) => { const f = document.querySelector("#widget"); f.style.width = w + "px"; f.style.height = "900px"; }, width);
      await new Promise((r) => setTimeout(r, 300));
      const height = await h.frame().locator(".gg-root:visible").evaluate((el) => Math.round(el.getBoundingClientRect().height));
      const cards = await h.frame().locator(".gg-card:visible").count();
      await h.page.locator("#widget").screenshot({ path: `/tmp/shot-${bridge}-${locale}-${width}.png` });
      console.log(bridge, locale, width, "height", height, "cards", cards, await h.wasmState());
    }
    await h.close();
  }
} finally { await browser.close(); await server.stop?.(); process.exit(0); }
