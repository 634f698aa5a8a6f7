// Accessibility and screenshots of every widget state (issue 15, items 5 and 7), in the MCP Apps
// preview host with WebAssembly (the host that offers both display modes):
// - every state × display mode (inline, fullscreen) × language (en, es, pt: the host's locale)
//   × theme (light, dark): axe-core finds no serious or critical violation (nor any of the
//   moderate rules once fixed: one main landmark, a level-one heading), and a screenshot
//   of the widget frame is kept as screenshots/STATE-MODE-LANG-THEME.png in the artifacts folder
//   (target/browser-artifacts, or $GIFTGENIUS_BROWSER_ARTIFACTS), listed in screenshots/index.txt;
// - the server-rendered fallback (no WebAssembly) passes axe in both themes too;
// - Tab walks the result cards and the confirmation in document order, each stop visibly
//   focused and scrolled into view;
// - with `prefers-reduced-motion: reduce` nothing animates or transitions.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { startServer, launchBrowser, openPreview, until, ARTIFACTS } from "../lib/harness.mjs";
import { STATES, AXE_VERSION, FAILING_RULES, failing, runAxe, rootState, waitForState, waitForTheme, waitForDisplayMode, tabbables, walkTab, motion } from "../lib/a11y.mjs";

const LANGS = [["en", "en-US"], ["es", "es-ES"], ["pt", "pt-BR"]];
const MODES = ["inline", "fullscreen"];
const THEMES = ["light", "dark"];
const SHOTS = path.join(ARTIFACTS, "screenshots");

let server;
let browser;
before(async () => {
  server = await startServer();
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close().catch(() => {});
  await server?.stop();
});

/** Per state: how many axe runs, and every violation id by impact with the variants it hit. */
function tally() {
  const byState = new Map();
  return {
    add(state, variant, violations) {
      const s = byState.get(state) || { runs: 0, found: new Map() };
      s.runs++;
      for (const v of violations) {
        const key = `${v.impact}:${v.id}`;
        const f = s.found.get(key) || { ...v, variants: [] };
        f.variants.push(variant);
        s.found.set(key, f);
      }
      byState.set(state, s);
    },
    lines() {
      return [...byState].map(([state, s]) => {
        const counts = ["critical", "serious", "moderate", "minor"].map((impact) =>
          `${impact} ${[...s.found.values()].filter((f) => f.impact === impact).length}`).join(", ");
        const ids = [...s.found.values()].map((f) => `${f.impact} ${f.id} (${f.variants.length}/${s.runs})`).join("; ");
        return `${state}: ${s.runs} axe runs; ${counts}${ids ? ` — ${ids}` : ""}`;
      });
    },
    failures() {
      return [...byState].flatMap(([state, s]) => [...s.found.values()]
        .filter(failing)
        .map((f) => `${state}: ${f.impact} ${f.id} "${f.help}" in ${f.variants.slice(0, 3).join(", ")}${f.variants.length > 3 ? "…" : ""} at ${f.nodes.join(" | ")}`));
    },
  };
}

/** The host's display mode, and the view saying it shows it. */
async function setMode(h, mode) {
  await h.page.evaluate((m) => window.ggPreview.setDisplayMode(m), mode);
  await waitForDisplayMode(h, mode);
}

async function setTheme(h, theme) {
  await h.setTheme(theme);
  await waitForTheme(h, theme);
}

/**
 * Two frames, so layout and paint have caught up with the last change; at most 250 ms, since
 * Chromium may not run animation frames for a cross-origin frame scrolled out of view.
 */
async function settled(h) {
  const handle = await h.page.$("#widget");
  const frame = await handle.contentFrame();
  await frame.evaluate(() => new Promise((r) => {
    requestAnimationFrame(() => requestAnimationFrame(r));
    setTimeout(r, 250);
  }));
}

async function open(opts) {
  const h = await openPreview(browser, server, opts);
  // Screenshots without a skeleton caught mid-pulse; the motion test checks both settings.
  await h.page.emulateMedia({ reducedMotion: "reduce" });
  return h;
}

test(`axe-core ${AXE_VERSION}: every state in both display modes, three languages and both themes; screenshots of each`, async (t) => {
  const axe = tally();
  const shots = [];
  mkdirSync(SHOTS, { recursive: true });
  for (const [lang, locale] of LANGS) {
    const h = await open({ bridge: "mcp-apps", csp: "chatgpt", host: { locale } });
    try {
      for (const s of STATES) {
        await s.reach(h);
        assert.equal(await rootState(h), s.state, s.name);
        for (const mode of MODES) {
          await setMode(h, mode);
          for (const theme of THEMES) {
            await setTheme(h, theme);
            await settled(h);
            const variant = `${mode}-${lang}-${theme}`;
            axe.add(s.name, variant, await runAxe(h));
            const file = `${s.name}-${variant}.png`;
            await h.page.locator("#widget").screenshot({ path: path.join(SHOTS, file) });
            shots.push(file);
          }
        }
        // The next state starts from the host's defaults.
        await setMode(h, "inline");
        await setTheme(h, "light");
      }
      assert.deepEqual(h.dialogs, []);
    } finally {
      await h.close();
    }
  }
  writeFileSync(path.join(SHOTS, "index.txt"), `${shots.join("\n")}\n`);
  const lines = axe.lines();
  writeFileSync(path.join(ARTIFACTS, "axe-summary.txt"), `axe-core ${AXE_VERSION}, mcp-apps/wasm\n${lines.join("\n")}\n`);
  for (const line of lines) t.diagnostic(line);
  t.diagnostic(`${shots.length} screenshots in ${SHOTS} (index.txt lists them)`);
  assert.equal(readdirSync(SHOTS).filter((f) => f.endsWith(".png")).length >= shots.length, true);
  assert.deepEqual(axe.failures(), [], `no serious or critical axe violation, none of ${FAILING_RULES.join(", ")}`);
});

