// The browser suite, defined once and run per (bridge, CSP) combination by tests/*.test.mjs.
// Every state comes from a real tool call on a real server; charges are counted in the sandbox
// payment ledger (/preview/ledger), never inferred from responses.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser, openPreview, screenshot, until } from "./harness.mjs";
import { defineHostChecks } from "./host-checks.mjs";
import { defineSheetChecks } from "./sheet-checks.mjs";

export const XSS = "<img src=x onerror=alert(1)>";

// Fixture → what must show: the root's data-state and a selector/text inside it.
const STATES = [
  { fixture: "results", state: "results", check: async (h) => assert.ok((await h.frame().locator(".gg-card:visible").count()) >= 1, "cards") },
  { fixture: "empty", state: "empty", check: (h) => h.visible(".gg-empty").waitFor() },
  { fixture: "partial", state: "results", check: async (h) => {
    await h.visible(".gg-banner-warn").waitFor();
    assert.match(await h.visible(".gg-banner-warn").innerText(), /http-catalog/);
  } },
  { fixture: "validation", state: "error", code: "VALIDATION_ERROR", category: "validation", check: async (h) => {
    assert.match(await h.visible(".gg-error").innerText(), /age/);
    assert.equal(await h.frame().locator('.gg-error [data-action="retry"]:visible').count(), 0, "no Try again on validation");
  } },
  { fixture: "business", state: "error", code: "GIFT_UNAVAILABLE", category: "business", check: async (h) => {
    assert.match(await h.visible(".gg-error").innerText(), /out of stock/i);
  } },
  { fixture: "transient", state: "error", code: "PAYMENT_PROVIDER_UNAVAILABLE", category: "transient", check: async (h) => {
    await h.visible('.gg-error [data-action="retry"]').waitFor();
  } },
  { fixture: "permission", state: "error", code: "CONFIRMATION_REQUIRED", category: "permission", check: async (h) => {
    assert.equal(await h.frame().locator('.gg-error [data-action="retry"]:visible').count(), 0, "permission errors are not retryable");
  } },
  { fixture: "confirm", state: "confirm", check: (h) => h.visible('.gg-confirm-purchase [data-action="confirm"]').waitFor() },
  { fixture: "order placed", state: "order-placed", check: (h) => h.visible(".gg-order-placed").waitFor() },
  { fixture: "checkout", state: "checkout", check: (h) => h.visible('.gg-checkout [data-action="open-link"]').waitFor() },
];

/** The visible root's data-state once it is `want` (wasm root or server-rendered fallback). */
async function waitForState(h, want, timeout = 15000) {
  return until(async () => {
    const roots = h.frame().locator(".gg-root:visible");
    const n = await roots.count();
    for (let i = 0; i < n; i++) {
      if ((await roots.nth(i).getAttribute("data-state")) === want) return true;
    }
    return false;
  }, { timeout, message: `widget state ${want}` });
}

async function visibleState(h) {
  const root = h.frame().locator(".gg-root:visible").first();
  return (await root.count()) ? root.getAttribute("data-state") : null;
}

async function expectRuntime(h, wantWasm) {
  // Wasm path: the module must have started. Fallback path: it must have been refused and the
  // server-rendered HTML shown instead (the bootstrap says "failed" or "fallback").
  const state = await until(async () => {
    const s = await h.wasmState();
    return s && s !== "loading" ? s : false;
  }, { timeout: 15000, message: "data-wasm to settle" });
  if (wantWasm) assert.equal(state, "ready", "WebAssembly should run under this CSP");
  else assert.ok(state === "failed" || state === "fallback", `expected the no-WebAssembly fallback, data-wasm=${state}`);
}

// After a failed commit the view shows the server-rendered error of commit_order (an inline
// note where the host never answered). Either must offer "Try again".
const FAILED_COMMIT = ".gg-inline-error:visible, .gg-error:visible";
const TRY_AGAIN = '.gg-inline-error [data-action="confirm"], .gg-error [data-action="retry"]';

async function click(h, selector) {
  await h.visible(selector).click();
}

/** Types a recipient into the confirm card's delivery form (a draft chosen from the cards has none). */
export async function fillRecipient(h, { city = "Lisboa", postal = "1100-053" } = {}) {
  await h.visible('input[name="recipient.name"]').fill("Ana Sousa");
  await h.visible('input[name="recipient.address.line1"]').fill("Rua Augusta 12");
  await h.visible('input[name="recipient.address.city"]').fill(city);
  await h.visible('input[name="recipient.address.postal_code"]').fill(postal);
  await h.visible('input[name="recipient.address.country"]').fill("PT");
}

/** Waits until the card shows a draft other than `before` with an enabled Confirm; its id. */
export async function newDraft(h, before) {
  return until(async () => {
    const b = h.frame().locator('[data-action="confirm"]:visible:enabled').first();
    if (!(await b.count())) return false;
    const id = await b.getAttribute("data-draft-id").catch(() => null);
    return id && id !== before ? id : false;
  }, { timeout: 15000, message: "a new draft to confirm" });
}

