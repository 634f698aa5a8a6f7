//! How the server decides who a caller is, chosen once at startup from `--auth-issuer`,
//! `--auth-audience`, `--public-url`, `--single-user` and the address the listener is bound to;
//! and the startup line that says so.
//!
//! | issuer | bound address and public URL | `--single-user` | mode |
//! |--------|------------------------------|-----------------|------|
//! | given  | any                          | no              | `Verified` (audience defaults to `{public_url}/mcp`) |
//! | none   | both loopback                | no              | `Local` |
//! | none   | any                          | yes             | `SingleUser` (loud warning) |
//! | none   | either not loopback          | no              | refuse to start |
//! | given  | any                          | yes             | refuse to start (contradictory) |
//!
//! The bound address is checked, not only the public URL: `--host 0.0.0.0` listens on every
//! interface whatever URL it is reached at, so local mode there would let the network act as
//! any local user. Local mode also refuses, per request, any peer that is not loopback
//! (`http::local_mode`).

use std::fmt;
use std::net::IpAddr;

use url::Url;

/// An authorization server's issuer identifier: the exact string (token `iss` claims and RFC 8414
/// metadata are compared to it byte for byte) and its parsed URL (for discovery).
///
/// Why not just a `Url`: `Url` normalizes `https://as.example` to `https://as.example/`, and
/// issuers differ on that trailing slash (oidc-provider: none; Auth0: one), so the string the
/// operator configured is the identifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issuer {
    id: String,
    url: Url,
}

impl Issuer {
    /// Parses an issuer identifier: `https` (or `http` on a loopback host, for tests and the
    /// local preview), no query, no fragment, no credentials.
    pub fn parse(id: &str) -> Result<Self, ModeError> {
        let bad = |why: &str| ModeError::BadIssuer(format!("{id}: {why}"));
        let url = Url::parse(id).map_err(|e| bad(&e.to_string()))?;
        if !url.username().is_empty() || url.password().is_some() {
            return Err(bad("an issuer URL has no credentials"));
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(bad("an issuer URL has no query or fragment (RFC 8414 §2)"));
        }
        if !fetch_allowed(&url) {
            return Err(bad("use https (plain http only for a loopback issuer)"));
        }
        Ok(Issuer { id: id.to_string(), url })
    }

    /// The exact identifier, as tokens' `iss` must carry it.
    pub fn as_str(&self) -> &str {
        &self.id
    }

    pub fn url(&self) -> &Url {
        &self.url
    }
}

impl fmt::Display for Issuer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.id)
    }
}

/// Who a caller is, decided once at startup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthMode {
    /// Identity from JWT access tokens of `issuer` for `audience`.
    Verified { issuer: Issuer, audience: String },
    /// No issuer, loopback public URL: the developer's own machine. A call may name its user
    /// with `_meta["openai/subject"]`; otherwise it is the one local user.
    Local,
    /// No issuer, `--single-user`: everyone who reaches the server is one and the same user.
    SingleUser,
}

/// Why the server refuses to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModeError {
    /// A public URL others can reach, and nobody to tell callers apart.
    NonLoopbackWithoutIssuer {
        public_url: String,
    },
    /// A listener others can reach (`--host 0.0.0.0`, a LAN address), and nobody to tell
    /// callers apart.
    NonLoopbackBindWithoutIssuer {
        bind: IpAddr,
    },
    IssuerAndSingleUser,
    AudienceWithoutIssuer,
    BadIssuer(String),
    BadPublicUrl(String),
}

impl fmt::Display for ModeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModeError::NonLoopbackWithoutIssuer { public_url } => write!(
                f,
                "the public URL {public_url} is not loopback and no --auth-issuer is set, so anyone who reaches \
                 the server could act as anyone. Give --auth-issuer URL (your OAuth authorization server), or \
                 --single-user for a demo where everyone is one and the same user"
            ),
            ModeError::NonLoopbackBindWithoutIssuer { bind } => write!(
                f,
                "--host {bind} listens on a non-loopback address and no --auth-issuer is set, so anyone on the \
                 network could act as any local user. Give --auth-issuer URL (your OAuth authorization server), or \
                 --single-user for a demo where everyone is one and the same user, or listen on --host 127.0.0.1"
            ),
            ModeError::IssuerAndSingleUser => {
                write!(f, "--single-user and --auth-issuer contradict each other: give one of them")
            }
            ModeError::AudienceWithoutIssuer => write!(f, "--auth-audience needs --auth-issuer"),
            ModeError::BadIssuer(why) => write!(f, "invalid --auth-issuer {why}"),
            ModeError::BadPublicUrl(why) => write!(f, "invalid --public-url {why}"),
        }
    }
}

