//! The contract's words in the person's language: relationships, occasions, error codes, dates.

use giftgenius_types::{ErrorCategory, ErrorCode, Occasion, RelationshipType, ToolName};

use super::{Lang, Msg};

pub fn relationship(lang: Lang, r: RelationshipType) -> &'static str {
    lang.t(match r {
        RelationshipType::Partner => Msg::RelPartner,
        RelationshipType::Parent => Msg::RelParent,
        RelationshipType::Child => Msg::RelChild,
        RelationshipType::Sibling => Msg::RelSibling,
        RelationshipType::Grandparent => Msg::RelGrandparent,
        RelationshipType::Grandchild => Msg::RelGrandchild,
        RelationshipType::Friend => Msg::RelFriend,
        RelationshipType::Colleague => Msg::RelColleague,
        RelationshipType::Boss => Msg::RelBoss,
        RelationshipType::Teacher => Msg::RelTeacher,
        RelationshipType::Neighbor => Msg::RelNeighbor,
        RelationshipType::Other => Msg::RelOther,
    })
}

pub fn occasion(lang: Lang, o: Occasion) -> &'static str {
    lang.t(match o {
        Occasion::Birthday => Msg::OccBirthday,
        Occasion::Anniversary => Msg::OccAnniversary,
        Occasion::Wedding => Msg::OccWedding,
        Occasion::Graduation => Msg::OccGraduation,
        Occasion::Holiday => Msg::OccHoliday,
        Occasion::Valentines => Msg::OccValentines,
        Occasion::MothersDay => Msg::OccMothersDay,
        Occasion::FathersDay => Msg::OccFathersDay,
        Occasion::Housewarming => Msg::OccHousewarming,
        Occasion::BabyShower => Msg::OccBabyShower,
        Occasion::Retirement => Msg::OccRetirement,
        Occasion::ThankYou => Msg::OccThankYou,
        Occasion::GetWell => Msg::OccGetWell,
        Occasion::JustBecause => Msg::OccJustBecause,
    })
}

/// What an error means for the person, by its code. The server's `message` is written for the
/// model, in English; the person reads this instead, in their language.
pub fn error_text(lang: Lang, code: ErrorCode) -> &'static str {
    lang.t(match code {
        ErrorCode::ValidationError => Msg::ErrValidation,
        ErrorCode::IdempotencyKeyReused => Msg::ErrKeyReused,
        ErrorCode::GiftNotFound => Msg::ErrGiftNotFound,
        ErrorCode::DraftNotFound => Msg::ErrDraftNotFound,
        ErrorCode::OrderNotFound => Msg::ErrOrderNotFound,
        ErrorCode::RequestInProgress => Msg::ErrInProgress,
        ErrorCode::UpstreamTimeout => Msg::ErrUpstreamTimeout,
        ErrorCode::UpstreamUnavailable => Msg::ErrUpstreamUnavailable,
        ErrorCode::PaymentProviderUnavailable => Msg::ErrPaymentUnavailable,
        ErrorCode::DailyLimitExceeded => Msg::ErrDailyLimit,
        ErrorCode::HourlyLimitExceeded => Msg::ErrHourlyLimit,
        ErrorCode::GiftUnavailable => Msg::ErrGiftUnavailable,
        ErrorCode::DraftExpired => Msg::ErrDraftExpired,
        ErrorCode::OrderNotCancellable => Msg::ErrNotCancellable,
        ErrorCode::PaymentDeclined => Msg::ErrPaymentDeclined,
        ErrorCode::NoSavedCard => Msg::ErrNoSavedCard,
        ErrorCode::ConfirmationRequired => Msg::ErrConfirmationRequired,
        ErrorCode::ConfirmationExpired => Msg::ErrConfirmationExpired,
        ErrorCode::AuthRequired => Msg::ErrAuthRequired,
        ErrorCode::InternalError => Msg::ErrInternal,
        #[allow(unreachable_patterns)]
        _ => Msg::ErrUnknown,
    })
}

/// The heading of an error: what did not happen, for writes; the layer, otherwise.
pub fn error_heading(lang: Lang, category: ErrorCategory, tool: ToolName) -> &'static str {
    lang.t(match category {
        ErrorCategory::Transient => match tool {
            ToolName::SuggestGifts => Msg::HeadLoadGifts,
            ToolName::GetOrder => Msg::HeadLoadOrder,
            ToolName::ListOrders => Msg::HeadLoadOrders,
            ToolName::PrepareOrder
            | ToolName::ReopenOrderDraft
            | ToolName::RemoveSavedCard
            | ToolName::CheckoutSession => Msg::HeadPrepare,
            ToolName::CommitOrder | ToolName::CompleteCheckout => Msg::HeadCommit,
            ToolName::CreateCheckoutSession => Msg::HeadCheckout,
            ToolName::CancelOrder => Msg::HeadCancel,
            ToolName::DeleteMyData => Msg::HeadDelete,
        },
        ErrorCategory::Validation => Msg::HeadValidation,
        ErrorCategory::Business => Msg::HeadBusiness,
        ErrorCategory::Permission => Msg::HeadPermission,
        ErrorCategory::Other => Msg::HeadOther,
    })
}

/// "about 30 seconds", "unos 5 minutos", "cerca de 3 horas".
pub fn wait_phrase(lang: Lang, ms: u64) -> String {
    let seconds = ms.div_ceil(1000).max(1);
    let (key, count) = match seconds {
        1 => (Msg::WaitSecond, 1),
        0..90 => (Msg::WaitSeconds, seconds),
        90..5400 => (Msg::WaitMinutes, seconds.div_ceil(60)),
        _ => (Msg::WaitHours, seconds.div_ceil(3600)),
    };
    lang.f(key, &[("count", &count.to_string())])
}

