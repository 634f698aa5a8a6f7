// Saved cards with Stripe, in Chromium against localstripe (the pinned Stripe emulator, whose
// Stripe.js stand-in the card page loads from `/js.stripe.com/v3/`): the confirm card's Add a
// card opens the hosted card page through the host; the card typed into the Card Element is
// saved by `confirmCardSetup` into a SetupIntent; localstripe then holds the PaymentMethod
// attached to our Customer; the confirm card shows it and Confirm pays (one PaymentIntent,
// succeeded). Remove card detaches it at Stripe and the card offers Add a card again; the card
// that saves but declines on charge (4000000000000341) saved through the page → PAYMENT_DECLINED.
// And 3-D Secure: the card that asks the bank (4000002500003155) → Confirm → awaiting
// authentication → the order card's "Confirm with your bank" → the hosted page's
// confirmCardPayment in Chromium → paid on Stripe's word, one PaymentIntent.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { mkdtempSync, rmSync, writeFileSync, existsSync, readFileSync } from "node:fs";
import { tmpdir, homedir } from "node:os";
import path from "node:path";
import { ROOT, startServer, launchBrowser, openPreview, screenshot, until } from "../lib/harness.mjs";

const SECRET = "sk_test_giftgenius_localstripe";
const PUBLISHABLE = "pk_test_giftgenius_localstripe";
const RECIPIENT = { name: "Ana Sousa", address: { line1: "Rua Augusta 12", city: "Lisboa", postal_code: "1100-053", country: "PT" } };

/** Where `cargo xtask setup` installs the pinned localstripe (as the Rust tests find it). */
function localstripeBin() {
  const pins = readFileSync(path.join(ROOT, "tools/localstripe/requirements.txt"), "utf8");
  const version = pins.match(/^localstripe==(\S+)/m)?.[1];
  const tools = process.env.GIFTGENIUS_TOOLS || path.join(homedir(), ".cache/giftgenius/tools");
  const bin = path.join(tools, `localstripe-${version}/bin/localstripe`);
  if (!existsSync(bin)) throw new Error(`localstripe is not installed at ${bin}: run \`cargo xtask setup\``);
  return bin;
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

async function startLocalStripe() {
  const port = await freePort();
  const child = spawn(localstripeBin(), ["--port", String(port), "--from-scratch"], { stdio: "ignore" });
  const url = `http://127.0.0.1:${port}`;
  const api = async (method, p, form) => {
    const res = await fetch(`${url}${p}`, {
      method,
      headers: { authorization: `Bearer ${SECRET}`, ...(form ? { "content-type": "application/x-www-form-urlencoded" } : {}) },
      body: form ? new URLSearchParams(form).toString() : undefined,
    });
    assert.ok(res.ok, `${method} ${p}: ${res.status}`);
    return res.json();
  };
  await until(async () => (await fetch(`${url}/v1/customers`, { headers: { authorization: `Bearer ${SECRET}` } })).ok, { message: "localstripe" });
  return { url, api, stop: () => child.kill("SIGKILL") };
}

const WEBHOOK_SECRET = "whsec_giftgenius_localstripe";
let stripe, server, browser, keyDir;

before(async () => {
  stripe = await startLocalStripe();
  keyDir = mkdtempSync(path.join(tmpdir(), "gg-stripe-"));
  const keyFile = path.join(keyDir, "stripe.key");
  writeFileSync(keyFile, `${SECRET}\n`);
  const webhookFile = path.join(keyDir, "webhook.secret");
  writeFileSync(webhookFile, `${WEBHOOK_SECRET}\n`);
  server = await startServer({ extraArgs: [
    "--payments", "stripe", "--stripe-api-base", stripe.url, "--stripe-secret-key-file", keyFile,
    "--stripe-publishable-key", PUBLISHABLE, "--stripe-js-url", `${stripe.url}/js.stripe.com/v3/`,
    "--stripe-webhook-secret-file", webhookFile,
  ] });
  // localstripe signs its events with the secret and posts them to /webhooks/stripe.
  const hook = await fetch(`${stripe.url}/_config/webhooks/gg`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ url: `${server.base}/webhooks/stripe`, secret: WEBHOOK_SECRET, events: ["payment_intent.succeeded", "payment_intent.payment_failed"] }),
  });
  assert.ok(hook.ok, `localstripe's webhook config: ${hook.status}`);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.stop();
  stripe?.stop();
  if (keyDir) rmSync(keyDir, { recursive: true, force: true });
});

async function waitForState(h, want) {
  return until(async () => (await h.frame().locator(`.gg-root:visible[data-state="${want}"]`).count()) > 0, { timeout: 15000, message: `widget state ${want}` });
}

/** The confirm card's Add a card, clicked: the link the host was asked to open. */
async function addCardLink(h) {
  const before = (await h.openedLinks()).length;
  await h.visible(".gg-add-card").click();
  const links = await until(async () => {
    const l = await h.openedLinks();
    return l.length > before ? l : false;
  }, { message: "the host to open Add a card" });
  const { url } = links[links.length - 1];
  assert.match(url, /\/pay\/card\/cus_\w+\.\d+\.[0-9a-f]{32}$/);
  return url;
}

