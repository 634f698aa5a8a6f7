//! Packs trunk's output (CSS, wasm-bindgen JS glue, wasm) into ONE self-contained HTML document.
//!
//! Why: MCP hosts load the widget from a single resource; it may not fetch anything else (no
//! `src=`, no `href=` to files). Trunk cannot inline its own wasm, so this is our post-build step.
//! The output is a pure function of the inputs (no timestamps, no hashes of paths), so two
//! builds of the same sources give identical bytes.

use anyhow::{Context, Result, bail, ensure};
use base64::Engine as _;
use sha2::{Digest, Sha256};

/// What the packer needs; the caller reads these from trunk's dist directory.
pub struct Inputs<'a> {
    /// Stylesheets in a fixed order; each is inlined into one `<style>`.
    pub css: &'a [String],
    /// wasm-bindgen's `--target web` glue (an ES module).
    pub glue_js: &'a str,
    /// The wasm file the glue belongs to (already wasm-opt'ed by trunk).
    pub wasm: &'a [u8],
}

/// The packed document plus the CSP hashes of its inline scripts.
pub struct Packed {
    pub html: String,
    /// `'sha256-…'` sources for a strict `script-src` (bootstrap first, then the module).
    pub script_hashes: Vec<String>,
}

/// Plain (non-module) script that runs before the wasm module and records the outcome in
/// `<html data-wasm>`: `loading`, then `ready` (the wasm app runs), `failed` (WebAssembly or
/// the module was refused) or `fallback` (refused, and the server-rendered HTML is shown).
///
/// On failure it takes over with no framework: it speaks the same bridge the wasm would have
/// used (`window.openai`, else MCP Apps JSON-RPC over `postMessage` to the parent), shows each
/// result's `_meta["giftgenius/html"]` in `#giftgenius-fallback`, applies the host's theme, and
/// wires the `data-action` buttons with the wasm path's rules (one idempotency key per draft,
/// persisted before use and reused; no second call while one is in flight).
pub const BOOTSTRAP_JS: &str = concat!(
    r#"(function () {
  var d = document, w = window, root = d.documentElement, started = false;
  root.dataset.wasm = "loading";
  w.giftgeniusWasmFailed = function (reason) {
    if (root.dataset.wasm === "ready" || started) return;
    started = true;
    root.dataset.wasm = "failed";
    if (w.console) console.error("giftgenius: WebAssembly did not start", reason);
    fallback();
  };
  // A CSP without 'wasm-unsafe-eval' (or without our module's hash) refuses the wasm or the
  // module script; the module's own try/catch cannot see the second case, so listen here.
  d.addEventListener("securitypolicyviolation", function (e) {
    var u = e.blockedURI;
    if (e.disposition !== "report" && (u === "wasm-eval" || u === "inline")) w.giftgeniusWasmFailed((e.effectiveDirective || "") + " blocked " + u);
  });
  // No WebAssembly: show the server-rendered HTML of each result (_meta["giftgenius/html"]) and
  // drive its data-action buttons over the same bridge the wasm would have used.
  function fallback() {
    var box = d.getElementById("giftgenius-fallback"), app = d.getElementById("giftgenius-root"),
      oa = w.openai, parent = w.parent !== w ? w.parent : null,
      HTML = "giftgenius/html", STORE = "giftgenius/checkout/",
      theme, input = {}, last, back, backArgs, seen, draft, token, busy = false, ws = {}, ids = 1, wait = {};
    if (!box || !(oa || parent)) return;
    function post(m) { m.jsonrpc = "2.0"; parent.postMessage(m, "*"); }
    function rpc(method, params) {
      var id = ids++;
      post({ id: id, method: method, params: params });
      return new Promise(function (ok, no) { wait[id] = [ok, no]; });
    }
    function paint() {
      var r = box.firstElementChild;
      if (r && theme) r.setAttribute("data-theme", theme);
      box.setAttribute("aria-busy", busy);
      box.querySelectorAll("button[data-action]").forEach(function (b) {
        if (busy && !b.disabled) { b.disabled = true; b.dataset.ggBusy = 1; }
        if (!busy && b.dataset.ggBusy) { b.disabled = false; delete b.dataset.ggBusy; }
      });
    }
    // Shows one result; `args` null means "the host's tool input" (it may arrive late).
    function show(res, name, args) {
      var sc = (res && res.structuredContent) || {}, m = (res && res._meta) || {}, html = m[HTML];
      if (typeof html !== "string") return false;
      seen = html;
      if (sc.draft && sc.draft.id) { draft = sc.draft; token = m["giftgenius/confirmation_token"]; }
      if (name === "suggest_gifts" && sc.ok) { back = html; backArgs = args; }
      box.innerHTML = html;
      box.hidden = false;
      if (app) app.hidden = true;
      root.dataset.wasm = "fallback";
      paint();
      return true;
    }
    function hosted(res) {
      if (busy || !res || !res._meta || res._meta[HTML] === seen) return;
      var tool = (res.structuredContent || {}).tool;
      if (show(res, tool, null)) last = [tool, null];
    }
    function call(name, args) {
      busy = true;
      last = [name, args];
      paint();
      var p = oa ? Promise.resolve().then(function () { return oa.callTool(name, args); })
        : rpc("tools/call", { name: name, arguments: args });
      return p.then(function (res) { busy = false; show(res, name, args) || note(); }, function () { busy = false; note(); }).then(paint);
    }
    function note() {
      var p = d.createElement("p");
      p.className = "gg-inline-error";
      p.setAttribute("role", "alert");
      p.textContent = "GiftGenius could not be reached from this view. Please try again.";
      (box.firstElementChild || box).appendChild(p);
    }
    function state() { return (oa ? oa.widgetState : ws) || {}; }
    function store(f) { ["localStorage", "sessionStorage"].forEach(function (n) { try { if (w[n]) f(w[n]); } catch (x) {} }); }
    // Widget state, mirrored into storage keyed by draft id; resolves once the host answered.
    function save(next) {
      var was = state().checkout, now = next.checkout;
      store(function (s) {
        if (was && (!now || now.draft_id !== was.draft_id)) s.removeItem(STORE + was.draft_id);
        if (now) s.setItem(STORE + now.draft_id, now.idempotency_key);
      });
      ws = next;
      return (oa ? Promise.resolve().then(function () { return oa.setWidgetState(next); })
        : rpc("ui/update-model-context", { structuredContent: next })).then(null, function () {});
    }
    // The draft's idempotency key: kept, or minted once and persisted before it is used.
    // Derived from the confirmation token like the wasm path (flow::idempotency_key_for_token),
    // so a reload that lost widget state and storage still finds the same key.
    function key(id, t) {
      var k = null, made;
      [ws.checkout, state().checkout].forEach(function (c) { if (!k && c && c.draft_id === id) k = c.idempotency_key; });
      store(function (s) { k = k || s.getItem(STORE + id); });
      if (k) return Promise.resolve(k);
      made = t && window.crypto && crypto.subtle
        ? crypto.subtle.digest("SHA-256", new TextEncoder().encode("giftgenius/idempotency-key\n" + t)).then(function (d) { return new Uint8Array(d); })
        : Promise.resolve(crypto.getRandomValues(new Uint8Array(16)));
      return made.then(function (b) {
        k = "ik_";
        for (var i = 0; i < 16; i++) k += (b[i] < 16 ? "0" : "") + b[i].toString(16);
        return save(Object.assign({}, state(), { checkout: { draft_id: id, idempotency_key: k } })).then(function () { return k; });
      });
    }
    function confirm() {
      var g = draft, t = token;
      if (!g) return;
      // Token lost (reload after a widget-made draft): prepare again, then confirm what it shows.
      if (!t) return call("prepare_order", { gift_id: g.gift.id, quantity: g.quantity, shipping: g.shipping, currency: g.total.currency });
      busy = true;
      paint();
      key(g.id, t).then(function (k) { call("commit_order", { draft_id: g.id, idempotency_key: k, confirmation_token: t }); });
    }
    function cancel() {
      var next = Object.assign({}, state());
      delete next.checkout;
      busy = true;
      paint();
      save(next).then(function () {
        busy = false;
        draft = token = null;
        box.innerHTML = back || '<div class="gg-root" data-state="cancelled"><section class="gg-section"><h2 class="gg-title">Purchase cancelled</h2><p class="gg-muted">Nothing was ordered and nothing was charged.</p></section></div>';
        if (back) last = ["suggest_gifts", backArgs];
        paint();
      });
    }
    box.addEventListener("click", function (e) {
      var b = e.target.closest && e.target.closest("button[data-action]"), a = b && b.dataset.action, s = {}, m;
      if (!b || b.disabled || busy) return;
      if (a === "choose") call("prepare_order", { gift_id: b.dataset.giftId });
      if (a === "confirm") confirm();
      if (a === "cancel") cancel();
      if (a === "retry" && last && last[0]) call(last[0], last[1] || input);
      if (a === "suggestion") {
        try { s = JSON.parse(b.dataset.setArguments) || {}; } catch (x) {}
        m = Object.assign({}, backArgs || input);
        for (var k in s) { if (s[k] === null) delete m[k]; else m[k] = s[k]; }
        call("suggest_gifts", m);
      }
    });
    function context(c) {
      if (c && c.theme) { theme = c.theme === "dark" ? "dark" : "light"; paint(); }
    }
    if (oa) {
      var globals = function () {
        context(oa);
        input = oa.toolInput || {};
        hosted({ structuredContent: oa.toolOutput, _meta: oa.toolResponseMetadata });
      };
      w.addEventListener("openai:set_globals", globals);
      globals();
      return;
    }
    w.addEventListener("message", function (e) {
      var m = e.data, p, f;
      if (e.source !== parent || !m || m.jsonrpc !== "2.0") return;
      p = m.params || {};
      if (m.method && m.id != null) {
        post(m.method === "ping" || m.method === "ui/resource-teardown" ? { id: m.id, result: {} }
          : { id: m.id, error: { code: -32601, message: "method not found" } });
      } else if (m.method === "ui/notifications/tool-input") input = p.arguments || {};
      else if (m.method === "ui/notifications/tool-result") hosted(p);
      else if (m.method === "ui/notifications/host-context-changed") context(p);
      else if (!m.method && (f = wait[m.id])) {
        delete wait[m.id];
        if (m.error) f[1](m.error); else f[0](m.result);
      }
    });
    rpc("ui/initialize", {
      appInfo: { name: "giftgenius-widget", version: ""#,
    env!("CARGO_PKG_VERSION"),
    r#"" },
      appCapabilities: { availableDisplayModes: ["inline"] },
      protocolVersion: "2026-01-26"
    }).then(function (r) {
      var h;
      context(r && r.hostContext);
      post({ method: "ui/notifications/initialized", params: {} });
      if (w.ResizeObserver) new ResizeObserver(function () {
        var r = root.getBoundingClientRect(), s = Math.ceil(r.height);
        if (s !== h) post({ method: "ui/notifications/size-changed", params: { width: Math.ceil(r.width), height: h = s } });
      }).observe(root);
    });
  }
})();"#
);

