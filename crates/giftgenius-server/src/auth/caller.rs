//! Who is calling: the [`Caller`] the auth middleware puts into the request's extensions, and the
//! [`Principal`] of a verified access token. Tool handlers read it from
//! `context.extensions.get::<axum::http::request::Parts>()` with [`Caller::from_parts`] and bind
//! drafts, keys, orders and limits to [`Caller::subject`].

use std::collections::BTreeSet;

use super::AuthMode;

/// The account behind a verified access token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// `"{iss}#{sub}"`: an issuer identifier has no fragment (RFC 8414 §2), so the first `#`
    /// separates the two and no two (issuer, subject) pairs share a string.
    pub subject: String,
    /// Scopes granted to the token (`scope`, space-separated, or `scp`).
    pub scopes: BTreeSet<String>,
    /// The OAuth client the token was issued to (`client_id`, else `azp`), for logs and limits.
    pub client_id: Option<String>,
    /// What the person signed in as (the token's `email`, else `name`, else
    /// `preferred_username`), to show them whose account a page acts for.
    pub account_name: Option<String>,
}

/// The longest account name shown (an email address is at most 254 characters).
const MAX_SHOWN_NAME: usize = 254;

/// `name` as it may be shown back: trimmed, 1 to [`MAX_SHOWN_NAME`] characters, no control
/// characters; `None` otherwise (it is escaped wherever it is shown).
pub fn shown_name(name: &str) -> Option<String> {
    let name = name.trim();
    let fits = !name.is_empty() && name.chars().count() <= MAX_SHOWN_NAME && !name.contains(char::is_control);
    fits.then(|| name.to_string())
}

impl Principal {
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.contains(scope)
    }
}

/// Subject of the one local user (local mode, no `_meta["openai/subject"]`).
pub const LOCAL_SUBJECT: &str = "local";
/// Subject of everyone in single-user mode.
pub const SINGLE_USER_SUBJECT: &str = "single-user";
/// Longest `_meta["openai/subject"]` accepted as a local-mode user name.
const MAX_LOCAL_HINT: usize = 200;

/// What the middleware established about one HTTP request to `/mcp`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// Verified mode, no `Authorization` header: may use the tools that work signed out.
    SignedOut,
    /// Verified mode, a valid access token.
    Verified(Principal),
    /// Local mode (loopback, no issuer): the developer's own machine.
    Local,
    /// Single-user mode (`--single-user`): everyone who reaches the server is one user.
    SingleUser,
}

impl Caller {
    /// The caller of a tool call in `mode`, from the HTTP request parts rmcp puts into
    /// `RequestContext::extensions`; `None`: the call must be refused.
    ///
    /// - Parts with the middleware's `Caller` → that caller.
    /// - Parts without a `Caller` (the middleware is not mounted) → [`Caller::SignedOut`]:
    ///   fail closed rather than trust anything.
    /// - No parts at all (stdio transport) → the mode's own user in local and single-user
    ///   modes, and `None` in verified mode: no HTTP request means no access token was checked,
    ///   and a call nobody authenticated never runs as the local user (or anyone else).
    pub fn from_parts(parts: Option<&axum::http::request::Parts>, mode: &AuthMode) -> Option<Caller> {
        match (parts, mode) {
            (Some(parts), _) => Some(parts.extensions.get::<Caller>().cloned().unwrap_or(Caller::SignedOut)),
            (None, AuthMode::Local) => Some(Caller::Local),
            (None, AuthMode::SingleUser) => Some(Caller::SingleUser),
            (None, AuthMode::Verified { .. }) => None,
        }
    }

    /// The account subject that drafts, idempotency keys, orders, limits and confirmation tokens
    /// are bound to; `None` when signed out.
    ///
    /// `local_hint` is `_meta["openai/subject"]` of the call. It names the user **only in local
    /// mode** (tests, benchmarks and the preview act as many users with it); in every other mode
    /// it is ignored here (keep it for log correlation only, hashed).
    pub fn subject(&self, local_hint: Option<&str>) -> Option<String> {
        match self {
            Caller::SignedOut => None,
            Caller::Verified(principal) => Some(principal.subject.clone()),
            Caller::Local => Some(
                match local_hint.filter(|h| !h.is_empty() && h.len() <= MAX_LOCAL_HINT && !h.contains(char::is_control))
                {
                    Some(hint) => format!("{LOCAL_SUBJECT}:{hint}"),
                    None => LOCAL_SUBJECT.to_string(),
                },
            ),
            Caller::SingleUser => Some(SINGLE_USER_SUBJECT.to_string()),
        }
    }

