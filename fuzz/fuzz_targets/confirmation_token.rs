//! Confirmation, cancel and Delete my data tokens (`checkout::confirmation`): the token parser
//! and verifier on any text for any draft, order and subject, and the token secret file's
//! parser. Input: token, 0xFF, id, 0xFF, subject, 0xFF, 8 bytes of "now" (ms, brought into the
//! years 1970-9999), 0xFF, a secret file.
//!
//! Properties: a token is valid only for the purpose, id and subject it was signed for, and
//! only before it expires; a fuzzed token never verifies (it would need the HMAC); one
//! byte changed in a genuine token makes it invalid; no input panics.
#![no_main]

use giftgenius_fuzz::{parts, seconds, text};
use giftgenius_server::checkout::confirmation::{ConfirmationKeys, Verdict};
use libfuzzer_sys::fuzz_target;

/// The server's clock is not input: any time from 1970 to the year 9999, in ms.
const LAST_CLOCK_MS: i64 = 253_402_300_800_000;
const KEYS: &str = "new a-secret-of-thirty-two-bytes-or-more-0002\nold a-secret-of-thirty-two-bytes-or-more-0001";

fuzz_target!(|data: &[u8]| {
    let [token, id, subject, now, file] = parts::<5>(data);
    let (Some(token), Some(id), Some(subject)) = (text(token), text(id), text(subject)) else { return };
    let now_ms = seconds(now).rem_euclid(LAST_CLOCK_MS);
    if let Some(file) = text(file) {
        let _ = ConfirmationKeys::parse(file);
    }
    let keys = ConfirmationKeys::parse(KEYS).expect("the fixed keys parse");

    // A made-up token: never valid, whatever it says.
    for verdict in [
        keys.verify(Some(token), id, subject, now_ms),
        keys.verify_cancel(Some(token), id, subject, now_ms),
        keys.verify_delete(Some(token), subject, now_ms),
    ] {
        assert!(!matches!(verdict, Verdict::Valid(_)), "{token:?} verified");
    }

    // A genuine one: valid for what it was signed for until it expires, and for nothing else.
    let genuine = keys.token(id, subject, now_ms);
    match keys.verify(Some(&genuine), id, subject, now_ms) {
        Verdict::Valid(accepted) => assert!(accepted.expires_at_ms > now_ms),
        other => panic!("{genuine} is {other:?} for {id:?}/{subject:?} at {now_ms}"),
    }
    assert!(!matches!(keys.verify_cancel(Some(&genuine), id, subject, now_ms), Verdict::Valid(_)), "another purpose");
    let other_subject = format!("{subject}x");
    assert!(!matches!(keys.verify(Some(&genuine), id, &other_subject, now_ms), Verdict::Valid(_)), "another subject");
    let other_id = format!("{id}x");
    assert!(!matches!(keys.verify(Some(&genuine), &other_id, subject, now_ms), Verdict::Valid(_)), "another id");
    // One byte changed, where the fuzzer says.
    let at = token.len() % genuine.len();
    let mut changed = genuine.clone().into_bytes();
    changed[at] = if changed[at] == b'0' { b'1' } else { b'0' };
    if let Ok(changed) = String::from_utf8(changed) {
        assert!(!matches!(keys.verify(Some(&changed), id, subject, now_ms), Verdict::Valid(_)), "{changed} verified");
    }
});
