//! `Stripe-Signature` (`checkout::stripe::signature::verify`): any header over any payload at any
//! time, against two configured secrets. Input: header, 0xFF, payload, 0xFF, 8 bytes of
//! timestamp (signing time for the genuine header; "now" for the fuzzed one is fixed).
//!
//! Properties: a header is accepted only if it carries, for its own `t`, the genuine `v1` of
//! the payload under one of the secrets; a genuine header is accepted within the tolerance and
//! called stale outside it, for any timestamp; nothing panics.
#![no_main]

use giftgenius_commerce::payments::stripe::signature::{SignatureError, sign, verify};
use giftgenius_fuzz::{parts, seconds, text};
use libfuzzer_sys::fuzz_target;

const NOW: i64 = 1_780_000_000;
const TOLERANCE: i64 = 300;

fuzz_target!(|data: &[u8]| {
    let [header, payload, t] = parts::<3>(data);
    let secrets = vec!["whsec_old".to_string(), "whsec_new".to_string()];

    // Any header: accepted only with a genuine signature in it.
    if let Some(header) = text(header)
        && let Ok(t) = verify(header, payload, &secrets, NOW, TOLERANCE)
    {
        let genuine = secrets.iter().map(|s| sign(s, t, payload)).any(|signed| {
            let v1 = signed.split_once(",v1=").map(|(_, v1)| v1).unwrap_or_default();
            header.split(',').any(|part| part.trim().strip_prefix("v1=").is_some_and(|v| v.eq_ignore_ascii_case(v1)))
        });
        assert!(genuine, "accepted a header it did not sign: {header:?}");
    }

    // A genuine header, signed at any time.
    let t = seconds(t);
    let signed = sign("whsec_new", t, payload);
    let fresh = NOW.checked_sub(t).is_some_and(|age| age.abs() <= TOLERANCE);
    let want = if fresh { Ok(t) } else { Err(SignatureError::Stale) };
    assert_eq!(verify(&signed, payload, &secrets, NOW, TOLERANCE), want, "{signed}");
    let forged = sign("whsec_attacker", t, payload);
    assert_eq!(verify(&forged, payload, &secrets, NOW, TOLERANCE), Err(SignatureError::Forged));
});
