// The host's payment sheet (issue 25 item 7, docs/acp.md §14), on window.openai with and without
// wasm. The preview host emulates ChatGPT's sheet (?sheet=1): requestCheckout(session) opens a
// test-card form on the host page; Pay gets a vault token from the sandbox provider through the
// server's relay, then the HOST calls complete_checkout and resolves with its result. A decline
// stays on the sheet with the server's words; Cancel rejects.
//
// What each check reads: the sheet on the host page, the host's record of calls (the view never
// calls complete_checkout itself, and never commit_order here), the provider's ledger (charges),
// and the widget's screen. Every wait is for a condition.
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { until, screenshot, ARTIFACTS } from "./harness.mjs";
import { waitForState, visibleState, fillRecipient, newDraft, expectRuntime } from "./suite.mjs";

const PAY = '[data-action="pay-in-host"]';

/** The host's complete_checkout calls: [{ok, code, order}]. */
function sheetCalls(h) {
  return h.page.evaluate(() => window.ggPreview.calls.filter((c) => c.name === "complete_checkout").map((c) => {
    const sc = c.result && c.result.structuredContent;
    return { from: c.from, answered: !!(c.result || c.error), ok: !!c.result && !c.result.isError,
      code: sc && sc.error ? sc.error.code : null, order: sc && sc.order ? sc.order.id : null };
  }));
}

/** Results → Choose → the recipient typed and prepared: a draft with a sheet session. */
async function draftForSheet(h) {
  await h.fixture("results");
  await waitForState(h, "results");
  await h.visible('[data-action="choose"]').click();
  await waitForState(h, "confirm");
  const chosen = await h.visible('[data-action="confirm"]').getAttribute("data-draft-id");
  await fillRecipient(h);
  await h.visible('[data-action="update-delivery"]').click();
  return newDraft(h, chosen);
}

/**
 * The stage as a person sees it: the widget's frame and, when open, the host's sheet over it
 * (`sheet-flow-NAME.png`, for docs/images).
 */
async function stage(h, name) {
  const boxes = [];
  for (const sel of ["#widget", "#pay-sheet"]) {
    const b = await h.page.locator(sel).boundingBox().catch(() => null);
    if (b) boxes.push(b);
  }
  const x = Math.min(...boxes.map((b) => b.x)), y = Math.min(...boxes.map((b) => b.y));
  const clip = { x, y, width: Math.max(...boxes.map((b) => b.x + b.width)) - x, height: Math.min(Math.max(...boxes.map((b) => b.y + b.height)) - y, 700) };
  await h.page.screenshot({ path: path.join(ARTIFACTS, `sheet-flow-${name}.png`), clip });
}

/** Presses "Pay in ChatGPT" and waits for the host's sheet. */
async function openSheet(h) {
  await h.visible(PAY).click();
  await h.page.locator("#pay-sheet").waitFor({ timeout: 15000 });
}