/// The date of an RFC 3339 timestamp ("2026-12-01T10:00:00Z") as the person writes dates:
/// "Dec 1, 2026", "1 dic 2026", "1 de dez. de 2026". Anything unreadable is shown as it is.
pub fn date(lang: Lang, timestamp: &str) -> String {
    let parts = || -> Option<(&str, usize, u32)> {
        let year = timestamp.get(0..4).filter(|y| y.bytes().all(|b| b.is_ascii_digit()))?;
        let month: usize = timestamp.get(5..7)?.parse().ok()?;
        let day: u32 = timestamp.get(8..10)?.parse().ok()?;
        (timestamp.as_bytes().get(4) == Some(&b'-') && (1..=12).contains(&month) && (1..=31).contains(&day))
            .then_some((year, month, day))
    };
    match parts() {
        Some((year, month, day)) => {
            let month = lang.t(Msg::Months).split(' ').nth(month - 1).unwrap_or("");
            lang.f(Msg::DateFormat, &[("year", year), ("month", month), ("day", &day.to_string())])
        }
        None => timestamp.to_string(),
    }
}

/// A calendar day (`YYYY-MM-DD`) with its weekday, as the person writes it: "Thu, Dec 17",
/// "jue 17 dic", "qui., 17 de dez.". Anything unreadable is shown as it is.
pub fn day(lang: Lang, day: &str) -> String {
    let Some((year, month, date)) = giftgenius_types::orders::calendar_date(day) else { return day.to_string() };
    // Sakamoto's method: 0 is Sunday.
    const OFFSETS: [i32; 12] = [0, 3, 2, 5, 0, 3, 5, 1, 4, 6, 2, 4];
    let y = if month < 3 { year - 1 } else { year };
    let weekday = (y + y / 4 - y / 100 + y / 400 + OFFSETS[month as usize - 1] + date as i32).rem_euclid(7) as usize;
    let weekday = lang.t(Msg::Weekdays).split(' ').nth(weekday).unwrap_or("");
    let month = lang.t(Msg::Months).split(' ').nth(month as usize - 1).unwrap_or("");
    lang.f(Msg::DayFormat, &[("weekday", weekday), ("month", month), ("day", &date.to_string())])
}

/// Two days as a span ("Thu, Dec 17 – Sat, Dec 19"), or one when they are the same.
pub fn days(lang: Lang, first: &str, last: &str) -> String {
    if first == last { day(lang, first) } else { format!("{} – {}", day(lang, first), day(lang, last)) }
}

/// A saved card as it may be shown: "Visa •••• 4242" (brand names are the networks' own, the
/// same in every language; an unknown brand as Stripe spells it).
pub fn card(brand: &str, last4: &str) -> String {
    let name = match brand {
        "visa" => "Visa",
        "mastercard" => "Mastercard",
        "amex" => "American Express",
        "discover" => "Discover",
        "diners" => "Diners Club",
        "jcb" => "JCB",
        "unionpay" => "UnionPay",
        other => other,
    };
    format!("{name} •••• {last4}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn months_name_twelve_months_in_every_language() {
        for lang in Lang::ALL {
            assert_eq!(lang.t(Msg::Months).split(' ').count(), 12, "{lang:?}");
        }
    }

    #[test]
    fn dates_read_as_each_language_writes_them() {
        assert_eq!(date(Lang::En, "2026-12-01T10:00:00Z"), "Dec 1, 2026");
        assert_eq!(date(Lang::Es, "2026-09-07T10:00:00Z"), "7 sept 2026");
        assert_eq!(date(Lang::Pt, "2026-03-15T23:59:59.123Z"), "15 de mar. de 2026");
        assert_eq!(date(Lang::En, "yesterday"), "yesterday");
        assert_eq!(date(Lang::En, "2026-13-01"), "2026-13-01");
        assert_eq!(date(Lang::En, ""), "");
    }

    #[test]
    fn days_carry_their_weekday_in_every_language() {
        assert_eq!(day(Lang::En, "2026-12-17"), "Thu, Dec 17");
        assert_eq!(day(Lang::Es, "2026-12-17"), "jue 17 dic");
        assert_eq!(day(Lang::Pt, "2026-12-17"), "qui., 17 de dez.");
        // Across a year and a leap day: 2028-02-29 is a Tuesday, 2027-01-01 a Friday.
        assert_eq!(day(Lang::En, "2028-02-29"), "Tue, Feb 29");
        assert_eq!(day(Lang::En, "2027-01-01"), "Fri, Jan 1");
        assert_eq!(days(Lang::En, "2026-12-17", "2026-12-19"), "Thu, Dec 17 – Sat, Dec 19");
        assert_eq!(days(Lang::En, "2026-12-17", "2026-12-17"), "Thu, Dec 17");
        assert_eq!(day(Lang::En, "2026-02-30"), "2026-02-30");
        for lang in Lang::ALL {
            assert_eq!(lang.t(Msg::Weekdays).split(' ').count(), 7, "{lang:?}");
        }
    }

    #[test]
    fn waits_read_naturally() {
        assert_eq!(wait_phrase(Lang::En, 1), "about 1 second");
        assert_eq!(wait_phrase(Lang::En, 30_000), "about 30 seconds");
        assert_eq!(wait_phrase(Lang::Es, 300_000), "unos 5 minutos");
        assert_eq!(wait_phrase(Lang::Pt, 3 * 3_600_000), "cerca de 3 horas");
    }

    #[test]
    fn every_error_code_has_its_own_text() {
        for code in ErrorCode::ALL {
            assert_ne!(error_text(Lang::En, *code), Lang::En.t(Msg::ErrUnknown), "{code:?}");
        }
    }
}
