// screen.js: painting the server's markup for the host's context, showing answers, notes in the
// person's language, the host's styling, and the twin of a control in the other markup.
import { test } from "node:test";
import assert from "node:assert/strict";
import { load } from "./load.mjs";
import { El, WIRE } from "./fakes.mjs";

const { screenOf } = load(["screen.js"]);
const TEXT = { en: { unreachable: "GiftGenius could not be reached.", needsFix: "Fix" }, pt: { unreachable: "Não foi possível.", needsFix: "Corrija" } };

/** screen.js over a fake document; `q`: what queries in the box find. */
function screen({ oa, st = {}, q = {} } = {}) {
  const made = [];
  const props = new Map();
  const root = new El("html", {}, { style: { setProperty: (n, v) => props.set(n, v), removeProperty: (n) => props.delete(n) } });
  const head = { appendChild: (e) => (made.push(e), e) };
  const d = { head, createElement: (tag) => new El(tag), getElementById: () => made.find((e) => e.id === "gg-host-fonts") || null };
  const box = new El("div", {}, { hidden: true });
  Object.assign(box.q, q);
  const app = new El("div");
  const state = { screen: { meta: {} }, host: {}, busy: false, acted: false, failed: false, hc: {}, vars: [], ...st };
  const kept = [];
  const baskets = [];
  const rt = { keep: () => kept.push(box.innerHTML), feed() {}, own() {}, keepBasket: (id) => baskets.push(id) };
  root.dataset.wasm = "ready";
  const s = screenOf({ d, root, box, app, oa, data: { text: TEXT }, wire: WIRE }, state, rt);
  return { s, box, app, root, props, made, st: state, kept, baskets };
}

test("a result's markup is shown with its tokens in memory; a result without markup shows nothing", () => {
  const h = screen();
  const meta = { [WIRE.html]: "<p>cards</p>", token: "t" };
  assert.equal(h.s.result({ structuredContent: { ok: true }, _meta: meta }, { a: 1 }), true);
  assert.equal(h.box.innerHTML, "<p>cards</p>");
  assert.equal(h.box.hidden, false);
  assert.equal(h.app.hidden, true, "the wasm's view steps aside");
  assert.deepEqual(h.st.screen, { meta, args: { a: 1 } });
  assert.equal(h.s.result({ structuredContent: { ok: true }, _meta: {} }, null), false);
  assert.equal(h.s.result(undefined, null), false);
});

test("a shown screen is kept once the person acted or the wasm failed, never a failure", () => {
  const h = screen();
  h.s.show("<p>one</p>");
  assert.deepEqual(h.kept, [], "nobody acted: the host's result needs no keeping");
  h.st.acted = true;
  h.s.result({ structuredContent: { ok: false }, _meta: { [WIRE.html]: "<p>error</p>" } });
  assert.deepEqual(h.kept, [], "a failure is not kept: a reload comes back to the screen before it");
  h.s.show("<p>two</p>");
  assert.deepEqual(h.kept, ["<p>two</p>"]);
  const f = screen({ st: { failed: true } });
  f.s.show("<p>x</p>");
  assert.equal(f.root.dataset.wasm, "fallback");
  assert.deepEqual(f.kept, ["<p>x</p>"]);
});

test("a draft shown becomes the basket the results' Add adds to; a failure does not", () => {
  const h = screen({ q: { "[data-basket]": [new El("section", { "data-basket": "d_5" })] } });
  h.s.show("<section data-basket=d_5>basket</section>");
  assert.deepEqual(h.baskets, ["d_5"]);
  h.s.result({ structuredContent: { ok: false }, _meta: { [WIRE.html]: "<p>error</p>" } });
  assert.deepEqual(h.baskets, ["d_5"]);
  const keep = Object.assign(new El("button", { "data-home-only": "" }), { hidden: true });
  const p = screen({ q: { "[data-home-only]": [keep] } });
  p.s.paint();
  assert.equal(keep.hidden, true, "no results to go back to: no Keep shopping");
  p.st.home = { html: "<ul data-home></ul>" };
  p.s.paint();
  assert.equal(keep.hidden, false);
});