export function defineSheetChecks({ bridge, wasm, label, withPage }) {
  if (bridge !== "openai") return;
  const sheetHost = { host: { sheet: "1" } };

  test(`${label}: no payment sheet, no Pay in ChatGPT button`, () => withPage("sheet-absent", async (h) => {
    await draftForSheet(h);
    await expectRuntime(h, wasm);
    assert.equal(await h.frame().locator(`${PAY}:visible`).count(), 0, "the button needs the host's requestCheckout");
    assert.equal(await h.frame().locator(PAY).count(), 1, "the card has it, hidden");
  }));

  test(`${label}: pay in the host's sheet: one order, one charge, no commit_order`, () => withPage("sheet-pay", async (h) => {
    const draftId = await draftForSheet(h);
    await expectRuntime(h, wasm);
    assert.equal(await h.charges(), 0);
    await screenshot(h, `${label}-sheet-offered`);
    await openSheet(h);
    const session = await h.page.evaluate(() => window.ggPreview.sheets.at(-1).session);
    assert.equal(session.id, `cs_${draftId}`, "the sheet pays the shown draft");
    assert.equal(session.payment_mode, "test");
    await screenshot(h, `${label}-sheet-open`);
    if (wasm) await stage(h, "1-open");
    await h.page.locator("#sheet-pay").click();
    await waitForState(h, "order-placed");
    assert.equal(await h.page.locator("#pay-sheet").count(), 0, "the sheet closed");
    assert.equal(await h.charges(), 1, "one charge");
    const calls = await sheetCalls(h);
    assert.equal(calls.length, 1, "one complete_checkout");
    assert.equal(calls[0].from, "host", "the host calls complete_checkout, not the view");
    assert.ok(calls[0].ok && calls[0].order, "it placed the order");
    assert.equal((await h.commits()).length, 0, "no commit_order");
    assert.equal(await h.visible(".gg-order-placed code").innerText(), calls[0].order, "the card shows that order");
    await screenshot(h, `${label}-sheet-paid`);
    if (wasm) await stage(h, "3-paid");
  }, sheetHost));

  test(`${label}: a declined card stays on the sheet with the error, nothing charged; another card then pays once`, () => withPage("sheet-decline", async (h) => {
    await draftForSheet(h);
    await expectRuntime(h, wasm);
    await openSheet(h);
    await h.page.locator("#sheet-number").fill("4000000000000002");
    await h.page.locator("#sheet-pay").click();
    const error = h.page.locator("#sheet-error:visible");
    await error.waitFor({ timeout: 15000 });
    assert.match(await error.innerText(), /declined/i, "the sheet says why");
    const calls = await sheetCalls(h);
    assert.equal(calls.length, 1);
    assert.equal(calls[0].code, "PAYMENT_DECLINED");
    assert.equal(await h.charges(), 0, "nothing charged");
    assert.equal(await visibleState(h), "confirm", "the view waits under the sheet");
    await screenshot(h, `${label}-sheet-declined`);
    if (wasm) await stage(h, "2-declined");
    // Another card pays the same draft.
    await h.page.locator("#sheet-number").fill("4242424242424242");
    await h.page.locator("#sheet-pay").click();
    await waitForState(h, "order-placed");
    assert.equal(await h.charges(), 1, "the second card is charged once");
  }, sheetHost));

  test(`${label}: closing the sheet leaves the confirmation, nothing charged, Confirm still works`, () => withPage("sheet-cancel", async (h) => {
    await draftForSheet(h);
    await expectRuntime(h, wasm);
    await openSheet(h);
    await h.page.locator("#sheet-cancel").click();
    await until(async () => (await h.page.locator("#pay-sheet").count()) === 0, { message: "the sheet to close" });
    await until(async () => (await h.frame().locator(`${PAY}:visible:enabled`).count()) === 1, { message: "the card to be usable again" });
    assert.equal(await visibleState(h), "confirm");
    assert.equal((await sheetCalls(h)).length, 0, "no complete_checkout");
    assert.equal(await h.charges(), 0);
    await screenshot(h, `${label}-sheet-cancelled`);
    await h.visible('[data-action="confirm"]').click();
    await waitForState(h, "order-placed");
    assert.equal(await h.charges(), 1);
  }, sheetHost));

  test(`${label}: a reload while the sheet pays, then Pay again: the same order, one charge`, (t) => withPage("sheet-reload", async (h) => {
    const draftId = await draftForSheet(h);
    await expectRuntime(h, wasm);
    // The server places the order; the host's answer to the view waits, and is dropped once the
    // view that asked is gone.
    await h.holdAnswers("complete_checkout");
    await openSheet(h);
    await h.page.locator("#sheet-pay").click();
    await until(async () => (await sheetCalls(h)).some((c) => c.answered), { timeout: 15000, message: "complete_checkout to be answered" });
    assert.equal(await h.charges(), 1);
    await h.reload();
    const back = await until(async () => {
      const s = await visibleState(h);
      return s && s !== "loading" ? s : false;
    }, { timeout: 15000, message: "the reloaded view to show something" });
    t.diagnostic(`after a reload with the sheet's payment made the view shows: ${back}`);
    await h.releaseHeld();
    await h.holdAnswers(null);
    assert.equal(back, "confirm", "the confirmation the person left");
    assert.equal(await h.visible('[data-action="confirm"]').getAttribute("data-draft-id"), draftId, "the same draft");
    // The person pays again: a new token, the same session; the draft's one order comes back.
    await openSheet(h);
    await h.page.locator("#sheet-pay").click();
    await waitForState(h, "order-placed");
    const calls = await sheetCalls(h);
    assert.equal(calls.length, 2);
    assert.ok(calls[0].order, "the first payment placed the order");
    assert.equal(calls[1].order, calls[0].order, "the same order");
    assert.equal(await h.charges(), 1, "one charge in all");
    await screenshot(h, `${label}-sheet-after-reload`);
  }, sheetHost));
}