/// Packs the inputs into one HTML document.
pub fn pack(inputs: &Inputs<'_>) -> Result<Packed> {
    let mut css = String::new();
    for sheet in inputs.css {
        ensure_not_closing(sheet, "</style", "a stylesheet")?;
        css.push_str(sheet.trim_end());
        css.push('\n');
    }

    let glue = strip_module_syntax(inputs.glue_js)?;
    ensure!(
        glue.contains("function __wbg_init("),
        "the wasm-bindgen glue has no `__wbg_init` function; was it built with `--target web`?"
    );
    let wasm_b64 = base64::engine::general_purpose::STANDARD.encode(inputs.wasm);
    // Names start with `__gg_` so they cannot collide with the glue's top-level bindings.
    let module = format!(
        "{glue}\n\
         try {{\n\
         const __gg_bin = atob(\"{wasm_b64}\");\n\
         const __gg_bytes = new Uint8Array(__gg_bin.length);\n\
         for (let i = 0; i < __gg_bin.length; i++) __gg_bytes[i] = __gg_bin.charCodeAt(i);\n\
         await __wbg_init({{ module_or_path: __gg_bytes }});\n\
         document.documentElement.dataset.wasm = \"ready\";\n\
         }} catch (e) {{\n\
         if (typeof window.giftgeniusWasmFailed === \"function\") window.giftgeniusWasmFailed(e);\n\
         else document.documentElement.dataset.wasm = \"failed\";\n\
         }}\n"
    );
    ensure_not_closing(&module, "</script", "the JS glue")?;
    ensure_not_closing(&module, "<!--", "the JS glue")?;

    let html = format!(
        "<!DOCTYPE html>\n\
         <html lang=\"en\">\n\
         <head>\n\
         <meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>GiftGenius</title>\n\
         <style>\n{css}</style>\n\
         </head>\n\
         <body>\n\
         <div id=\"giftgenius-root\"></div>\n\
         <div id=\"giftgenius-fallback\" hidden></div>\n\
         <script>{BOOTSTRAP_JS}</script>\n\
         <script type=\"module\">{module}</script>\n\
         </body>\n\
         </html>\n"
    );
    let script_hashes = [BOOTSTRAP_JS, module.as_str()]
        .iter()
        .map(|s| {
            let digest = Sha256::digest(s.as_bytes());
            format!("'sha256-{}'", base64::engine::general_purpose::STANDARD.encode(digest))
        })
        .collect();
    Ok(Packed { html, script_hashes })
}