/** Types `number` into localstripe's Card Element on the card page and saves it (`bank`: the
 * card asks for 3-D Secure when saved: localstripe's stand-in shows its dialog, confirmed). */
async function saveCard(h, url, number, { bank = false } = {}) {
  const page = await h.context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  // Console errors (a CSP violation is one), and any failed load but the browser's own favicon request.
  page.on("console", (m) => { if (m.type() === "error" && !/^Failed to load resource/.test(m.text())) errors.push(m.text()); });
  page.on("response", (r) => { if (r.status() >= 400 && !r.url().endsWith("/favicon.ico")) errors.push(`${r.status()} ${r.url()}`); });
  await page.goto(url);
  // The page names the account the card goes to and asks the person to confirm it is theirs
  // before anything is created at Stripe (issue 39 item 7).
  assert.match(await page.locator("[data-account]").innerText(), /saved to the GiftGenius account of /);
  await page.locator("#gg-account-confirm").check();
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === "POST" && r.url() === url),
    page.locator('#gg-account-form button[type="submit"]').click(),
  ]);
  const csp = response.headers()["content-security-policy"];
  assert.match(csp, new RegExp(`script-src 'self' ${stripe.url.replace(/[.]/g, "\\.")};`));
  await page.locator('#gg-card-element input[placeholder="number"]').fill(number);
  await page.locator('#gg-card-element input[placeholder="exp_month"]').fill("12");
  await page.locator('#gg-card-element input[placeholder="exp_year"]').fill("34");
  await page.locator('#gg-card-element input[placeholder="cvc"]').fill("123");
  await page.locator('#gg-card-element input[placeholder="postal_code"]').fill("10001");
  await page.locator('#gg-card-form button[type="submit"]:enabled').click();
  if (bank) await page.getByRole("button", { name: "Complete authentication" }).click();
  await page.locator("[data-saved-card]").waitFor({ timeout: 15000 });
  const said = await page.locator("[data-saved-card]").innerText();
  await screenshot({ page, context: h.context }, `stripe-card-saved-${number.slice(-4)}`);
  assert.deepEqual(errors, [], "no CSP violation, script error or failed load on the card page");
  await page.close();
  return said;
}

const customerOf = (url) => url.match(/\/pay\/card\/(cus_\w+)\./)[1];

test("a card saved on the card page pays; Remove card detaches it; the declining card declines", async () => {
  const h = await openPreview(browser, server);
  try {
    await h.run("prepare_order", { gift_id: "tr-007", recipient: RECIPIENT });
    await waitForState(h, "confirm");
    assert.match(await h.visible(".gg-card-on-file").innerText(), /No card saved yet/);
    const link = await addCardLink(h);
    const customer = customerOf(link);

    assert.match(await saveCard(h, link, "4242424242424242"), /Visa •••• 4242/);
    const cards = await stripe.api("GET", `/v1/payment_methods?customer=${customer}&type=card`);
    assert.equal(cards.data.length, 1, "localstripe holds the card, attached to our Customer");
    assert.equal(cards.data[0].card.last4, "4242");

    // The confirm card, opened again, shows the card that pays; Confirm charges it once.
    await h.run("prepare_order", { gift_id: "tr-007", recipient: RECIPIENT });
    await until(async () => /Visa •••• 4242/.test(await h.visible(".gg-card-on-file").innerText()), { message: "the saved card on the confirm card" });
    await screenshot(h, "stripe-confirm-with-card");
    await h.visible('.gg-confirm-purchase [data-action="confirm"]').click();
    await waitForState(h, "order-placed");
    const intents = (await stripe.api("GET", "/v1/payment_intents?limit=100")).data;
    assert.equal(intents.length, 1, "one PaymentIntent");
    assert.equal(intents[0].status, "succeeded");
    assert.equal(intents[0].payment_method, cards.data[0].id);
    assert.equal(intents[0].customer, customer);

    // Remove card: detached at Stripe, and the card offers Add a card again.
    await h.run("prepare_order", { gift_id: "hh-010", recipient: RECIPIENT });
    await until(async () => /Visa •••• 4242/.test(await h.visible(".gg-card-on-file").innerText()), { message: "the card again" });
    await h.visible('[data-action="remove-card"]').click();
    await h.visible(".gg-add-card").waitFor({ timeout: 15000 });
    assert.equal((await stripe.api("GET", `/v1/payment_methods?customer=${customer}&type=card`)).data.length, 0, "detached in localstripe");
    assert.equal((await stripe.api("GET", `/v1/payment_methods/${cards.data[0].id}`)).customer, null);
    await screenshot(h, "stripe-confirm-card-removed");

    // The card that saves but declines on charge, saved the same way: Confirm → PAYMENT_DECLINED.
    assert.match(await saveCard(h, await addCardLink(h), "4000000000000341"), /•••• 0341/);
    await h.run("prepare_order", { gift_id: "hh-010", recipient: RECIPIENT });
    await until(async () => /•••• 0341/.test(await h.visible(".gg-card-on-file").innerText()), { message: "the declining card shown" });
    await h.visible('.gg-confirm-purchase [data-action="confirm"]').click();
    await until(async () => (await h.frame().locator('[data-code="PAYMENT_DECLINED"]:visible').count()) > 0, { message: "PAYMENT_DECLINED on the card" });
    const all = (await stripe.api("GET", "/v1/payment_intents?limit=100")).data;
    assert.equal(all.filter((pi) => pi.status === "succeeded").length, 1, "nothing more was paid");
    assert.deepEqual(h.dialogs, []);
  } catch (e) {
    await screenshot(h, "FAILED-stripe-card").catch(() => {});
    throw new Error(`${e.stack}\n--- server ---\n${server.output()}`);
  } finally {
    await h.close();
  }
});

