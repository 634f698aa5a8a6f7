// The preview's chat panel: a real giftgenius-chat process (`--listen`) between the page and a
// scripted model (an OpenAI-compatible server here, on 127.0.0.1, answering from a script that
// reads the earlier tool results), the real server relaying /preview/chat/*. One message: the
// model suggests, prepares the first gift; the widget shows the draft inline in the conversation,
// one click on its Confirm charges exactly once, and the model hears of the order.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { existsSync } from "node:fs";
import path from "node:path";
import { ROOT, startServer, launchBrowser, openPreview, screenshot, until } from "../lib/harness.mjs";

function chatBinary() {
  if (process.env.GIFTGENIUS_CHAT_BIN) return process.env.GIFTGENIUS_CHAT_BIN;
  const target = process.env.CARGO_TARGET_DIR ? path.resolve(ROOT, process.env.CARGO_TARGET_DIR) : path.join(ROOT, "target");
  return path.join(target, "debug/giftgenius-chat");
}

/** A Chat Completions server answering request N with script(N, lastToolContent). */
async function scriptedModel(script) {
  const requests = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => { body += d; });
    req.on("end", () => {
      const request = JSON.parse(body || "{}");
      requests.push(request);
      const tool = [...(request.messages || [])].reverse().find((m) => m.role === "tool");
      const step = script(requests.length - 1, tool ? String(tool.content) : "");
      const message = step.calls
        ? { role: "assistant", content: null, tool_calls: step.calls.map(([name, args], i) => ({ id: `call_${requests.length}_${i}`, type: "function", function: { name, arguments: JSON.stringify(args) } })) }
        : { role: "assistant", content: step.answer };
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ id: `chatcmpl-${requests.length}`, object: "chat.completion", choices: [{ index: 0, message, finish_reason: step.calls ? "tool_calls" : "stop" }] }));
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${server.address().port}/v1`, requests, close: () => new Promise((r) => server.close(r)) };
}

const field = (text, key) => {
  const m = new RegExp(`"${key}":\\s*"([^"]+)"`).exec(text);
  if (!m) throw new Error(`no ${key} in ${text.slice(0, 300)}`);
  return m[1];
};

let model;
let chat;
let chatOutput = "";
let server;
let browser;

before(async () => {
  model = await scriptedModel((n, last) => {
    if (n === 0) return { calls: [["suggest_gifts", { relationship_type: "partner", budget_max: 80 }]] };
    if (n === 1) {
      const recipient = { name: "Ana Silva", address: { line1: "Rua Augusta 100", city: "Lisboa", postal_code: "1100-053", country: "PT" } };
      return { calls: [["prepare_order", { gift_id: field(last, "id"), recipient }]] };
    }
    assert.ok(last.includes("HOST NOTE: the person confirmed"), last);
    return { answer: `Ordered: ${field(last, "status")}.` };
  });
  const bin = chatBinary();
  if (!existsSync(bin)) throw new Error(`${bin} is missing; run \`cargo build -p giftgenius-chat\` (cargo xtask browser-test does)`);
  // The chat's port first, so the server can be told where it is; the chat connects to the
  // server once that answers.
  const probe = createServer();
  await new Promise((r) => probe.listen(0, "127.0.0.1", r));
  const chatPort = probe.address().port;
  await new Promise((r) => probe.close(r));
  server = await startServer({ extraArgs: ["--preview-chat-url", `http://127.0.0.1:${chatPort}`] });
  chat = spawn(bin, ["--listen", `127.0.0.1:${chatPort}`, "--mcp", `${server.base}/mcp`, "--base-url", model.url, "--model", "scripted"], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, OPENAI_API_KEY: "" },
  });
  chat.stderr.on("data", (d) => { chatOutput += d; });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close().catch(() => {});
  chat?.kill("SIGTERM");
  await server?.stop();
  await model?.close();
});

// One bridge: the suites already run every widget state on both; this is about the panel.
for (const bridge of ["openai"]) {
  test(`chat panel (${bridge}): the model's draft shows inline and one Confirm charges once`, async () => {
    const h = await openPreview(browser, server, { bridge, csp: "chatgpt" });
    const before = await server.ledger();
    const requestsBefore = model.requests.length;
    try {
      await until(() => h.page.evaluate(() => window.ggPreview.chat.on === true && !/connecting/.test(document.getElementById("chat-status").textContent)), { timeout: 30000, message: "the chat panel is ready" });
      // The script counts requests from 0: each test starts the model's script anew.
      model.requests.length = 0;
      await h.page.fill("#chat-input", "a gift for my partner under $80, and buy it");
      await h.page.click("#chat-send");
      await until(() => h.page.evaluate(() => window.ggPreview.chat.pending), { timeout: 30000, message: "the pending draft" });
      // The view is mounted inside the conversation, in the prepare_order result's turn.
      assert.equal(await h.page.locator("#chat-turns #widget").count(), 1);
      const confirm = h.visible('.gg-confirm-purchase [data-action="confirm"]');
      await confirm.waitFor({ timeout: 15000 });
      assert.equal((await server.ledger()) - before, 0, "nothing is charged before the click");
      await screenshot(h, `chat-${bridge}-confirm`);
      await confirm.click();
      await until(async () => (await h.frame().locator('.gg-root:visible[data-state="order-placed"]').count()) > 0, { timeout: 15000, message: "order placed in the view" });
      const answer = await until(() => h.page.evaluate(() => (window.ggPreview.chat.turns.find((t) => t.kind === "answer") || {}).text), { timeout: 15000, message: "the model's answer" });
      assert.match(answer, /^Ordered: /);
      assert.equal((await server.ledger()) - before, 1, "one click, one charge");
      assert.equal((await h.commits()).length, 1, "one commit_order call, from the view");
      const turns = await h.page.evaluate(() => window.ggPreview.chat.turns.map((t) => t.kind));
      assert.ok(turns.includes("purchase"), turns.join(","));
      // The model never read the confirmation token.
      for (const r of model.requests) assert.ok(!JSON.stringify(r).includes("confirmation_token"));
      assert.deepEqual(h.dialogs, []);
      await screenshot(h, `chat-${bridge}-ordered`);
    } catch (e) {
      await screenshot(h, `FAILED-chat-${bridge}`).catch(() => {});
      e.message += `\n  chat process:\n${chatOutput.slice(-2000)}\n  model requests: ${model.requests.length - requestsBefore}`;
      throw e;
    } finally {
      await h.close();
    }
  });
}
