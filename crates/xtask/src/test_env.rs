//! The environment the test command gives the tests it runs: nothing from the developer's shell
//! may turn a failing check green or change what a run draws. `INSTA_UPDATE=always` (or any
//! other `INSTA_*`, e.g. `INSTA_FORCE_PASS`) would accept every changed snapshot,
//! `GIFTGENIUS_UPDATE_DOCS=1` would rewrite docs/errors.md instead of comparing it (and
//! `GG_WRITE_DOCS=1` the widget's decision table and schema), and a
//! `GIFTGENIUS_CHAOS_SEED` left over from replaying a run would replace `chaos_small`'s fixed
//! seed. Those are removed from every test process xtask starts (cargo test, the conformance
//! suites, the browser tests).

use std::ffi::OsStr;
use std::process::Command;

/// Variables removed by name.
const REMOVED: &[&str] = &["GIFTGENIUS_UPDATE_DOCS", "GG_WRITE_DOCS", "GIFTGENIUS_CHAOS_SEED"];
/// Variables removed by prefix: every insta setting.
const REMOVED_PREFIXES: &[&str] = &["INSTA_"];

fn removed(key: &OsStr) -> bool {
    let key = key.to_string_lossy();
    REMOVED.contains(&key.as_ref()) || REMOVED_PREFIXES.iter().any(|p| key.starts_with(p))
}

/// Removes from `cmd` every variable of `caller` (the caller's environment, passed in so a test
/// can give its own) that could change a test's verdict.
pub fn pin_with<K: AsRef<OsStr>, V>(cmd: &mut Command, caller: impl IntoIterator<Item = (K, V)>) -> &mut Command {
    for (key, _) in caller {
        // Always removed by name too: the child must not inherit them whatever `caller` said.
        if removed(key.as_ref()) {
            cmd.env_remove(key.as_ref());
        }
    }
    for key in REMOVED {
        cmd.env_remove(key);
    }
    cmd
}

/// [`pin_with`] on this process's environment.
pub fn pin(cmd: &mut Command) -> &mut Command {
    pin_with(cmd, std::env::vars_os())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::ffi::OsString;

    /// What `cmd` will set (`Some`) or remove (`None`), by name.
    fn changes(cmd: &Command) -> BTreeMap<String, Option<String>> {
        cmd.get_envs()
            .map(|(k, v)| (k.to_string_lossy().into_owned(), v.map(|v| v.to_string_lossy().into_owned())))
            .collect()
    }

    #[test]
    fn snapshot_doc_and_seed_overrides_of_the_callers_shell_are_removed_and_the_rest_kept() {
        let shell = [
            ("INSTA_UPDATE", "always"),
            ("INSTA_FORCE_PASS", "1"),
            ("INSTA_WORKSPACE_ROOT", "/elsewhere"),
            ("GIFTGENIUS_UPDATE_DOCS", "1"),
            ("GG_WRITE_DOCS", "1"),
            ("GIFTGENIUS_CHAOS_SEED", "42"),
            ("GIFTGENIUS_WIDGET_HTML", "/w.html"),
            ("PATH", "/usr/bin"),
            ("CARGO_TARGET_DIR", "/t"),
        ];
        let mut cmd = Command::new("cargo");
        cmd.env("GIFTGENIUS_WIDGET_HTML", "/mine.html");
        pin_with(&mut cmd, shell.map(|(k, v)| (OsString::from(k), OsString::from(v))));
        let expected: BTreeMap<String, Option<String>> = [
            ("INSTA_UPDATE", None),
            ("INSTA_FORCE_PASS", None),
            ("INSTA_WORKSPACE_ROOT", None),
            ("GIFTGENIUS_UPDATE_DOCS", None),
            ("GG_WRITE_DOCS", None),
            ("GIFTGENIUS_CHAOS_SEED", None),
            // Set by xtask itself: kept; the shell's PATH and target dir are inherited untouched.
            ("GIFTGENIUS_WIDGET_HTML", Some("/mine.html")),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.map(str::to_string)))
        .collect();
        assert_eq!(changes(&cmd), expected);
    }

    #[test]
    fn the_named_variables_are_removed_even_when_the_caller_lacks_them() {
        let mut cmd = Command::new("node");
        pin_with(&mut cmd, Vec::<(OsString, OsString)>::new());
        let removed: Vec<String> = changes(&cmd).into_iter().filter(|(_, v)| v.is_none()).map(|(k, _)| k).collect();
        assert_eq!(removed, ["GG_WRITE_DOCS", "GIFTGENIUS_CHAOS_SEED", "GIFTGENIUS_UPDATE_DOCS"]);
    }

    /// The real thing: a child started through `pin` does not see them.
    #[test]
    fn a_child_started_through_pin_does_not_see_them() {
        let mut cmd = Command::new("env");
        cmd.env("INSTA_UPDATE", "always").env("GIFTGENIUS_UPDATE_DOCS", "1").env("KEPT_FOR_THE_TEST", "yes");
        // `env` set on the command itself is what a shell's export looks like to the child.
        pin_with(&mut cmd, [("INSTA_UPDATE", ""), ("GIFTGENIUS_UPDATE_DOCS", "")]);
        let out = cmd.output().expect("env runs");
        let seen = String::from_utf8_lossy(&out.stdout);
        assert!(!seen.contains("INSTA_UPDATE=") && !seen.contains("GIFTGENIUS_UPDATE_DOCS="), "{seen}");
        assert!(seen.contains("KEPT_FOR_THE_TEST=yes"), "{seen}");
    }
}
