//! `Stripe-Signature` verification for `POST /webhooks/stripe`:
//! `t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.payload">[,v1=…]`, checked against every
//! configured signing secret (several while one is rotated), in constant time, and refused when
//! the timestamp is further than the tolerance from now in either direction (a replay of an old
//! event; a clock far off). Only `v1` counts: Stripe's `v0` test scheme is ignored.
//!
//! The work is bounded whatever the header holds: the MAC over the body is computed once per
//! secret (not once per `v1` entry) and each entry is compared with it in constant time; a
//! header longer than [`MAX_HEADER_BYTES`] or with more than [`MAX_SIGNATURES`] `v1` entries is
//! refused before any MAC. Stripe sends one `v1` per signing secret of the endpoint (two while
//! one is rolled), so eight is plenty.

use hmac::digest::{CtOutput, Output};
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// `v1` entries one header may carry (Stripe sends one per secret of the endpoint).
pub const MAX_SIGNATURES: usize = 8;

/// Bytes one header may hold: [`MAX_SIGNATURES`] entries of 64 hex digits, a timestamp and a
/// few `v0` entries fit with room to spare.
pub const MAX_HEADER_BYTES: usize = 1024;

/// Why an event's signature was refused (said to no one but the log).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignatureError {
    /// No `t=` or no `v1=` in the header, a timestamp that is not a number, or a header over
    /// [`MAX_HEADER_BYTES`] or [`MAX_SIGNATURES`].
    Malformed,
    /// Signed longer ago (or further ahead) than the tolerance.
    Stale,
    /// No `v1` signature matches any secret.
    Forged,
}

/// The header's timestamp and `v1` signatures (at most [`MAX_SIGNATURES`]).
fn parse(header: &str) -> Result<(i64, Vec<Output<Sha256>>), SignatureError> {
    if header.len() > MAX_HEADER_BYTES {
        return Err(SignatureError::Malformed);
    }
    let mut timestamp = None;
    let mut signatures = Vec::new();
    let mut entries = 0;
    for part in header.split(',') {
        match part.trim().split_once('=') {
            Some(("t", t)) => timestamp = Some(t.parse::<i64>().map_err(|_| SignatureError::Malformed)?),
            Some(("v1", sig)) => {
                entries += 1;
                if entries > MAX_SIGNATURES {
                    return Err(SignatureError::Malformed);
                }
                // Not hex, or not the length of a SHA-256 MAC: cannot match, skipped like an
                // unknown scheme.
                let mut mac = Output::<Sha256>::default();
                if hex::decode_to_slice(sig, &mut mac).is_ok() {
                    signatures.push(mac);
                }
            }
            _ => {}
        }
    }
    match timestamp {
        Some(t) if !signatures.is_empty() => Ok((t, signatures)),
        _ => Err(SignatureError::Malformed),
    }
}

fn mac(secret: &str, timestamp: i64, payload: &[u8]) -> Hmac<Sha256> {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes a key of any length");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(payload);
    mac
}

/// Checks `header` over `payload` against `secrets` at `now_s`; the event's timestamp when one
/// `v1` signature matches one secret within `tolerance_s`.
pub fn verify(
    header: &str,
    payload: &[u8],
    secrets: &[String],
    now_s: i64,
    tolerance_s: i64,
) -> Result<i64, SignatureError> {
    let (timestamp, signatures) = parse(header)?;
    let matches = secrets.iter().any(|secret| {
        // One MAC over the body per secret, each entry compared with it in constant time.
        let expected = mac(secret, timestamp, payload).finalize();
        signatures.iter().fold(false, |found, sig| found | (CtOutput::new(*sig) == expected))
    });
    if !matches {
        return Err(SignatureError::Forged);
    }
    // `abs_diff`: a signed `t` near i64::MIN or MAX is far off, not an overflow.
    if now_s.abs_diff(timestamp) > tolerance_s.unsigned_abs() {
        return Err(SignatureError::Stale);
    }
    Ok(timestamp)
}

