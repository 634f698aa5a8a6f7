// Loads the runtime's modules for a test as the packer joins them (widget/runtime/*.js, plain
// scripts, no module syntax): their text in one function whose parameters stand for the page's
// globals (`document`, `window`, `location`, timers, …), returning the functions they declare.
// Not a test file itself (node --test runs *.test.mjs).
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const RUNTIME = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The runtime's module files (widget/runtime/*.js), by name. */
export const MODULES = readdirSync(RUNTIME).filter((f) => f.endsWith(".js")).sort();

/** The text of the runtime module `file`. */
export const source = (file) => readFileSync(path.join(RUNTIME, file), "utf8");

/**
 * Runs `files` (in that order) with `globals` in scope; returns {name: function} for every
 * top-level `function name(` they declare.
 */
export function load(files, globals = {}) {
  const text = files.map(source).join("\n");
  const names = [...text.matchAll(/^function (\w+)\(/gm)].map((m) => m[1]);
  const run = new Function(...Object.keys(globals), text + "\nreturn { " + names.join(", ") + " };");
  return run(...Object.values(globals));
}

/** Lets every pending promise callback (and `n` more rounds of them) run. */
export async function settle(n = 10) {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}
