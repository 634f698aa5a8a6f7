// The decision language between the server's markup and the runtime (widget/runtime/*.js):
// every `data-call` the widget's views write, in every snapshot of widget/tests/snapshots/, is
// an instance of widget/runtime/decision.schema.json, which the test
// `the_schema_file_is_the_one_the_types_make` (widget/src/decide.rs) generates from the Rust
// types. The runtime's reading of a decision is checked against the same schema: every key it
// acts on is one the schema defines. Run by `cargo xtask test` (node's own test runner, no
// packages).

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { check, schema } from "./schema.mjs";
import { MODULES, source } from "./load.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const WIDGET = path.join(HERE, "..", "..");

/** Every `data-call` in `html`, parsed (attribute values unescaped as HTML). */
function decisionsIn(html) {
  const unescape = (v) => v.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
  return [...html.matchAll(/data-call="([^"]*)"/g)].map((m) => JSON.parse(unescape(m[1])));
}

const SNAPSHOTS = path.join(WIDGET, "tests", "snapshots");
const decisions = readdirSync(SNAPSHOTS)
  .filter((f) => f.endsWith(".snap"))
  .flatMap((f) => decisionsIn(readFileSync(path.join(SNAPSHOTS, f), "utf8")).map((d) => ({ file: f, d })));

test("every decision in the widget's markup is an instance of the schema", () => {
  assert.ok(decisions.length > 50, `the snapshots hold decisions (${decisions.length})`);
  const wrong = decisions.map(({ file, d }) => ({ file, d, errors: check(d) })).filter((x) => x.errors.length);
  assert.deepEqual(wrong.map((x) => `${x.file}: ${JSON.stringify(x.d)}: ${x.errors.join("; ")}`), []);
});

test("every shape of decision appears in the markup", () => {
  const shapes = Object.keys(schema.$defs).filter((n) => /Json$/.test(n) && n !== "PlaceholderJson");
  const seen = new Set();
  for (const { d } of decisions) {
    for (const n of shapes) if (check(d, { $ref: `#/$defs/${n}` }).length === 0) seen.add(n);
  }
  assert.deepEqual([...seen].sort(), shapes.sort());
});

test("the schema refuses what the runtime could not act on", () => {
  const refused = [
    { tool: "suggest_gifts", args: {}, bogus: 1 },
    { tool: "not_a_tool", args: {} },
    { tool: "suggest_gifts" },
    { back: false },
    { retry: true, back: true },
    { mode: "sideways" },
    { ask: 3 },
    { sheet: { $: "meta" }, lost: { tool: "get_order", args: {} }, gone: "", then: { tool: "get_order", args: {} }, seen: "" },
  ];
  for (const d of refused) assert.notDeepEqual(check(d), [], `refused: ${JSON.stringify(d)}`);
  for (const d of [{ back: true }, { ask: null }, { mode: "fullscreen" }, { tool: "get_order", args: { order_id: { $: "answer" } } }]) {
    assert.deepEqual(check(d), [], `accepted: ${JSON.stringify(d)}`);
  }
});

test("every key the runtime acts on in a decision is one the schema defines", () => {
  const runtime = MODULES.map(source).join("\n");
  // The decision is `c` (parsed from data-call) where the runtime reads it: `c.<key>` and
  // `"<key>" in c`. Other objects called `c` (a host context) name no key of a decision.
  const context = new Set(["focus", "idempotency", "theme"]);
  const read = new Set([...runtime.matchAll(/\bc\.([a-z]+)/g)].map((m) => m[1]).filter((k) => !context.has(k)));
  for (const m of runtime.matchAll(/"([a-z]+)" in c\b/g)) read.add(m[1]);
  const defined = new Set(Object.values(schema.$defs).flatMap((d) => Object.keys(d.properties || {})));
  assert.deepEqual([...read].filter((k) => !defined.has(k)), [], "keys read but not in the schema");
  assert.ok(read.has("tool") && read.has("sheet") && read.has("ask"), "the check sees the runtime's reads");
});
