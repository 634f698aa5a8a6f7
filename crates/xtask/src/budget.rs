//! The packed widget's size budget (`widget/size-budget.json`): raw and gzip bytes it may not
//! exceed. `cargo xtask widget` prints the sizes against it; `cargo xtask test` fails over it.
//!
//! A test of a build output, not a timing: the same sources give the same bytes on any machine.
//! Hosts fetch the document with `resources/read` as a JSON string, on phones too, so raw size
//! counts as well as compressed size.

use anyhow::{Context, Result, bail};
use std::path::Path;

/// Where the budget lives, relative to the workspace root.
pub const FILE: &str = "widget/size-budget.json";

/// The limits, in bytes, of the packed `dist/giftgenius-widget.html`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub raw: usize,
    /// `gzip -9` (level 9, no name or time in the header, as `gzip -9 -n` writes it).
    pub gzip: usize,
}

/// What one artifact measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizes {
    pub raw: usize,
    pub gzip: usize,
}

impl Sizes {
    pub fn of(html: &[u8]) -> Result<Sizes> {
        Ok(Sizes { raw: html.len(), gzip: crate::pack::gzip_len(html)? })
    }
}

/// Reads the budget file: a JSON object with `raw_bytes` and `gzip_bytes` (other keys, such as
/// a `why`, are for people).
pub fn load(root: &Path) -> Result<Budget> {
    let path = root.join(FILE);
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    parse(&text).with_context(|| format!("in {}", path.display()))
}

fn parse(text: &str) -> Result<Budget> {
    let value: serde_json::Value = serde_json::from_str(text).context("not JSON")?;
    let field = |key: &str| -> Result<usize> {
        let n = value.get(key).and_then(serde_json::Value::as_u64).with_context(|| format!("no `{key}` number"))?;
        usize::try_from(n).with_context(|| format!("`{key}` is too large"))
    };
    Ok(Budget { raw: field("raw_bytes")?, gzip: field("gzip_bytes")? })
}

/// One line per measure, e.g. `raw 312,000 B of 320,000 B (97.5%)`.
pub fn describe(sizes: Sizes, budget: Budget) -> String {
    let line = |name: &str, n: usize, max: usize| {
        let pct = if max == 0 { f64::INFINITY } else { n as f64 * 100.0 / max as f64 };
        let verdict = if n > max { "  OVER BUDGET" } else { "" };
        format!("{name} {} B of {} B ({pct:.1}%){verdict}", thousands(n), thousands(max))
    };
    format!("{}; {}", line("raw", sizes.raw, budget.raw), line("gzip -9", sizes.gzip, budget.gzip))
}

/// Fails when either size exceeds the budget, naming which and by how much.
pub fn enforce(sizes: Sizes, budget: Budget) -> Result<()> {
    let mut over = Vec::new();
    if sizes.raw > budget.raw {
        over.push(format!("raw by {} B", sizes.raw - budget.raw));
    }
    if sizes.gzip > budget.gzip {
        over.push(format!("gzip by {} B", sizes.gzip - budget.gzip));
    }
    if !over.is_empty() {
        bail!(
            "the packed widget is over its size budget ({}): {}; shrink it, or raise {FILE} in a commit that says why",
            over.join(", "),
            describe(sizes, budget)
        );
    }
    Ok(())
}

fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_repo_s_budget_file_parses() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let budget = load(&root).expect("widget/size-budget.json");
        assert!(budget.gzip < budget.raw, "{budget:?}");
    }

    #[test]
    fn over_either_limit_fails_and_says_which() {
        let budget = Budget { raw: 1000, gzip: 400 };
        assert!(enforce(Sizes { raw: 1000, gzip: 400 }, budget).is_ok(), "the limit itself is allowed");
        let err = enforce(Sizes { raw: 1001, gzip: 400 }, budget).unwrap_err().to_string();
        assert!(err.contains("raw by 1 B") && !err.contains("gzip by"), "{err}");
        let err = enforce(Sizes { raw: 10, gzip: 450 }, budget).unwrap_err().to_string();
        assert!(err.contains("gzip by 50 B"), "{err}");
    }

    #[test]
    fn a_budget_without_both_numbers_is_refused() {
        assert!(parse(r#"{"raw_bytes": 10}"#).is_err());
        assert!(parse(r#"{"raw_bytes": 10, "gzip_bytes": "5"}"#).is_err());
        assert_eq!(parse(r#"{"raw_bytes": 10, "gzip_bytes": 5, "why": "x"}"#).unwrap(), Budget { raw: 10, gzip: 5 });
    }

    #[test]
    fn sizes_read_with_thousands_separators() {
        let line = describe(Sizes { raw: 1_234_567, gzip: 5 }, Budget { raw: 2_000_000, gzip: 4 });
        assert!(line.starts_with("raw 1,234,567 B of 2,000,000 B (61.7%)"), "{line}");
        assert!(line.ends_with("OVER BUDGET"), "{line}");
    }
}
