//! Starting the server for `serve` and `preview`.
//!
//! The user's arguments go to the server untouched. What xtask chooses on its own (the widget it
//! built, the preview's database and catalog) travels in the server's environment variables
//! instead, which clap reads only when the flag is absent: a flag the user gives always wins and
//! is never given twice ("cannot be used multiple times").

use crate::widget;
use anyhow::Result;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The built widget's path for the server (`--widget-html`).
pub const WIDGET_HTML_ENV: &str = "GIFTGENIUS_WIDGET_HTML";

/// Value of `--flag VALUE` or `--flag=VALUE` in the server arguments.
pub fn flag_value<'a>(args: &'a [String], flag: &str) -> Option<&'a str> {
    let prefix = format!("{flag}=");
    args.iter()
        .enumerate()
        .find_map(|(i, a)| if a == flag { args.get(i + 1).map(String::as_str) } else { a.strip_prefix(&prefix) })
}

/// The user's choice for a server option: its flag, else its (non-empty) environment variable.
pub fn user_value(args: &[String], flag: &str, var: &str) -> Option<String> {
    flag_value(args, flag).map(str::to_string).or_else(|| std::env::var(var).ok().filter(|v| !v.is_empty()))
}

/// Gives the server `var=value` unless the user already chose this option.
pub fn default_env(server: &mut Command, args: &[String], flag: &str, var: &str, value: impl AsRef<OsStr>) {
    if user_value(args, flag, var).is_none() {
        server.env(var, value);
    }
}

/// The widget the server will serve: the user's own `--widget-html` / `GIFTGENIUS_WIDGET_HTML`
/// as given (nothing is built then), else ours, rebuilt only if its inputs changed.
pub fn provide_widget(root: &Path, args: &[String], server: &mut Command) -> Result<PathBuf> {
    if let Some(html) = user_value(args, "--widget-html", WIDGET_HTML_ENV) {
        eprintln!("xtask: serving the widget you chose ({html}); not building it");
        return Ok(PathBuf::from(html));
    }
    let html = widget::build_if_changed(root)?;
    server.env(WIDGET_HTML_ENV, &html);
    Ok(html)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn flag_values_in_both_spellings() {
        let a = args(&["--port", "9000", "--widget-html=/tmp/w.html", "--stdio"]);
        assert_eq!(flag_value(&a, "--port"), Some("9000"));
        assert_eq!(flag_value(&a, "--widget-html"), Some("/tmp/w.html"));
        assert_eq!(flag_value(&a, "--db"), None);
        assert_eq!(flag_value(&args(&["--db"]), "--db"), None, "a flag without its value");
    }

    #[test]
    fn a_user_flag_is_never_doubled_by_our_default() {
        let mut server = Command::new("true");
        default_env(&mut server, &args(&["--db", "x.db"]), "--db", "GIFTGENIUS_XTASK_TEST_UNSET_A", "ours.db");
        assert!(server.get_envs().next().is_none(), "the user's flag wins; we add nothing");
        default_env(&mut server, &[], "--db", "GIFTGENIUS_XTASK_TEST_UNSET_B", "ours.db");
        let envs: Vec<_> = server.get_envs().collect();
        assert_eq!(envs, [(OsStr::new("GIFTGENIUS_XTASK_TEST_UNSET_B"), Some(OsStr::new("ours.db")))]);
        assert!(server.get_args().next().is_none(), "defaults never become arguments");
    }
}
