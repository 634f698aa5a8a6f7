//! Comments and indentation out of the wasm-bindgen glue and the stylesheet before the packer
//! inlines them: about 11 KB of the glue's 43 KB (JSDoc blocks, four-space indentation) and
//! 1.5 KB of the CSS, which hosts fetch as part of the document on every load.
//!
//! Line-based and conservative, like the fallback runtime's own stripping in `pack.rs`: lines
//! stay lines (so JavaScript's automatic semicolons see the same line breaks), only whole-line
//! comments go, and text whose line breaks could be content is refused rather than guessed.

use anyhow::{Result, ensure};

/// The glue without blank lines, indentation, whole-line `//` comments and comments that open
/// a line with `/*` (code after their `*/` stays). Refuses a line with an odd number of
/// backticks (a template literal spanning lines, whose indentation would be its text) and a
/// line ending in `\` (a string continued on the next line).
pub fn js(js: &str) -> Result<String> {
    let mut out = String::with_capacity(js.len());
    let mut in_comment = false;
    for (n, line) in js.lines().enumerate() {
        let mut t = line.trim();
        if in_comment {
            match t.find("*/") {
                Some(end) => {
                    in_comment = false;
                    t = t[end + 2..].trim_start();
                }
                None => continue,
            }
        } else if let Some(rest) = t.strip_prefix("/*") {
            match rest.find("*/") {
                Some(end) => t = rest[end + 2..].trim_start(),
                None => {
                    in_comment = true;
                    continue;
                }
            }
        }
        if t.is_empty() || t.starts_with("//") {
            continue;
        }
        ensure!(t.matches('`').count() % 2 == 0, "line {}: a template literal spans lines", n + 1);
        ensure!(!t.ends_with('\\'), "line {}: a line continuation is not allowed", n + 1);
        out.push_str(t);
        out.push('\n');
    }
    ensure!(!in_comment, "a /* comment is never closed");
    Ok(out)
}

/// The stylesheet without `/* */` comments, indentation and blank lines. Refuses a sheet with a
/// quote right before `/*`, where the comment could be inside a string.
pub fn css(css: &str) -> Result<String> {
    ensure!(!css.contains("\"/*") && !css.contains("'/*"), "a stylesheet string holds `/*`");
    let mut text = String::with_capacity(css.len());
    let mut rest = css;
    while let Some(start) = rest.find("/*") {
        text.push_str(&rest[..start]);
        let end = rest[start + 2..].find("*/");
        ensure!(end.is_some(), "a /* comment is never closed");
        rest = &rest[start + 2 + end.unwrap_or_default() + 2..];
    }
    text.push_str(rest);
    let mut out = String::with_capacity(text.len());
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        out.push_str(line);
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glue_loses_comments_and_indentation_and_keeps_its_lines() {
        let glue = "class A {\n    /**\n     * @returns {number}\n     */\n    get n() {\n        // why\n        return `${x}n`; /* not at the start */\n    }\n}\n/* one */ let b = 1;\n\n";
        assert_eq!(
            js(glue).unwrap(),
            "class A {\nget n() {\nreturn `${x}n`; /* not at the start */\n}\n}\nlet b = 1;\n"
        );
    }

    #[test]
    fn text_whose_line_breaks_matter_is_refused() {
        assert!(js("const s = `a\n    b`;\n").is_err(), "a template literal across lines");
        assert!(js("const s = 'a\\\n    b';\n").is_err(), "a continued string");
        assert!(js("/* open\n").is_err());
    }

    #[test]
    fn css_loses_comments_and_indentation() {
        let sheet = "/* theme\n   notes */\n.a {\n  color: red; /* inline */\n\n  b: c;\n}\n";
        assert_eq!(css(sheet).unwrap(), ".a {\ncolor: red;\nb: c;\n}\n");
        assert!(css(".a { content: \"/*\"; }").is_err());
        assert!(css(".a { /* open").is_err());
    }
}
