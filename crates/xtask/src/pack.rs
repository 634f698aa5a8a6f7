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
    /// The widget's runtime and its data, from the widget crate.
    pub fallback: &'a Fallback,
}

/// What the widget crate hands the packer: the file `giftgenius-fallback` writes
/// (`widget/src/fallback.rs`), so xtask does not link the widget crate (and Leptos) itself.
pub struct Fallback {
    /// The modules of `widget/runtime/` in the widget crate's order, as written, comments and
    /// all ([`bootstrap_js`] strips them).
    pub runtime: Vec<RuntimeModule>,
    /// What the runtime reads from `#giftgenius-fallback-data`.
    pub data: serde_json::Value,
}

/// One file of the widget's runtime: its name in `widget/runtime/` and its text.
pub struct RuntimeModule {
    pub file: String,
    pub source: String,
}

impl Fallback {
    /// Reads `{"runtime": [{"file": "…", "source": "…"}, …], "data": {…}}`.
    pub fn from_json(text: &str) -> Result<Self> {
        let mut value: serde_json::Value = serde_json::from_str(text).context("not JSON")?;
        let modules = value["runtime"].as_array().context("no `runtime` list")?;
        ensure!(!modules.is_empty(), "`runtime` names no module");
        let runtime = modules
            .iter()
            .map(|m| {
                let file = m["file"].as_str().context("a `runtime` module without a `file` string")?;
                let source = m["source"].as_str().with_context(|| format!("{file}: no `source` string"))?;
                Ok(RuntimeModule { file: file.to_string(), source: source.to_string() })
            })
            .collect::<Result<_>>()?;
        let data = value.get_mut("data").map(serde_json::Value::take).context("no `data`")?;
        ensure!(data.is_object(), "`data` is not an object");
        Ok(Self { runtime, data })
    }
}

/// The packed document plus the CSP hashes of its inline scripts.
pub struct Packed {
    pub html: String,
    /// `'sha256-…'` sources for a strict `script-src` (bootstrap first, then the module).
    pub script_hashes: Vec<String>,
    /// The deflated wasm's size (before base64), for the build's size report.
    pub wasm_deflated: usize,
}

/// The widget's runtime as it goes into the document: the modules of `widget/runtime/` (read
/// there for what each does; [`Fallback::runtime`]) in their order, each without its full-line
/// `//` comments, inside one closure, so their names stay out of the page's global scope.
///
/// A plain (non-module) script that runs before the wasm glue and records the wasm's fate in
/// `<html data-wasm>`. It is the one side that speaks to the host: it shows each result's
/// server-rendered HTML, hands what the host says to the wasm to render, and does what the
/// controls' `data-call` decisions say. Each module is checked alone, so a refusal names it.
pub fn bootstrap_js(runtime: &[RuntimeModule]) -> Result<String> {
    let mut out = String::from("(() => {\n");
    for m in runtime {
        let code = strip_line_comments(&m.source).with_context(|| format!("in widget/runtime/{}", m.file))?;
        ensure_plain_script(&code).with_context(|| format!("in widget/runtime/{}", m.file))?;
        out.push_str(&code);
        out.push('\n');
    }
    out.push_str("})();");
    Ok(out)
}

/// The modules are pieces of one plain script: no `import` or `export` statement (an ES module
/// cannot be inlined into the closure, nor run under the bootstrap's `script-src` hash).
fn ensure_plain_script(code: &str) -> Result<()> {
    for (n, line) in code.lines().enumerate() {
        ensure!(
            !["import ", "import{", "export ", "export{"].iter().any(|k| line.starts_with(k)),
            "line {} (comments dropped): module syntax is not allowed (`{line}`)",
            n + 1
        );
    }
    Ok(())
}

/// Drops every line whose first non-blank characters are `//`, and every line's indentation
/// (about 2.5 KB of the runtime). Only safe for code where no string or template spans lines, so
/// a file with a backtick or a `\` line continuation is refused.
fn strip_line_comments(js: &str) -> Result<String> {
    let mut out = String::with_capacity(js.len());
    for (n, line) in js.lines().enumerate() {
        if line.trim_start().starts_with("//") {
            continue;
        }
        ensure!(
            !line.contains('`'),
            "line {}: template literals are not allowed (comments are dropped by line)",
            n + 1
        );
        ensure!(!line.ends_with('\\'), "line {}: a line continuation is not allowed", n + 1);
        out.push_str(line.trim_start());
        out.push('\n');
    }
    Ok(out.trim_end().to_string())
}

