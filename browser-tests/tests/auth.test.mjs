// The signed-in preview (`cargo xtask preview --auth`): the server in verified mode against the
// local authorization server (preview/oidc/, oidc-provider). The page signs in with the flow a
// real host runs (protected resource metadata → authorization server metadata → authorization
// code + PKCE through the real login and consent forms → token for our resource), and its MCP
// requests then carry the token: a purchase charges exactly once (the sandbox ledger).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser, openPreview, screenshot, until } from "../lib/harness.mjs";
import { waitForState, fillRecipient, newDraft } from "../lib/suite.mjs";

let server;
let browser;
before(async () => {
  server = await startServer({ auth: true });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close().catch(() => {});
  await server?.stop();
});

async function withPage(name, fn) {
  const h = await openPreview(browser, server, { bridge: "openai", csp: "chatgpt" });
  try {
    await fn(h);
    assert.deepEqual(h.dialogs, [], "no dialog may open");
  } catch (e) {
    await screenshot(h, `FAILED-auth-${name}`).catch(() => {});
    const log = await h.page.evaluate(() => window.ggPreview.log.slice(-12).map((e) => `${e.dir} ${e.label}`)).catch(() => []);
    e.message += `\n  page: ${h.page.url()}\n  last preview messages:\n    ${log.join("\n    ")}` +
      `\n  console errors: ${h.consoleErrors.slice(-5).join(" | ")}\n  server output (tail):\n${server.output().slice(-2000)}`;
    throw e;
  } finally {
    await h.close();
  }
}

const accountName = (h) => h.page.locator("#account-name").innerText();

/** On the authorization server: the login form (any username), then the consent form. */
async function logInAndConsent(h, user) {
  const issuer = new URL(server.issuer).origin;
  await h.page.waitForURL((url) => url.origin === issuer, { timeout: 15000 });
  await h.page.locator('input[name="login"]').fill(user);
  await h.page.locator('input[name="password"]').fill("any");
  await h.page.locator('button[type="submit"]').click();
  await h.page.locator('form button[type="submit"]', { hasText: /continue/i }).click();
}

test("auth: signed out, prepare_order answers AUTH_REQUIRED and the page offers Sign in", () => withPage("offer", async (h) => {
  assert.equal(await h.page.evaluate(() => window.ggPreview.auth.mode), "verified");
  assert.equal(await accountName(h), "Signed out");
  await h.page.locator("#sign-in").waitFor({ state: "visible" });
  // A stale token: the server refuses it (401), the page drops it and carries on signed out.
  await h.page.evaluate(() => sessionStorage.setItem("giftgenius-preview/access-token", "e30.eyJzdWIiOiJtYWxsb3J5In0.x"));
  await h.page.reload();
  await h.page.evaluate(() => window.ggPreview.ready);
  const result = await h.run("prepare_order", { gift_id: "tr-007" });
  assert.equal(result.isError, true);
  assert.equal(result.structuredContent.error.code, "AUTH_REQUIRED");
  assert.ok(result._meta["mcp/www_authenticate"], "the challenge a host starts linking from");
  assert.equal(await h.page.evaluate(() => window.ggPreview.auth.account), null, "the refused token was dropped");
  await h.page.locator("#auth-offer").waitFor({ state: "visible" });
  await screenshot(h, "auth-sign-in-offered");
  // The offer starts the real flow: the authorization server's login form.
  await h.page.locator("#auth-offer-sign-in").click();
  await h.page.waitForURL((url) => url.origin === new URL(server.issuer).origin, { timeout: 15000 });
  await h.page.locator('input[name="login"]').waitFor();
  assert.equal(await server.ledger(), 0, "nothing was charged");
}));

test("auth: sign in with code + PKCE, see the account, buy: exactly one charge", () => withPage("purchase", async (h) => {
  await h.page.locator("#sign-in").click();
  await logInAndConsent(h, "alice");
  // Back from /preview/callback to the host page, signed in.
  await h.page.waitForURL((url) => url.pathname === "/preview", { timeout: 15000 });
  await h.page.evaluate(() => window.ggPreview.ready);
  await until(async () => (await accountName(h)) === "Signed in as alice", { message: "the account name" });
  assert.equal(await h.page.locator("#sign-in").isVisible(), false);
  await h.page.locator("#sign-out").waitFor({ state: "visible" });
  await screenshot(h, "auth-signed-in");

  const before = await server.ledger();
  await h.fixture("results");
  await waitForState(h, "results");
  await h.visible('[data-action="choose"]').click();
  await waitForState(h, "confirm");
  // A new account has no saved address: the person types the recipient on the card, and
  // Confirm prepares the draft with it first (a new draft, confirmed by a second click).
  const chosen = await h.visible('[data-action="confirm"]').getAttribute("data-draft-id");
  await fillRecipient(h);
  await h.visible('[data-action="confirm"]').click();
  await newDraft(h, chosen);
  await h.visible('[data-action="confirm"]').click();
  await waitForState(h, "order-placed");
  assert.equal((await server.ledger()) - before, 1, "exactly one charge");
  const orderCalls = await h.page.evaluate(() => window.ggPreview.calls
    .filter((c) => c.name === "prepare_order" || c.name === "commit_order")
    .map((c) => ({ name: c.name, ok: !!c.result && !c.result.isError })));
  assert.deepEqual(orderCalls, [
    { name: "prepare_order", ok: true },
    { name: "prepare_order", ok: true },
    { name: "commit_order", ok: true },
  ]);
  await screenshot(h, "auth-order-placed");

  // Signing out drops the token: the next order call needs an account again.
  await h.page.locator("#sign-out").click();
  assert.equal(await accountName(h), "Signed out");
  const result = await h.run("prepare_order", { gift_id: "tr-007" });
  assert.equal(result.structuredContent.error.code, "AUTH_REQUIRED");
}));
