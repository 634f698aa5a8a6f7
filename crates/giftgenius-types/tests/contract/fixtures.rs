//! Realistic values shared by the contract tests.

use giftgenius_types::envelope::NoticeCode;
use giftgenius_types::orders::{Order, OrderData, OrderStatus};
use giftgenius_types::{
    Currency, ErrorCode, FailedSource, GiftCard, MatchVia, Merchant, Money, Notice, Occasion, Partial, Reason,
    RelationshipType, SuggestGiftsData, SuggestGiftsQuery, Suggestion, Why,
};
use serde_json::{Map, json};

pub fn pour_over_kit() -> GiftCard {
    GiftCard {
        id: "gft_pourover_kit".into(),
        title: "Pour-over coffee kit".into(),
        description: "Ceramic dripper, gooseneck kettle and 250 g of single-origin beans.".into(),
        price: Money::new(4999, Currency::USD),
        merchant: Merchant { id: "m_bean_and_brew".into(), name: "Bean & Brew".into() },
        tags: vec!["coffee".into(), "kitchen".into()],
        reasons: vec![
            Reason {
                text: "Matches their interest in coffee (tagged “coffee”)".into(),
                why: Why::Interest { interest: "coffee".into(), via: MatchVia::Tag, term: "coffee".into() },
            },
            Reason {
                text: "At $49.99 it leaves $10.01 of your $60 budget".into(),
                why: Why::Budget {
                    price: Money::new(4999, Currency::USD),
                    budget_max: Money::new(6000, Currency::USD),
                    left: Money::new(1001, Currency::USD),
                },
            },
        ],
        in_stock: true,
        image_url: "/images/gft_pourover_kit.webp".into(),
    }
}

pub fn trail_map_print() -> GiftCard {
    GiftCard {
        id: "gft_trail_map_print".into(),
        title: "Custom trail map print".into(),
        description: "A framed print of a favourite hiking trail, 30×40 cm.".into(),
        price: Money::new(3450, Currency::USD),
        merchant: Merchant { id: "m_paper_peaks".into(), name: "Paper Peaks".into() },
        tags: vec!["hiking".into(), "decor".into()],
        reasons: vec![Reason {
            text: "Matches their interest in hiking (its description mentions “hiking”)".into(),
            why: Why::Interest { interest: "hiking".into(), via: MatchVia::Description, term: "hiking".into() },
        }],
        in_stock: false,
        image_url: "/images/gft_trail_map_print.webp".into(),
    }
}

pub fn query() -> SuggestGiftsQuery {
    SuggestGiftsQuery {
        relationship_type: RelationshipType::Friend,
        age: Some(34),
        interests: vec!["coffee".into(), "hiking".into()],
        budget_min: Some(Money::new(3000, Currency::USD)),
        budget_max: Some(Money::new(6000, Currency::USD)),
        occasion: Some(Occasion::Birthday),
        currency: Currency::USD,
        limit: 6,
    }
}

pub fn suggest_data() -> SuggestGiftsData {
    SuggestGiftsData { query: query(), gifts: vec![pour_over_kit(), trail_map_print()] }
}

pub fn few_matches_notice() -> Notice {
    let mut set_arguments = Map::new();
    set_arguments.insert("budget_max".into(), json!(80));
    Notice {
        code: NoticeCode::FewMatches,
        message: "Only 2 gifts match; 9 match if budget_max is 80.".into(),
        suggestions: vec![Suggestion {
            message: "9 gifts match if budget_max is 80".into(),
            set_arguments,
            matches: 9,
        }],
    }
}

pub fn one_catalog_timed_out() -> Partial {
    Partial {
        message: "One gift catalog did not answer; these results may be incomplete.".into(),
        failed_sources: vec![FailedSource {
            source: "catalog_artisan".into(),
            code: ErrorCode::UpstreamTimeout,
            message: "did not answer within 2 seconds".into(),
        }],
    }
}

pub fn order_data() -> OrderData {
    OrderData {
        order: Order {
            id: "ord_7QX2KD".into(),
            draft_id: "drf_91ab3c".into(),
            gift_id: "gft_pourover_kit".into(),
            gift_title: "Pour-over coffee kit".into(),
            merchant: "Bean & Brew".into(),
            quantity: 2,
            lines: vec![giftgenius_types::OrderLine {
                gift_id: "gft_pourover_kit".into(),
                gift_title: "Pour-over coffee kit".into(),
                merchant: "Bean & Brew".into(),
                quantity: 2,
                subtotal: Some(Money::new(9998, Currency::USD)),
            }],
            total: Money::new(10498, Currency::USD),
            status: OrderStatus::Paid,
            created_at: "2025-11-03T14:22:05Z".into(),
            destination: Some(giftgenius_types::Destination { city: "Lisboa".into(), country: "PT".into() }),
            cancellable_until: Some("2025-11-03T15:22:05Z".into()),
            refund: None,
            fulfillment: None,
            timeline: vec![giftgenius_types::OrderStep {
                status: OrderStatus::Paid,
                at: "2025-11-03T14:22:07Z".into(),
            }],
            adjustments: Vec::new(),
            amount_refunded: None,
            gift_wrap_cost: None,
            gift_receipt: false,
            arrives: None,
        },
    }
}