export function defineSuite({ bridge, csp }) {
  const wasm = csp === "chatgpt";
  const label = `${bridge}/${csp === "chatgpt" ? "wasm" : "fallback"}`;
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
  const open = (opts = {}) => openPreview(browser, server, { bridge, csp, ...opts });

  // A page per test: a fresh MCP session, so drafts, keys and the repeated-call valve are per test.
  async function withPage(name, fn, opts) {
    const h = await open(opts);
    // Tests run one after another on one server: count this test's charges only.
    const base = await server.ledger();
    h.charges = async () => (await server.ledger()) - base;
    try {
      await fn(h);
      assert.deepEqual(h.dialogs, [], "no dialog may open");
    } catch (e) {
      await screenshot(h, `FAILED-${label}-${name}`).catch(() => {});
      const log = await h.page.evaluate(() => window.ggPreview.log.slice(-12).map((e) => `${e.dir} ${e.label}`)).catch(() => []);
      e.message += `\n  last preview messages:\n    ${log.join("\n    ")}\n  console errors: ${h.consoleErrors.slice(-5).join(" | ")}`;
      throw e;
    } finally {
      await h.close();
    }
  }

  for (const s of STATES) {
    test(`${label}: ${s.fixture} renders from a real tool call`, () => withPage(s.fixture, async (h) => {
      const result = await h.fixture(s.fixture);
      if (s.code) {
        assert.equal(result.isError, true);
        assert.equal(result.structuredContent.error.code, s.code);
        assert.equal(result.structuredContent.error.category, s.category);
      } else {
        assert.equal(result.isError, false);
      }
      await waitForState(h, s.state);
      await expectRuntime(h, wasm);
      await s.check(h);
      await screenshot(h, `${label}-${s.fixture}-light`);
    }));
  }

  test(`${label}: light and dark theme`, () => withPage("theme", async (h) => {
    await h.fixture("results");
    await waitForState(h, "results");
    assert.equal(await h.visible(".gg-root").getAttribute("data-theme"), "light");
    await screenshot(h, `${label}-theme-light`);
    await h.setTheme("dark");
    await until(async () => (await h.visible(".gg-root").getAttribute("data-theme")) === "dark", { message: "dark theme" });
    await screenshot(h, `${label}-theme-dark`);
    // Dark must actually change the colours, not only an attribute.
    const bg = await h.visible(".gg-root").evaluate((el) => getComputedStyle(el).backgroundColor + "|" + getComputedStyle(el).color);
    await h.setTheme("light");
    await until(async () => (await h.visible(".gg-root").getAttribute("data-theme")) === "light", { message: "light theme" });
    const bgLight = await h.visible(".gg-root").evaluate((el) => getComputedStyle(el).backgroundColor + "|" + getComputedStyle(el).color);
    assert.notEqual(bg, bgLight, "dark and light render differently");
    // A new instance opened in dark starts dark.
    await h.setTheme("dark");
    await h.fixture("confirm");
    await waitForState(h, "confirm");
    await until(async () => (await h.visible(".gg-root").getAttribute("data-theme")) === "dark", { message: "dark confirm" });
    await screenshot(h, `${label}-confirm-dark`);
  }));

  test(`${label}: buttons are reachable and operable by keyboard`, () => withPage("keyboard", async (h) => {
    await h.fixture("results");
    await waitForState(h, "results");
    await expectRuntime(h, wasm);
    // Tab from the host page into the frame until a Choose button has focus.
    await h.page.locator("#widget").focus();
    const focused = () => h.frame().locator(":focus").first();
    await until(async () => {
      await h.page.keyboard.press("Tab");
      return (await focused().getAttribute("data-action").catch(() => null)) === "choose";
    }, { timeout: 15000, interval: 10, message: "Tab to reach a Choose button" });
    await h.page.keyboard.press("Enter");
    await waitForState(h, "confirm");
    // The chosen gift has no recipient yet: typed in, then Confirm by keyboard prepares the
    // draft with it (a new draft to confirm), and Confirm by keyboard again buys it.
    const chosen = await h.visible('[data-action="confirm"]').getAttribute("data-draft-id");
    await fillRecipient(h);
    const toConfirm = () => until(async () => {
      await h.page.keyboard.press("Tab");
      return (await focused().getAttribute("data-action").catch(() => null)) === "confirm";
    }, { timeout: 15000, interval: 10, message: "Tab to reach Confirm" });
    await toConfirm();
    await h.page.keyboard.press("Enter");
    await newDraft(h, chosen);
    assert.equal(await h.charges(), 0, "the edit itself charges nothing");
    // The card was drawn anew: start from its first field (a host may have taken focus back).
    await h.visible('input[name="recipient.name"]').focus();
    await toConfirm();
    await h.page.keyboard.press("Enter");
    await waitForState(h, "order-placed");
    assert.equal(await h.charges(), 1);
    await screenshot(h, `${label}-keyboard-order-placed`);
  }));

  test(`${label}: markup in a gift title and an interest renders as text`, () => withPage("markup", async (h) => {
    await h.fixture("markup in text");
    await waitForState(h, "results");
    await expectRuntime(h, wasm);
    const title = h.frame().locator(".gg-card-title:visible", { hasText: XSS });
    await title.first().waitFor();
    assert.equal(await title.first().innerText(), `Sketchbook ${XSS}`);
    // The interest comes back in the summary and the reasons: as text too.
    assert.ok((await h.frame().getByText(XSS, { exact: false }).count()) >= 2, "interest echoed as text");
    assert.equal(await h.frame().locator('img[src="x"]').count(), 0, "no element was created from the markup");
    // Rendered and painted, every image settled: a handler the markup made would have run.
    await h.settled();
    assert.deepEqual(h.dialogs, []);
    await screenshot(h, `${label}-markup-as-text`);
  }));

  // Issue 42 item 3: the card says when the gift arrives and that standard misses the day it is
  // needed by; Switch to express is a new draft (nothing charged), which then says it is in
  // time, and one Confirm buys it with express shipping.
  test(`${label}: a needed-by day standard misses offers express, which then arrives in time`, () => withPage("needed-by", async (h) => {
    await h.fixture("needed by");
    await waitForState(h, "confirm");
    await expectRuntime(h, wasm);
    assert.match(await h.visible(".gg-arrives").innerText(), /\w{3}, \w{3} \d+ – \w{3}, \w{3} \d+/);
    assert.match(await h.visible(".gg-arrival.gg-late").innerText(), /May not arrive by .*With express shipping it arrives/s);
    const standard = await h.visible('[data-action="confirm"]').getAttribute("data-draft-id");
    await screenshot(h, `${label}-needed-by-late`);
    await click(h, '[data-action="switch-shipping"]');
    await newDraft(h, standard);
    assert.equal(await h.charges(), 0, "switching charges nothing");
    assert.match(await h.visible(".gg-arrival.gg-in-time").innerText(), /In time for/);
    assert.equal(await h.frame().locator('[data-action="switch-shipping"]:visible').count(), 0);
    assert.match(await h.visible(".gg-summary-list").innerText(), /Shipping \(express\)/);
    await click(h, '[data-action="confirm"]');
    await waitForState(h, "order-placed");
    assert.equal(await h.charges(), 1);
  }));

  // Issue 42 item 2: gift wrap and a gift receipt are two checkboxes of the card's form.
  // Confirm after ticking them prepares the changed draft first (nothing charged), which shows
  // the wrap as a line of its total; the next Confirm buys it, and the order says both.
  test(`${label}: gift wrap and a gift receipt are a new draft, then bought with one Confirm`, () => withPage("gift-options", async (h) => {
    await h.fixture("gift options");
    await waitForState(h, "confirm");
    await expectRuntime(h, wasm);
    assert.match(await h.visible("#gg-delivery-form").innerText(), /Gift-wrap it \(\$5\.99 per gift\)/);
    assert.equal(await h.frame().locator(".gg-gift-wrap:visible").count(), 0, "no wrap line yet");
    const plain = await h.visible('[data-action="confirm"]').getAttribute("data-draft-id");
    const total = await h.visible(".gg-summary-list dd.gg-total").innerText();
    await h.visible('input[name="gift_wrap"]').check();
    await h.visible('input[name="gift_receipt"]').check();
    await click(h, '[data-action="confirm"]');
    await newDraft(h, plain);
    assert.equal(await h.charges(), 0, "the changed options are a draft to confirm, nothing charged");
    assert.equal(await h.visible(".gg-summary-list .gg-gift-wrap").innerText(), "$11.98");
    assert.notEqual(await h.visible(".gg-summary-list dd.gg-total").innerText(), total);
    assert.ok(await h.visible('input[name="gift_wrap"]').isChecked(), "the new draft keeps the wrap ticked");
    assert.ok(await h.visible('input[name="gift_receipt"]').isChecked());
    await screenshot(h, `${label}-confirm-gift-wrapped`);
    await click(h, '[data-action="confirm"]');
    await waitForState(h, "order-placed");
    assert.equal(await h.charges(), 1);
    assert.equal(await h.visible(".gg-order-placed .gg-gift-wrap").innerText(), "$11.98");
    await h.visible(".gg-gift-receipt").waitFor();
  }));

  // Issue 42 item 1: a basket of two gifts is one card with a line each, one total, and one
  // Confirm that charges once for all of it; "Update delivery details" keeps every line.
  test(`${label}: a basket of two gifts is confirmed once and placed with every line`, () => withPage("basket", async (h) => {
    await h.fixture("basket");
    await waitForState(h, "confirm");
    await expectRuntime(h, wasm);
    const lines = h.frame().locator(".gg-basket-lines li:visible");
    assert.equal(await lines.count(), 2);
    assert.match(await lines.nth(0).innerText(), /× 2/);
    assert.match(await lines.nth(1).innerText(), /Mystery Book Subscription.*× 1/s);
    await screenshot(h, `${label}-confirm-basket`);
    const first = await h.visible('[data-action="confirm"]').getAttribute("data-draft-id");
    await fillRecipient(h, { city: "Porto", postal: "4000-123" });
    await click(h, '[data-action="update-delivery"]');
    await newDraft(h, first);
    assert.equal(await h.frame().locator(".gg-basket-lines li:visible").count(), 2, "the edit keeps both lines");
    assert.equal(await h.charges(), 0);
    await click(h, '[data-action="confirm"]');
    await waitForState(h, "order-placed");
    assert.equal(await h.charges(), 1, "one charge for the basket");
    assert.match(await h.visible(".gg-order-placed").innerText(), /× 2 .*; .*× 1/s);
  }));

  // Issue 42 item 4: the results' Add puts a gift in the basket the view keeps and shows it;
  // Keep shopping goes back to the results, whose next Add adds to it; "+" and Remove are new
  // drafts; the basket survives a reload; one Confirm buys every line with one charge.
  test(`${label}: Add builds a basket from the results, kept across Keep shopping and a reload, bought once`, () => withPage("add-to-basket", async (h) => {
    await h.fixture("results");
    await waitForState(h, "results");
    await expectRuntime(h, wasm);
    const adds = h.frame().locator('.gg-card:visible [data-action="add"]:enabled');
    assert.ok((await adds.count()) >= 2, "two gifts to add");
    const [a, b] = [await adds.nth(0).getAttribute("data-gift-id"), await adds.nth(1).getAttribute("data-gift-id")];
    await adds.nth(0).click();
    await waitForState(h, "confirm");
    assert.equal(await h.frame().locator(".gg-basket-line:visible").count(), 0, "one gift: the one-gift card");
    await h.visible('.gg-stepper .gg-more').waitFor();
    await click(h, '[data-action="keep-shopping"]');
    await waitForState(h, "results");
    await h.visible(`.gg-card [data-action="add"][data-gift-id="${b}"]`).click();
    await waitForState(h, "confirm");
    const lines = h.frame().locator(".gg-basket-line:visible");
    await until(async () => (await lines.count()) === 2, { message: "two lines" });
    assert.deepEqual([await lines.nth(0).getAttribute("data-gift-id"), await lines.nth(1).getAttribute("data-gift-id")], [a, b]);
    await screenshot(h, `${label}-basket-added`);
    // One more of the first: a new draft with it × 2.
    const two = await h.visible('[data-action="confirm"]').getAttribute("data-draft-id");
    await lines.nth(0).locator(".gg-more").click();
    const more = await newDraft(h, two);
    assert.match(await h.visible(`.gg-basket-line[data-gift-id="${a}"] .gg-line-quantity`).innerText(), /× 2/);
    // Remove the second, keep shopping, add it again: the first stays × 2.
    await h.visible(`.gg-basket-line[data-gift-id="${b}"] [data-action="remove-line"]`).click();
    await newDraft(h, more);
    assert.equal(await h.frame().locator(".gg-basket-line:visible").count(), 0, "one line left");
    await click(h, '[data-action="keep-shopping"]');
    await waitForState(h, "results");
    await h.visible(`.gg-card [data-action="add"][data-gift-id="${b}"]`).click();
    await waitForState(h, "confirm");
    await until(async () => (await h.frame().locator(".gg-basket-line:visible").count()) === 2, { message: "two lines again" });
    assert.match(await h.visible(`.gg-basket-line[data-gift-id="${a}"] .gg-line-quantity`).innerText(), /× 2/);
    // A reload comes back to the basket.
    const kept = await h.visible('[data-action="confirm"]').getAttribute("data-draft-id");
    await h.reload();
    await waitForState(h, "confirm");
    assert.equal(await h.visible('[data-action="confirm"]').getAttribute("data-draft-id"), kept);
    assert.equal(await h.frame().locator(".gg-basket-line:visible").count(), 2);
    assert.equal(await h.charges(), 0, "nothing charged while building the basket");
    // Who it is for, then one Confirm for all of it.
    await fillRecipient(h);
    await click(h, '[data-action="confirm"]');
    await newDraft(h, kept);
    assert.equal(await h.frame().locator(".gg-basket-line:visible").count(), 2, "the address keeps both lines");
    await click(h, '[data-action="confirm"]');
    await waitForState(h, "order-placed");
    assert.equal(await h.charges(), 1, "one charge for the basket");
    assert.match(await h.visible(".gg-order-placed").innerText(), /× 2 .*; .*× 1/s);
  }));

  // Issue 44 item 2: ChatGPT's product checkout entry opens the widget on a basket of the
  // feed's products with nobody to send it to; the card asks for the recipient, the edit is a
  // new draft, and one Confirm buys both lines once.
  test(`${label}: the product checkout entry opens a basket, asks who it is for, and buys it once`, () => withPage("product-checkout", async (h) => {
    await h.fixture("product checkout");
    await waitForState(h, "confirm");
    await expectRuntime(h, wasm);
    assert.equal(await h.frame().locator(".gg-basket-lines li:visible").count(), 2);
    await h.visible(".gg-destination.gg-missing").waitFor();
    await screenshot(h, `${label}-product-checkout-entry`);
    const first = await h.visible('[data-action="confirm"]').getAttribute("data-draft-id");
    await fillRecipient(h);
    await click(h, '[data-action="update-delivery"]');
    await newDraft(h, first);
    assert.match(await h.visible(".gg-destination").innerText(), /Lisboa, PT/);
    assert.equal(await h.charges(), 0);
    await click(h, '[data-action="confirm"]');
    await waitForState(h, "order-placed");
    assert.equal(await h.charges(), 1);
    await screenshot(h, `${label}-product-checkout-placed`);
  }));

  test(`${label}: one click on Confirm charges exactly once`, () => withPage("confirm-once", async (h) => {
    await h.fixture("confirm");
    await waitForState(h, "confirm");
    await expectRuntime(h, wasm);
    assert.equal(await h.charges(), 0);
    await click(h, '[data-action="confirm"]');
    await waitForState(h, "order-placed");
    assert.equal(await h.charges(), 1);
    const commits = await h.commits();
    assert.equal(commits.length, 1, "one commit_order call");
    await screenshot(h, `${label}-order-placed-by-click`);
  }));

  test(`${label}: Cancel with no results to go back to shows the widget's cancelled view`, () => withPage("cancel", async (h) => {
    await h.fixture("confirm");
    await waitForState(h, "confirm");
    await expectRuntime(h, wasm);
    await click(h, '[data-action="cancel"]');
    await waitForState(h, "cancelled");
    // Both runtimes show the Leptos view's markup (the fallback gets it rendered at pack time).
    assert.match(await h.visible(".gg-cancelled .gg-title").innerText(), /Purchase cancelled/);
    assert.equal(await h.charges(), 0);
    assert.equal((await h.commits()).length, 0, "no commit_order call");
    await screenshot(h, `${label}-cancelled`);
  }));

  test(`${label}: a rapid double click charges exactly once`, () => withPage("double-click", async (h) => {
    await h.fixture("confirm");
    await waitForState(h, "confirm");
    await expectRuntime(h, wasm);
    await h.visible('[data-action="confirm"]').dblclick();
    await waitForState(h, "order-placed");
    // A second click's call was posted before the first one's answer could come back, so the
    // host has it by now: wait until every commit_order it got is answered, then count.
    await until(() => h.page.evaluate(() => window.ggPreview.calls.filter((c) => c.name === "commit_order").every((c) => c.result || c.error)),
      { message: "every commit_order to be answered" });
    assert.equal(await h.charges(), 1);
    const commits = await h.commits();
    assert.ok(commits.length >= 1);
    assert.equal(new Set(commits.map((c) => c.arguments.idempotency_key)).size, 1, "one key");
  }));

  test(`${label}: a transient payment failure then Try again charges exactly once`, () => withPage("try-again", async (h) => {
    await h.fixture("confirm");
    await waitForState(h, "confirm");
    await expectRuntime(h, wasm);
    await h.setFaults("5xx*1");
    await click(h, '[data-action="confirm"]');
    await h.frame().locator(FAILED_COMMIT).first().waitFor({ timeout: 15000 });
    assert.equal(await h.charges(), 0, "the 5xx charged nothing");
    await screenshot(h, `${label}-payment-failed`);
    await click(h, TRY_AGAIN);
    await waitForState(h, "order-placed");
    assert.equal(await h.charges(), 1);
    const keys = (await h.commits()).map((c) => c.arguments.idempotency_key);
    assert.equal(keys.length, 2);
    assert.equal(keys[0], keys[1], "Try again reuses the key");
  }));

  test(`${label}: the checkout link opens through the host, the frame stays`, () => withPage("open-link", async (h) => {
    const result = await h.fixture("checkout");
    const url = result.structuredContent.checkout.checkout_url;
    assert.match(url, /^https?:\/\//);
    await waitForState(h, "checkout");
    await expectRuntime(h, wasm);
    const before = await h.frameUrl();
    await click(h, '.gg-checkout [data-action="open-link"]');
    const want = bridge === "mcp-apps" ? "ui/open-link" : "openai.openExternal";
    const links = await until(async () => {
      const l = await h.openedLinks();
      return l.length ? l : false;
    }, { message: `${want} to reach the host` });
    assert.deepEqual(links, [{ via: want, url }]);
    // The click's handler has run (the host got the link); two painted frames later a
    // navigation or a popup it started would show.
    assert.equal(await h.settled(), before, "the sandboxed frame did not navigate");
    assert.equal(await h.context.pages().length, 1, "no new tab from the frame itself");
    await waitForState(h, "checkout");
  }));

  test(`${label}: a tool call the host never answers times out into a retryable error`, () => withPage("call-timeout", async (h) => {
    await h.fixture("results");
    await waitForState(h, "results");
    await expectRuntime(h, wasm);
    await h.setDropViewCalls(true);
    await click(h, '[data-action="choose"]');
    // The preview passes a 1.5 s timeout; the view keeps the screen with an inline note and
    // its buttons enabled again.
    await h.frame().locator(".gg-error:visible, .gg-inline-error:visible").first().waitFor({ timeout: 10000 });
    const again = h.visible('.gg-error [data-action="retry"], [data-action="choose"]');
    assert.equal(await again.isDisabled(), false, "the way to try again is enabled");
    await screenshot(h, `${label}-call-timed-out`);
    await h.setDropViewCalls(false);
    await again.click();
    await waitForState(h, "confirm");
  }, { callTimeoutMs: 1500 }));

  test(`${label}: reloading the view in the confirm state keeps the key`, () => withPage("reload", async (h) => {
    await h.fixture("confirm");
    await waitForState(h, "confirm");
    await expectRuntime(h, wasm);
    // The provider charges but its answer is lost: only the same key can avoid a second charge.
    await h.setFaults("timeout*1");
    await click(h, '[data-action="confirm"]');
    await h.frame().locator(FAILED_COMMIT).first().waitFor({ timeout: 15000 });
    assert.equal(await h.charges(), 1, "the lost answer did charge");
    await h.reload();
    await waitForState(h, "confirm");
    await expectRuntime(h, wasm);
    await click(h, '[data-action="confirm"]');
    await waitForState(h, "order-placed");
    assert.equal(await h.charges(), 1, "still exactly one charge after the reload");
    const keys = (await h.commits()).map((c) => c.arguments.idempotency_key);
    assert.equal(keys.length, 2);
    assert.equal(keys[0], keys[1], "the reloaded view reused the key");
    await screenshot(h, `${label}-order-placed-after-reload`);
  }));

  // Coming back where the person left off (issue 15, item 6): a draft chosen from the model's
  // results, its address typed in, Confirm pressed, and the view reloaded while commit_order is
  // still in flight (the provider charges but holds its answer for the 2 s payment timeout).
  // The view must come back to that confirmation, not the results, and finish with one charge
  // under one key. ChatGPT gives the screen back through widget state (no storage in its opaque
  // frame here, so the address is typed again: widget state is visible to the model and never
  // holds it); MCP Apps through storage under the result's viewUUID.
  test(`${label}: a reload with a commit in flight comes back to the confirmation, then the order, charging once`, (t) => withPage("reload-in-flight", async (h) => {
    await h.fixture("results");
    await waitForState(h, "results");
    await expectRuntime(h, wasm);
    await click(h, '[data-action="choose"]');
    await waitForState(h, "confirm");
    const chosen = await h.visible('[data-action="confirm"]').getAttribute("data-draft-id");
    await fillRecipient(h);
    await click(h, '[data-action="update-delivery"]');
    const draftId = await newDraft(h, chosen);
    await h.setFaults("timeout*1");
    await click(h, '[data-action="confirm"]');
    await until(async () => (await h.commits()).length === 1, { message: "commit_order to go out" });
    await h.reload();
    const back = await until(async () => {
      const s = await visibleState(h);
      return s && s !== "loading" ? s : false;
    }, { timeout: 15000, message: "the reloaded view to show something" });
    t.diagnostic(`after a reload with commit_order in flight the view shows: ${back}`);
    assert.equal(back, "confirm", "the confirmation the person left, not the results");
    assert.equal(await h.visible('[data-action="confirm"]').getAttribute("data-draft-id"), draftId, "the same draft");
    await screenshot(h, `${label}-restored-in-flight`);
    // The held answer is lost, but the provider charged: only the kept key avoids a second charge.
    await until(async () => (await h.charges()) === 1, { timeout: 15000, message: "the in-flight charge" });
    // The server answers the held call once the provider times out (the reloaded view never
    // sees that answer); the person confirms after it, as anyone would, seconds later.
    await until(() => h.page.evaluate(() => window.ggPreview.calls.filter((c) => c.name === "commit_order").every((c) => c.result || c.error)),
      { timeout: 15000, message: "the held commit_order to be answered" });
    // Confirm until the order shows (Try again where the fallback shows a failed commit as an
    // error screen; the address again where it was not kept).
    for (let i = 0; i < 8 && ["confirm", "error"].includes(await visibleState(h)); i++) {
      if (i) await h.page.waitForTimeout(300);
      const name = h.visible('input[name="recipient.name"]');
      if ((await visibleState(h)) === "error") {
        await click(h, TRY_AGAIN);
      } else if ((await name.count()) && !(await name.inputValue())) {
        await fillRecipient(h);
        await click(h, '[data-action="update-delivery"]');
      } else {
        await click(h, '[data-action="confirm"]');
      }
      await until(async () => ["order-placed", "confirm", "error"].includes(await visibleState(h)) && !(await h.frame().locator('[data-action="confirm"]:visible:disabled, [data-action="update-delivery"]:visible:disabled, [data-action="retry"]:visible:disabled').count()), { timeout: 15000, message: "the card to settle" });
    }
    await waitForState(h, "order-placed");
    assert.equal(await h.charges(), 1, "one charge in all");
    const keys = (await h.commits()).map((c) => c.arguments.idempotency_key);
    assert.equal(new Set(keys).size, 1, `one key for every commit: ${keys}`);
    const orderId = await h.visible(".gg-order-placed code").innerText();
    await h.reload();
    await waitForState(h, "order-placed");
    assert.equal(await h.visible(".gg-order-placed code").innerText(), orderId, "the same order after another reload");
    assert.equal(await h.charges(), 1);
    await screenshot(h, `${label}-restored-order-after-in-flight`);
    // Nothing secret was kept: neither widget state nor the view's storage holds a token.
    const tokens = await h.page.evaluate(() => window.ggPreview.calls
      .map((c) => c.result && c.result._meta && c.result._meta["giftgenius/confirmation_token"]).filter(Boolean));
    assert.ok(tokens.length >= 1, "prepare_order handed the view a token");
    const kept = await h.page.evaluate(() => JSON.stringify(window.ggPreview.instance.widgetState || null));
    const stored = await (await (await h.page.$("#widget")).contentFrame()).evaluate(() => {
      try { return JSON.stringify(Object.entries(localStorage)); } catch (_) { return ""; }
    });
    for (const token of tokens) {
      assert.ok(!kept.includes(token) && !stored.includes(token), "no confirmation token kept");
    }
  }));

  // ---------------------------------------------------------------- isError as hosts treat it
  // A model-initiated call that returns isError: true. The preview mimics each documented host;
  // in every case the result's text is what the model reads and relays.
  const ON_ERROR = [
    { mode: "keep", host: "Goose keeps the view, with its error state" },
    { mode: "unmount", host: "ChatGPT unmounts the view" },
    { mode: "never-mount", host: "Claude never mounts the view" },
  ];
  for (const { mode, host } of ON_ERROR) {
    test(`${label}: a model call with isError (${host}); the model relays the text`, () => withPage(`on-error-${mode}`, async (h) => {
      const result = await h.fixture("validation");
      assert.equal(result.isError, true);
      const text = result.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
      assert.match(text, /VALIDATION_ERROR/);
      assert.equal(await h.page.evaluate(() => window.ggPreview.relayed), text, "the preview shows what the model would relay");
      const mounts = () => h.page.evaluate(() => ({ mounts: window.ggPreview.instance.mounts, mounted: window.ggPreview.mounted }));
      if (mode === "keep") {
        await waitForState(h, "error");
        await expectRuntime(h, wasm);
        assert.deepEqual(await mounts(), { mounts: 1, mounted: true });
        assert.match(await h.visible(".gg-error").innerText(), /age/);
      } else if (mode === "unmount") {
        // It was mounted while the call ran, and is gone now.
        assert.deepEqual(await mounts(), { mounts: 1, mounted: false });
        assert.equal(await h.page.locator("#widget").count(), 0);
        if (bridge === "mcp-apps") {
          const answered = await h.page.evaluate(() => window.ggPreview.log.some((e) => e.dir === "view→host" && e.label.startsWith("response #host-")));
          assert.ok(answered, "the view answered ui/resource-teardown before it was taken down");
        }
      } else {
        assert.deepEqual(await mounts(), { mounts: 0, mounted: false });
        assert.equal(await h.page.locator("#widget").count(), 0);
        // A successful call is mounted as usual.
        await h.fixture("results");
        await waitForState(h, "results");
        assert.deepEqual(await mounts(), { mounts: 1, mounted: true });
        assert.equal(await h.page.evaluate(() => window.ggPreview.relayed), null, "nothing to relay for a success");
      }
      await screenshot(h, `${label}-on-error-${mode}`);
    }, { host: { onError: mode } }));
  }

  test(`${label}: the address edited on the confirm card is the one ordered, once`, () => withPage("edit-address", async (h) => {
    await h.fixture("confirm");
    await waitForState(h, "confirm");
    await expectRuntime(h, wasm);
    const before = await h.visible('[data-action="confirm"]').getAttribute("data-draft-id");
    // Every detail the model passed is on the card, editable.
    assert.equal(await h.visible('input[name="recipient.name"]').inputValue(), "Ana Sousa");
    assert.equal(await h.visible('input[name="recipient.address.city"]').inputValue(), "Lisboa");
    assert.equal(await h.visible('input[name="recipient.address.country"]').inputValue(), "PT");
    assert.equal(await h.visible('textarea[name="gift_message"]').inputValue(), "Happy birthday, Ana!");
    await h.visible('input[name="recipient.address.city"]').fill("Porto");
    await h.visible('input[name="recipient.address.postal_code"]').fill("4000-001");
    await click(h, '[data-action="confirm"]');
    // Confirm with an edit prepares the edited draft and shows it: nothing is paid yet.
    await newDraft(h, before);
    assert.equal(await h.charges(), 0);
    assert.equal(await h.visible('input[name="recipient.address.city"]').inputValue(), "Porto");
    assert.match(await h.visible(".gg-destination").innerText(), /Porto, PT/);
    await screenshot(h, `${label}-edited-address`);
    await click(h, '[data-action="confirm"]');
    await waitForState(h, "order-placed");
    assert.match(await h.visible(".gg-order-placed").innerText(), /Porto, PT/);
    assert.equal(await h.charges(), 1);
    const commits = await h.commits();
    assert.deepEqual(commits.map((c) => c.ok), [true], "one commit_order call");
  }));

  test(`${label}: a field error from the server shows next to its field on the card`, () => withPage("field-error", async (h) => {
    await h.fixture("confirm");
    await waitForState(h, "confirm");
    await expectRuntime(h, wasm);
    const before = await h.visible('[data-action="confirm"]').getAttribute("data-draft-id");
    const postal = 'input[name="recipient.address.postal_code"]';
    await h.visible(postal).fill("99");
    await click(h, '[data-action="update-delivery"]');
    const note = h.visible("#gg-field-recipient-address-postal_code-error");
    await note.waitFor({ timeout: 15000 });
    assert.match(await note.innerText(), /PT, e\.g\. 1000-001/, "the country's shape (the catalog's sentence of the rule), next to the postal code");
    assert.equal(await h.visible(postal).getAttribute("aria-invalid"), "true");
    assert.equal(await h.visible(postal).inputValue(), "99", "what was typed is kept");
    assert.equal(await h.frame().locator('[data-action="confirm"]:visible').count(), 0, "no Confirm until fixed");
    await screenshot(h, `${label}-field-error`);
    // Fixed: the new details make a new draft, and Confirm buys it once.
    await h.visible(postal).fill("1000-001");
    await click(h, '[data-action="update-delivery"]');
    await newDraft(h, before);
    await click(h, '[data-action="confirm"]');
    await waitForState(h, "order-placed");
    assert.equal(await h.charges(), 1);
  }));

  test(`${label}: cancelling an order from the list refunds it once`, () => withPage("cancel-order", async (h) => {
    const refunds = await server.refunds();
    const result = await h.fixture("orders");
    assert.equal(result.isError, false);
    await waitForState(h, "order-list");
    await expectRuntime(h, wasm);
    assert.equal(await h.charges(), 1, "the fixture's order");
    const ask = h.visible('[data-action="ask-cancel-order"]');
    const orderId = await ask.getAttribute("data-order-id");
    assert.equal(orderId, result.structuredContent.orders[0].id, "the newest order first");
    // The first click only asks; nothing is cancelled until the second.
    await ask.click();
    const yes = h.visible(`.gg-ask[data-order-id="${orderId}"] [data-action="cancel-order"]`);
    await yes.waitFor();
    assert.equal(await server.refunds(), refunds);
    await screenshot(h, `${label}-cancel-asked`);
    await yes.click();
    await h.visible(`.gg-order-row[data-order-id="${orderId}"] [data-status="cancelled"], .gg-order-placed [data-status="cancelled"]`).waitFor({ timeout: 15000 });
    assert.equal((await server.refunds()) - refunds, 1, "one refund in the provider's ledger");
    const cancels = await h.page.evaluate(() => window.ggPreview.calls.filter((c) => c.name === "cancel_order")
      .map((c) => ({ key: c.arguments.idempotency_key, ok: !!c.result && !c.result.isError, token: typeof c.arguments.confirmation_token })));
    assert.equal(cancels.length, 1);
    assert.ok(cancels[0].ok && /^ck_[0-9a-f]{32}$/.test(cancels[0].key), JSON.stringify(cancels));
    await screenshot(h, `${label}-cancelled`);
  }));

  test(`${label}: inline results are a compact strip; Compare all opens the full grid when the host offers it`, () => withPage("display-mode", async (h) => {
    await h.fixture("results");
    await waitForState(h, "results");
    await expectRuntime(h, wasm);
    const mode = () => h.visible(".gg-root").getAttribute("data-display-mode");
    // Inline: six results in one sideways strip, the whole view at most 420 px tall on a phone
    // and on a tablet, with a line saying more cards follow.
    assert.equal(await h.frame().locator(".gg-strip:visible .gg-card").count(), 6);
    await h.visible(".gg-hint").waitFor();
    for (const width of [360, 768]) {
      await h.page.evaluate((w) => { Object.assign(document.querySelector("#widget").style, { width: `${w}px`, boxSizing: "content-box" }); }, width);
      await until(async () => (await h.frame().locator("html").evaluate(() => innerWidth)) === width, { message: `frame at ${width}px` });
      const box = await h.visible(".gg-root").evaluate((el) => ({ height: el.getBoundingClientRect().height }));
      const strip = await h.visible(".gg-strip").evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
      assert.ok(box.height <= 420, `inline results at ${width}px are ${box.height}px tall`);
      assert.ok(strip.scroll > strip.client, `the strip scrolls sideways at ${width}px`);
      await screenshot(h, `${label}-results-inline-${width}`);
    }
    await h.page.evaluate(() => { Object.assign(document.querySelector("#widget").style, { width: "", boxSizing: "" }); });
    // The toggle: the wasm renders it for the host's context; the runtime shows the server
    // markup's by the same rule. It asks the host, and the view follows the mode the host reports.
    const toggle = h.visible('[data-action="display-mode"]');
    assert.equal(await toggle.innerText(), "Compare all");
    await toggle.click();
    await until(async () => (await mode()) === "fullscreen", { message: "fullscreen on the root" });
    assert.equal(await h.page.evaluate(() => window.ggPreview.settings.displayMode), "fullscreen");
    assert.ok(await h.page.locator("#frame-box.fullscreen").count(), "the host shows the frame over the page");
    if (wasm) {
      // The full cards: descriptions, every reason, tags, in a grid.
      await h.visible(".gg-grid .gg-desc").waitFor();
      assert.equal(await h.frame().locator(".gg-grid:visible .gg-card").count(), 6);
      assert.ok(await h.frame().locator(".gg-grid:visible .gg-reasons li").count() >= 6, "reasons in full");
    }
    await screenshot(h, `${label}-fullscreen`);
    assert.equal(await h.visible('[data-action="display-mode"]').innerText(), "Back to the chat");
    await h.visible('[data-action="display-mode"]').click();
    await until(async () => (await mode()) === null, { message: "inline again" });
    await h.visible(".gg-strip").waitFor();
    // The host changing the mode itself: the view follows it too.
    await h.page.evaluate(() => window.ggPreview.setDisplayMode("fullscreen"));
    await until(async () => (await mode()) === "fullscreen", { message: "fullscreen on the root" });
    await h.page.evaluate(() => window.ggPreview.setDisplayMode("inline"));
    await until(async () => (await mode()) === null, { message: "inline again" });
    // A host with inline only: MCP Apps declares it, so there is no button; ChatGPT always has
    // requestDisplayMode, so the button asks, the host refuses, and the view stays inline
    // (it follows the mode the host reports, not the one it asked for).
    const inlineOnly = await open({ host: { displayModes: "inline" } });
    try {
      await inlineOnly.fixture("results");
      await waitForState(inlineOnly, "results");
      const buttons = inlineOnly.frame().locator('[data-action="display-mode"]:visible');
      if (bridge === "openai") {
        await buttons.first().click();
        await new Promise((r) => setTimeout(r, 300));
        assert.equal(await inlineOnly.visible(".gg-root").getAttribute("data-display-mode"), null);
        await inlineOnly.visible(".gg-strip").waitFor();
      } else {
        assert.equal(await buttons.count(), 0);
      }
    } finally {
      await inlineOnly.close();
    }
  }));

  defineHostChecks({ bridge, wasm, label, withPage, server: () => server });
  defineSheetChecks({ bridge, wasm, label, withPage });

  if (bridge !== "mcp-apps") return;

  // ---------------------------------------------------------------- MCP Apps host features
  const initialized = (h) => until(() => h.page.evaluate(() => window.ggPreview.view.mcpInitialized), { message: "ui/notifications/initialized" });

  test(`${label}: a cancelled model call shows the stopped state, Try again only with the complete input`, () => withPage("tool-cancelled", async (h) => {
    // Only partial arguments, then cancelled: nothing to retry with.
    await h.page.evaluate(() => window.ggPreview.begin("suggest_gifts"));
    await initialized(h);
    await h.page.evaluate(() => {
      window.ggPreview.partial({ relationship_type: "friend" });
      window.ggPreview.cancel("the user stopped the request");
    });
    await waitForState(h, "tool-cancelled");
    await expectRuntime(h, wasm);
    assert.match(await h.visible(".gg-tool-cancelled").innerText(), /stopped/i);
    assert.equal(await h.frame().locator('.gg-tool-cancelled [data-action="retry"]:visible').count(), 0);
    if (wasm) assert.match(await h.visible(".gg-tool-cancelled").innerText(), /the user stopped the request/);
    await screenshot(h, `${label}-tool-cancelled`);
    // The complete input arrived before the cancellation: the wasm's view offers Try again, and
    // the runtime makes the call.
    await h.page.evaluate(() => window.ggPreview.begin("suggest_gifts"));
    await initialized(h);
    await h.page.evaluate(() => {
      window.ggPreview.input({ relationship_type: "friend", interests: ["hiking"] });
      window.ggPreview.cancel("");
    });
    await waitForState(h, "tool-cancelled");
    if (!wasm) {
      assert.equal(await h.frame().locator('[data-action="retry"]:visible').count(), 0, "the fallback never retries");
      return;
    }
    await click(h, '.gg-tool-cancelled [data-action="retry"]');
    await waitForState(h, "results");
    const fromView = await h.page.evaluate(() => window.ggPreview.calls.filter((c) => c.from === "view").map((c) => [c.name, c.arguments]));
    assert.deepEqual(fromView, [["suggest_gifts", { relationship_type: "friend", interests: ["hiking"] }]]);
  }));

  test(`${label}: streamed partial arguments show loading with what is known, then the result`, () => withPage("tool-input-partial", async (h) => {
    await h.page.evaluate(() => window.ggPreview.begin("suggest_gifts"));
    await initialized(h);
    await h.page.evaluate(() => {
      window.ggPreview.partial({ relationship_type: "friend" });
      window.ggPreview.partial({ relationship_type: "friend", interests: ["hiking"], budget_max: 100 });
    });
    if (wasm) {
      const soFar = h.visible(".gg-so-far");
      await until(async () => /hiking/.test(await soFar.innerText().catch(() => "")), { message: "the streamed interest" });
      assert.match(await soFar.innerText(), /For your friend · hiking · up to 100/);
      assert.equal(await visibleState(h), "loading");
      await screenshot(h, `${label}-tool-input-partial`);
    }
    await h.page.evaluate(() => {
      window.ggPreview.input({ relationship_type: "friend", interests: ["hiking"], budget_max: 100 });
      return window.ggPreview.finish();
    });
    await waitForState(h, "results");
    await expectRuntime(h, wasm);
    assert.equal(await h.frame().locator(".gg-so-far:visible").count(), 0);
  }));

  test(`${label}: the host's style variables, font and safe-area insets are applied`, () => withPage("host-styles", async (h) => {
    await h.fixture("results");
    await waitForState(h, "results");
    await expectRuntime(h, wasm);
    const look = () => h.visible(".gg-root").evaluate((el) => {
      const cs = getComputedStyle(el);
      return { bg: cs.backgroundColor, font: cs.fontFamily, padding: [cs.paddingTop, cs.paddingRight, cs.paddingBottom, cs.paddingLeft],
        fonts: (document.getElementById("gg-host-fonts") || {}).textContent || "" };
    });
    const hosted = await look();
    assert.equal(hosted.bg, "rgb(251, 250, 255)", "--color-background-primary (light) from the host");
    assert.match(hosted.font, /GG Preview Sans/);
    assert.match(hosted.fonts, /@font-face/);
    assert.deepEqual(hosted.padding, ["22px", "32px", "42px", "52px"], "12px + the insets 10, 20, 30, 40");
    await screenshot(h, `${label}-host-styles`);
    await h.setTheme("dark");
    await until(async () => (await look()).bg === "rgb(23, 21, 31)", { message: "the host's dark value (light-dark)" });
    await h.page.evaluate(() => window.ggPreview.setStyles("none"));
    await until(async () => (await look()).bg === "rgb(30, 31, 34)", { message: "our own dark background again" });
    const own = await look();
    assert.doesNotMatch(own.font, /GG Preview Sans/);
    assert.equal(own.fonts, "");
  }, { host: { safeArea: "10,20,30,40" } }));

  // Choose on results while the host drops the view's calls: the log line the view sends about
  // the call nobody answered, as the host received it.
  async function unansweredCallLog(h) {
    await h.fixture("results");
    await waitForState(h, "results");
    await expectRuntime(h, wasm);
    await h.setDropViewCalls(true);
    await click(h, '[data-action="choose"]');
    return until(async () => {
      const logs = await h.page.evaluate(() => window.ggPreview.viewLogs.slice());
      return logs.find((l) => l.data && l.data.event === "tool_call_failed");
    }, { message: "the view's log line" });
  }

  test(`${label}: a call the host never answers is logged to the host (notifications/message)`, () => withPage("view-log", async (h) => {
    const line = await unansweredCallLog(h);
    assert.equal(line.via, "notifications/message", "a 1.x host gets the name it knows");
    assert.equal(line.level, "error");
    assert.equal(line.logger, "giftgenius-widget");
    assert.equal(line.data.tool, "prepare_order");
    assert.match(line.data.message, /did not answer/);
    assert.ok(!JSON.stringify(line).includes("gift_id"), "no arguments in a log line");
    const shown = await h.page.locator("#log .dir.error", { hasText: "view log error" }).count();
    assert.ok(shown >= 1, "visible in the preview's log panel");
  }, { callTimeoutMs: 1500 }));

  test(`${label}: on ext-apps 2.x's wire the host's capabilities come from extensions and view tools are answered`, () => withPage("apps-wire-2", async (h) => {
    await h.fixture("checkout");
    await waitForState(h, "checkout");
    await expectRuntime(h, wasm);
    // openLinks is only in capabilities.extensions["io.modelcontextprotocol/ui"] here.
    await click(h, '.gg-checkout [data-action="open-link"]');
    const links = await until(async () => {
      const l = await h.openedLinks();
      return l.length ? l : false;
    }, { message: "ui/open-link to reach the host" });
    assert.equal(links[0].via, "ui/open-link");
    // The host asks the view for its tools (2.x names, then 1.x's): none, and no -32601.
    for (const method of ["ui/list-view-tools", "tools/list"]) {
      const listed = await h.page.evaluate((m) => window.ggPreview.askView(m, {}), method);
      assert.equal(listed?.error ?? null, null, `${method} is answered, not refused`);
      assert.deepEqual(listed.result, { tools: [] }, `${method}: the view has no tools`);
    }
    const called = await h.page.evaluate(() => window.ggPreview.askView("ui/call-view-tool", { name: "nope", arguments: {} }));
    assert.equal(called?.error ?? null, null, "ui/call-view-tool is answered, not refused");
    assert.equal(called.result.isError, true);
    assert.match(called.result.content[0].text, /no tool named nope/);
  }, { host: { appsWire: 2 } }));

  test(`${label}: on ext-apps 2.x's wire a call the host never answers is logged as ui/log`, () => withPage("apps-wire-2-log", async (h) => {
    const line = await unansweredCallLog(h);
    assert.equal(line.via, "ui/log");
    assert.equal(line.level, "error");
  }, { callTimeoutMs: 1500, host: { appsWire: 2 } }));

  test(`${label}: reloading the view comes back to the same screen (viewUUID + storage)`, () => withPage("view-restore", async (h) => {
    const result = await h.fixture("results");
    assert.match(result._meta.viewUUID, /^[0-9a-f-]{36}$/);
    await waitForState(h, "results");
    await expectRuntime(h, wasm);
    await click(h, '[data-action="choose"]');
    await waitForState(h, "confirm");
    const chosen = await h.visible('[data-action="confirm"]').getAttribute("data-draft-id");
    await fillRecipient(h);
    await click(h, '[data-action="update-delivery"]');
    const draftId = await newDraft(h, chosen);
    assert.ok(draftId);
    // The host re-sends the model's results; the view shows the confirmation it was on.
    await h.reload();
    await waitForState(h, "confirm");
    await expectRuntime(h, wasm);
    assert.equal(await h.visible('[data-action="confirm"]').getAttribute("data-draft-id"), draftId, "the same draft");
    assert.equal(await h.visible('input[name="recipient.address.city"]').inputValue(), "Lisboa", "its delivery details too");
    await screenshot(h, `${label}-restored-confirm`);
    // Confirm (the token was lost with the page: the view reopens the draft by id first, then
    // commits it; a second click is allowed for, not needed).
    for (let i = 0; i < 2 && (await visibleState(h)) === "confirm"; i++) {
      await click(h, '[data-action="confirm"]');
      await until(async () => ["order-placed", "confirm"].includes(await visibleState(h)) && !(await h.frame().locator('[data-action="confirm"]:visible:disabled').count()), { timeout: 15000, message: "confirm to settle" });
      if ((await visibleState(h)) === "order-placed") break;
    }
    await waitForState(h, "order-placed");
    const orderId = await h.visible(".gg-order-placed code").innerText();
    assert.equal(await h.charges(), 1);
    await h.reload();
    await waitForState(h, "order-placed");
    assert.equal(await h.visible(".gg-order-placed code").innerText(), orderId, "the same order");
    assert.equal(await h.charges(), 1, "a reload charges nothing");
    await screenshot(h, `${label}-restored-order-placed`);
  }));

}

export { waitForState, visibleState, expectRuntime };
