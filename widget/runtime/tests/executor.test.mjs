// executor.js: each decision a control carries (decision.schema.json, generated from
// widget/src/decide.rs) is checked against the schema, then run against a recording host and
// screen: what the executor asks of the host and shows is what the decision's shape says. The
// placeholders are filled by the real placeholders.js.
import { test } from "node:test";
import assert from "node:assert/strict";
import { load, settle } from "./load.mjs";
import { El, WIRE } from "./fakes.mjs";
import { check, shapeOf, snapshotDecisions } from "./schema.mjs";

const { executor, placeholders } = load(["executor.js", "placeholders.js"]);

/**
 * The executor with a recording host and screen. `answers[tool]`: the tools/call result for it
 * (a function of the arguments, an Error to refuse, or a value; default an ok result with
 * markup); `oa`: a window.openai; `caps`: the MCP Apps host's capabilities.
 */
function harness({ answers = {}, oa, caps = { openLinks: {} }, meta = {}, kept = {}, basket = null, edited = false, st = {}, box = new El("div") } = {}) {
  const asked = [];
  const log = [];
  const shown = [];
  const notes = [];
  const saved = [];
  const state = { screen: { meta }, host: {}, input: {}, last: null, busy: false, acted: false, home: null, ...st };
  const rt = {
    ask(method, arg, rpc, params) {
      asked.push({ method, arg, rpc, params, busy: state.busy });
      if (rpc !== "tools/call") return Promise.resolve(answers[rpc] ?? {});
      const a = answers[params.name];
      const r = typeof a === "function" ? a(params.arguments) : a ?? { structuredContent: { ok: true }, _meta: { [WIRE.html]: `<p>${params.name}</p>` } };
      return r instanceof Error ? Promise.reject(r) : Promise.resolve(r);
    },
    caps: () => caps,
    kept: (id) => kept[id] || null,
    save: (k, v) => (saved.push([k, v]), Promise.resolve()),
    basket: () => basket,
    keepBasket: (id) => (saved.push([WIRE.basket, id]), Promise.resolve()),
    paint() {},
    refocus() {},
    keep() {},
    forget: () => log.push("forget"),
    log: (level, what) => log.push([level, what]),
    show: (html, m, args) => shown.push({ html, args }),
    result(res, args) {
      const html = res?._meta?.[WIRE.html];
      if (typeof html !== "string") return false;
      state.screen = { meta: res._meta, args };
      shown.push({ html, args });
      return true;
    },
    // The answer's markup: what a query in it finds is the test's table on the result.
    markup: (res) => Object.assign(new El("template"), { q: res?.markup || {} }),
    note: (text) => notes.push(text ?? "unreachable"),
    fieldErrors: (m) => log.push(["fieldErrors", m.q]),
    each: (sel, f) => box.querySelectorAll(sel).forEach(f),
    said: (o) => o?.en ?? "",
    context: (c) => log.push(["context", c]),
    edited: () => edited,
    take: (b) => b,
  };
  Object.assign(rt, placeholders({ box }, state, rt));
  const x = executor({ box, app: null, oa, data: { cancelled: { en: "<p>cancelled</p>" } }, wire: WIRE }, state, rt);
  const press = (d, b = new El("button", { "data-call": JSON.stringify(d) })) => {
    const e = { prevented: false, preventDefault() { this.prevented = true; } };
    x.press(d, JSON.stringify(d), b, e);
    return e;
  };
  return { press, asked, log, shown, notes, saved, st: state, box, calls: () => asked.filter((a) => a.rpc === "tools/call").map((a) => [a.params.name, a.params.arguments]) };
}

/** A tools/call with `d`'s own tool and arguments, placeholders filled as `harness` can. */
const meta = { "giftgenius/confirmation_token": "tok", "giftgenius/delete_data_token": "del", "giftgenius/cancel_tokens": { o_7f3a: "ctok" },
  "giftgenius/checkoutSheet": { id: "cs_1" } };

