//! The privacy policy, terms of use and support pages an app directory asks for: `/privacy`,
//! `/terms`, `/support`, in the browser's language (English, Spanish or Portuguese, like the
//! hosted checkout page; texts in the widget's catalogs).
//!
//! They name the operator (`--operator-name`, `--operator-contact`) and say what is stored and
//! for how long from the settings this server actually runs with (the retention flags, the
//! draft lifetime, the idempotency retention, the cancel window), so the page cannot promise
//! what the server does not do.

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use giftgenius_words::i18n::{Lang, Msg};

use super::checkout_page::browser_locale;
use super::escape;
use crate::config::Config;

/// Everything the pages say that comes from the configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyFacts {
    pub operator_name: String,
    pub operator_contact: String,
    pub retention: crate::checkout::privacy::Retention,
    /// Finished purchase, cancel and checkout requests are kept this long (idempotency keys).
    pub request_hours: u64,
    pub draft_minutes: u64,
    /// A draft is deleted at most this long after it was made: its lifetime, then the
    /// idempotency retention, then up to one pruning pass.
    pub draft_hours: u64,
    pub cancel_minutes: u64,
}

impl PolicyFacts {
    pub fn of(config: &Config) -> PolicyFacts {
        let deleted_within_secs = config
            .draft_ttl_secs
            .saturating_add(config.idempotency_retention_hours.saturating_mul(3600))
            .saturating_add(crate::checkout::privacy::PRUNE_EVERY.as_secs());
        PolicyFacts {
            operator_name: config.operator_name.clone(),
            operator_contact: config.operator_contact.clone(),
            retention: crate::state::retention_of(config),
            request_hours: config.idempotency_retention_hours,
            draft_minutes: config.draft_ttl_secs.div_ceil(60),
            draft_hours: deleted_within_secs.div_ceil(3600),
            cancel_minutes: config.cancel_window_secs / 60,
        }
    }

    /// The texts' parameters, as strings.
    fn args(&self) -> Vec<(&'static str, String)> {
        let r = &self.retention;
        vec![
            ("operator", self.operator_name.clone()),
            ("order_days", r.orders_days.to_string()),
            ("financial_days", r.financial_days.to_string()),
            ("refund_days", r.refunds_days.to_string()),
            ("address_days", r.addresses_days.to_string()),
            ("request_hours", self.request_hours.to_string()),
            ("draft_minutes", self.draft_minutes.to_string()),
            ("draft_hours", self.draft_hours.to_string()),
            ("cancel_minutes", self.cancel_minutes.to_string()),
        ]
    }
}

/// Which page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Page {
    Privacy,
    Terms,
    Support,
}

impl Page {
    const ALL: [Page; 3] = [Page::Privacy, Page::Terms, Page::Support];