/// JSON that is safe inside `<script type="application/json">`: no `</` or `<!` can end or
/// confuse the element (`<` only occurs inside JSON strings, where `\/` and `\u003c` are valid).
fn json_for_script(value: &serde_json::Value) -> String {
    value.to_string().replace("</", "<\\/").replace("<!", "\\u003c!")
}

/// Packs the inputs into one HTML document.
pub fn pack(inputs: &Inputs<'_>) -> Result<Packed> {
    let mut css = String::new();
    for sheet in inputs.css {
        ensure_not_closing(sheet, "</style", "a stylesheet")?;
        css.push_str(crate::compact::css(sheet)?.trim_end());
        css.push('\n');
    }

    let glue = crate::compact::js(&strip_module_syntax(inputs.glue_js)?)?;
    ensure!(
        glue.contains("function __wbg_init("),
        "the wasm-bindgen glue has no `__wbg_init` function; was it built with `--target web`?"
    );
    // The wasm travels deflate-compressed (raw DEFLATE) and base64-encoded, and the browser's
    // own DecompressionStream inflates it while WebAssembly compiles the stream: measured on the
    // widget, this cuts the packed document by about half raw and a third gzipped (base64 of
    // compressed bytes barely compresses again, base64 of raw wasm does to about 40%).
    // A browser without DecompressionStream("deflate-raw") throws here, which is the same
    // refusal as a CSP without 'wasm-unsafe-eval': the fallback runtime keeps the view.
    let deflated = deflate_raw(inputs.wasm)?;
    let wasm_b64 = base64::engine::general_purpose::STANDARD.encode(&deflated);
    // Names start with `__gg_` so they cannot collide with the glue's top-level bindings. The
    // runtime (`bootstrap_js`) marks the wasm's start itself (`data-wasm="ready"`).
    let module = format!(
        "{glue}\n\
         try {{\n\
         const __gg_bin = atob(\"{wasm_b64}\");\n\
         const __gg_z = new Uint8Array(__gg_bin.length);\n\
         for (let i = 0; i < __gg_bin.length; i++) __gg_z[i] = __gg_bin.charCodeAt(i);\n\
         const __gg_wasm = new Blob([__gg_z]).stream().pipeThrough(new DecompressionStream(\"deflate-raw\"));\n\
         await __wbg_init({{ module_or_path: new Response(__gg_wasm, {{ headers: {{ \"Content-Type\": \"application/wasm\" }} }}) }});\n\
         }} catch (e) {{\n\
         if (typeof window.giftgeniusWasmFailed === \"function\") window.giftgeniusWasmFailed(e);\n\
         else document.documentElement.dataset.wasm = \"failed\";\n\
         }}\n"
    );
    ensure_not_closing(&module, "</script", "the JS glue")?;
    ensure_not_closing(&module, "<!--", "the JS glue")?;

    let bootstrap = bootstrap_js(&inputs.fallback.runtime)?;
    ensure_not_closing(&bootstrap, "</script", "the fallback runtime")?;
    ensure_not_closing(&bootstrap, "<!--", "the fallback runtime")?;
    let data = json_for_script(&inputs.fallback.data);

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
         <main>\n\
         <h1 class=\"gg-page-title\">GiftGenius</h1>\n\
         <div id=\"giftgenius-root\"></div>\n\
         <div id=\"giftgenius-fallback\" hidden></div>\n\
         </main>\n\
         <script type=\"application/json\" id=\"giftgenius-fallback-data\">{data}</script>\n\
         <script>{bootstrap}</script>\n\
         <script type=\"module\">{module}</script>\n\
         </body>\n\
         </html>\n"
    );
    let script_hashes = [bootstrap.as_str(), module.as_str()]
        .iter()
        .map(|s| {
            let digest = Sha256::digest(s.as_bytes());
            format!("'sha256-{}'", base64::engine::general_purpose::STANDARD.encode(digest))
        })
        .collect();
    Ok(Packed { html, script_hashes, wasm_deflated: deflated.len() })
}

