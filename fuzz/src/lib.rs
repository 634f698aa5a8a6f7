//! What the fuzz targets share: cutting one fuzzer input into the parts a parser takes.
//!
//! Parts are separated by the byte 0xFF, which never occurs in UTF-8, so a part that is text
//! to the fuzzer's mutations stays text, and seed files stay readable.

/// The separator between the parts of one input.
pub const SEPARATOR: u8 = 0xFF;

/// `data` cut into exactly `N` parts at the first `N - 1` separators; missing parts are empty,
/// and the last part keeps any further separators.
pub fn parts<const N: usize>(data: &[u8]) -> [&[u8]; N] {
    let mut out = [&data[..0]; N];
    let mut rest = data;
    for (i, slot) in out.iter_mut().enumerate() {
        if i + 1 == N {
            *slot = rest;
            break;
        }
        match rest.iter().position(|b| *b == SEPARATOR) {
            Some(at) => {
                *slot = &rest[..at];
                rest = &rest[at + 1..];
            }
            None => {
                *slot = rest;
                rest = &rest[rest.len()..];
            }
        }
    }
    out
}

/// A part as text, if it is UTF-8 (the parsers under test take `&str` where HTTP or JSON already
/// made it text).
pub fn text(part: &[u8]) -> Option<&str> {
    std::str::from_utf8(part).ok()
}

/// A part as a signed number of seconds: its first 8 bytes, little-endian (any `i64`, the
/// extremes included).
pub fn seconds(part: &[u8]) -> i64 {
    let mut bytes = [0u8; 8];
    for (slot, byte) in bytes.iter_mut().zip(part) {
        *slot = *byte;
    }
    i64::from_le_bytes(bytes)
}
