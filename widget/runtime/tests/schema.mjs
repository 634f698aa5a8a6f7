// The decision language's schema (widget/runtime/decision.schema.json, generated from the Rust
// types by widget/src/decide.rs) and a checker of the keywords schemars writes, for the tests
// of the markup's decisions and of the executor. Not a test file itself.
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const schema = JSON.parse(readFileSync(path.join(HERE, "..", "decision.schema.json"), "utf8"));

/**
 * The errors of `value` against `s` (a JSON Schema of the keywords schemars writes: $ref,
 * anyOf, oneOf, type, enum, const, properties, required, additionalProperties); [] when valid.
 */
export function check(value, s = schema, at = "$") {
  if (s === true) return [];
  if (s === false) return [`${at}: nothing is allowed here`];
  if (s.$ref) {
    const name = s.$ref.replace("#/$defs/", "");
    if (!schema.$defs[name]) return [`${at}: unknown $ref ${s.$ref}`];
    return check(value, schema.$defs[name], at);
  }
  const errors = [];
  if (s.anyOf && !s.anyOf.some((o) => check(value, o, at).length === 0)) errors.push(`${at}: matches none of anyOf`);
  if (s.oneOf && s.oneOf.filter((o) => check(value, o, at).length === 0).length !== 1) {
    errors.push(`${at}: matches not exactly one of oneOf`);
  }
  if (s.type) {
    const types = Array.isArray(s.type) ? s.type : [s.type];
    const kind = value === null ? "null" : Array.isArray(value) ? "array" : Number.isInteger(value) ? "integer" : typeof value;
    const ok = types.some((t) => t === kind || (t === "number" && kind === "integer"));
    if (!ok) return [...errors, `${at}: a ${kind}, not ${types.join(" or ")}`];
  }
  if (s.enum && !s.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) errors.push(`${at}: not one of ${JSON.stringify(s.enum)}`);
  if ("const" in s && JSON.stringify(s.const) !== JSON.stringify(value)) errors.push(`${at}: not ${JSON.stringify(s.const)}`);
  if (value && typeof value === "object" && !Array.isArray(value)) {
    for (const name of s.required || []) if (!(name in value)) errors.push(`${at}: missing ${name}`);
    for (const [name, v] of Object.entries(value)) {
      const p = s.properties?.[name];
      if (p !== undefined) errors.push(...check(v, p, `${at}.${name}`));
      else if (s.additionalProperties !== undefined) errors.push(...check(v, s.additionalProperties, `${at}.${name}`));
    }
  }
  return errors;
}

/** The schema's name (a `$defs` key ending in Json) of the shape `d` is an instance of. */
export function shapeOf(d) {
  const shapes = Object.keys(schema.$defs).filter((n) => /Json$/.test(n) && n !== "PlaceholderJson");
  const fits = shapes.filter((n) => check(d, { $ref: `#/$defs/${n}` }).length === 0);
  if (fits.length !== 1) throw new Error(`${JSON.stringify(d)} fits ${fits.length} shapes: ${fits}`);
  return fits[0];
}

/** Every `data-call` in `html`, parsed (attribute values unescaped as HTML). */
export function decisionsIn(html) {
  const unescape = (v) => v.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
  return [...html.matchAll(/data-call="([^"]*)"/g)].map((m) => JSON.parse(unescape(m[1])));
}

/** Every decision in the widget's snapshots (widget/tests/snapshots/*.snap): [{file, d}]. */
export function snapshotDecisions() {
  const dir = path.join(HERE, "..", "..", "tests", "snapshots");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".snap"))
    .flatMap((f) => decisionsIn(readFileSync(path.join(dir, f), "utf8")).map((d) => ({ file: f, d })));
}
