// keep.js, keep and restore: the screen and the purchase's idempotency key kept in storage and
// in window.openai's widget state, and brought back after a reload.
import { test } from "node:test";
import assert from "node:assert/strict";
import { load, settle } from "./load.mjs";
import { FakeStorage, WIRE } from "./fakes.mjs";

const { keepRestore } = load(["keep.js"]);

/** keep.js over fake storage; `oa`: a window.openai (its widget state), else MCP Apps. */
function keeper({ oa, storage = true, st = {} } = {}) {
  const w = storage ? { localStorage: new FakeStorage(), sessionStorage: new FakeStorage() } : {};
  const asked = [];
  const shown = [];
  const box = { innerHTML: "" };
  const state = { screen: { meta: {} }, host: {}, home: null, last: null, view: undefined, first: true, input: {}, ...st };
  const rt = {
    ask: (method, arg, rpc, params) => (asked.push({ method, arg, rpc, params }), Promise.resolve()),
    own: () => { state.acted = true; },
    show: (html, meta, args) => shown.push({ html, meta, args }),
    // Widget state's copy of the screen: the test's "inert" markup is a string with marks.
    inert: (html) => ({ content: html, innerHTML: html.replace(/<private>[^<]*<\/private>/g, "<private></private>") }),
    each: () => {},
  };
  return { k: keepRestore({ w, box, oa, wire: WIRE }, state, rt), w, asked, shown, box, st: state };
}

test("the basket is kept in widget state and storage, outlives the view in storage, and Cancel forgets it", async () => {
  const h = keeper({ oa: { widgetState: {} } });
  assert.equal(h.k.basket(), null);
  await h.k.keepBasket("d_1");
  assert.equal(h.k.basket(), "d_1");
  assert.equal(h.w.localStorage.getItem(WIRE.store + WIRE.basket), "d_1");
  assert.deepEqual(h.asked.at(-1).arg, [{ [WIRE.basket]: "d_1" }], "in widget state, which the model may read: an id, nothing personal");
  const asked = h.asked.length;
  await h.k.keepBasket("d_1");
  assert.equal(h.asked.length, asked, "the same basket again writes nothing");
  const next = keeper({ oa: { widgetState: {} } });
  next.w.localStorage.setItem(WIRE.store + WIRE.basket, "d_1");
  assert.equal(next.k.basket(), "d_1", "another view of the same origin adds to it too");
  await next.k.keepBasket("d_1");
  assert.deepEqual(next.asked, [], "a reload restoring the same basket says nothing to the host");
  await h.k.keepBasket(null);
  assert.equal(h.k.basket(), null);
  assert.equal(h.w.localStorage.getItem(WIRE.store + WIRE.basket), null);
});

test("the key kept for a draft is in widget state and storage, and goes when the draft changes", async () => {
  const h = keeper();
  await h.k.save(WIRE.checkout, { draft_id: "d1", idempotency_key: "ik-1" });
  assert.equal(h.w.localStorage.getItem(WIRE.store + "d1"), "ik-1");
  assert.equal(h.w.sessionStorage.getItem(WIRE.store + "d1"), "ik-1");
  assert.deepEqual(h.asked.at(-1), { method: "setWidgetState", arg: [{ [WIRE.checkout]: { draft_id: "d1", idempotency_key: "ik-1" } }],
    rpc: "ui/update-model-context", params: { structuredContent: { [WIRE.checkout]: { draft_id: "d1", idempotency_key: "ik-1" } } } });
  assert.equal(h.k.kept("d1"), "ik-1");
  await h.k.save(WIRE.checkout, { draft_id: "d2", idempotency_key: "ik-2" });
  assert.equal(h.w.localStorage.getItem(WIRE.store + "d1"), null, "the old draft's key goes");
  assert.equal(h.k.kept("d2"), "ik-2");
  await h.k.save(WIRE.checkout, null);
  assert.equal(h.w.localStorage.getItem(WIRE.store + "d2"), null);
  assert.deepEqual(h.asked.at(-1).arg, [{}]);
});

test("a key is found in window.openai's widget state where the frame has no storage", () => {
  const oa = { widgetState: { [WIRE.checkout]: { draft_id: "d1", idempotency_key: "ik-1" } } };
  const h = keeper({ oa, storage: false });
  assert.equal(h.k.kept("d1"), "ik-1");
  assert.equal(h.k.kept("d9"), null);
});

test("a storage that throws (an opaque frame) breaks nothing: the key lives on in the view's widget state", async () => {
  const w = {};
  Object.defineProperty(w, "localStorage", { get() { throw new Error("SecurityError"); } });
  const asked = [];
  const k = keepRestore({ w, box: { innerHTML: "<p>x</p>" }, wire: WIRE }, { view: "view-0001", screen: { meta: {} }, host: {} },
    { ask: (...a) => (asked.push(a), Promise.resolve()) });
  await k.save(WIRE.checkout, { draft_id: "d1", idempotency_key: "ik" });
  k.keep();
  assert.equal(k.kept("d1"), "ik");
  assert.equal(k.kept("d2"), null);
  assert.equal(asked.length, 1, "the host is still told");
});