/// Lowercase hex SHA-256, for the `.sha256` file next to the artifact.
pub fn sha256_hex(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

/// Turns the glue ES module into code that can sit inside an inline `<script type="module">`
/// together with our init call: `export` keywords go, while `import` or `import.meta.url`
/// references to other files are refused (they would be fetched at run time).
fn strip_module_syntax(glue: &str) -> Result<String> {
    // The only file reference wasm-bindgen's web glue makes on its own is the default wasm
    // location, used when init gets no argument. We always pass the bytes, so that branch is
    // dead; neutralise it so the artifact names no file at all.
    let glue = neutralise_default_wasm_url(glue);
    let mut out = String::with_capacity(glue.len());
    let mut in_export_list = false;
    for (n, line) in glue.lines().enumerate() {
        let t = line.trim_start();
        if in_export_list {
            if t.contains('}') {
                in_export_list = false;
            }
            continue;
        }
        if t.starts_with("import ") || t.starts_with("import{") {
            bail!("line {}: the JS glue imports another module (`{}`); JS snippets cannot be inlined yet", n + 1, t);
        }
        if let Some(rest) = t.strip_prefix("export ") {
            let rest = rest.trim_start();
            if rest.starts_with('{') {
                // `export { a, b as c };` — the names stay in module scope; only the list goes.
                if !rest.contains('}') {
                    in_export_list = true;
                } else if rest.contains(" from ") {
                    bail!("line {}: the JS glue re-exports another module: `{t}`", n + 1);
                }
                continue;
            }
            if rest.starts_with("default ") {
                // `export default __wbg_init;` — a declaration form would need renaming.
                ensure!(
                    !rest.starts_with("default function") && !rest.starts_with("default class"),
                    "line {}: unsupported `export default` declaration in the JS glue",
                    n + 1
                );
                continue;
            }
            let is_decl = ["function ", "async function ", "class ", "const ", "let ", "var "]
                .iter()
                .any(|k| rest.starts_with(k));
            ensure!(is_decl, "line {}: unsupported export form in the JS glue: `{t}`", n + 1);
            out.push_str(&line[..line.len() - t.len()]);
            out.push_str(rest);
            out.push('\n');
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    ensure!(
        !out.contains("import.meta"),
        "the JS glue still uses `import.meta` (linked JS modules or snippets); the packer cannot inline those"
    );
    Ok(out)
}

/// Replaces `new URL('…_bg.wasm', import.meta.url)` (any quote style) with `undefined`.
fn neutralise_default_wasm_url(glue: &str) -> String {
    const NEEDLE: &str = "new URL(";
    let mut out = String::with_capacity(glue.len());
    let mut rest = glue;
    while let Some(i) = rest.find(NEEDLE) {
        let after = &rest[i + NEEDLE.len()..];
        let end = after.find(')');
        match end {
            Some(e) if after[..e].contains("_bg.wasm") && after[..e].contains("import.meta.url") => {
                out.push_str(&rest[..i]);
                out.push_str("undefined /* packed: the wasm bytes are passed in */");
                rest = &after[e + 1..];
            }
            _ => {
                out.push_str(&rest[..i + NEEDLE.len()]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Inline `<style>`/`<script>` content ends at the first closing tag, so such text would break
/// the document; refuse rather than guess an escape that is valid in every JS/CSS context.
fn ensure_not_closing(text: &str, needle: &str, what: &str) -> Result<()> {
    let found = text.to_ascii_lowercase().contains(needle);
    if found {
        bail!("{what} contains `{needle}`, which would end the inline element early");
    }
    Ok(())
}

/// Gzip size (level 9), for reporting only.
pub fn gzip_len(bytes: &[u8]) -> Result<usize> {
    use std::io::Write as _;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(bytes).context("gzip")?;
    Ok(enc.finish().context("gzip")?.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of wasm-bindgen 0.2.130 `--target web` glue, shrunk to what the packer touches.
    const FAKE_GLUE: &str = r#"let wasm;

export function greet(name) {
    return "hi " + name;
}

export class Card {
    free() {}
}

function initSync(module) {
    return module;
}

let __wbg_init_promise;
async function __wbg_init(module_or_path) {
    if (module_or_path === undefined) {
        module_or_path = new URL('giftgenius-widget_bg.wasm', import.meta.url);
    }
    return module_or_path;
}

export { initSync, __wbg_init as default };
"#;

    const FAKE_WASM: &[u8] = b"\0asm\x01\0\0\0";

    fn pack_fake() -> Packed {
        let css = ["body { color: red; }\n".to_string()];
        let inputs = Inputs { css: &css, glue_js: FAKE_GLUE, wasm: FAKE_WASM };
        match pack(&inputs) {
            Ok(p) => p,
            Err(e) => panic!("pack failed: {e:#}"),
        }
    }

    #[test]
    fn packs_everything_inline() {
        let html = pack_fake().html;
        assert!(html.starts_with("<!DOCTYPE html>\n"));
        assert!(html.contains("<style>\nbody { color: red; }\n</style>"));
        assert!(html.contains(r#"<div id="giftgenius-root"></div>"#));
        assert!(html.contains(r#"<div id="giftgenius-fallback" hidden></div>"#));
        // The wasm travels as base64 into the glue's init.
        assert!(html.contains(r#"atob("AGFzbQEAAAA=")"#));
        assert!(html.contains("await __wbg_init({ module_or_path: __gg_bytes });"));
        assert!(html.contains(r#"dataset.wasm = "ready""#));
        // Bootstrap (plain script) comes before the module.
        let boot = html.find("<script>(function").expect("bootstrap");
        let module = html.find(r#"<script type="module">"#).expect("module");
        assert!(boot < module);
    }

    #[test]
    fn nothing_is_fetched_or_exported() {
        let html = pack_fake().html;
        for bad in ["src=", "href=", "import.meta", "_bg.wasm", "export ", "import "] {
            assert!(!html.contains(bad), "packed HTML contains {bad:?}");
        }
        // Declarations stay (only the keyword goes), so the names remain callable.
        assert!(html.contains("\nfunction greet(name) {"));
        assert!(html.contains("\nclass Card {"));
    }

    #[test]
    fn packing_is_deterministic() {
        let a = pack_fake();
        let b = pack_fake();
        assert_eq!(a.html, b.html);
        assert_eq!(sha256_hex(a.html.as_bytes()), sha256_hex(b.html.as_bytes()));
        assert_eq!(a.script_hashes, b.script_hashes);
    }

    #[test]
    fn script_hashes_match_inline_scripts() {
        let p = pack_fake();
        assert_eq!(p.script_hashes.len(), 2);
        let boot = Sha256::digest(BOOTSTRAP_JS.as_bytes());
        let want = format!("'sha256-{}'", base64::engine::general_purpose::STANDARD.encode(boot));
        assert_eq!(p.script_hashes[0], want);
    }

    #[test]
    fn bootstrap_is_small_and_safe_inline() {
        assert!(BOOTSTRAP_JS.len() < 10 * 1024, "bootstrap grew to {} bytes", BOOTSTRAP_JS.len());
        let lower = BOOTSTRAP_JS.to_ascii_lowercase();
        assert!(!lower.contains("</script") && !lower.contains("<!--"));
        // No eval-like constructs: the bootstrap must run under a hash-only script-src.
        for bad in ["eval(", "new Function", "setTimeout(\"", "import("] {
            assert!(!BOOTSTRAP_JS.contains(bad), "bootstrap uses {bad}");
        }
        assert!(BOOTSTRAP_JS.contains(&format!("version: \"{}\"", env!("CARGO_PKG_VERSION"))));
    }

    #[test]
    fn bootstrap_speaks_both_bridges_with_the_widget_s_vocabulary() {
        for needle in [
            // Hooks the browser tests rely on.
            "root.dataset.wasm = \"loading\"",
            "root.dataset.wasm = \"failed\"",
            "root.dataset.wasm = \"fallback\"",
            "\"giftgenius-fallback\"",
            "button[data-action]",
            // MCP Apps (SEP-1865, 2026-01-26), as widget/src/rpc.rs speaks it.
            "\"ui/initialize\"",
            "\"ui/notifications/initialized\"",
            "\"ui/notifications/tool-input\"",
            "\"ui/notifications/tool-result\"",
            "\"ui/notifications/host-context-changed\"",
            "\"ui/update-model-context\"",
            "\"tools/call\"",
            "protocolVersion: \"2026-01-26\"",
            "e.source !== parent",
            // ChatGPT.
            "openai:set_globals",
            "oa.callTool(",
            "oa.setWidgetState(",
            "oa.toolResponseMetadata",
            // The server's _meta keys and the widget's storage key (flow.rs / rpc.rs).
            "\"giftgenius/html\"",
            "\"giftgenius/confirmation_token\"",
            "\"giftgenius/checkout/\"",
            "crypto.getRandomValues(",
            "\"ik_\"",
        ] {
            assert!(BOOTSTRAP_JS.contains(needle), "bootstrap lacks {needle:?}");
        }
        for action in ["choose", "confirm", "cancel", "retry", "suggestion"] {
            assert!(BOOTSTRAP_JS.contains(&format!("a === \"{action}\"")), "no handler for {action}");
        }
    }

    #[test]
    fn bootstrap_is_one_plain_script_before_the_module() {
        let html = pack_fake().html;
        assert_eq!(html.matches("<script>").count(), 1);
        assert!(html.contains(&format!("<script>{BOOTSTRAP_JS}</script>")));
    }

    #[test]
    fn refuses_snippet_imports() {
        let glue = format!("import {{ x }} from './snippets/a/inline0.js';\n{FAKE_GLUE}");
        let inputs = Inputs { css: &[], glue_js: &glue, wasm: FAKE_WASM };
        let err = pack(&inputs).err().expect("must refuse");
        assert!(format!("{err:#}").contains("snippets"), "{err:#}");
    }

    #[test]
    fn refuses_other_import_meta_uses() {
        let glue = format!("{FAKE_GLUE}\nconst u = new URL('snippets/x.js', import.meta.url);\n");
        let inputs = Inputs { css: &[], glue_js: &glue, wasm: FAKE_WASM };
        assert!(pack(&inputs).is_err());
    }

    #[test]
    fn refuses_closing_tags_inside_inline_content() {
        let glue = format!("{FAKE_GLUE}\nconst s = '</SCRIPT>';\n");
        let inputs = Inputs { css: &[], glue_js: &glue, wasm: FAKE_WASM };
        assert!(pack(&inputs).is_err());
        let css = ["a::after { content: '</style>'; }".to_string()];
        let inputs = Inputs { css: &css, glue_js: FAKE_GLUE, wasm: FAKE_WASM };
        assert!(pack(&inputs).is_err());
    }

    #[test]
    fn refuses_glue_without_web_init() {
        let inputs = Inputs { css: &[], glue_js: "export function f() {}\n", wasm: FAKE_WASM };
        assert!(pack(&inputs).is_err());
    }

    #[test]
    fn multi_line_export_lists_are_dropped() {
        let glue = format!("{FAKE_GLUE}\nexport {{\n  greet,\n  Card\n}};\nconst after = 1;\n");
        let out = strip_module_syntax(&glue).expect("strip");
        assert!(!out.contains("export"));
        assert!(out.contains("const after = 1;"));
    }
}