impl std::error::Error for ModeError {}

impl AuthMode {
    /// Applies the rules in the module documentation. `issuer` is the raw `--auth-issuer` text
    /// (see [`Issuer`] for why it is not a `Url`); `bind` the address the listener is bound to.
    pub fn decide(
        issuer: Option<&str>,
        audience: Option<String>,
        public_url: &str,
        bind: IpAddr,
        single_user: bool,
    ) -> Result<AuthMode, ModeError> {
        let public = Url::parse(public_url).map_err(|e| ModeError::BadPublicUrl(format!("{public_url}: {e}")))?;
        match (issuer, single_user) {
            (Some(_), true) => Err(ModeError::IssuerAndSingleUser),
            (Some(issuer), false) => {
                let issuer = Issuer::parse(issuer)?;
                let audience = audience.filter(|a| !a.is_empty()).unwrap_or_else(|| resource_url(public_url));
                Ok(AuthMode::Verified { issuer, audience })
            }
            (None, _) if audience.is_some() => Err(ModeError::AudienceWithoutIssuer),
            (None, true) => Ok(AuthMode::SingleUser),
            (None, false) if !is_loopback_ip(bind) => Err(ModeError::NonLoopbackBindWithoutIssuer { bind }),
            (None, false) if is_loopback(&public) => Ok(AuthMode::Local),
            (None, false) => {
                Err(ModeError::NonLoopbackWithoutIssuer { public_url: public_url.trim_end_matches('/').to_string() })
            }
        }
    }

    /// Whether the startup line is a warning (single-user mode).
    pub fn is_loud(&self) -> bool {
        matches!(self, AuthMode::SingleUser)
    }

    /// The line to log at startup (at `warn` when [`AuthMode::is_loud`], else `info`).
    pub fn startup_line(&self, public_url: &str) -> String {
        let public_url = public_url.trim_end_matches('/');
        match self {
            AuthMode::Verified { issuer, audience } => format!(
                "auth: verified mode: callers are the accounts of access tokens issued by {issuer} for {audience}; \
                 protected resource metadata at {}",
                crate::auth::metadata::resource_metadata_url(&resource_url(public_url))
            ),
            AuthMode::Local => format!(
                "auth: local mode: no --auth-issuer and {public_url} is loopback, so every caller is the one local \
                 user (a call may name another with _meta[\"openai/subject\"]); give --auth-issuer before exposing it"
            ),
            AuthMode::SingleUser => format!(
                "auth: SINGLE-USER MODE: everyone who reaches {public_url} acts as ONE AND THE SAME USER and sees \
                 and buys as that user. For a quick demo with sandbox payments only; give --auth-issuer for real \
                 accounts"
            ),
        }
    }
}

/// The resource this server is: the public `/mcp` URL (RFC 8707 audience, RFC 9728 `resource`).
pub fn resource_url(public_url: &str) -> String {
    format!("{}/mcp", public_url.trim_end_matches('/'))
}

/// `localhost`, `127.0.0.0/8` or `::1`.
pub fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
        None => false,
    }
}

/// `127.0.0.0/8` or `::1`, also as an IPv4-mapped IPv6 address (a dual-stack socket's peer).
/// `0.0.0.0` and `::` are not: they listen on every interface.
pub fn is_loopback_ip(address: IpAddr) -> bool {
    address.to_canonical().is_loopback()
}

