// The widget's MCP Apps path under the real host-side AppBridge of npm
// @modelcontextprotocol/ext-apps, at 2.0.4 and at 1.7.5 (lib/appbridge.mjs, appbridge/host.mjs),
// beside the preview host's own implementation of the wire (mcp-apps.test.mjs): the handshake,
// the model's results rendered, the view's tool calls through the bridge (Choose, Confirm:
// the order placed and charged once, counted in the sandbox ledger), links and logs through the
// host, the host's theme followed.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { startServer, launchBrowser, screenshot, until } from "../lib/harness.mjs";
import { EXT_APPS, installedVersion, startAppBridgeHost } from "../lib/appbridge.mjs";

const RECIPIENT = { name: "Ana Sousa", address: { line1: "Rua Augusta 12", city: "Lisboa", postal_code: "1100-053", country: "PT" } };

let server;
let host;
let browser;
before(async () => {
  server = await startServer();
  host = await startAppBridgeHost(server);
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close().catch(() => {});
  await host?.stop();
  await server?.stop();
});

/** The host page under `alias`, ready: {page, frame, gg(fn), run, visible, state, errors}. */
async function open(alias) {
  const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  await page.goto(host.url(alias));
  await until(() => page.evaluate(() => window.gg?.ready === true), { message: "the AppBridge host page" });
  const frame = () => page.frameLocator("#view");
  const h = {
    page, context, errors, frame,
    gg: (fn, arg) => page.evaluate(fn, arg),
    run: (tool, args) => page.evaluate(([t, a]) => window.gg.run(t, a), [tool, args]),
    visible: (sel) => frame().locator(`${sel}:visible`).first(),
    /** The visible root's data-state once it is `want`. */
    state: (want) => until(async () => {
      const roots = frame().locator(".gg-root:visible");
      for (let i = 0; i < (await roots.count()); i++) if ((await roots.nth(i).getAttribute("data-state")) === want) return true;
      return false;
    }, { timeout: 20000, message: `widget state ${want}` }),
    calls: (from) => page.evaluate((f) => window.gg.calls.filter((c) => c.from === f).map((c) => ({ name: c.name, arguments: c.arguments,
      ok: !!c.result && !c.result.isError })), from),
    wasm: () => until(async () => {
      const s = await frame().locator("html").getAttribute("data-wasm");
      return s && s !== "loading" ? s : false;
    }, { timeout: 20000, message: "data-wasm to settle" }),
  };
  h.ledger0 = await page.evaluate(() => window.gg.ledger());
  h.charges = async () => (await page.evaluate(() => window.gg.ledger())) - h.ledger0;
  return h;
}

