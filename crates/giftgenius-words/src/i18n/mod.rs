//! Everything the person reads in the widget, in English, Spanish and Portuguese.
//!
//! One catalog per language (`en.rs`, `es.rs`, `pt.rs`): a list of `(Msg, text)` pairs, so a
//! translator edits one flat file (the server-rendered policy pages' texts in a second list,
//! `PAGES`, left out of the wasm). Keys are the [`Msg`] enum (a typo does not compile); a
//! missing entry falls back to English at run time, and the test
//! `every_language_has_every_key_once` fails the test command until it is translated.
//! Texts name their parameters `{like_this}`; [`fill`] puts the values in.
//!
//! What the model reads (the tool result's `content`, `error.message`) stays English and is
//! written by the server, not here.

mod en;
mod es;
mod pt;
pub mod words;

/// A language the widget speaks. Anything else is English.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Lang {
    #[default]
    En,
    Es,
    Pt,
}

impl Lang {
    pub const ALL: [Lang; 3] = [Lang::En, Lang::Es, Lang::Pt];

    /// The language of a BCP 47 tag ("es-MX", "pt_BR", "PT"); English when not one of ours.
    pub fn from_locale(tag: &str) -> Lang {
        let primary = tag.trim().split(['-', '_']).next().unwrap_or("");
        if primary.eq_ignore_ascii_case("es") {
            Lang::Es
        } else if primary.eq_ignore_ascii_case("pt") {
            Lang::Pt
        } else {
            Lang::En
        }
    }

    pub const fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Es => "es",
            Lang::Pt => "pt",
        }
    }

    /// The language's texts: the widget's, then the server-rendered pages' (`PAGES`, empty in
    /// the wasm build).
    fn catalog(self) -> impl Iterator<Item = &'static (Msg, &'static str)> {
        let (messages, pages) = match self {
            Lang::En => (en::MESSAGES, en::PAGES),
            Lang::Es => (es::MESSAGES, es::PAGES),
            Lang::Pt => (pt::MESSAGES, pt::PAGES),
        };
        messages.iter().chain(pages)
    }

    /// The text of `key` in this language (English where a translation is missing).
    pub fn t(self, key: Msg) -> &'static str {
        lookup(self.catalog(), key).or_else(|| lookup(Lang::En.catalog(), key)).unwrap_or("")
    }

    /// The text of `key` with its `{name}` parameters filled in.
    pub fn f(self, key: Msg, args: &[(&str, &str)]) -> String {
        fill(self.t(key), args)
    }
}

fn lookup(mut catalog: impl Iterator<Item = &'static (Msg, &'static str)>, key: Msg) -> Option<&'static str> {
    catalog.find(|(k, _)| *k == key).map(|(_, text)| *text)
}

