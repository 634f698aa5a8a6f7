// Host checks of issue 24, run by the browser suite (suite.mjs) on each of its four paths: MCP
// Apps with wasm, MCP Apps under a CSP that refuses wasm, window.openai without wasm, and
// window.openai with wasm. On window.openai the host announces widgetState changes
// (openai:set_globals after setWidgetState, ?announceWidgetState=1), as a globals API does.
//
// - The held-out scenario of item 10: a person fills the delivery form, presses Confirm, the view
//   reloads while commit_order is in flight (the server placed the order; the host holds the
//   answer, and drops it once the view that asked is gone), and the person presses Confirm again.
// - A person who clicks before the wasm takes over: Choose pressed on the first paint while the
//   wasm is held (wasm-gate.mjs), in each order against the wasm's start.
// - On window.openai, whose widget state the model can read: no widget state the view writes
//   holds the recipient's address or the gift message, and a card restored from it (the frame
//   has no storage) still buys once: its Confirm reopens the draft by id.
// - The four gaps of item 3: a cancel shows the updated order list; a restored order list offers
//   Cancel without fetching it again; a restored confirmation whose draft was pruned says
//   "expired". (The fourth, the openai fallback restoring its screen, is suite.mjs's
//   "a reload with a commit in flight comes back to the confirmation".)
//
// Every check reads what happened from the host (which calls the view sent, with which keys),
// the server (the person's orders) and the payment provider (charges, refunds), and what is on
// screen; it waits for conditions, never for a guessed time.
import { test } from "node:test";
import assert from "node:assert/strict";
import { until } from "./harness.mjs";
import { waitForState, visibleState, fillRecipient, newDraft, expectRuntime } from "./suite.mjs";

/** The `_meta` key of list_orders' Delete my data token (giftgenius_types::wire::META_DELETE_DATA_TOKEN). */
const META_DELETE_DATA_TOKEN = "giftgenius/delete_data_token";

/** The visible Confirm's draft id (null when there is none). */
async function shownDraft(h) {
  const b = h.frame().locator('[data-action="confirm"]:visible').first();
  return (await b.count()) ? b.getAttribute("data-draft-id") : null;
}

/**
 * Waits until the view is idle: every tool call it sent was answered by the server, nothing on
 * screen is busy (no aria-busy, no disabled button but an out-of-stock gift's Choose), then two
 * painted frames.
 */
async function quiet(h, what) {
  await until(async () => {
    if ((await h.viewCalls()).some((c) => !c.answered)) return false;
    const busy = await h.frame().locator('[aria-busy="true"]:visible, button[data-action]:not([data-action="choose"]):visible:disabled').count();
    return busy === 0;
  }, { timeout: 20000, message: `the view to be idle after ${what}` });
  await h.settled();
}

/**
 * The person presses `selector`; resolves once the press sent a tool call and the view is idle
 * again. A press that sends nothing fails here, naming `what`.
 */
async function press(h, selector, what) {
  const before = (await h.viewCalls()).length;
  await h.visible(selector).click();
  await until(async () => (await h.viewCalls()).length > before, { timeout: 15000, message: `${what} to send a tool call` });
  await quiet(h, what);
}

/** The ids of the visible order rows, top to bottom. */
async function orderRows(h) {
  const rows = h.frame().locator(".gg-order-row:visible");
  const ids = [];
  for (let i = 0; i < (await rows.count()); i++) ids.push(await rows.nth(i).getAttribute("data-order-id"));
  return ids;
}

async function rowStatus(h, orderId) {
  const badge = h.frame().locator(`.gg-order-row[data-order-id="${orderId}"]:visible [data-status]`).first();
  return (await badge.count()) ? badge.getAttribute("data-status") : null;
}

/** Asks to cancel `orderId` from the list, then says yes; resolves once the view is idle. */
async function cancelFromList(h, orderId, what) {
  await h.visible(`[data-action="ask-cancel-order"][data-order-id="${orderId}"]`).click();
  await press(h, `.gg-ask[data-order-id="${orderId}"] [data-action="cancel-order"]`, what);
}

/** The keys of every commit_order the view sent, in order. */
async function commitKeys(h) {
  return (await h.viewCalls()).filter((c) => c.name === "commit_order").map((c) => c.arguments.idempotency_key);
}

/** The view's screen once it shows something other than loading, after a reload. */
async function shownAfterReload(h) {
  return until(async () => {
    const s = await visibleState(h);
    return s && s !== "loading" ? s : false;
  }, { timeout: 15000, message: "the reloaded view to show something" });
}

/**
 * From the results, Choose the first gift, type the recipient and press Confirm: the edited
 * draft is prepared and shown (nothing paid). Resolves with its id.
 */
