//! What a container deployment needs of the binary (issue 45): `migrate` as the migration step
//! before the replicas, and `--db-file` taking the database URL (with its password) from a
//! mounted secret instead of the environment.

use std::process::Command;

use serde_json::Value;

use crate::postgres::TestDb;

/// The server binary with `args`, without the database variables of the caller's shell.
fn server(args: &[&str]) -> (bool, String, String) {
    run_server_binary(args, &["GIFTGENIUS_DB", "GIFTGENIUS_DB_FILE"])
}

/// Runs the server binary with `args`, the variables `unset` removed: (success, stdout, stderr).
pub fn run_server_binary(args: &[&str], unset: &[&str]) -> (bool, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_giftgenius-server"));
    command.args(args);
    for name in unset {
        command.env_remove(name);
    }
    let output = command.output().expect("run giftgenius-server");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test]
async fn migrate_applies_the_migrations_of_the_database_named_by_a_secret_file() {
    let pg = TestDb::create().await;
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("db-url");
    std::fs::write(&secret, format!("{}\nanything after the first line is ignored\n", pg.url)).unwrap();
    let (ok, stdout, stderr) = server(&["migrate", "--db-file", &secret.to_string_lossy()]);
    assert!(ok, "{stderr}");
    let printed: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(printed["migrated"], true, "{printed}");
    assert!(printed["database"].as_str().unwrap().starts_with("postgres"), "{printed}");
    // Twice is fine (a Job retried, a second rollout): nothing left to apply.
    let (ok, again, stderr) = server(&["migrate", "--db-file", &secret.to_string_lossy()]);
    assert!(ok && again == stdout, "{stderr}");
}

#[test]
fn migrate_creates_and_migrates_a_sqlite_file_named_on_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gg.db");
    let (ok, stdout, stderr) = server(&["migrate", "--db", &db.to_string_lossy()]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("\"migrated\":true"), "{stdout}");
    assert!(db.is_file());
}

#[test]
fn a_db_file_that_cannot_name_a_database_stops_the_start_naming_the_flag_not_the_content() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let (ok, stdout, stderr) = server(&["migrate", "--db-file", &missing.to_string_lossy()]);
    assert!(!ok && stdout.is_empty(), "{stdout}");
    assert!(stderr.contains("--db-file") && stderr.contains("cannot read it"), "{stderr}");

    let empty = dir.path().join("empty");
    std::fs::write(&empty, "\nsecret-on-line-two\n").unwrap();
    let (ok, _, stderr) = server(&["migrate", "--db-file", &empty.to_string_lossy()]);
    assert!(!ok && stderr.contains("first line is empty"), "{stderr}");
    assert!(!stderr.contains("secret-on-line-two"), "{stderr}");

    // Both at once is a mistake, refused by the parser before anything opens.
    let (ok, _, stderr) = server(&["migrate", "--db", "x.db", "--db-file", &empty.to_string_lossy()]);
    assert!(!ok && stderr.contains("--db-file"), "{stderr}");
}
