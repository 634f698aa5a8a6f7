// wasm.js: the wasm renders what the host says while nobody has acted; the host's results as
// they come (only news), the first one may restore a kept screen; a press makes the screen the
// runtime's; a wasm view that throws is given up on.
import { test } from "node:test";
import assert from "node:assert/strict";
import { load } from "./load.mjs";
import { El, WIRE } from "./fakes.mjs";

const { wasmView } = load(["wasm.js"]);

function view({ oa, st = {}, restore = false, edited = false } = {}) {
  const shown = [];
  const kept = [];
  const box = new El("div");
  const app = new El("div", {}, { hidden: true });
  const root = new El("html");
  const state = { screen: { meta: {} }, host: {}, first: true, busy: false, live: false, acted: false, failed: false, wv: null,
    init: undefined, due: false, hc: { theme: "dark" }, complete: null, partial: null, cancelled: null, ...st };
  const rt = {
    restore: (res) => (shown.push(["restore", res._meta[WIRE.html]]), restore),
    result: (res) => (shown.push(["result", res._meta[WIRE.html]]), true),
    keep: () => kept.push(true),
    edited: () => edited,
    modes: () => ["inline", "fullscreen"],
    twin: () => null,
  };
  const v = wasmView({ w: { console: { error() {} } }, d: { activeElement: null }, root, box, app, oa, wire: WIRE }, state, rt);
  return { v, st: state, shown, kept, box, app, root };
}

const res = (html, extra = {}) => ({ structuredContent: { ok: true, tool: "suggest_gifts" }, _meta: { [WIRE.html]: html, ...extra } });

test("the first result may restore a kept screen; later ones are shown; a repeated one leaves the screen", () => {
  const h = view();
  h.v.hosted(res("<p>cards</p>"));
  assert.deepEqual(h.shown, [["restore", "<p>cards</p>"], ["result", "<p>cards</p>"]]);
  assert.equal(h.st.first, false);
  assert.deepEqual(h.st.last, { tool: "suggest_gifts", args: null, plain: true });
  h.v.hosted(res("<p>cards</p>"));
  h.v.hosted({ structuredContent: {}, _meta: {} });
  assert.equal(h.shown.length, 2, "the host repeating itself, or a result without markup, shows nothing");
  h.v.hosted(res("<p>new</p>"));
  assert.deepEqual(h.shown.at(-1), ["result", "<p>new</p>"]);
  const r = view({ restore: true });
  r.v.hosted(res("<p>cards</p>"));
  assert.deepEqual(r.shown, [["restore", "<p>cards</p>"]], "a restored screen wins");
});

test("while a call is out, or the wasm shows the view, a new result is only remembered", () => {
  const h = view({ st: { busy: true, first: false } });
  h.v.hosted(res("<p>a</p>"));
  assert.deepEqual(h.shown, []);
  assert.equal(h.st.host.html, "<p>a</p>");
  const l = view({ st: { live: true, first: false } });
  l.v.hosted(res("<p>b</p>"));
  assert.deepEqual(l.shown, []);
  assert.deepEqual(l.st.host.res, { structuredContent: { ok: true, tool: "suggest_gifts" }, _meta: { [WIRE.html]: "<p>b</p>" } });
});

test("what the wasm is told: the host's context, the call's arguments and result", () => {
  const h = view({ st: { complete: { a: 1 }, partial: { a: 0 }, cancelled: { reason: "x" } } });
  h.v.hosted(res("<p>r</p>"));
  assert.deepEqual(h.v.told(), { context: { theme: "dark" }, checkout: false, input: { a: 1 }, partial: { a: 0 }, cancelled: { reason: "x" },
    result: { structuredContent: { ok: true, tool: "suggest_gifts" }, _meta: { [WIRE.html]: "<p>r</p>" } } });
  const o = view({ oa: { theme: "light", locale: "pt-PT", displayMode: "inline", requestCheckout() {} } });
  assert.deepEqual(o.v.told().context, { theme: "light", locale: "pt-PT", displayMode: "inline", availableDisplayModes: ["inline", "fullscreen"] });
  assert.equal(o.v.told().checkout, true);
});

test("on MCP Apps the wasm takes the view once the handshake is done and the first result is painted", () => {
  const drawn = [];
  const h = view();
  h.box.hidden = true;
  h.v.handover((t) => drawn.push(t));
  assert.equal(h.st.live, false, "not before ui/initialize is answered");
  h.st.init = null;
  h.v.offer();
  assert.equal(h.st.live, false, "nothing painted, nothing streaming: not yet");
  h.st.due = true;
  h.v.offer();
  assert.equal(h.st.live, true);
  assert.equal(h.app.hidden, false);
  assert.equal(h.box.hidden, true);
  assert.equal(drawn.length, 1);
  h.v.feed();
  assert.equal(drawn.length, 2, "fed again on news");
});

test("after a press or typing the screen stays the runtime's: the wasm's view goes", () => {
  const drawn = [];
  const h = view({ oa: {}, st: { acted: true } });
  h.v.handover((t) => drawn.push(t));
  assert.equal(h.st.live, false);
  assert.deepEqual(drawn, [null], "unmounted");
  assert.equal(h.st.wv, null);
  const e = view({ oa: {}, edited: true });
  e.v.handover(() => {});
  assert.equal(e.st.acted, true);
  assert.equal(e.st.live, false);
});

test("a wasm view that throws is given up on: the host's result is shown by the runtime", () => {
  const h = view({ oa: {} });
  h.v.hosted(res("<p>cards</p>"));
  h.shown.length = 0;
  h.v.handover(() => { throw new Error("boom"); });
  assert.equal(h.st.live, false);
  assert.equal(h.st.failed, true);
  assert.equal(h.root.dataset.wasm, "failed");
  assert.equal(h.app.hidden, true);
  assert.deepEqual(h.shown, [["result", "<p>cards</p>"]]);
});

test("a wasm that never started: a shown screen is the fallback's, and kept", () => {
  const h = view();
  h.box.hidden = false;
  h.v.fail();
  assert.equal(h.root.dataset.wasm, "fallback");
  assert.equal(h.kept.length, 1);
  const none = view();
  none.box.hidden = true;
  none.v.fail();
  assert.equal(none.root.dataset.wasm, undefined);
});