/// Replaces each `{name}` of `template` with its value; unknown names stay as they are.
pub fn fill(template: &str, args: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + 16);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('}').and_then(|close| {
            let name = &after[..close];
            args.iter().find(|(n, _)| *n == name).map(|(_, v)| (close, *v))
        }) {
            Some((close, value)) => {
                out.push_str(value);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

macro_rules! keys {
    ($($key:ident),* $(,)?) => {
        /// One message of the catalogs.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Msg { $($key),* }

        impl Msg {
            /// Every key, for the completeness test.
            pub const ALL: &'static [Msg] = &[$(Msg::$key),*];
        }
    };
}

keys! {
    // Chrome and display modes
    CompareAll, ExitFullScreen, ScrollHint, IdeasListLabel,
    // Loading and one-line states
    FindingGiftIdeas, SoFar, OutOfDateTitle, OutOfDateBody, PurchaseCancelledTitle, PurchaseCancelledBody,
    TryAgain, AskAgainInChat, RequestStoppedTitle, RequestStoppedBody, StopReason,
    // The request summary
    ForYour, AgeYears, BudgetRange, BudgetFrom, BudgetUpTo,
    RelPartner, RelParent, RelChild, RelSibling, RelGrandparent, RelGrandchild, RelFriend, RelColleague,
    RelBoss, RelTeacher, RelNeighbor, RelOther,
    OccBirthday, OccAnniversary, OccWedding, OccGraduation, OccHoliday, OccValentines, OccMothersDay,
    OccFathersDay, OccHousewarming, OccBabyShower, OccRetirement, OccThankYou, OccGetWell, OccJustBecause,
    // Results, empty, notices, partial
    GiftIdeas, NoMatchingGifts, NoGiftsMatched, NoticeNoMatches, NoticeNearest, NoticeNearestAlone, NoticeFewMatches,
    SuggestRaiseBudget, SuggestNoMinimum, SuggestOnlyInterest, SuggestAnyInterest, SuggestAnyAge, SuggestOther,
    PartialMessage, SourceTimeout, SourceUnavailable,
    // A gift card and its reasons
    Choose, ChooseGift, Add, AddGift, GiftOutOfStock, OutOfStock, Tags, MoreReasons,
    ReasonInterestTag, ReasonInterestTitle, ReasonInterestDescription, ReasonNearestTag, ReasonNearestTitle,
    ReasonNearestDescription, ReasonBudgetLeaves, ReasonBudgetAll,
    ReasonAges, ReasonRelationship, ReasonOccasion, ReasonPopular, ReasonOnlyTag, ReasonPrice,
    // Errors
    HeadValidation, HeadBusiness, HeadPermission, HeadOther, HeadLoadGifts, HeadLoadOrder, HeadLoadOrders,
    HeadPrepare, HeadCommit, HeadCheckout, HeadCancel, HeadDelete,
    ErrValidation, ErrKeyReused, ErrGiftNotFound, ErrDraftNotFound, ErrOrderNotFound, ErrInProgress,
    ErrUpstreamTimeout, ErrUpstreamUnavailable, ErrPaymentUnavailable, ErrDailyLimit, ErrHourlyLimit,
    ErrGiftUnavailable, ErrDraftExpired, ErrNotCancellable, ErrPaymentDeclined, ErrNoSavedCard, ErrConfirmationRequired,
    ErrConfirmationExpired, ErrAuthRequired, ErrInternal, ErrUnknown, FieldCheck,
    TryAgainIn, ResetsIn, WaitSecond, WaitSeconds, WaitMinutes, WaitHours, Reference,
    // Confirm purchase and the delivery form
    ConfirmTitle, Quantity, Subtotal, ShippingStandard, ShippingExpress, Total, DeliverTo, AddRecipientBelow,
    NeedsFix, ConfirmPurchaseTotal, UpdateDelivery, Cancel, KeepShopping, NothingChargedYet,
    OneFewer, OneMore, QuantityOf, Remove, RemoveGift,
    FieldName, FieldLine1, FieldLine2, FieldCity, FieldRegion, FieldPostalCode, FieldCountry, GiftMessageLabel,
    SavedAddress, SaveAddress, GiftWrap, GiftWrapOffer, GiftReceipt,
    FieldRuleRequired, FieldRuleTooLong, FieldRuleOneLine, FieldRuleCountryCode, FieldRuleRegionRequired,
    FieldRuleRegionUnknown, FieldRulePostalCodeRequired, FieldRulePostalCodeShape, FieldRulePostalCodeChars,
    FieldRuleTooManyLines, FieldRulePlainText, FieldRuleRecipientMissing,
    // Orders
    StatusPaid, StatusPending, StatusAwaitingAuthentication, AuthenticationNeeded, StatusDeclined, StatusCancelled, StatusProcessing, StatusShipped, StatusCompleted,
    OrderPlaced, OrderCancelled, OrderFrom, Order, Timeline, Refunded, RefundedPart, Carrier, TrackPackage,
    PayInHost, CardPays, CardNone, AddCard, RemoveCard,
    Status, YourOrders, NoOrdersYet, OlderOrders, DeliverToPlace, CancelOrder, CancelQuestion, YesCancel, KeepIt,
    DeleteMyData, DeleteQuestion, YesDelete, DataDeletedTitle, SavedAddresses, OrderDrafts, OrdersAnonymized,
    RecordsKept, CheckoutReady, Amount, Session, OpenCheckout, CheckoutLinkHidden, DateFormat, Months,
    Weekdays, DayFormat, Arrives, ArrivesInTime, ArrivesLate, ArrivesFasterInTime, ArrivesNoneInTime, SwitchShipping,
    ShippingOptionStandard, ShippingOptionExpress,
    // The no-WebAssembly fallback and the hosted checkout page (server-rendered)
    Unreachable, CheckoutPageTitle, CheckoutPageAmount, CheckoutPageExpires, CheckoutPageSandbox, CheckoutPageMissing,
    SomethingWrongRef,
    // The privacy, terms and support pages (server-rendered: /privacy, /terms, /support)
    PolicyPrivacyTitle, PolicyTermsTitle, PolicySupportTitle, PolicyOperatedBy, PolicyContact, PolicySettingsNote,
    PrivacyStoresHeading, PrivacySuggestions, PrivacyDrafts, PrivacyOrders, PrivacyRefunds, PrivacyAddress,
    PrivacyRequests, PrivacyLogs, PrivacyPayments, PrivacyAcp, PrivacyDeleteHeading, PrivacyDeleteHow,
    PrivacyDeleteOperator,
    TermsService, TermsConfirm, TermsCancel, TermsLimits, SupportHelp, SupportOrderId, SupportReference,
    // An order's status page (server-rendered: /o/{token})
    OrderPageTitle, OrderPagePlaced, OrderPageMissing, OrderPageConfirmed,
    // The hosted card page (server-rendered: /pay/card/{capability})
    CardPageTitle, CardPageIntro, CardPageSave, CardPageSaving, CardPageSaved, CardPageNotSaved, CardPageGone,
    CardPageAccount, CardPageConfirmAccount, CardPageContinue, CardPageConfirmFirst,
    // The hosted 3-D Secure page (server-rendered: /pay/authenticate/{capability})
    AuthPageTitle, AuthPageIntro, AuthPageButton, AuthPageWorking, AuthPageConfirmed, AuthPagePaid, AuthPageFailed,
    AuthPageSettled, AuthPageGone,
    // What the live region announces
    SayLoading, SayFoundOne, SayFoundMany, SaySomeStoresMissing, SayNoMatches, SayError, SayReview,
    SayOrderCancelled, SayOrderPlaced, SayOneOrder, SayOrders, SayDataDeleted,
    SayCheckoutReady, SayPurchaseCancelled, SayRequestStopped, SayOutOfDate,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_language_has_every_key_once() {
        for lang in Lang::ALL {
            let catalog: Vec<_> = lang.catalog().collect();
            let mut problems = Vec::new();
            for key in Msg::ALL {
                match catalog.iter().filter(|(k, _)| k == key).count() {
                    1 => {}
                    0 => problems.push(format!("{key:?} is missing")),
                    n => problems.push(format!("{key:?} appears {n} times")),
                }
            }
            for (key, text) in catalog {
                if text.trim().is_empty() {
                    problems.push(format!("{key:?} is empty"));
                }
            }
            assert!(problems.is_empty(), "catalog {:?}: {}", lang, problems.join(", "));
        }
    }

    #[test]
    fn translations_keep_the_english_parameters() {
        let params = |text: &str| {
            let mut names: Vec<String> =
                text.split('{').skip(1).filter_map(|s| s.split_once('}')).map(|(n, _)| n.to_string()).collect();
            names.sort();
            names
        };
        for lang in [Lang::Es, Lang::Pt] {
            for key in Msg::ALL {
                assert_eq!(params(lang.t(*key)), params(Lang::En.t(*key)), "{lang:?} {key:?}");
            }
        }
    }

    #[test]
    fn locales_choose_a_language_and_fall_back_to_english() {
        assert_eq!(Lang::from_locale("es-MX"), Lang::Es);
        assert_eq!(Lang::from_locale("pt_BR"), Lang::Pt);
        assert_eq!(Lang::from_locale("PT"), Lang::Pt);
        assert_eq!(Lang::from_locale("en-GB"), Lang::En);
        assert_eq!(Lang::from_locale("de-DE"), Lang::En);
        assert_eq!(Lang::from_locale(""), Lang::En);
        assert_eq!(Lang::from_locale("esperanto"), Lang::En);
    }

    #[test]
    fn fill_replaces_known_names_only() {
        assert_eq!(fill("Choose {title}", &[("title", "Mug")]), "Choose Mug");
        assert_eq!(fill("{a} and {b}", &[("a", "1")]), "1 and {b}");
        assert_eq!(fill("{ open", &[]), "{ open");
        assert_eq!(fill("{a}{a}", &[("a", "x")]), "xx");
    }
}