test("3-D Secure: the card that asks the bank is saved, Confirm awaits authentication, the hosted page completes it, Stripe's word pays", async () => {
  const h = await openPreview(browser, server);
  try {
    await h.run("prepare_order", { gift_id: "tr-012", recipient: RECIPIENT });
    await waitForState(h, "confirm");
    if (await h.frame().locator('[data-action="remove-card"]:visible').count()) {
      await h.visible('[data-action="remove-card"]').click();
    }
    const link = await addCardLink(h);
    assert.match(await saveCard(h, link, "4000002500003155", { bank: true }), /•••• 3155/);
    await h.run("prepare_order", { gift_id: "tr-012", recipient: RECIPIENT });
    await until(async () => /•••• 3155/.test(await h.visible(".gg-card-on-file").innerText()), { message: "the 3-D Secure card shown" });
    const paidBefore = (await stripe.api("GET", "/v1/payment_intents?limit=100")).data.filter((pi) => pi.status === "succeeded").length;
    await h.visible('.gg-confirm-purchase [data-action="confirm"]').click();
    await waitForState(h, "order-placed");
    const commit = (await h.viewCalls()).filter((c) => c.name === "commit_order").pop();
    const order = commit.result.structuredContent.order;
    assert.equal(order.status, "awaiting_authentication", JSON.stringify(commit.result.structuredContent));
    const url = commit.result._meta["giftgenius/authentication_urls"][order.id];
    assert.match(url, /\/pay\/authenticate\//);
    // The order card offers it: "Confirm with your bank" (a plain new-tab link for this http
    // server; through the host for https), the same link.
    assert.equal(await h.visible(".gg-authenticate-link").getAttribute("href"), url);
    assert.ok(!JSON.stringify(commit.result.structuredContent).includes("/pay/authenticate/"), "the link is not for the model");
    let intents = (await stripe.api("GET", "/v1/payment_intents?limit=100")).data.filter((pi) => pi.metadata.order_id === order.id);
    assert.deepEqual(intents.map((pi) => pi.status), ["requires_action"]);

    // The hosted page: Stripe.js confirmCardPayment, localstripe's 3-D Secure dialog, confirmed.
    const page = await h.context.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    page.on("response", (r) => { if (r.status() >= 400 && !r.url().endsWith("/favicon.ico")) errors.push(`${r.status()} ${r.url()}`); });
    const response = await page.goto(url);
    assert.match(response.headers()["content-security-policy"], /script-src 'self' http:\/\/127\.0\.0\.1:\d+;/);
    await page.locator('#gg-auth-form button[type="submit"]:enabled').click();
    await page.getByRole("button", { name: "Complete authentication" }).click();
    await page.locator("[data-order-status]").waitFor({ timeout: 15000 });
    const said = await page.locator("[data-order-status]").getAttribute("data-order-status");
    assert.ok(["paid", "awaiting_authentication"].includes(said), said);
    await screenshot({ page, context: h.context }, "stripe-3ds-done");
    assert.deepEqual(errors, [], "no script error or failed load on the 3-D Secure page");
    await page.close();

    // Paid on Stripe's word (the API answer the page's settling asked for, or localstripe's signed webhook).
    intents = (await stripe.api("GET", "/v1/payment_intents?limit=100")).data.filter((pi) => pi.metadata.order_id === order.id);
    assert.deepEqual(intents.map((pi) => pi.status), ["succeeded"], "one PaymentIntent, succeeded");
    const read = await until(async () => {
      const got = await h.callAsHost("get_order", { order_id: order.id });
      return got.structuredContent.order.status === "paid" ? got : false;
    }, { timeout: 15000, message: "the order paid" });
    assert.equal(read.structuredContent.order.status, "paid");
    const paidAfter = (await stripe.api("GET", "/v1/payment_intents?limit=100")).data.filter((pi) => pi.status === "succeeded").length;
    assert.equal(paidAfter, paidBefore + 1, "one more charge, not two");
    assert.deepEqual(h.dialogs, []);
  } catch (e) {
    await screenshot(h, "FAILED-stripe-3ds").catch(() => {});
    throw new Error(`${e.stack}\n--- server ---\n${server.output()}`);
  } finally {
    await h.close();
  }
});