test("the screen is kept under its view's id, the newest views only", () => {
  const h = keeper({ st: { view: "view-0001" } });
  h.box.innerHTML = "<p>one</p>";
  h.st.screen = { meta: {}, args: { gift_id: "g" } };
  h.st.last = { tool: "suggest_gifts", args: {}, plain: true };
  h.k.keep();
  const key = WIRE.viewStore + "html/view-0001";
  assert.deepEqual(JSON.parse(h.w.localStorage.getItem(key)),
    { html: "<p>one</p>", args: { gift_id: "g" }, home: null, host: false, last: { tool: "suggest_gifts", args: {}, plain: true } });
  for (const v of ["view-0002", "view-0003", "view-0004"]) {
    h.st.view = v;
    h.k.keep();
  }
  assert.equal(h.w.localStorage.getItem(key), null, "the oldest of four goes (maxViews 3)");
  assert.deepEqual(JSON.parse(h.w.localStorage.getItem(WIRE.viewIndex)), ["view-0002", "view-0003", "view-0004"].map((v) => WIRE.viewStore + "html/" + v));
  // A call with a token in its arguments is not kept as the one to repeat.
  h.st.last = { tool: "commit_order", args: {}, plain: false };
  h.k.keep();
  assert.equal(JSON.parse(h.w.localStorage.getItem(WIRE.viewStore + "html/view-0004")).last, null);
});

test("no view id, nothing kept", () => {
  const h = keeper();
  h.box.innerHTML = "<p>x</p>";
  h.k.keep();
  assert.deepEqual(Object.keys(h.w.localStorage), []);
});

test("on window.openai the kept screen goes to widget state without its private fields", () => {
  const h = keeper({ oa: { widgetState: null }, st: { view: "view-0001" } });
  h.box.innerHTML = "<form><private>Rua Augusta 12</private></form>";
  h.k.keep();
  const saved = h.asked.at(-1).arg[0][WIRE.screen];
  assert.deepEqual(saved, { view: "view-0001", html: "<form><private></private></form>", host: false });
  assert.match(JSON.parse(h.w.localStorage.getItem(WIRE.viewStore + "html/view-0001")).html, /Rua Augusta/, "storage (the frame's own) keeps it");
});

test("the first result names the view: a screen kept under that name is shown again", () => {
  const h = keeper();
  const entry = { html: "<p>confirm</p>", args: null, home: { html: "<p>cards</p>", args: {} }, host: true, last: null };
  h.w.localStorage.setItem(WIRE.viewStore + "html/view-0001", JSON.stringify(entry));
  const meta = { [WIRE.viewUuid]: "view-0001", [WIRE.html]: "<div>result</div>", token: "t" };
  assert.equal(h.k.restore({ _meta: meta }), true);
  assert.equal(h.st.view, "view-0001");
  assert.equal(h.st.acted, true, "the restored screen is this runtime's");
  assert.deepEqual(h.st.home, entry.home);
  assert.deepEqual(h.shown, [{ html: "<p>confirm</p>", meta, args: null }], "with the result's tokens: it was the host's own screen");
});

test("a result without a kept screen, or without a valid view id, restores nothing", () => {
  const h = keeper();
  assert.equal(h.k.restore({ _meta: { [WIRE.viewUuid]: "view-0002" } }), false);
  assert.equal(h.st.view, "view-0002");
  assert.equal(h.st.first, false);
  for (const bad of ["short", "no spaces allowed", 7, undefined]) {
    const g = keeper();
    assert.equal(g.k.restore({ _meta: { [WIRE.viewUuid]: bad } }), false);
    assert.equal(g.st.view, undefined);
  }
  assert.deepEqual(h.shown, []);
});

test("where storage is empty, window.openai's widget state brings the screen back", () => {
  const oa = { widgetState: { [WIRE.screen]: { view: "view-0001", html: "<p>kept</p>", host: false } } };
  const h = keeper({ oa });
  assert.equal(h.k.restore({ _meta: { [WIRE.viewUuid]: "view-0001", [WIRE.html]: "<div data-home>cards</div>" } }), true);
  assert.deepEqual(h.shown, [{ html: "<p>kept</p>", meta: false, args: undefined }]);
  assert.deepEqual(h.st.home, { html: "<div data-home>cards</div>", args: {} }, "a results screen to go back to");
});

test("forgetting removes every screen and key the view kept, and clears widget state", async () => {
  const h = keeper({ st: { view: "view-0001" } });
  await h.k.save(WIRE.checkout, { draft_id: "d1", idempotency_key: "ik-1" });
  h.k.keep();
  h.w.localStorage.setItem("someone-else", "stays");
  h.st.last = { tool: "x" };
  h.k.forget();
  await settle();
  assert.deepEqual(Object.keys(h.w.localStorage), ["someone-else"]);
  assert.deepEqual(Object.keys(h.w.sessionStorage), []);
  assert.equal(h.st.last, null);
  assert.deepEqual(h.asked.at(-1).arg, [{}]);
});
