//! Which top-level modules of each crate use which (issue 41): a crate whose modules import each
//! other in a circle has no direction a reader can follow, and no part of it can move out alone.
//!
//! The check reads the sources as text: a module is a file or folder directly under a crate's
//! `src/` (not `main.rs`, `lib.rs` or `bin/`), and it uses another when its code outside
//! `#[cfg(test)]` names `crate::other` (in a path or a `use crate::{…}` group). Its cycles are
//! the strongly connected components of that graph with more than one module.
//!
//! The cycles left are listed in [`KNOWN_CYCLES`], exactly: a new cycle, a module joining one, or
//! a cycle that shrank or went away without the list following fails the test, so the list only
//! ever gets shorter. `cargo test -p xtask --test modules -- --nocapture` prints every crate's
//! modules, their uses and the cycles.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The cycles allowed, per crate: none since issue 41 (the server's `http mcp startup state` went
/// when the drain, the metrics token and the widget resource moved below the transports).
const KNOWN_CYCLES: &[(&str, &[&str])] = &[];

type Graph = BTreeMap<String, BTreeSet<String>>;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The workspace's crates, as their folders relative to the workspace (from `Cargo.toml`).
fn crates() -> Vec<String> {
    let manifest = std::fs::read_to_string(workspace().join("Cargo.toml")).expect("the workspace's Cargo.toml");
    let members = manifest.split("members = [").nth(1).and_then(|rest| rest.split(']').next()).expect("members");
    members.split(',').map(|m| m.trim().trim_matches('"').to_string()).filter(|m| !m.is_empty()).collect()
}

/// Every `.rs` file below `dir`.
fn sources(dir: &Path, into: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            into.push(path);
        }
    }
}

/// The code of a source file that ships: comments dropped, and everything from the first
/// `#[cfg(test)]` on (test modules close the files here).
fn shipped(text: &str) -> String {
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    code.lines().map(|line| line.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// The identifiers right after each `crate::` in `code`, and those of `use crate::{a, b::c}`.
fn named(code: &str) -> BTreeSet<String> {
    let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    let mut out = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = group.split('}').next().unwrap_or("");
            out.extend(inner.split(',').map(|part| ident(part.trim())).filter(|m| !m.is_empty()));
        } else {
            let name = ident(rest);
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

/// A crate's top-level modules and which others each one uses.
fn graph(krate: &str) -> Graph {
    let src = workspace().join(krate).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let module_of = |path: &Path| -> Option<String> {
        let first = path.strip_prefix(&src).ok()?.components().next()?.as_os_str().to_string_lossy().to_string();
        let name = first.strip_suffix(".rs").unwrap_or(&first).to_string();
        (!matches!(name.as_str(), "main" | "lib" | "bin")).then_some(name)
    };
    let mut graph: Graph = files.iter().filter_map(|f| module_of(f)).map(|m| (m, BTreeSet::new())).collect();
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for file in &files {
        let Some(module) = module_of(file) else { continue };
        let text = std::fs::read_to_string(file).expect("a source file");
        let uses: BTreeSet<String> =
            named(&shipped(&text)).into_iter().filter(|m| *m != module && modules.contains(m)).collect();
        graph.get_mut(&module).expect("a module").extend(uses);
    }
    graph
}

/// The strongly connected components of more than one module (Tarjan's algorithm).
fn cycles(graph: &Graph) -> Vec<BTreeSet<String>> {
    struct Walk<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        found: Vec<BTreeSet<String>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, v: &'g str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            for w in &self.graph[v] {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.stack.contains(&w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = BTreeSet::new();
                while let Some(w) = self.stack.pop() {
                    component.insert(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk { graph, index: BTreeMap::new(), low: BTreeMap::new(), stack: Vec::new(), found: Vec::new() };
    for v in graph.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.found.sort();
    walk.found
}

#[test]
fn no_crate_has_an_import_cycle_but_the_known_ones_and_those_only_shrink() {
    let mut found: BTreeSet<(String, BTreeSet<String>)> = BTreeSet::new();
    for krate in crates() {
        let graph = graph(&krate);
        // A crate of one file (`src/lib.rs` alone) has no modules to form a cycle; any other
        // crate without modules means the walk read the wrong place.
        let one_file = workspace().join(&krate).join("src/lib.rs").is_file() && {
            let mut files = Vec::new();
            sources(&workspace().join(&krate).join("src"), &mut files);
            files.len() == 1
        };
        assert!(!graph.is_empty() || one_file, "{krate}: no modules found under src/");
        let cycles = cycles(&graph);
        println!("{krate}: {} modules, {} cycle(s)", graph.len(), cycles.len());
        for (module, uses) in &graph {
            println!("  {module} -> {}", uses.iter().cloned().collect::<Vec<_>>().join(", "));
        }
        for cycle in cycles {
            println!("  cycle: {}", cycle.iter().cloned().collect::<Vec<_>>().join(" "));
            found.insert((krate.clone(), cycle));
        }
    }
    let known: BTreeSet<(String, BTreeSet<String>)> = KNOWN_CYCLES
        .iter()
        .map(|(krate, modules)| (krate.to_string(), modules.iter().map(|m| m.to_string()).collect()))
        .collect();
    let new: Vec<_> = found.difference(&known).collect();
    let gone: Vec<_> = known.difference(&found).collect();
    assert!(
        new.is_empty() && gone.is_empty(),
        "the import cycles changed.\n  new or grown (break them: move what both sides need into a module of its own, \
         or invert the dependency): {new:?}\n  shrunk or gone (well done: update KNOWN_CYCLES): {gone:?}"
    );
}

#[test]
fn a_cycle_is_found_and_a_chain_is_not() {
    let graph = |edges: &[(&str, &str)]| {
        let mut g = Graph::new();
        for (a, b) in edges {
            g.entry(a.to_string()).or_default().insert(b.to_string());
            g.entry(b.to_string()).or_default();
        }
        g
    };
    assert!(cycles(&graph(&[("a", "b"), ("b", "c")])).is_empty());
    let found = cycles(&graph(&[("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]));
    assert_eq!(found, vec![["a", "b", "c"].iter().map(|s| s.to_string()).collect::<BTreeSet<_>>()]);
    let code = shipped(
        "use crate::{acp::x, store};\n// crate::ignored\nfn f() { crate::outbox::run() }\n#[cfg(test)]\nuse crate::tests_only;",
    );
    assert_eq!(named(&code), ["acp", "outbox", "store"].iter().map(|s| s.to_string()).collect());
}