test("a screen with a home mark becomes the one Cancel goes back to", () => {
  const h = screen({ q: { "[data-home]": [new El("div")] } });
  h.s.show("<div data-home>cards</div>", null, { relationship_type: "friend" });
  assert.deepEqual(h.st.home, { html: "<div data-home>cards</div>", args: { relationship_type: "friend" } });
});

test("painting: theme and display mode on the root, controls disabled while busy and enabled after", () => {
  const r = new El("section");
  const call = new El("button");
  const already = Object.assign(new El("button"), { disabled: true });
  const toggle = new El("button", { "data-when": "inline" });
  const sheet = Object.assign(new El("button", { "data-needs": "requestCheckout" }), { hidden: true });
  const h = screen({ oa: { requestDisplayMode() {}, requestCheckout() {} }, q: { "button[data-call]": [call, already], "[data-when]": [toggle], "[data-needs]": [sheet] } });
  h.box.firstElementChild = r;
  h.st.theme = "dark";
  h.st.hc.displayMode = "fullscreen";
  h.st.busy = true;
  h.s.paint();
  assert.equal(r.getAttribute("data-theme"), "dark");
  assert.equal(r.getAttribute("data-display-mode"), "fullscreen");
  assert.equal(h.box.getAttribute("aria-busy"), "true");
  assert.equal(call.disabled, true);
  assert.equal(toggle.hidden, true, "the inline toggle hides in full screen");
  assert.equal(sheet.hidden, false, "the host has the payment sheet");
  h.st.busy = false;
  h.st.hc.displayMode = "inline";
  h.s.paint();
  assert.equal(call.disabled, false);
  assert.equal(already.disabled, true, "a control disabled by its markup stays so");
  assert.equal(r.getAttribute("data-display-mode"), null);
  assert.equal(toggle.hidden, false);
});

test("the display modes: MCP Apps lists them; window.openai has full screen where it can ask for it", () => {
  assert.deepEqual(screen({ st: { hc: { availableDisplayModes: ["inline", "pip"] } } }).s.modes(), ["inline", "pip"]);
  assert.deepEqual(screen({ st: { hc: { availableDisplayModes: "inline" } } }).s.modes(), []);
  assert.deepEqual(screen({ oa: { requestDisplayMode() {} } }).s.modes(), ["inline", "fullscreen"]);
  assert.deepEqual(screen({ oa: {} }).s.modes(), []);
});

test("notes and sentences are in the markup's language, else the host's, else English", () => {
  const pt = new El("div", { lang: "pt-BR" });
  const h = screen({ q: { ".gg-root[lang]": [pt] } });
  assert.equal(h.s.said(TEXT).unreachable, "Não foi possível.");
  const appended = [];
  h.box.firstElementChild = { appendChild: (p) => appended.push(p) };
  h.s.note();
  assert.equal(appended[0].textContent, "Não foi possível.");
  assert.equal(appended[0].getAttribute("role"), "alert");
  assert.equal(screen({ st: { hc: { locale: "pt-PT" } } }).s.said(TEXT).needsFix, "Corrija");
  assert.equal(screen({ oa: { locale: "de-DE" } }).s.said(TEXT).needsFix, "Fix");
});