async function draftWithRecipient(h) {
  await h.visible('[data-action="choose"]').click();
  await waitForState(h, "confirm");
  const chosen = await shownDraft(h);
  await fillRecipient(h);
  await press(h, '[data-action="confirm"]', "Confirm with the delivery form filled in");
  return newDraft(h, chosen);
}

/**
 * Fills in the recipient on the shown confirmation, confirms the prepared draft and checks that
 * exactly one order was placed and the order card stays. `label` names the step in failures.
 */
async function buyShownDraft(h, label) {
  const chosen = await shownDraft(h);
  assert.ok(chosen, `${label}: a confirmation card is shown`);
  await fillRecipient(h);
  await press(h, '[data-action="confirm"]', `${label}: Confirm with the delivery form filled in`);
  await newDraft(h, chosen);
  await press(h, '[data-action="confirm"]', `${label}: Confirm`);
  assert.equal(await visibleState(h), "order-placed", `${label}: the order card`);
  assert.equal(await h.charges(), 1, `${label}: one charge`);
  assert.equal((await commitKeys(h)).length, 1, `${label}: one commit_order`);
}

/**
 * Defines the host checks inside a suite. `withPage(name, fn, opts)` is the suite's page runner
 * (a fresh page and preview user per test; `h.charges()` counts this test's charges);
 * `server()` the running server.
 */