/// The `Stripe-Signature` header Stripe would send for `payload` at `timestamp` (tests, and the
/// events localstripe never sends, which a test signs itself).
pub fn sign(secret: &str, timestamp: i64, payload: &[u8]) -> String {
    format!("t={timestamp},v1={}", hex::encode(mac(secret, timestamp, payload).finalize().into_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_780_000_000;
    const BODY: &[u8] = br#"{"id":"evt_1","type":"payment_intent.succeeded"}"#;

    fn secrets() -> Vec<String> {
        vec!["whsec_old".into(), "whsec_new".into()]
    }

    #[test]
    fn a_signature_by_any_configured_secret_within_the_tolerance_is_accepted() {
        assert_eq!(verify(&sign("whsec_new", NOW - 10, BODY), BODY, &secrets(), NOW, 300), Ok(NOW - 10));
        assert_eq!(verify(&sign("whsec_old", NOW, BODY), BODY, &secrets(), NOW, 300), Ok(NOW));
        // Stripe sends one v1 per secret of the endpoint while it rolls one: any may match.
        let new = sign("whsec_new", NOW, BODY);
        let (_, new_v1) = new.split_once("v1=").unwrap();
        let two = format!("{},v1={new_v1}", sign("whsec_other", NOW, BODY));
        assert_eq!(verify(&two, BODY, &secrets(), NOW, 300), Ok(NOW));
    }

    #[test]
    fn forged_tampered_stale_and_malformed_signatures_are_refused() {
        let forged = sign("whsec_attacker", NOW, BODY);
        assert_eq!(verify(&forged, BODY, &secrets(), NOW, 300), Err(SignatureError::Forged));
        let signed = sign("whsec_new", NOW, BODY);
        assert_eq!(verify(&signed, b"{\"id\":\"evt_2\"}", &secrets(), NOW, 300), Err(SignatureError::Forged));
        let moved = signed.replacen(&format!("t={NOW}"), &format!("t={}", NOW + 1), 1);
        assert_eq!(verify(&moved, BODY, &secrets(), NOW, 300), Err(SignatureError::Forged), "t is signed too");
        assert_eq!(verify(&signed, BODY, &secrets(), NOW + 301, 300), Err(SignatureError::Stale), "a replay");
        assert_eq!(verify(&signed, BODY, &secrets(), NOW - 301, 300), Err(SignatureError::Stale), "from the future");
        for header in ["", "t=1", "v1=00", "t=x,v1=00", "t=1,v0=00"] {
            assert_eq!(verify(header, BODY, &secrets(), NOW, 300), Err(SignatureError::Malformed), "{header:?}");
        }
        assert_eq!(verify(&signed, BODY, &[], NOW, 300), Err(SignatureError::Forged), "no secret accepts nothing");
    }

    /// `t=NOW` then `junk` wrong `v1` entries, then the right one.
    fn among_junk(junk: usize) -> String {
        let signed = sign("whsec_new", NOW, BODY);
        let (_, right) = signed.split_once(",v1=").unwrap();
        let wrong = format!(",v1={}", "ab".repeat(32)).repeat(junk);
        format!("t={NOW}{wrong},v1={right}")
    }

    #[test]
    fn up_to_eight_signatures_are_checked_and_more_are_refused_unread() {
        assert_eq!(verify(&among_junk(MAX_SIGNATURES - 1), BODY, &secrets(), NOW, 300), Ok(NOW), "the eighth matches");
        // Today's cap: a ninth entry, even the right one, is refused before any MAC is computed
        // (one request once carried 65,000 entries, each a MAC over the whole body).
        let nine = among_junk(MAX_SIGNATURES);
        assert!(nine.len() <= MAX_HEADER_BYTES, "refused for its count, not its length");
        assert_eq!(verify(&nine, BODY, &secrets(), NOW, 300), Err(SignatureError::Malformed));
        // A long header is refused whatever it holds.
        let long = format!("{},v0={}", sign("whsec_new", NOW, BODY), "0".repeat(MAX_HEADER_BYTES));
        assert_eq!(verify(&long, BODY, &secrets(), NOW, 300), Err(SignatureError::Malformed));
        // Entries of the wrong length cannot match; the right one beside them still does.
        let short = format!("t={NOW},v1=00,v1=zz,{}", &among_junk(0)[format!("t={NOW},").len()..]);
        assert_eq!(verify(&short, BODY, &secrets(), NOW, 300), Ok(NOW));
    }

    /// Found by the `stripe_signature` fuzz target (fuzz/regressions/stripe_signature/): `now - t`
    /// overflowed for a signed timestamp far from now: a panic with overflow checks, and without
    /// them `abs` of the wrapped difference could stay negative and pass as fresh.
    #[test]
    fn a_genuine_signature_from_the_ends_of_time_is_stale_not_an_overflow() {
        for t in [i64::MIN, NOW.wrapping_add(i64::MIN), i64::MAX, -1] {
            assert_eq!(
                verify(&sign("whsec_new", t, BODY), BODY, &secrets(), NOW, 300),
                Err(SignatureError::Stale),
                "{t}"
            );
        }
    }
}