test(`axe-core ${AXE_VERSION}: the server-rendered fallback (no WebAssembly), both themes`, async (t) => {
  const axe = tally();
  const h = await open({ bridge: "mcp-apps", csp: "mcp-apps" });
  try {
    // The fallback shows no loading state; everything else it shows as the wasm view does.
    for (const s of STATES.filter((x) => x.name !== "loading")) {
      await s.reach(h);
      for (const theme of THEMES) {
        await setTheme(h, theme);
        await settled(h);
        axe.add(s.name, `inline-en-${theme}`, await runAxe(h));
      }
      await setTheme(h, "light");
    }
  } finally {
    await h.close();
  }
  for (const line of axe.lines()) t.diagnostic(line);
  assert.deepEqual(axe.failures(), [], `no serious or critical axe violation, none of ${FAILING_RULES.join(", ")}`);
});

for (const mode of MODES) {
  test(`keyboard (${mode}): Tab walks the cards and the confirmation in order, each stop visibly focused and in view`, async (t) => {
    const h = await open({ bridge: "mcp-apps", csp: "chatgpt" });
    try {
      await STATES.find((s) => s.name === "results").reach(h);
      await setMode(h, mode);
      await settled(h);
      const check = async (where) => {
        const want = await tabbables(h);
        const stops = await walkTab(h);
        t.diagnostic(`${where}: ${stops.map((s) => s.action).join(" → ")}`);
        assert.deepEqual(stops.map((s) => s.key), want.map((w) => w.key),
          `${where}: Tab follows the document order (${want.map((w) => w.action).join(" → ")}; the walk began with ${stops.start})`);
        const unseen = stops.filter((s) => !s.visibleFocus).map((s) => s.action);
        assert.deepEqual(unseen, [], `${where}: every stop shows a focus indicator`);
        const hidden = stops.filter((s) => !s.inView).map((s) => s.action);
        assert.deepEqual(hidden, [], `${where}: every stop is scrolled into view`);
        return stops;
      };
      const results = await check("results");
      const cards = await h.frame().locator('[data-action="choose"]:visible').count();
      assert.equal(results.filter((s) => s.action === "choose").length, cards, "every card's Choose is reached");
      // Choose by keyboard: the confirmation, then its own walk.
      await h.frame().locator('[data-action="choose"]:visible').first().focus();
      await h.page.keyboard.press("Enter");
      await waitForState(h, "confirm");
      await h.visible('[data-action="confirm"]').waitFor();
      await settled(h);
      const landed = await (await (await h.page.$("#widget")).contentFrame()).evaluate(() => {
        const el = document.activeElement;
        return el && el !== document.body ? `${el.tagName.toLowerCase()} ${el.dataset.action || el.name || el.className}` : "body (nothing focused)";
      });
      t.diagnostic(`after Choose by keyboard, focus is on: ${landed}`);
      // The pressed button is gone: focus goes on from the new screen's heading, not the page.
      assert.match(landed, /^h2 /, "after Choose, focus is on the confirmation's heading");
      const confirm = await check("confirm");
      for (const action of ["recipient.name", "update-delivery", "confirm", "cancel"]) {
        assert.ok(confirm.some((s) => s.action === action), `the confirmation's ${action} is reached`);
      }
    } finally {
      await h.close();
    }
  });
}

test("prefers-reduced-motion: reduce leaves nothing animated or transitioning", async (t) => {
  const h = await openPreview(browser, server, { bridge: "mcp-apps", csp: "chatgpt" });
  try {
    const loading = STATES.find((s) => s.name === "loading");
    await h.page.emulateMedia({ reducedMotion: "no-preference" });
    await loading.reach(h);
    const moving = await motion(h);
    t.diagnostic(`no preference, loading: ${moving.length} moving (${moving.slice(0, 3).join("; ")})`);
    assert.ok(moving.length > 0, "without the preference the skeleton pulses (the check sees motion)");
    await h.page.emulateMedia({ reducedMotion: "reduce" });
    for (const name of ["loading", "results", "confirm", "order-list-ask-cancel"]) {
      await STATES.find((s) => s.name === name).reach(h);
      for (const mode of MODES) {
        await setMode(h, mode);
        await settled(h);
        const still = await motion(h);
        assert.deepEqual(still, [], `${name} (${mode}) with reduced motion`);
      }
      await setMode(h, "inline");
    }
  } finally {
    await h.close();
  }
});