export function defineHostChecks({ bridge, wasm, label, withPage, server }) {
  // window.openai as ChatGPT: setWidgetState is announced with openai:set_globals.
  const hostOpts = bridge === "openai" ? { host: { announceWidgetState: "1" } } : {};

  test(`${label}: held-out: a reload while commit_order is in flight, then Confirm again: one order, one charge, the same key`, (t) => withPage("held-out-reload", async (h) => {
    await h.fixture("results");
    await waitForState(h, "results");
    await expectRuntime(h, wasm);
    const draftId = await draftWithRecipient(h);
    assert.equal(await h.charges(), 0, "preparing the details charges nothing");
    // Confirm: the server places the order; its answer stays with the host.
    await h.holdAnswers("commit_order");
    await h.visible('[data-action="confirm"]').click();
    const first = await until(async () => {
      const c = (await h.viewCalls()).find((x) => x.name === "commit_order");
      return c && c.answered ? c : false;
    }, { timeout: 15000, message: "the server to answer commit_order (the host holds the answer)" });
    assert.ok(first.ok, `the server placed the order: ${JSON.stringify(first.result && first.result.structuredContent)}`);
    assert.equal(first.arguments.draft_id, draftId);
    const key = first.arguments.idempotency_key;
    const orderId = first.result.structuredContent.order.id;
    assert.equal(await h.charges(), 1);
    await h.holdAnswers(null);
    // The view reloads with the answer still in flight; it never reaches the new document.
    await h.reload();
    assert.equal(await h.releaseHeld(), 1, "the held answer was released after the reload");
    const back = await shownAfterReload(h);
    assert.equal(back, "confirm", "after the reload: the confirmation the person left");
    await expectRuntime(h, wasm);
    assert.equal(await shownDraft(h), draftId, "the same draft");
    // The person presses Confirm again (a view that lost the token may show the same draft
    // once more for a second press; no more than that).
    let presses = 0;
    while (presses < 2 && (await visibleState(h)) === "confirm") {
      presses++;
      await press(h, '[data-action="confirm"]', `Confirm after the reload (press ${presses})`);
    }
    t.diagnostic(`Confirm presses after the reload: ${presses}`);
    assert.equal(await visibleState(h), "order-placed", "the order card");
    assert.match(await h.visible(".gg-order-placed").innerText(), new RegExp(orderId), "the order the first Confirm placed");
    assert.equal(await h.charges(), 1, "charged once");
    const orders = await h.callAsHost("list_orders", {});
    assert.equal(orders.structuredContent.orders.length, 1, "exactly one order on the server");
    const keys = await commitKeys(h);
    assert.ok(keys.length >= 2, "commit_order was sent again after the reload");
    assert.deepEqual([...new Set(keys)], [key], "every commit_order under the first key (no new key minted)");
    const kept = await h.page.evaluate(() => window.ggPreview.instance.widgetState);
    if (kept && kept.checkout) assert.equal(kept.checkout.idempotency_key, key, "widget state keeps the same key");
  }, hostOpts));

  if (bridge === "openai") {
    test(`${label}: widget state never holds the address or the gift message, and the restored card still buys once`, () => withPage("private-widget-state", async (h) => {
      const message = "Parabéns, Ana! Um abraço";
      const written = () => h.page.evaluate(() => window.ggPreview.log
        .filter((e) => e.label === "openai.setWidgetState").map((e) => JSON.stringify(e.data)));
      const leaks = async () => (await written()).flatMap((state) =>
        ["Rua Augusta", "1100-053", "Ana Sousa", message, "Um abra"].filter((p) => state.includes(p)).map((p) => `${p} in ${state.slice(0, 300)}`));
      await h.fixture("results");
      await waitForState(h, "results");
      await expectRuntime(h, wasm);
      await h.visible('[data-action="choose"]').click();
      await waitForState(h, "confirm");
      const chosen = await shownDraft(h);
      await fillRecipient(h);
      await h.visible('textarea[name="gift_message"]').fill(message);
      await press(h, '[data-action="confirm"]', "Confirm with the delivery form filled in");
      const draftId = await newDraft(h, chosen);
      // The card shows every detail, from the answer's widget-only _meta.
      assert.equal(await h.visible('input[name="recipient.address.postal_code"]').inputValue(), "1100-053");
      assert.equal(await h.visible('textarea[name="gift_message"]').inputValue(), message);
      assert.ok((await written()).length >= 1, "the view wrote widget state");
      assert.deepEqual(await leaks(), [], "no widget state written holds a delivery detail");
      // A reload: the frame has no storage, so the card comes back from widget state alone.
      await h.reload();
      assert.equal(await shownAfterReload(h), "confirm", "after the reload: the confirmation");
      await expectRuntime(h, wasm);
      assert.equal(await shownDraft(h), draftId, "the same draft");
      await press(h, '[data-action="confirm"]', "Confirm on the restored card");
      assert.equal(await visibleState(h), "order-placed", "bought without typing anything again");
      assert.equal(await h.charges(), 1, "charged once");
      const calls = await h.viewCalls();
      const reopened = calls.filter((c) => c.name === "reopen_order_draft");
      assert.deepEqual(reopened.map((c) => c.arguments), [{ draft_id: draftId }], "the draft reopened by id, nothing else sent");
      assert.deepEqual((await commitKeys(h)).length, 1, "one commit_order");
      assert.deepEqual(await leaks(), [], "nor after the reload and the purchase");
    }, hostOpts));
  }

  if (wasm) {
    // A person who clicks before the wasm takes over: the first paint is the server's markup;
    // the wasm is held (wasm-gate.mjs) until the step that releases it.
    const firstPaintChoose = (h) => h.frame().locator('#giftgenius-fallback [data-action="choose"]:visible:enabled').first();
    const wasmStarted = (h) => until(async () => {
      const s = await h.wasmState();
      return s && s !== "loading" ? s : false;
    }, { timeout: 15000, message: "the wasm to start (data-wasm past loading)" });

    test(`${label}: Choose pressed on the first paint, answered before the wasm starts: the confirm card stays and buys once`, (t) => withPage("choose-first-paint", async (h) => {
      await h.fixture("results");
      await firstPaintChoose(h).waitFor({ timeout: 15000 });
      assert.equal(await h.wasmState(), "loading", "the wasm has not started yet");
      await firstPaintChoose(h).click();
      await waitForState(h, "confirm");
      const chosen = await shownDraft(h);
      await h.releaseWasm();
      t.diagnostic(`data-wasm after the wasm started: ${await wasmStarted(h)}`);
      await quiet(h, "the wasm's start");
      assert.equal(await visibleState(h), "confirm", "the confirm card is still shown");
      assert.equal(await shownDraft(h), chosen, "for the chosen gift");
      await buyShownDraft(h, "after the wasm started");
      await quiet(h, "the order");
      assert.equal(await visibleState(h), "order-placed", "the order card stays");
    }, { ...hostOpts, holdWasm: true }));

    test(`${label}: Choose pressed on the first paint, the wasm starts while it is in flight: the confirm card stays and buys once`, (t) => withPage("choose-in-flight", async (h) => {
      await h.fixture("results");
      await firstPaintChoose(h).waitFor({ timeout: 15000 });
      assert.equal(await h.wasmState(), "loading", "the wasm has not started yet");
      await h.holdAnswers("prepare_order");
      await firstPaintChoose(h).click();
      await until(async () => (await h.viewCalls()).some((c) => c.name === "prepare_order" && c.answered),
        { timeout: 15000, message: "the server to answer prepare_order (the host holds the answer)" });
      await h.releaseWasm();
      t.diagnostic(`data-wasm after the wasm started: ${await wasmStarted(h)}`);
      await h.holdAnswers(null);
      assert.equal(await h.releaseHeld(), 1);
      await waitForState(h, "confirm");
      await quiet(h, "the held prepare_order");
      assert.equal(await visibleState(h), "confirm", "the confirm card is still shown");
      await buyShownDraft(h, "after the wasm started");
      await quiet(h, "the order");
      assert.equal(await visibleState(h), "order-placed", "the order card stays");
    }, { ...hostOpts, holdWasm: true }));

    test(`${label}: Choose pressed once the wasm runs: the confirm card stays and buys once`, () => withPage("choose-wasm", async (h) => {
      await h.fixture("results");
      await waitForState(h, "results");
      await expectRuntime(h, true);
      await press(h, '[data-action="choose"]', "Choose");
      assert.equal(await visibleState(h), "confirm", "the confirm card is shown");
      await buyShownDraft(h, "in the wasm view");
      await quiet(h, "the order");
      assert.equal(await visibleState(h), "order-placed", "the order card stays");
    }, hostOpts));
  }

  test(`${label}: cancelling an order shows the updated order list, not the order card`, () => withPage("cancel-shows-list", async (h) => {
    const refunds = await server().refunds();
    await h.fixture("two orders");
    await waitForState(h, "order-list");
    await expectRuntime(h, wasm);
    const [first, second] = await orderRows(h);
    assert.ok(first && second, "two orders listed");
    await cancelFromList(h, first, "Yes, cancel");
    assert.equal((await server().refunds()) - refunds, 1, "one refund");
    assert.equal(await visibleState(h), "order-list", "the order list, updated");
    assert.equal(await h.frame().locator(".gg-order-placed:visible").count(), 0, "not the order card");
    assert.deepEqual(await orderRows(h), [first, second], "both orders still listed");
    assert.equal(await rowStatus(h, first), "cancelled");
    assert.equal(await rowStatus(h, second), "paid");
    await h.visible(`[data-action="ask-cancel-order"][data-order-id="${second}"]`).waitFor();
  }, hostOpts));

  test(`${label}: a restored order list offers Cancel without fetching the list again`, () => withPage("restored-list", async (h) => {
    const refunds = await server().refunds();
    await h.fixture("two orders");
    await waitForState(h, "order-list");
    await expectRuntime(h, wasm);
    const [first, second] = await orderRows(h);
    await cancelFromList(h, first, "Yes, cancel (before the reload)");
    assert.equal((await server().refunds()) - refunds, 1);
    // The host shows the model's list again (both paid); the view comes back to its own.
    await h.reload();
    assert.equal(await shownAfterReload(h), "order-list", "after the reload: the order list");
    await expectRuntime(h, wasm);
    assert.equal(await rowStatus(h, first), "cancelled", "the list the person left (the first order cancelled)");
    assert.equal(await rowStatus(h, second), "paid");
    const ask = h.frame().locator(`[data-action="ask-cancel-order"][data-order-id="${second}"]:visible`);
    assert.equal(await ask.count(), 1, "the paid order offers Cancel");
    await cancelFromList(h, second, "Yes, cancel (after the reload)");
    assert.equal((await server().refunds()) - refunds, 2, "the second order refunded");
    const calls = await h.viewCalls();
    assert.deepEqual(calls.filter((c) => c.name === "cancel_order").map((c) => [c.arguments.order_id, c.ok]), [[first, true], [second, true]]);
    assert.equal(calls.filter((c) => c.name === "list_orders").length, 0, "the list was not fetched again");
    assert.equal(await rowStatus(h, second), "cancelled");
  }, hostOpts));

  test(`${label}: a restored confirmation whose draft was pruned says it expired`, () => withPage("restored-pruned", async (h) => {
    await h.fixture("results");
    await waitForState(h, "results");
    await expectRuntime(h, wasm);
    const draftId = await draftWithRecipient(h);
    await h.reload();
    assert.equal(await shownAfterReload(h), "confirm", "after the reload: the confirmation the person left");
    await expectRuntime(h, wasm);
    assert.equal(await shownDraft(h), draftId, "the same draft");
    // The draft is gone from the server (Delete my data removes drafts, as pruning does).
    const list = await h.callAsHost("list_orders", {});
    const token = list._meta && list._meta[META_DELETE_DATA_TOKEN];
    assert.ok(token, "list_orders gave the host a Delete my data token");
    const deleted = await h.callAsHost("delete_my_data", { confirmation_token: token });
    assert.ok(deleted.structuredContent.drafts_deleted >= 1, `the draft was deleted: ${JSON.stringify(deleted.structuredContent)}`);
    await press(h, '[data-action="confirm"]', "Confirm on the restored card");
    const text = await h.visible(".gg-root").innerText();
    assert.match(text, /expired/i, `the view says the draft expired; it shows ${await visibleState(h)}: ${text.slice(0, 300)}`);
    const other = await shownDraft(h);
    assert.ok(other === null || other === draftId, `no other draft offered for confirmation (shows ${other})`);
    assert.equal(await h.charges(), 0, "nothing charged");
  }, hostOpts));
}