for (const { alias, version } of EXT_APPS) {
  const label = `AppBridge ${version}`;

  async function withHost(name, fn) {
    const h = await open(alias);
    try {
      await fn(h);
    } catch (e) {
      await screenshot({ page: h.page }, `FAILED-appbridge-${version}-${name}`).catch(() => {});
      const seen = await h.page.evaluate(() => ({ calls: window.gg.calls.map((c) => `${c.from} ${c.name} ${c.error || (c.result?.isError ? "isError" : "ok")}`),
        logs: window.gg.logs, initialized: window.gg.initialized })).catch(() => ({}));
      e.message += `\n  host saw: ${JSON.stringify(seen)}\n  page errors: ${h.errors.slice(-5).join(" | ")}`;
      throw e;
    } finally {
      await h.context.close();
    }
  }

  test(`${label}: the pinned package is the one installed`, () => {
    assert.equal(installedVersion(alias), version);
  });

  test(`${label}: the handshake, then the model's suggestions render as cards`, () => withHost("suggestions", async (h) => {
    const result = await h.run("suggest_gifts", { relationship_type: "friend", age: 30, interests: ["hiking"], budget_max: 100 });
    assert.equal(result.isError, false);
    await h.state("results");
    assert.ok((await h.frame().locator(".gg-card:visible").count()) >= 1, "cards");
    assert.equal(await h.wasm(), "ready", "the wasm renders what the bridge told it");
    const seen = await h.gg(() => ({ initialized: window.gg.initialized, appInfo: window.gg.appInfo, sizes: window.gg.sizes.length }));
    assert.equal(seen.initialized, 1, "ui/notifications/initialized reached the bridge once");
    assert.equal(seen.appInfo?.name, "giftgenius-widget", "the bridge read the view's ui/initialize");
    assert.ok(seen.sizes >= 1, "the view's size reached the host");
    await screenshot({ page: h.page }, `appbridge-${version}-results`);
  }));

  test(`${label}: Choose asks the host for prepare_order through the bridge and shows the confirmation`, () => withHost("choose", async (h) => {
    await h.run("suggest_gifts", { relationship_type: "friend", age: 30, interests: ["hiking"], budget_max: 100 });
    await h.state("results");
    await h.wasm();
    await h.visible('[data-action="choose"]').click();
    await h.state("confirm");
    const calls = await h.calls("view");
    assert.equal(calls.length, 1);
    assert.equal(calls[0].name, "prepare_order");
    assert.ok(calls[0].ok && typeof calls[0].arguments.gift_id === "string", JSON.stringify(calls));
    await h.visible('[data-action="confirm"]').waitFor();
  }));

  test(`${label}: Confirm buys through the host: the order placed, charged exactly once, its key told as model context`, () => withHost("confirm", async (h) => {
    const draft = await h.run("prepare_order", { gift_id: "tr-007", recipient: RECIPIENT, gift_message: "Happy birthday, Ana!" });
    assert.equal(draft.isError, false);
    await h.state("confirm");
    await h.wasm();
    assert.equal(await h.charges(), 0);
    await h.visible('[data-action="confirm"]').click();
    await h.state("order-placed");
    assert.match(await h.visible(".gg-order-placed code").innerText(), /\S/);
    assert.equal(await h.charges(), 1);
    const commits = (await h.calls("view")).filter((c) => c.name === "commit_order");
    assert.equal(commits.length, 1);
    assert.ok(commits[0].ok);
    assert.equal(commits[0].arguments.draft_id, draft.structuredContent.draft.id, "the draft the model prepared");
    assert.match(commits[0].arguments.idempotency_key, /\S{16,}/);
    assert.equal(typeof commits[0].arguments.confirmation_token, "string", "the token from the result's _meta, filled by the runtime");
    // The key was kept (ui/update-model-context) before commit_order went out.
    const told = await h.gg(() => window.gg.modelContext.map((p) => p.structuredContent));
    assert.ok(told.some((s) => JSON.stringify(s).includes(commits[0].arguments.idempotency_key)), JSON.stringify(told));
    await screenshot({ page: h.page }, `appbridge-${version}-order-placed`);
  }));

  test(`${label}: the checkout link opens through the host (ui/open-link), the frame stays`, () => withHost("open-link", async (h) => {
    const result = await h.run("create_checkout_session", { gift_id: "tr-007", idempotency_key: `appbridge_${randomBytes(16).toString("hex")}` });
    const url = result.structuredContent.checkout.checkout_url;
    await h.state("checkout");
    await h.wasm();
    await h.visible('.gg-checkout [data-action="open-link"]').click();
    const links = await until(async () => {
      const l = await h.gg(() => window.gg.links.slice());
      return l.length ? l : false;
    }, { message: "ui/open-link to reach the host" });
    assert.deepEqual(links, [url]);
    await h.state("checkout");
  }));

  test(`${label}: a call the host refuses is noted in the view and logged to the host`, () => withHost("log", async (h) => {
    await h.run("suggest_gifts", { relationship_type: "friend", age: 30, interests: ["hiking"], budget_max: 100 });
    await h.state("results");
    await h.wasm();
    await h.gg(() => { window.gg.refuseViewCalls = true; });
    await h.visible('[data-action="choose"]').click();
    await h.frame().locator(".gg-inline-error:visible").first().waitFor({ timeout: 15000 });
    const line = await until(async () => (await h.gg(() => window.gg.logs.slice())).find((l) => l.data?.event === "tool_call_failed"),
      { message: "the view's log line at the bridge" });
    assert.equal(line.level, "error");
    assert.equal(line.logger, "giftgenius-widget");
    assert.equal(line.data.tool, "prepare_order");
    assert.ok(!JSON.stringify(line).includes("gift_id"), "no arguments in a log line");
    assert.equal(await h.charges(), 0);
  }));

  test(`${label}: the host's theme change reaches the view`, () => withHost("theme", async (h) => {
    await h.run("suggest_gifts", { relationship_type: "friend", interests: ["tea"] });
    await h.state("results");
    await h.wasm();
    assert.equal(await h.visible(".gg-root").getAttribute("data-theme"), "light");
    await h.gg(() => window.gg.setTheme("dark"));
    await until(async () => (await h.visible(".gg-root").getAttribute("data-theme")) === "dark", { message: "dark theme in the view" });
  }));
}