test("the host's context: theme, CSS variables that are safe, safe-area insets, font CSS", () => {
  const h = screen();
  h.s.context({ theme: "dark", styles: { variables: { "--color-bg": " #000 ", "bad name": "x", "--empty": " ", "--ctl": "a\u0001b", "--long": "x".repeat(513) },
    css: { fonts: "@font-face { font-family: X; }" } }, safeAreaInsets: { top: 10, right: -5, bottom: 1000, left: "x" } });
  assert.equal(h.st.theme, "dark");
  assert.equal(h.props.get("--color-bg"), "#000");
  assert.deepEqual([...h.props.keys()].filter((n) => !n.startsWith("--gg-safe")), ["--color-bg"]);
  assert.deepEqual(["top", "right", "bottom", "left"].map((s) => h.props.get("--gg-safe-" + s)), ["10px", "0px", "400px", "0px"]);
  assert.equal(h.made[0].id, "gg-host-fonts");
  assert.equal(h.made[0].textContent, "@font-face { font-family: X; }");
  h.s.context({ theme: "light", styles: {} });
  assert.equal(h.st.theme, "light");
  assert.equal(h.props.has("--color-bg"), false, "variables the host no longer sends go");
  assert.equal(h.made[0].textContent, "");
  h.s.context(null);
  assert.equal(h.st.theme, "light");
});

test("edited: a text changed from its default, or a box ticked", () => {
  const field = (value, defaultValue, more = {}) => Object.assign(new El("input"), { type: "text", value, defaultValue, ...more });
  assert.equal(screen({ q: { "input, textarea": [field("a", "a")] } }).s.edited(), false);
  assert.equal(screen({ q: { "input, textarea": [field("b", "a")] } }).s.edited(), true);
  assert.equal(screen({ q: { "input, textarea": [field("", "", { type: "checkbox", checked: true, defaultChecked: false })] } }).s.edited(), true);
  assert.equal(screen({ q: { "input, textarea": [field("on", "", { type: "checkbox", checked: false, defaultChecked: false })] } }).s.edited(), false);
});

test("a control's twin in the other markup: the input of its name, else the same data-* attributes at the same rank", () => {
  const h = screen();
  const from = new El("div");
  const to = new El("div");
  const a1 = new El("button", { "data-gift": "g1", "data-call": "{}" });
  const a2 = new El("button", { "data-gift": "g1", "data-call": "{}" });
  const b1 = new El("button", { "data-gift": "g1" });
  const b2 = new El("button", { "data-gift": "g1" });
  from.q["button, a[href]"] = [new El("a", { href: "/x" }), a1, a2];
  to.q["button, a[href]"] = [b1, new El("button", { "data-gift": "g2" }), b2];
  assert.equal(h.s.twin(a2, from, to), b2, "the second of its kind");
  assert.equal(h.s.twin(a1, from, to), b1);
  const input = Object.assign(new El("input"), { name: "recipient.name" });
  const named = new El("input");
  to.q['[name="recipient.name"]'] = [named];
  assert.equal(h.s.twin(input, from, to), named);
  const plain = new El("button");
  from.q["button, a[href]"].push(plain);
  assert.equal(h.s.twin(plain, from, to), undefined, "a control without data-* has no twin");
});

test("a refused form: field errors by their inputs, the controls that would send the edited form gone", () => {
  const fs = new El("fieldset");
  fs.after = (p) => { fs.noted = p.textContent; };
  const input = Object.assign(new El("input"), { id: "gg-name" });
  input.parentNode = new El("label");
  input.parentNode.appendChild = (p) => { input.error = p; };
  const confirm = new El("button", { "data-call": JSON.stringify({ tool: "commit_order", args: {}, edited: { tool: "prepare_order", args: {}, form: true } }) });
  const update = new El("button", { "data-call": JSON.stringify({ tool: "prepare_order", args: {}, form: true }) });
  const h = screen({ q: { fieldset: [fs], "[data-call]": [confirm, update], '[name="recipient.name"]': [input] } });
  const answer = new El("template");
  answer.q["[data-field]"] = [Object.assign(new El("li", { "data-field": "recipient.name" }), { textContent: "Say who receives it." })];
  h.s.fieldErrors(answer);
  assert.equal(confirm.removed, true);
  assert.equal(update.removed, undefined);
  assert.equal(input.getAttribute("aria-invalid"), "true");
  assert.equal(input.getAttribute("aria-describedby"), "gg-name-error");
  assert.equal(input.error.textContent, "Say who receives it.");
  assert.equal(fs.noted, "Fix");
});
