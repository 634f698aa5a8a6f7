//! The alert rules (`deploy/prometheus/alerts.yml`) checked by Prometheus' own promtool:
//! `promtool check rules` (the file is valid, every expression parses) and `promtool test
//! rules` on the unit tests beside it (`alerts_test.yml`: series in, alerts expected out).
//! promtool comes with Debian's `prometheus` package (`tools::ensure_prometheus`).

use crate::cmd;
use anyhow::{Context, Result};
use std::path::Path;
use std::process::Command;

/// The rules, from the workspace root.
pub const RULES: &str = "deploy/prometheus/alerts.yml";
/// Their unit tests, from the workspace root.
pub const RULE_TESTS: &str = "deploy/prometheus/alerts_test.yml";

/// Runs both checks with the promtool in `bin_dir`.
pub fn check(root: &Path, bin_dir: &Path) -> Result<()> {
    let promtool = bin_dir.join("promtool");
    let dir = root.join("deploy/prometheus");
    let mut check = Command::new(&promtool);
    check.args(["check", "rules", "alerts.yml"]).current_dir(&dir);
    cmd::run(&mut check).with_context(|| format!("{RULES} is not valid"))?;
    // Relative names: the test file names its rule file relative to itself.
    let mut test = Command::new(&promtool);
    test.args(["test", "rules", "alerts_test.yml"]).current_dir(&dir);
    cmd::run(&mut test).with_context(|| format!("the alert rule tests ({RULE_TESTS}) failed"))?;
    eprintln!("xtask: alert rules valid and their tests pass ({RULES}, {RULE_TESTS})");
    Ok(())
}
