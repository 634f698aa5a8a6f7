//! The documented error table (docs/errors.md) is generated from `ErrorCode`; this keeps them equal.

use giftgenius_types::ErrorCode;

const START: &str = "<!-- error-table:start -->";
const END: &str = "<!-- error-table:end -->";

fn assert_table_matches(name: &str) {
    let path = format!("{}/../../{name}", env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {name} ({e})"));
    let (Some(start), Some(end)) = (doc.find(START), doc.find(END)) else {
        panic!(
            "{name} lacks the {START} … {END} markers around the error table; add them and run `cargo xtask errors`"
        );
    };
    assert!(start < end, "{name}: {START} must come before {END}");
    let documented = doc[start + START.len()..end].trim();
    let generated = ErrorCode::markdown_table();
    assert!(
        documented == generated.trim(),
        "{name}'s error table differs from ErrorCode (crates/giftgenius-types/src/error.rs). \
         Regenerate it with `cargo xtask errors`.\n--- documented\n{documented}\n--- generated\n{generated}"
    );
}

#[test]
fn the_error_table_in_docs_errors_md_matches_the_error_code_enum() {
    assert_table_matches("docs/errors.md");
}

#[test]
fn every_error_code_has_an_example_result_in_docs_errors_md() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/errors.md")).unwrap();
    for code in ErrorCode::ALL {
        assert!(doc.contains(&format!("\"code\": \"{code}\"")), "docs/errors.md has no example result for {code}");
    }
}

/// The Markdown pages a reader follows links through: the README and every page of `docs/`.
fn pages() -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut pages = vec![root.join("README.md")];
    let docs = std::fs::read_dir(root.join("docs")).expect("docs/ exists");
    let mut more: Vec<_> =
        docs.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "md")).collect();
    more.sort();
    pages.extend(more);
    pages
}

/// The lines of `text` outside fenced code blocks.
fn prose(text: &str) -> impl Iterator<Item = &str> {
    let mut fenced = false;
    text.lines().filter(move |line| {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            return false;
        }
        !fenced
    })
}

/// A heading's anchor as GitHub makes it: lower case, punctuation dropped (letters, digits,
/// '-', '_' and spaces kept), spaces as '-'; a repeated anchor gets "-1", "-2", ….
fn anchors(text: &str) -> std::collections::HashSet<String> {
    let mut seen = std::collections::HashMap::<String, usize>::new();
    let mut out = std::collections::HashSet::new();
    for line in prose(text) {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let slug: String = line[hashes..]
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let n = seen.entry(slug.clone()).or_insert(0);
        out.insert(if *n == 0 { slug.clone() } else { format!("{slug}-{n}") });
        *n += 1;
    }
    out
}

#[test]
fn every_relative_link_and_anchor_in_the_readme_and_docs_resolves() {
    let mut broken = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).expect("a page");
        for line in prose(&text) {
            for (at, _) in line.match_indices("](") {
                let rest = &line[at + 2..];
                let Some(end) = rest.find(')') else { continue };
                let target = &rest[..end];
                if target.contains("://") || target.starts_with("mailto:") || target.contains(' ') {
                    continue;
                }
                let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
                let path = if file.is_empty() { page.clone() } else { page.parent().expect("a folder").join(file) };
                let name = page.file_name().expect("a name").to_string_lossy().to_string();
                if !path.exists() {
                    broken.push(format!("{name}: {target} (no such file)"));
                } else if !anchor.is_empty() && path.extension().is_some_and(|e| e == "md") {
                    let linked = std::fs::read_to_string(&path).expect("a page");
                    if !anchors(&linked).contains(anchor) {
                        broken.push(format!("{name}: {target} (no such heading)"));
                    }
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n  {}", broken.join("\n  "));
}

#[test]
fn the_readme_stays_a_front_page() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines <= 250, "README.md has {lines} lines; move detail into a page of docs/ and link it");
    let first = readme.lines().skip_while(|l| !l.starts_with("```")).nth(1).unwrap_or("");
    assert!(first.starts_with("cargo xtask serve"), "the README starts with the command that runs the app: {first}");
}

#[test]
fn the_anchor_rule_matches_githubs() {
    let text = "# Orders after payment: the operator's API and `orders` command\n## Tests\n## Tests\n```\n# not a heading\n```";
    let found = anchors(text);
    assert!(found.contains("orders-after-payment-the-operators-api-and-orders-command"), "{found:?}");
    assert!(found.contains("tests") && found.contains("tests-1"), "{found:?}");
    assert!(!found.contains("not-a-heading"), "{found:?}");
}
