//! `cargo xtask errors`: writes the error table generated from `ErrorCode` into README.md and
//! docs/errors.md, between `<!-- error-table:start -->` and `<!-- error-table:end -->`. A contract test fails
//! when the two drift.

use std::path::Path;

use anyhow::{Context, Result, bail};
use giftgenius_types::ErrorCode;

pub const START: &str = "<!-- error-table:start -->";
pub const END: &str = "<!-- error-table:end -->";

/// `doc` with the text between the markers replaced by the current table.
pub fn with_table(doc: &str) -> Result<String> {
    let (Some(start), Some(end)) = (doc.find(START), doc.find(END)) else {
        bail!("the markers {START} and {END} are missing");
    };
    if end < start {
        bail!("{END} comes before {START}");
    }
    Ok(format!("{}{START}\n{}{}", &doc[..start], ErrorCode::markdown_table(), &doc[end..]))
}

/// The documents that embed the table.
pub const DOCUMENTS: [&str; 1] = ["docs/errors.md"];

pub fn run(root: &Path) -> Result<()> {
    for name in DOCUMENTS {
        let path = root.join(name);
        let doc = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        let updated = with_table(&doc).with_context(|| format!("in {}", path.display()))?;
        if updated == doc {
            eprintln!("xtask: {} is up to date", path.display());
        } else {
            std::fs::write(&path, updated).with_context(|| format!("writing {}", path.display()))?;
            eprintln!("xtask: wrote the error table into {}", path.display());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_text_between_the_markers_is_replaced() {
        let doc = format!("intro\n{START}\nold table\n{END}\noutro\n");
        let out = with_table(&doc).unwrap();
        assert!(out.starts_with(&format!("intro\n{START}\n| code |")));
        assert!(out.ends_with(&format!("|\n{END}\noutro\n")));
        assert!(!out.contains("old table"));
        assert_eq!(with_table(&out).unwrap(), out, "idempotent");
    }

    #[test]
    fn missing_markers_are_an_error() {
        assert!(with_table("no markers here").is_err());
    }
}
