//! ACP request headers: `API-Version` (`acp::routes::check_version`) and `Idempotency-Key`
//! (`acp::routes::idempotency_key`, the same rule as `meta.idempotency_key`), as raw header
//! bytes. Input: the API-Version bytes, 0xFF, the Idempotency-Key bytes.
//!
//! Properties: exactly the supported version passes; a key passes exactly when it is 1 to 255
//! printable ASCII characters, and comes back byte for byte; every refusal is a 400.
#![no_main]

use giftgenius_fuzz::parts;
use giftgenius_server::acp::routes::{Via, check_version, idempotency_key};
use giftgenius_types::acp::ACP_SUPPORTED_VERSIONS;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [version, key] = parts::<2>(data);
    for via in [Via::Rest, Via::Mcp] {
        let supported = ACP_SUPPORTED_VERSIONS.iter().any(|v| v.as_bytes() == version);
        match check_version(Some(version), via) {
            Ok(()) => assert!(supported, "{version:?} passed"),
            Err(failure) => {
                assert!(!supported, "{version:?} refused");
                assert_eq!(failure.status.as_u16(), 400);
            }
        }
        let valid = (1..=255).contains(&key.len()) && key.iter().all(|b| (0x20..0x7f).contains(b));
        for required in [true, false] {
            match idempotency_key(Some(key), required, via) {
                Ok(Some(kept)) => assert!(valid && kept.as_bytes() == key, "{key:?} passed as {kept:?}"),
                Ok(None) => panic!("a key that was sent came back absent"),
                Err(failure) => {
                    assert!(!valid, "{key:?} refused");
                    assert_eq!(failure.status.as_u16(), 400);
                }
            }
        }
    }
});
