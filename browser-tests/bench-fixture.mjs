// Writes a real suggest_gifts result for the React peer's render loop (`cargo xtask bench-widget`):
// the preview's "results" fixture called on the real server, its structuredContent as
// <dir>/results.json (PEER_FIXTURE, the stand-in's toolOutput) and its _meta as <dir>/meta.json
// (PEER_META, toolResponseMetadata: the server-rendered HTML the first paint shows).
//
//   node browser-tests/bench-fixture.mjs <dir>
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { startServer, launchBrowser, openPreview } from "./lib/harness.mjs";

const dir = process.argv[2];
if (!dir) {
  console.error("usage: node browser-tests/bench-fixture.mjs <dir>");
  process.exit(2);
}
const server = await startServer();
const browser = await launchBrowser();
try {
  const h = await openPreview(browser, server, { bridge: "openai", csp: "chatgpt" });
  try {
    const result = await h.fixture("results");
    const sc = (result && result.structuredContent) || {};
    const gifts = (sc.data && sc.data.gifts) || sc.gifts;
    if (!result || result.isError || !Array.isArray(gifts) || !result._meta) {
      throw new Error(`the results fixture gave no gifts: ${JSON.stringify(result).slice(0, 300)}`);
    }
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, "results.json"), JSON.stringify(result.structuredContent));
    writeFileSync(path.join(dir, "meta.json"), JSON.stringify(result._meta));
    console.log(`bench-fixture: ${gifts.length} gifts, _meta keys ${Object.keys(result._meta).join(", ")} → ${dir}`);
  } finally {
    await h.close();
  }
} finally {
  await browser.close();
  await server.stop();
}