/// Lowercase hex SHA-256, for the `.sha256` file next to the artifact.
pub fn sha256_hex(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

/// Turns the glue ES module into code that can sit inside an inline `<script type="module">`
/// together with our init call: `export` keywords go, while `import` or `import.meta.url`
/// references to other files are refused (they would be fetched at run time).
///
/// Why not trunk's `data-bindgen-target="no-modules"`, which needs no export stripping: measured
/// with wasm-bindgen 0.2.130, its glue (one IIFE, every line indented) packs 3.5 KB larger raw
/// (552,959 vs 549,394 bytes; gzip -9 -n 217,324 vs 217,305), it still names `_bg.wasm` (from
/// `document.currentScript.src`) so a rewrite stays, and trunk's own page for it is broken.
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

/// Raw DEFLATE (RFC 1951, what `DecompressionStream("deflate-raw")` reads), by zopfli: measured
/// on the widget's 520 KB wasm, 208 KB against zlib level 9's 219 KB, in a few seconds. Five
/// iterations instead of zopfli's 15 buy all but ~0.2% of that for a third of the time.
pub fn deflate_raw(bytes: &[u8]) -> Result<Vec<u8>> {
    let options = zopfli::Options {
        iteration_count: std::num::NonZeroU64::new(5).context("iterations")?,
        ..zopfli::Options::default()
    };
    let mut out = Vec::new();
    zopfli::compress(options, zopfli::Format::Deflate, bytes, &mut out).context("deflate")?;
    Ok(out)
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

    /// The real runtime, every module of `widget/runtime/` (by name; the widget crate's order is
    /// tested there): the tests below check what the packer makes of it.
    fn runtime() -> Vec<RuntimeModule> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../widget/runtime");
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .expect("widget/runtime")
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.ends_with(".js"))
            .collect();
        files.sort();
        assert!(files.len() >= 4, "the runtime's modules: {files:?}");
        files
            .into_iter()
            .map(|file| RuntimeModule { source: std::fs::read_to_string(dir.join(&file)).expect("readable"), file })
            .collect()
    }

    /// The fallback as the widget crate hands it over; the data stands for the widget's own (its
    /// content is tested in `widget/src/fallback.rs`), with text that must not close the element.
    fn fake_fallback() -> Fallback {
        let data =
            serde_json::json!({ "wire": { "html": "giftgenius/html" }, "cancelled": { "en": "<p>x</p></script>" } });
        Fallback { runtime: runtime(), data }
    }

    fn pack_fake() -> Packed {
        let css = ["body { color: red; }\n".to_string()];
        let inputs = Inputs { css: &css, glue_js: FAKE_GLUE, wasm: FAKE_WASM, fallback: &fake_fallback() };
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
        // One main landmark and a level-one heading (axe: landmark-one-main, page-has-heading-one)
        // around both views; the views' own titles are h2 below it.
        assert_eq!(html.matches("<main>").count(), 1);
        assert!(html.contains("<main>\n<h1 class=\"gg-page-title\">GiftGenius</h1>\n<div id=\"giftgenius-root\">"));
        // The wasm travels deflated and base64-encoded into the glue's init, inflated by the
        // browser; the bytes come back exactly.
        assert_eq!(wasm_in(&html), FAKE_WASM);
        assert!(html.contains(r#"new DecompressionStream("deflate-raw")"#));
        assert!(html.contains("await __wbg_init({ module_or_path: new Response(__gg_wasm"));
        // Bootstrap (plain script) comes before the module.
        let boot = html.find("<script>(() => {").expect("bootstrap");
        let module = html.find(r#"<script type="module">"#).expect("module");
        assert!(boot < module);
    }

    /// The wasm bytes a packed document carries: base64-decoded and inflated.
    fn wasm_in(html: &str) -> Vec<u8> {
        use std::io::Read as _;
        let start = html.find("atob(\"").expect("atob") + 6;
        let end = start + html[start..].find('"').expect("closing quote");
        let deflated = base64::engine::general_purpose::STANDARD.decode(&html[start..end]).expect("base64");
        let mut out = Vec::new();
        flate2::read::DeflateDecoder::new(&deflated[..]).read_to_end(&mut out).expect("raw deflate");
        out
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

    fn bootstrap() -> String {
        bootstrap_js(&runtime()).expect("widget/runtime/*.js is packable")
    }

    #[test]
    fn script_hashes_match_inline_scripts() {
        let p = pack_fake();
        assert_eq!(p.script_hashes.len(), 2);
        let boot = Sha256::digest(bootstrap().as_bytes());
        let want = format!("'sha256-{}'", base64::engine::general_purpose::STANDARD.encode(boot));
        assert_eq!(p.script_hashes[0], want);
    }

    #[test]
    fn bootstrap_is_small_and_safe_inline() {
        let boot = bootstrap();
        // A ceiling against accidental growth, not a target: it speaks both host bridges, follows
        // the MCP Apps host context, fills and makes every control's decision, keeps the screen
        // under the viewUUID, logs to the host, paints first, feeds the wasm what the host says
        // and takes the screen back on a press, in about 20 KB without indentation (18.5 KB as
        // one closure; its split into modules by concern, which share their state and functions
        // through two named objects, `st` and `rt`, costs the other 2 KB).
        assert!(boot.len() < 21 * 1024, "bootstrap grew to {} bytes", boot.len());
        let lower = boot.to_ascii_lowercase();
        assert!(!lower.contains("</script") && !lower.contains("<!--"));
        // No eval-like constructs: the bootstrap must run under a hash-only script-src.
        for bad in ["eval(", "new Function", "setTimeout(\"", "import("] {
            assert!(!boot.contains(bad), "bootstrap uses {bad}");
        }
        // The header and the other full-line comments stay in the source file.
        assert!(boot.starts_with("(() => {"), "{}", &boot[..80]);
        assert!(!boot.lines().any(|l| l.trim_start().starts_with("//")));
    }

    #[test]
    fn bootstrap_speaks_both_bridges_with_the_widget_s_vocabulary() {
        let boot = bootstrap();
        for needle in [
            // Hooks the browser tests rely on.
            "root.dataset.wasm = \"loading\"",
            "root.dataset.wasm = \"failed\"",
            "root.dataset.wasm = \"fallback\"",
            "\"giftgenius-fallback\"",
            "\"giftgenius-fallback-data\"",
            "button[data-call]",
            // MCP Apps (SEP-1865, 2026-01-26).
            "\"ui/initialize\", data.initialize",
            "\"ui/notifications/initialized\"",
            "\"ui/notifications/tool-input\"",
            "\"ui/notifications/tool-result\"",
            "\"ui/notifications/host-context-changed\"",
            "\"ui/update-model-context\"",
            "\"tools/call\"",
            "e.source !== parent",
            // ChatGPT.
            "openai:set_globals",
            "oa[method](",
            "\"callTool\"",
            "\"setWidgetState\"",
            "oa.toolResponseMetadata",
            // The server's _meta keys and the widget's storage keys, from the data block.
            "m[wire.html]",
            "wire.store + id",
            "wire.checkout",
            // The decisions on the controls, executed as they are (widget/src/decide.rs).
            "getAttribute(\"data-call\")",
            "c.lost",
            "c.edited",
            "c.patch",
            "c.form",
        ] {
            assert!(boot.contains(needle), "bootstrap lacks {needle:?}");
        }
        // It knows no tool and no control by name: those are in the markup's decisions.
        for name in
            giftgenius_types::ToolName::ALL.iter().map(|t| t.as_str()).chain(["data-action", "confirm\"", "choose"])
        {
            assert!(!boot.contains(name), "the runtime names {name}");
        }
    }

    #[test]
    fn bootstrap_is_one_plain_script_before_the_module() {
        let html = pack_fake().html;
        assert_eq!(html.matches("<script>").count(), 1);
        assert!(html.contains(&format!("<script>{}</script>", bootstrap())));
    }

    #[test]
    fn the_fallback_data_goes_in_as_given_before_the_runtime() {
        let html = pack_fake().html;
        let open = r#"<script type="application/json" id="giftgenius-fallback-data">"#;
        let start = html.find(open).expect("data element") + open.len();
        let end = start + html[start..].find("</script>").expect("closed");
        let data: serde_json::Value = serde_json::from_str(&html[start..end]).expect("valid JSON");
        assert_eq!(data, fake_fallback().data);
        // Before the bootstrap, which reads it when it takes over.
        assert!(start < html.find("<script>(() => {").expect("bootstrap"));
    }

    #[test]
    fn the_runtime_spells_no_contract_string_and_writes_no_markup() {
        // The contract's strings and the widget's markup come in the data block, from Rust.
        let boot = bootstrap();
        assert!(!boot.contains("giftgenius/"), "the runtime spells no contract string itself");
        assert!(!boot.contains("viewUUID"), "the runtime spells no contract string itself");
        assert!(!boot.contains("Purchase cancelled"));
        assert!(!boot.contains("<h2"), "the runtime writes no widget markup");
    }

    #[test]
    fn the_widget_crate_s_file_is_read_or_refused() {
        let f = Fallback::from_json(r#"{"runtime":[{"file":"main.js","source":"a();"}],"data":{"wire":{}}}"#)
            .expect("valid");
        assert_eq!((f.runtime[0].file.as_str(), f.runtime[0].source.as_str()), ("main.js", "a();"));
        assert_eq!(f.data, serde_json::json!({ "wire": {} }));
        for bad in [
            "",
            "[]",
            r#"{"data":{}}"#,
            r#"{"runtime":"x","data":{}}"#,
            r#"{"runtime":[],"data":{}}"#,
            r#"{"runtime":[{"file":"a.js"}],"data":{}}"#,
            r#"{"runtime":[{"source":"a();"}],"data":{}}"#,
            r#"{"runtime":[{"file":"a.js","source":"x"}]}"#,
            r#"{"runtime":1,"data":{}}"#,
            r#"{"runtime":[{"file":"a.js","source":"x"}],"data":[]}"#,
        ] {
            assert!(Fallback::from_json(bad).is_err(), "accepted {bad:?}");
        }
    }

    #[test]
    fn json_in_a_script_element_cannot_close_it() {
        let v = serde_json::json!({ "html": "<p>a</p><!-- x --></script>" });
        let out = json_for_script(&v);
        assert!(!out.contains("</") && !out.contains("<!"), "{out}");
        assert_eq!(serde_json::from_str::<serde_json::Value>(&out).expect("still JSON"), v);
    }

    #[test]
    fn every_module_is_checked_and_a_refusal_names_it() {
        let module = |file: &str, source: &str| RuntimeModule { file: file.into(), source: source.into() };
        let ok = bootstrap_js(&[module("main.js", "// entry\na();\n"), module("b.js", "  // b\nfunction b() {}\n")])
            .expect("packable");
        assert_eq!(ok, "(() => {\na();\nfunction b() {}\n})();");
        for (source, why) in [
            ("var s = `a`;\n", "template literals"),
            ("var s = \"a\\\n b\";\n", "line continuation"),
            ("export function b() {}\n", "module syntax"),
            ("import { x } from \"./x.js\";\n", "module syntax"),
        ] {
            let err = bootstrap_js(&[module("main.js", "a();\n"), module("bad.js", source)]).expect_err(source);
            let text = format!("{err:#}");
            assert!(text.contains("widget/runtime/bad.js") && text.contains(why), "{text}");
        }
    }

    #[test]
    fn comment_stripping_refuses_what_it_cannot_do_safely() {
        assert_eq!(strip_line_comments("// head\na();\n  // note\n  b(); // tail\n").unwrap(), "a();\nb(); // tail");
        assert!(strip_line_comments("var s = `a\n// b`;").is_err());
        assert!(strip_line_comments("var s = \"a\\\n// b\";").is_err());
    }

    #[test]
    fn refuses_snippet_imports() {
        let glue = format!("import {{ x }} from './snippets/a/inline0.js';\n{FAKE_GLUE}");
        let inputs = Inputs { css: &[], glue_js: &glue, wasm: FAKE_WASM, fallback: &fake_fallback() };
        let err = pack(&inputs).err().expect("must refuse");
        assert!(format!("{err:#}").contains("snippets"), "{err:#}");
    }

    #[test]
    fn refuses_other_import_meta_uses() {
        let glue = format!("{FAKE_GLUE}\nconst u = new URL('snippets/x.js', import.meta.url);\n");
        let inputs = Inputs { css: &[], glue_js: &glue, wasm: FAKE_WASM, fallback: &fake_fallback() };
        assert!(pack(&inputs).is_err());
    }

    #[test]
    fn refuses_closing_tags_inside_inline_content() {
        let glue = format!("{FAKE_GLUE}\nconst s = '</SCRIPT>';\n");
        let inputs = Inputs { css: &[], glue_js: &glue, wasm: FAKE_WASM, fallback: &fake_fallback() };
        assert!(pack(&inputs).is_err());
        let css = ["a::after { content: '</style>'; }".to_string()];
        let inputs = Inputs { css: &css, glue_js: FAKE_GLUE, wasm: FAKE_WASM, fallback: &fake_fallback() };
        assert!(pack(&inputs).is_err());
    }

    #[test]
    fn refuses_glue_without_web_init() {
        let inputs =
            Inputs { css: &[], glue_js: "export function f() {}\n", wasm: FAKE_WASM, fallback: &fake_fallback() };
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