test("every decision in the widget's markup is one of the schema's shapes and does what that shape says", async () => {
  const all = snapshotDecisions();
  assert.ok(all.length > 50);
  const seen = new Set();
  for (const { file, d } of all) {
    assert.deepEqual(check(d), [], `${file}: ${JSON.stringify(d)}`);
    const shape = shapeOf(d);
    seen.add(shape);
    const ask = new El("p", { id: "gg-ask-1" });
    const box = new El("div");
    box.q["[data-ask]"] = [ask];
    const oa = shape === "SheetJson" ? { requestCheckout: async () => ({ id: "o_paid" }) } : undefined;
    const h = harness({ meta, oa, box, st: { last: { tool: "suggest_gifts", args: { relationship_type: "friend" }, plain: true }, home: { html: "<p>cards</p>", args: {} } } });
    const e = h.press(d);
    await settle();
    const why = `${file}: ${JSON.stringify(d)}`;
    switch (shape) {
      case "CallJson": {
        const [[tool, args]] = h.calls();
        assert.equal(tool, d.tool, why);
        assert.ok(!JSON.stringify(args).includes('"$"'), `no placeholder left: ${why}`);
        for (const [k, v] of Object.entries(d.args)) if (v !== null && !(typeof v === "object" && "$" in v)) assert.deepEqual(args[k], v, why);
        assert.equal(h.st.busy, false, why);
        break;
      }
      case "SheetJson":
        assert.deepEqual(h.calls(), [[d.then.tool, { order_id: "o_paid" }]], why);
        break;
      case "AskJson":
        assert.deepEqual(h.asked, [], why);
        assert.equal(ask.hidden, d.ask !== "gg-ask-1", why);
        break;
      case "BackJson":
        assert.deepEqual(h.saved, [[WIRE.basket, null], [WIRE.checkout, null]], why);
        assert.deepEqual(h.shown, [{ html: "<p>cards</p>", args: {} }], why);
        break;
      case "ShopJson":
        assert.deepEqual(h.saved, [[WIRE.checkout, null]], why);
        assert.deepEqual(h.shown, [{ html: "<p>cards</p>", args: {} }], why);
        break;
      case "RetryJson":
        assert.deepEqual(h.calls(), [["suggest_gifts", { relationship_type: "friend" }]], why);
        break;
      case "OpenJson":
        assert.deepEqual(h.asked.map((a) => [a.rpc, a.params]), [["ui/open-link", { url: d.open }]], why);
        assert.equal(e.prevented, true, why);
        break;
      case "ModeJson":
        assert.deepEqual(h.asked.map((a) => [a.rpc, a.params]), [["ui/request-display-mode", { mode: d.mode }]], why);
        break;
      default:
        assert.fail(`no expectation for ${shape}`);
    }
  }
  assert.deepEqual([...seen].sort(), ["AskJson", "BackJson", "CallJson", "ModeJson", "OpenJson", "RetryJson", "SheetJson", "ShopJson"]);
});

test("a call shows its answer, keeps its arguments when they hold no token, and disables the screen meanwhile", async () => {
  const h = harness();
  const d = { tool: "suggest_gifts", args: { budget_max: 120 }, over: true };
  assert.deepEqual(check(d), []);
  h.st.input = { relationship_type: "friend" };
  h.press(d);
  assert.equal(h.st.busy, true, "busy while the call is out");
  await settle();
  assert.equal(h.st.busy, false);
  assert.equal(h.st.acted, true);
  assert.deepEqual(h.shown, [{ html: "<p>suggest_gifts</p>", args: { relationship_type: "friend", budget_max: 120 } }]);
  assert.deepEqual(h.st.last, { tool: "suggest_gifts", args: { relationship_type: "friend", budget_max: 120 }, plain: true });
  const t = harness({ meta });
  t.press({ tool: "delete_my_data", args: { confirmation_token: { $: "meta", key: "giftgenius/delete_data_token" } } });
  await settle();
  assert.equal(t.st.last.plain, false);
  assert.deepEqual(t.shown.map((s) => s.args), [null], "a screen answering a call with a token keeps no arguments");
});

test("a press while a call is out, or on a disabled control, does nothing", async () => {
  const h = harness({ st: { busy: true } });
  h.press({ tool: "list_orders", args: {} });
  const g = harness();
  g.press({ tool: "list_orders", args: {} }, Object.assign(new El("button"), { disabled: true }));
  await settle();
  assert.deepEqual([...h.asked, ...g.asked], []);
});

test("the key minted for a draft is kept before the call is made, so a retry reuses it", async () => {
  const d = { tool: "commit_order", args: { draft_id: "d_42", confirmation_token: { $: "meta", key: "giftgenius/confirmation_token" },
    idempotency_key: { $: "key", draft: "d_42", or: "ik_new" } } };
  assert.deepEqual(check(d), []);
  const h = harness({ meta });
  h.press(d);
  await settle();
  assert.deepEqual(h.saved, [[WIRE.checkout, { draft_id: "d_42", idempotency_key: "ik_new" }]]);
  assert.deepEqual(h.calls(), [["commit_order", { draft_id: "d_42", confirmation_token: "tok", idempotency_key: "ik_new" }]]);
  const again = harness({ meta, kept: { d_42: "ik_new" } });
  again.press({ ...d, args: { ...d.args, idempotency_key: { $: "key", draft: "d_42", or: "ik_other" } } });
  await settle();
  assert.deepEqual(again.saved, [], "a kept key is not kept again");
  assert.equal(again.calls()[0][1].idempotency_key, "ik_new");
});