    /// What to show a person as the account they act for: the name or email their verified token
    /// carried (else the token's subject at its issuer); the local user's name (`local_hint`)
    /// in local mode. `None` when signed out.
    pub fn account_name(&self, local_hint: Option<&str>) -> Option<String> {
        match self {
            Caller::SignedOut => None,
            Caller::Verified(principal) => principal.account_name.clone().or_else(|| {
                let sub = principal.subject.split_once('#').map_or(principal.subject.as_str(), |(_, sub)| sub);
                shown_name(sub)
            }),
            Caller::Local | Caller::SingleUser => {
                let subject = self.subject(local_hint)?;
                let user = subject.strip_prefix(LOCAL_SUBJECT).and_then(|rest| rest.strip_prefix(':'));
                shown_name(user.unwrap_or(&subject))
            }
        }
    }

    /// Whether the caller may use a tool that needs `scope`. Local and single-user callers hold
    /// every scope; a signed-out caller none.
    pub fn has_scope(&self, scope: &str) -> bool {
        match self {
            Caller::SignedOut => false,
            Caller::Verified(principal) => principal.has_scope(scope),
            Caller::Local | Caller::SingleUser => true,
        }
    }

    pub fn is_signed_out(&self) -> bool {
        matches!(self, Caller::SignedOut)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verified(scopes: &[&str]) -> Caller {
        Caller::Verified(Principal {
            subject: "https://as.example#alice".into(),
            scopes: scopes.iter().map(|s| s.to_string()).collect(),
            client_id: None,
            account_name: None,
        })
    }

    #[test]
    fn the_account_name_is_what_the_person_signed_in_as() {
        let named = |name: Option<&str>| {
            Caller::Verified(Principal {
                subject: "https://as.example#alice-42".into(),
                scopes: Default::default(),
                client_id: None,
                account_name: name.and_then(shown_name),
            })
        };
        assert_eq!(named(Some(" ana@example.com ")).account_name(None).as_deref(), Some("ana@example.com"));
        // No name in the token: the subject at its issuer, never the issuer.
        assert_eq!(named(None).account_name(None).as_deref(), Some("alice-42"));
        assert_eq!(named(Some("a\u{7}b")).account_name(None).as_deref(), Some("alice-42"));
        assert_eq!(named(Some(&"x".repeat(255))).account_name(None).as_deref(), Some("alice-42"));
        assert_eq!(Caller::Local.account_name(Some("bob")).as_deref(), Some("bob"));
        assert_eq!(Caller::Local.account_name(None).as_deref(), Some("local"));
        assert_eq!(Caller::SingleUser.account_name(Some("bob")).as_deref(), Some("single-user"));
        assert_eq!(Caller::SignedOut.account_name(Some("bob")), None);
    }

    #[test]
    fn the_hint_names_the_user_only_in_local_mode() {
        assert_eq!(Caller::Local.subject(Some("bob")).as_deref(), Some("local:bob"));
        assert_eq!(Caller::Local.subject(None).as_deref(), Some("local"));
        assert_eq!(Caller::Local.subject(Some("")).as_deref(), Some("local"));
        assert_eq!(Caller::Local.subject(Some(&"x".repeat(201))).as_deref(), Some("local"));
        assert_eq!(Caller::SingleUser.subject(Some("bob")).as_deref(), Some("single-user"));
        assert_eq!(verified(&[]).subject(Some("bob")).as_deref(), Some("https://as.example#alice"));
        assert_eq!(Caller::SignedOut.subject(Some("bob")), None);
    }

    #[test]
    fn scopes() {
        assert!(verified(&["orders:read"]).has_scope("orders:read"));
        assert!(!verified(&["orders:read"]).has_scope("orders:write"));
        assert!(!Caller::SignedOut.has_scope("orders:read"));
        assert!(Caller::Local.has_scope("orders:write"));
    }

    fn verified_mode() -> AuthMode {
        AuthMode::Verified {
            issuer: super::super::mode::Issuer::parse("https://as.example").unwrap(),
            audience: "https://gifts.example/mcp".into(),
        }
    }

    #[test]
    fn a_request_the_middleware_never_saw_is_signed_out() {
        let (parts, ()) = axum::http::Request::new(()).into_parts();
        for mode in [AuthMode::Local, AuthMode::SingleUser, verified_mode()] {
            assert_eq!(Caller::from_parts(Some(&parts), &mode), Some(Caller::SignedOut), "{mode:?}");
        }
        let (mut parts, ()) = axum::http::Request::new(()).into_parts();
        parts.extensions.insert(verified(&["orders:read"]));
        assert_eq!(Caller::from_parts(Some(&parts), &verified_mode()), Some(verified(&["orders:read"])));
    }

    #[test]
    fn a_call_without_request_parts_is_refused_in_verified_mode_never_run_as_the_local_user() {
        assert_eq!(Caller::from_parts(None, &verified_mode()), None);
        assert_eq!(Caller::from_parts(None, &AuthMode::Local), Some(Caller::Local), "stdio runs in local mode");
        assert_eq!(Caller::from_parts(None, &AuthMode::SingleUser), Some(Caller::SingleUser));
    }
}