    pub const fn path(self) -> &'static str {
        match self {
            Page::Privacy => "/privacy",
            Page::Terms => "/terms",
            Page::Support => "/support",
        }
    }

    const fn title(self) -> Msg {
        match self {
            Page::Privacy => Msg::PolicyPrivacyTitle,
            Page::Terms => Msg::PolicyTermsTitle,
            Page::Support => Msg::PolicySupportTitle,
        }
    }

    /// The page's parts in order: (whether it is a heading, its text).
    fn sections(self) -> &'static [(bool, Msg)] {
        match self {
            Page::Privacy => &[
                (true, Msg::PrivacyStoresHeading),
                (false, Msg::PrivacySuggestions),
                (false, Msg::PrivacyDrafts),
                (false, Msg::PrivacyOrders),
                (false, Msg::PrivacyRefunds),
                (false, Msg::PrivacyAddress),
                (false, Msg::PrivacyRequests),
                (false, Msg::PrivacyLogs),
                (false, Msg::PrivacyPayments),
                (false, Msg::PrivacyAcp),
                (false, Msg::PolicySettingsNote),
                (true, Msg::PrivacyDeleteHeading),
                (false, Msg::PrivacyDeleteHow),
                (false, Msg::PrivacyDeleteOperator),
            ],
            Page::Terms => &[
                (false, Msg::TermsService),
                (false, Msg::TermsConfirm),
                (false, Msg::TermsCancel),
                (false, Msg::TermsLimits),
            ],
            Page::Support => &[(false, Msg::SupportHelp), (false, Msg::SupportOrderId), (false, Msg::SupportReference)],
        }
    }

    /// The page in `lang`, every configured value escaped.
    pub fn render(self, lang: Lang, facts: &PolicyFacts) -> String {
        let owned = facts.args();
        let mut args: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
        args.push(("button", lang.t(Msg::DeleteMyData)));
        let text = |key: Msg| escape(&lang.f(key, &args));
        let mut body = String::new();
        for &(heading, key) in self.sections() {
            let tag = if heading { "h2" } else { "p" };
            body.push_str(&format!("<{tag}>{}</{tag}>", text(key)));
        }
        let nav: Vec<String> = Page::ALL
            .iter()
            .filter(|page| **page != self)
            .map(|page| format!("<a href=\"{}\">{}</a>", page.path(), text(page.title())))
            .collect();
        format!(
            "<!doctype html><html lang=\"{lang}\"><head><meta charset=\"utf-8\"><title>{title}</title>\
             <meta name=\"viewport\" content=\"width=device-width\"></head>\
             <body style=\"font-family:sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;line-height:1.5\">\
             <h1>{title}</h1><p>{operated}</p>{body}<h2>{contact_label}</h2><p>{contact}</p><nav>{nav}</nav></body></html>",
            lang = lang.code(),
            title = text(self.title()),
            operated = text(Msg::PolicyOperatedBy),
            contact_label = text(Msg::PolicyContact),
            contact = contact_html(&facts.operator_contact),
            nav = nav.join(" · "),
        )
    }
}

/// The contact as a link when it is an e-mail address or an http(s) URL, else as text.
fn contact_html(contact: &str) -> String {
    let text = escape(contact);
    let is_email = contact.contains('@') && !contact.contains(char::is_whitespace) && !contact.contains(':');
    let is_url = url::Url::parse(contact).is_ok_and(|u| matches!(u.scheme(), "http" | "https"));
    if is_email {
        format!("<a href=\"mailto:{text}\">{text}</a>")
    } else if is_url {
        format!("<a href=\"{text}\">{text}</a>")
    } else {
        text
    }
}

/// `/privacy`, `/terms`, `/support`.
pub fn router(config: &Config) -> Router {
    let facts = Arc::new(PolicyFacts::of(config));
    Page::ALL
        .into_iter()
        .fold(Router::new(), |router, page| {
            router.route(
                page.path(),
                get(move |State(facts): State<Arc<PolicyFacts>>, headers: HeaderMap| async move {
                    serve(page, &facts, &headers)
                }),
            )
        })
        .with_state(facts)
}

fn serve(page: Page, facts: &PolicyFacts, headers: &HeaderMap) -> Response {
    let lang = Lang::from_locale(&browser_locale(headers));
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CONTENT_SECURITY_POLICY, "default-src 'none'; style-src 'unsafe-inline'"),
            (header::CONTENT_LANGUAGE, lang.code()),
            (header::VARY, "Accept-Language"),
        ],
        page.render(lang, facts),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_contact_becomes_a_link_only_when_it_is_an_address_or_a_web_url() {
        assert_eq!(contact_html("help@gifts.example"), "<a href=\"mailto:help@gifts.example\">help@gifts.example</a>");
        assert_eq!(
            contact_html("https://gifts.example/help"),
            "<a href=\"https://gifts.example/help\">https://gifts.example/help</a>"
        );
        assert_eq!(contact_html("javascript:alert(1)"), "javascript:alert(1)");
        assert_eq!(contact_html("<b>x@y</b> z"), "&lt;b&gt;x@y&lt;/b&gt; z");
    }
}