test("the edited call is made instead when the person edited the form", async () => {
  const d = { tool: "commit_order", args: { draft_id: "d_42" }, edited: { tool: "prepare_order", args: { gift_id: "g" }, form: true } };
  assert.deepEqual(check(d), []);
  const h = harness({ edited: true });
  h.press(d);
  await settle();
  assert.deepEqual(h.calls(), [["prepare_order", { gift_id: "g" }]]);
  const g = harness();
  g.press(d);
  await settle();
  assert.deepEqual(g.calls(), [["commit_order", { draft_id: "d_42" }]]);
});

test("a token lost with a reload: the lost call first, then the call, when its answer decides the same", async () => {
  const d = { tool: "commit_order", args: { draft_id: "d_42", confirmation_token: { $: "meta", key: "giftgenius/confirmation_token" } },
    lost: { tool: "reopen_order_draft", args: { draft_id: "d_42" } }, gone: "This order draft has expired." };
  assert.deepEqual(check(d), []);
  const raw = JSON.stringify(d);
  const twin = new El("button", { "data-call": raw });
  const h = harness({ answers: { reopen_order_draft: { structuredContent: { ok: true }, markup: { "[data-call]": [twin] },
    _meta: { [WIRE.html]: "<p>reopened</p>", "giftgenius/confirmation_token": "fresh" } } } });
  h.press(d);
  await settle();
  assert.deepEqual(h.calls(), [["reopen_order_draft", { draft_id: "d_42" }], ["commit_order", { draft_id: "d_42", confirmation_token: "fresh" }]]);
  assert.deepEqual(h.shown.map((s) => s.html), ["<p>reopened</p>", "<p>commit_order</p>"]);
});

test("the lost call's answer decides otherwise (another price): the control goes and the screen says why", async () => {
  const d = { tool: "commit_order", args: { confirmation_token: { $: "meta", key: "giftgenius/confirmation_token" } },
    lost: { tool: "reopen_order_draft", args: { draft_id: "d_42" } }, gone: "This order draft has expired." };
  const mine = new El("button", { "data-call": JSON.stringify(d) });
  const box = new El("div");
  box.q["[data-call]"] = [mine, new El("button", { "data-call": "{\"back\":true}" })];
  const other = new El("button", { "data-call": JSON.stringify({ ...d, seen: "80 USD" }) });
  const h = harness({ box, answers: { reopen_order_draft: { structuredContent: { ok: true }, markup: { "[data-call]": [other] }, _meta: { [WIRE.html]: "<p>x</p>" } } } });
  h.press(d, mine);
  await settle();
  assert.deepEqual(h.calls().map((c) => c[0]), ["reopen_order_draft"]);
  assert.equal(mine.removed, true);
  assert.equal(box.q["[data-call]"][1].removed, undefined);
  assert.deepEqual(h.notes, ["This order draft has expired."]);
  assert.deepEqual(h.shown, []);
});

test("answers: a refused form's field errors, a patch in place, forget after an ok answer", async () => {
  const form = harness({ answers: { prepare_order: { structuredContent: { ok: false, error: { field_errors: [{ field: "recipient.name" }] } }, markup: { "[data-field]": ["x"] } } } });
  form.press({ tool: "prepare_order", args: {}, form: true });
  await settle();
  assert.deepEqual(form.log, [["fieldErrors", { "[data-field]": ["x"] }]]);
  assert.deepEqual(form.shown, [], "the card stays");

  const row = ".gg-order-row[data-order-id=\"o_1\"]";
  const old = new El("li");
  old.replaceWith = (n) => { old.replacedBy = n; };
  const box = new El("div");
  box.q[row] = [old];
  const fresh = new El("li");
  const patch = harness({ box, answers: { cancel_order: { structuredContent: { ok: true }, markup: { [row]: [fresh] }, _meta: { [WIRE.html]: "<p>all</p>" } } } });
  patch.press({ tool: "cancel_order", args: { order_id: "o_1" }, patch: row });
  await settle();
  assert.equal(old.replacedBy, fresh);
  assert.deepEqual(patch.shown, [], "only the row changes");

  const forget = harness();
  forget.press({ tool: "delete_my_data", args: {}, forget: true });
  await settle();
  assert.deepEqual(forget.log, ["forget"]);
  assert.deepEqual(forget.shown.map((s) => s.html), ["<p>delete_my_data</p>"]);
});