/// Whether we fetch from this URL: `https`, or `http` to a loopback host.
pub fn fetch_allowed(url: &Url) -> bool {
    url.scheme() == "https" || (url.scheme() == "http" && is_loopback(url))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOOPBACK: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

    fn decide(issuer: Option<&str>, audience: Option<&str>, public: &str, single: bool) -> Result<AuthMode, ModeError> {
        AuthMode::decide(issuer, audience.map(str::to_string), public, LOOPBACK, single)
    }

    #[test]
    fn local_mode_needs_a_loopback_bind_whatever_the_public_url_says() {
        for bind in ["0.0.0.0", "::", "192.168.1.5", "fe80::1", "::ffff:10.0.0.1"] {
            let bind: IpAddr = bind.parse().unwrap();
            let err = AuthMode::decide(None, None, "http://127.0.0.1:8000", bind, false).unwrap_err();
            assert_eq!(err, ModeError::NonLoopbackBindWithoutIssuer { bind });
            let message = err.to_string();
            assert!(message.contains("--auth-issuer") && message.contains("--single-user"), "{message}");
            assert_eq!(AuthMode::decide(None, None, "http://127.0.0.1:8000", bind, true), Ok(AuthMode::SingleUser));
            assert!(matches!(
                AuthMode::decide(Some("https://as.example"), None, "http://127.0.0.1:8000", bind, false),
                Ok(AuthMode::Verified { .. })
            ));
        }
        for bind in ["127.0.0.1", "127.3.2.1", "::1", "::ffff:127.0.0.1"] {
            let bind: IpAddr = bind.parse().unwrap();
            assert_eq!(AuthMode::decide(None, None, "http://localhost:8000", bind, false), Ok(AuthMode::Local));
        }
    }

    #[test]
    fn an_issuer_means_verified_with_the_mcp_url_as_default_audience() {
        let mode = decide(Some("https://as.example"), None, "https://gifts.example/", false).unwrap();
        let AuthMode::Verified { issuer, audience } = mode else { panic!("{mode:?}") };
        assert_eq!(issuer.as_str(), "https://as.example", "the configured string, not the normalized URL");
        assert_eq!(audience, "https://gifts.example/mcp");
        let mode = decide(Some("https://as.example/"), Some("api://gifts"), "http://127.0.0.1:8000", false).unwrap();
        assert_eq!(
            mode,
            AuthMode::Verified {
                issuer: Issuer::parse("https://as.example/").unwrap(),
                audience: "api://gifts".into()
            }
        );
    }

    #[test]
    fn no_issuer_on_loopback_is_local() {
        for public in ["http://127.0.0.1:8000", "http://localhost:8000/", "http://[::1]:8000", "http://127.1.2.3"] {
            assert_eq!(decide(None, None, public, false), Ok(AuthMode::Local), "{public}");
        }
    }

    #[test]
    fn no_issuer_elsewhere_refuses_to_start_unless_single_user() {
        for public in
            ["https://gifts.example", "http://192.168.1.5:8000", "http://0.0.0.0:8000", "http://localhost.evil"]
        {
            let err = decide(None, None, public, false).unwrap_err();
            assert!(matches!(err, ModeError::NonLoopbackWithoutIssuer { .. }), "{public}");
            assert!(err.to_string().contains("--single-user"));
            assert_eq!(decide(None, None, public, true), Ok(AuthMode::SingleUser), "{public}");
        }
        assert_eq!(decide(None, None, "http://127.0.0.1:8000", true), Ok(AuthMode::SingleUser));
    }

    #[test]
    fn contradictions_and_bad_urls_refuse_to_start() {
        assert_eq!(
            decide(Some("https://as.example"), None, "https://g.example", true),
            Err(ModeError::IssuerAndSingleUser)
        );
        assert_eq!(decide(None, Some("x"), "http://127.0.0.1", false), Err(ModeError::AudienceWithoutIssuer));
        for issuer in
            ["http://as.example", "https://as.example?x=1", "https://as.example#f", "https://u:p@as.example", "as"]
        {
            assert!(
                matches!(decide(Some(issuer), None, "https://g.example", false), Err(ModeError::BadIssuer(_))),
                "{issuer}"
            );
        }
        assert!(decide(Some("http://127.0.0.1:4444"), None, "https://g.example", false).is_ok());
        assert!(matches!(decide(None, None, "not a url", false), Err(ModeError::BadPublicUrl(_))));
    }

    #[test]
    fn startup_lines_say_what_each_mode_means() {
        let verified = decide(Some("https://as.example"), None, "https://g.example", false).unwrap();
        let line = verified.startup_line("https://g.example");
        assert!(line.contains("https://as.example") && line.contains("https://g.example/mcp"), "{line}");
        assert!(line.contains("https://g.example/.well-known/oauth-protected-resource/mcp"), "{line}");
        assert!(AuthMode::Local.startup_line("http://127.0.0.1:8000").contains("local mode"));
        assert!(AuthMode::SingleUser.startup_line("https://g.example").contains("ONE AND THE SAME USER"));
        assert!(AuthMode::SingleUser.is_loud() && !AuthMode::Local.is_loud() && !verified.is_loud());
    }
}
