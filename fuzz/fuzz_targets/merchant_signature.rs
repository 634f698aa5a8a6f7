//! `Merchant-Signature` (`outbox::signature::merchant_signature`), the header our order events
//! carry, read back by the server's one verifier of that scheme (`t=…,v1=…`, HMAC-SHA256 of
//! `t.body`: `checkout::stripe::signature::verify`, as a receiver would check it). Input:
//! secret, 0xFF, body, 0xFF, 8 bytes of timestamp.
//!
//! Properties: the header is exactly `t=<t>,v1=<64 lower-case hex>`; it verifies for its own body,
//! secret and time, and for no other body or secret.
#![no_main]

use giftgenius_commerce::outbox::signature::merchant_signature;
use giftgenius_commerce::payments::stripe::signature::{SignatureError, verify};
use giftgenius_fuzz::{parts, seconds, text};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [secret, body, t] = parts::<3>(data);
    let Some(secret) = text(secret) else { return };
    let t = seconds(t);
    let header = merchant_signature(secret.as_bytes(), t, body);
    let v1 = header.strip_prefix(&format!("t={t},v1=")).unwrap_or_else(|| panic!("{header}"));
    assert!(v1.len() == 64 && v1.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')), "{header}");

    let secrets = [secret.to_string()];
    assert_eq!(verify(&header, body, &secrets, t, 0), Ok(t), "{header}");
    let mut other = body.to_vec();
    other.push(b' ');
    assert_eq!(verify(&header, &other, &secrets, t, 0), Err(SignatureError::Forged));
    let other_secret = [format!("{secret}x")];
    assert_eq!(verify(&header, body, &other_secret, t, 0), Err(SignatureError::Forged));
});
