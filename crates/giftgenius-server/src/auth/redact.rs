//! Log hygiene: removes secrets from any string before it becomes a log field. Bearer tokens
//! (`Bearer …`), anything shaped like a JWT (`eyJ….….…`) and confirmation tokens (`ct_…`) are
//! replaced; everything else is kept as is.
//!
//! ```
//! use giftgenius_server::auth::redact::{Redacted, redact};
//! assert_eq!(redact("Authorization: Bearer abc.def"), "Authorization: Bearer [redacted]");
//! tracing::debug!(request = %Redacted("…"), "received");
//! ```

use std::borrow::Cow;
use std::fmt;

const REDACTED: &str = "[redacted]";
/// Shortest run after `ct_` taken for a confirmation token (ours carry 64 hex digits); shorter
/// runs are ordinary words like `ct_id`.
const MIN_CT_LEN: usize = 16;

fn is_token68(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/')
}

fn is_b64url(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn run(bytes: &[u8], from: usize, class: fn(u8) -> bool) -> usize {
    bytes[from..].iter().take_while(|b| class(**b)).count()
}

/// If a JWT starts at `i`, where it ends.
fn jwt_end(bytes: &[u8], i: usize) -> Option<usize> {
    if !bytes[i..].starts_with(b"eyJ") {
        return None;
    }
    let mut end = i;
    for segment in 0..3 {
        let n = run(bytes, end, is_b64url);
        if n == 0 && segment < 2 {
            return None;
        }
        end += n;
        if segment < 2 {
            if bytes.get(end) != Some(&b'.') {
                return None;
            }
            end += 1;
        }
    }
    Some(end)
}

/// `s` with every bearer token, JWT and confirmation token replaced by `[redacted]`.
pub fn redact(s: &str) -> Cow<'_, str> {
    let bytes = s.as_bytes();
    let mut out = String::new();
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        let boundary = i == 0 || !is_word(bytes[i - 1]);
        let mut replace: Option<(usize, usize, &str)> = None; // (keep up to, skip to, prefix)

        if boundary && bytes.len() - i > 6 && bytes[i..i + 6].eq_ignore_ascii_case(b"bearer") {
            let spaces = bytes[i + 6..].iter().take_while(|b| **b == b' ' || **b == b'\t').count();
            let start = i + 6 + spaces;
            let n = run(bytes, start, is_token68);
            if spaces > 0 && n > 0 {
                let end = start + n + bytes[start + n..].iter().take_while(|b| **b == b'=').count();
                replace = Some((start, end, ""));
            }
        } else if boundary && bytes[i..].starts_with(b"ct_") {
            let n = run(bytes, i + 3, is_b64url);
            if n >= MIN_CT_LEN {
                replace = Some((i, i + 3 + n, "ct_"));
            }
        } else if let Some(end) = jwt_end(bytes, i) {
            replace = Some((i, end, ""));
        }

        match replace {
            Some((keep, end, prefix)) => {
                out.push_str(&s[copied..keep]);
                out.push_str(prefix);
                out.push_str(REDACTED);
                copied = end;
                i = end;
            }
            None => i += 1,
        }
    }
    if copied == 0 {
        return Cow::Borrowed(s);
    }
    out.push_str(&s[copied..]);
    Cow::Owned(out)
}

/// `Display`s a string redacted: `tracing::info!(args = %Redacted(&text))`.
pub struct Redacted<'a>(pub &'a str);

impl fmt::Display for Redacted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&redact(self.0))
    }
}

impl fmt::Debug for Redacted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*redact(self.0), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const JWT: &str = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhIn0.c2lnbmF0dXJl";
    const CT: &str = "ct_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn bearer_tokens_are_removed() {
        assert_eq!(redact("Authorization: Bearer abc.DEF-_~+/=="), "Authorization: Bearer [redacted]");
        assert_eq!(redact("authorization: bearer\topaque123 next"), "authorization: bearer\t[redacted] next");
        assert_eq!(redact(r#"{"authorization":"Bearer x"}"#), r#"{"authorization":"Bearer [redacted]"}"#);
        assert_eq!(redact("BEARER  t1, Bearer t2"), "BEARER  [redacted], Bearer [redacted]");
    }

    #[test]
    fn jwts_anywhere_are_removed() {
        assert_eq!(redact(&format!("token={JWT}&x=1")), "token=[redacted]&x=1");
        assert_eq!(redact(&format!("Bearer%20{JWT}")), "Bearer%20[redacted]");
        assert_eq!(redact(&format!(r#"{{"access_token":"{JWT}"}}"#)), r#"{"access_token":"[redacted]"}"#);
        assert_eq!(redact("eyJhbGciOi no jwt"), "eyJhbGciOi no jwt");
    }

    #[test]
    fn confirmation_tokens_are_removed() {
        assert_eq!(redact(&format!(r#"{{"confirmation_token":"{CT}"}}"#)), r#"{"confirmation_token":"ct_[redacted]"}"#);
        assert_eq!(redact(&format!("token {CT}.")), "token ct_[redacted].");
    }

    #[test]
    fn ordinary_text_is_untouched_and_not_copied() {
        for text in ["product_ct_id", "ct_id", "Bearer", "bearers", "Bearer:", "beareR:", "caf\u{e9} \u{1f381} ok", ""]
        {
            assert!(matches!(redact(text), Cow::Borrowed(t) if t == text), "{text}");
        }
        assert_eq!(redact("caf\u{e9} Bearer x \u{1f381}"), "caf\u{e9} Bearer [redacted] \u{1f381}");
        // Over-redacting ordinary prose beats leaking a short token.
        assert_eq!(redact("a bearer of news"), "a bearer [redacted] news");
        assert_eq!(format!("{}", Redacted(CT)), "ct_[redacted]");
        assert_eq!(format!("{:?}", Redacted("Bearer x")), "\"Bearer [redacted]\"");
    }
}
