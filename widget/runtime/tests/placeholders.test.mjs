// placeholders.js: a decided call's arguments made concrete (decision.schema.json's
// PlaceholderJson: a token from the result's _meta, the draft's idempotency key, the sheet's
// answer) and the delivery form's fields added.
import { test } from "node:test";
import assert from "node:assert/strict";
import { load } from "./load.mjs";
import { El } from "./fakes.mjs";
import { check } from "./schema.mjs";

const { placeholders } = load(["placeholders.js"]);

function filler({ st = {}, kept = {}, basket = null, fieldset = null } = {}) {
  const box = new El("div");
  if (fieldset) box.q.fieldset = [fieldset];
  const state = { screen: { meta: {} }, host: {}, input: {}, ...st };
  return placeholders({ box }, state, { kept: (id) => kept[id] || null, basket: () => basket });
}

const input = (name, value, attrs = {}, props = {}) => new El("input", { name, ...attrs }, { name, value, type: "text", ...props });

test("plain arguments go as decided; over starts from the screen's call, else the model's; null removes", () => {
  const c = { tool: "suggest_gifts", args: { budget_max: 120, occasion: null }, over: true };
  assert.deepEqual(check(c), []);
  const f = filler({ st: { input: { relationship_type: "friend", occasion: "birthday" } } });
  assert.deepEqual(f.fill(c), [{ relationship_type: "friend", budget_max: 120 }, null]);
  const g = filler({ st: { screen: { meta: {}, args: { relationship_type: "sister" } }, input: { relationship_type: "friend" } } });
  assert.deepEqual(g.fill(c), [{ relationship_type: "sister", budget_max: 120 }, null]);
  assert.deepEqual(g.fill({ tool: "get_order", args: { order_id: "o_1" } }), [{ order_id: "o_1" }, null], "without over: only its own");
});

test("a meta placeholder takes the token from the shown result's _meta, one named by id also from the host's", () => {
  const c = { tool: "cancel_order", args: { order_id: "o_1", confirmation_token: { $: "meta", key: "k/cancel", at: "o_1" } } };
  assert.deepEqual(check(c), []);
  assert.deepEqual(filler({ st: { screen: { meta: { "k/cancel": { o_1: "tok-s" } } } } }).fill(c)[0].confirmation_token, "tok-s");
  assert.deepEqual(filler({ st: { host: { meta: { "k/cancel": { o_1: "tok-h" } } } } }).fill(c)[0].confirmation_token, "tok-h");
  const plain = { tool: "commit_order", args: { confirmation_token: { $: "meta", key: "k/token" } } };
  assert.equal(filler({ st: { screen: { meta: { "k/token": "t" } } } }).fill(plain)[0].confirmation_token, "t");
  assert.equal(filler({ st: { host: { meta: { "k/token": "t" } } } }).fill(plain), null, "without `at` only the shown result's");
  assert.equal(filler({ st: { screen: { meta: { "k/token": "" } } } }).fill(plain), null, "an empty token is none");
});

test("a key placeholder takes the key kept for the draft, else its own, which is then to be kept", () => {
  const c = { tool: "commit_order", args: { draft_id: "d_42", idempotency_key: { $: "key", draft: "d_42", or: "ik_new" } } };
  assert.deepEqual(check(c), []);
  assert.deepEqual(filler({ kept: { d_42: "ik_kept" } }).fill(c), [{ draft_id: "d_42", idempotency_key: "ik_kept" }, null]);
  assert.deepEqual(filler().fill(c), [{ draft_id: "d_42", idempotency_key: "ik_new" }, { draft_id: "d_42", idempotency_key: "ik_new" }]);
});

test("an answer placeholder takes the order id the payment sheet answered", () => {
  const c = { tool: "get_order", args: { order_id: { $: "answer" } } };
  assert.deepEqual(check(c), []);
  assert.deepEqual(filler({ st: { answer: "o_9" } }).fill(c), [{ order_id: "o_9" }, null]);
  assert.equal(filler().fill(c), null);
});

test("a basket placeholder takes the basket the view keeps, and is left out when it keeps none", () => {
  const c = { tool: "prepare_order", args: { items: [{ gift_id: "g_1", quantity: 1 }], add_to: { $: "basket" } } };
  assert.deepEqual(check(c), []);
  assert.deepEqual(filler({ basket: "d_3" }).fill(c), [{ items: [{ gift_id: "g_1", quantity: 1 }], add_to: "d_3" }, null]);
  assert.deepEqual(filler().fill(c), [{ items: [{ gift_id: "g_1", quantity: 1 }] }, null], "never unfillable");
});

test("the delivery form's fields join the arguments by their path; empty ones only when required", () => {
  const fs = new El("fieldset");
  fs.q["input[name], textarea[name]"] = [
    input("recipient.name", "  Ana Sousa "),
    input("recipient.address.city", "Lisboa"),
    input("recipient.address.line2", ""),
    input("recipient.address.postal_code", "", { "aria-required": "true" }),
    input("gift_wrap", "", {}, { type: "checkbox", checked: true }),
    input("express", "", {}, { type: "checkbox", checked: false }),
  ];
  const c = { tool: "prepare_order", args: { gift_id: "g_1" }, form: true };
  assert.deepEqual(check(c), []);
  assert.deepEqual(filler({ fieldset: fs }).fill(c)[0], {
    gift_id: "g_1", gift_wrap: true,
    recipient: { name: "Ana Sousa", address: { city: "Lisboa", postal_code: "" } },
  });
  assert.deepEqual(filler({ fieldset: fs }).fill({ ...c, form: false })[0], { gift_id: "g_1" }, "no form, no fields");
});

test("placed: whether arguments hold a placeholder anywhere (such a call is not repeated as made)", () => {
  const { placed } = filler();
  assert.equal(placed({ a: 1, b: ["x"], c: { d: "e" } }), false);
  assert.equal(placed(undefined), false);
  assert.equal(placed({ confirmation_token: { $: "meta", key: "k" } }), true);
  assert.equal(placed({ recipient: { nested: [{ $: "answer" }] } }), true);
});