test("a call that fails leaves a note on the screen and a log line for the host, without its arguments", async () => {
  const h = harness({ answers: { prepare_order: new Error("the host did not answer in time") } });
  h.press({ tool: "prepare_order", args: { gift_id: "g_secret" } });
  await settle();
  assert.deepEqual(h.notes, ["unreachable"]);
  assert.deepEqual(h.log, [["error", { event: "tool_call_failed", tool: "prepare_order", message: "the host did not answer in time" }]]);
  assert.equal(h.st.busy, false);
  const none = harness({ answers: { list_orders: { structuredContent: { ok: true } } } });
  none.press({ tool: "list_orders", args: {} });
  await settle();
  assert.deepEqual(none.notes, ["unreachable"], "an answer without markup is a note too");
});

test("a link opens through the host that can, else the plain link does; a display mode is asked of the host", async () => {
  const open = { open: "https://giftgenius.test/checkout/cs_1" };
  assert.deepEqual(check(open), []);
  const h = harness({ caps: {} });
  assert.equal(h.press(open).prevented, false);
  await settle();
  assert.deepEqual(h.asked, [], "no openLinks: the link itself");
  const oa = { openExternal() {} };
  const o = harness({ oa });
  o.press(open);
  assert.deepEqual(o.asked.map((a) => [a.method, a.arg]), [["openExternal", [{ href: open.open }]]]);
  const m = harness({ answers: { "ui/request-display-mode": { mode: "fullscreen" } } });
  m.press({ mode: "fullscreen" });
  await settle();
  assert.deepEqual(m.log, [["context", { displayMode: "fullscreen" }]], "the view follows the mode the host reports");
});

test("back leaves the confirmation: its key forgotten, the results shown again, or the cancelled screen", async () => {
  const h = harness();
  h.press({ back: true });
  assert.equal(h.st.busy, true);
  await settle();
  assert.deepEqual(h.saved, [[WIRE.basket, null], [WIRE.checkout, null]], "Cancel forgets the basket too");
  assert.deepEqual(h.shown, [{ html: "<p>cancelled</p>", args: undefined }]);
  assert.equal(h.st.busy, false);
});

test("keep shopping goes back to the results keeping the basket; Add adds to it, or starts one", async () => {
  const home = { html: "<ul data-home>cards</ul>", args: { interests: ["tea"] } };
  const h = harness({ st: { home }, basket: "d_7" });
  h.press({ shop: true });
  await settle();
  assert.deepEqual(h.saved, [[WIRE.checkout, null]], "the basket stays");
  assert.deepEqual(h.shown, [home]);
  const add = { tool: "prepare_order", args: { items: [{ gift_id: "g_2", quantity: 1 }], add_to: { $: "basket" }, currency: "USD" } };
  assert.deepEqual(check(add), []);
  h.press(add);
  await settle();
  assert.deepEqual(h.calls(), [["prepare_order", { items: [{ gift_id: "g_2", quantity: 1 }], add_to: "d_7", currency: "USD" }]]);
  const fresh = harness();
  fresh.press(add);
  await settle();
  assert.deepEqual(fresh.calls(), [["prepare_order", { items: [{ gift_id: "g_2", quantity: 1 }], currency: "USD" }]], "no basket kept: a new one");
});

test("the payment sheet: the shown session is paid in the host, then the order read; a result of its own is shown", async () => {
  const d = { sheet: { $: "meta", key: "giftgenius/checkoutSheet" }, lost: { tool: "reopen_order_draft", args: { draft_id: "d_42" } },
    gone: "gone", then: { tool: "get_order", args: { order_id: { $: "answer" } } }, seen: "7497 USD" };
  assert.deepEqual(check(d), []);
  const paid = [];
  const h = harness({ meta, oa: { requestCheckout: async (s) => (paid.push(s), { order: { id: "o_5" } }) } });
  h.press(d);
  await settle();
  assert.deepEqual(paid, [{ id: "cs_1" }]);
  assert.deepEqual(h.calls(), [["get_order", { order_id: "o_5" }]]);
  const own = harness({ meta, oa: { requestCheckout: async () => ({ structuredContent: { ok: true }, _meta: { [WIRE.html]: "<p>paid</p>" } }) } });
  own.press(d);
  await settle();
  assert.deepEqual(own.calls(), []);
  assert.deepEqual(own.shown.map((s) => s.html), ["<p>paid</p>"]);
  const closed = harness({ meta, oa: { requestCheckout: async () => { throw new Error("closed"); } } });
  closed.press(d);
  await settle();
  assert.deepEqual([closed.calls(), closed.shown, closed.st.busy], [[], [], false], "closing the sheet leaves the screen");
});
