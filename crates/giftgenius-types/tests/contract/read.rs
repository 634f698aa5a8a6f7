//! The widget's hand readers (`giftgenius_types::read`) against serde's derives: generated
//! contract results, and mutations of them, read the same both ways, and nothing panics; its
//! few writers (`giftgenius_types::write`) write what serde writes.
//!
//! serde stays the reference: the server writes every result with it. A reader that accepted
//! less would show a good result as "out of date"; one that accepted more would guess.

use giftgenius_types::envelope::NoticeCode;
use giftgenius_types::orders::{
    Adjustment, CheckoutData, CheckoutSession, DeleteMyDataData, DeliveryOption, DeliveryWindow, DraftLine,
    Fulfillment, ListOrdersData, Order, OrderData, OrderDraft, OrderLine, OrderStatus, OrderStep, PrepareOrderData,
    Refund, RefundStatus, ShippingSpeed,
};
use giftgenius_types::write::WriteJson;
use giftgenius_types::{
    Address, Currency, DeliveryDetails, Destination, Envelope, ErrorCategory, ErrorCode, FailedSource, FieldError,
    FieldRule, GiftCard, MatchVia, Merchant, Money, Notice, Occasion, Partial, ReadJson, Reason, Recipient,
    RelationshipType, SuggestGiftsData, SuggestGiftsQuery, Suggestion, ToolError, ToolName, Why,
};
use proptest::prelude::*;
use proptest::sample::select;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

fn text() -> impl Strategy<Value = String> {
    "[a-z_ é]{0,6}"
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        text().prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(text(), inner, 0..4).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn json_object() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::btree_map(text(), json_value(), 0..3).prop_map(|m| m.into_iter().collect())
}

fn currency() -> impl Strategy<Value = Currency> {
    select(Currency::ALL.to_vec())
}

fn money() -> impl Strategy<Value = Money> {
    (any::<i64>(), currency()).prop_map(|(amount, c)| Money::new(amount, c))
}

fn field_rule() -> impl Strategy<Value = FieldRule> {
    prop_oneof![
        Just(FieldRule::Required),
        any::<u32>().prop_map(|max| FieldRule::TooLong { max }),
        Just(FieldRule::OneLine),
        Just(FieldRule::CountryCode),
        (text(), text()).prop_map(|(country, example)| FieldRule::RegionRequired { country, example }),
        (text(), text()).prop_map(|(country, example)| FieldRule::RegionUnknown { country, example }),
        text().prop_map(|country| FieldRule::PostalCodeRequired { country }),
        (text(), text()).prop_map(|(country, example)| FieldRule::PostalCodeShape { country, example }),
        Just(FieldRule::PostalCodeChars),
        any::<u32>().prop_map(|max| FieldRule::TooManyLines { max }),
        Just(FieldRule::PlainText),
        Just(FieldRule::RecipientMissing),
    ]
}

fn field_error() -> impl Strategy<Value = FieldError> {
    (text(), text(), prop::option::of(field_rule())).prop_map(|(field, message, rule)| FieldError {
        field,
        message,
        rule,
    })
}

fn tool_error() -> impl Strategy<Value = ToolError> {
    let category = select(vec![
        ErrorCategory::Transient,
        ErrorCategory::Validation,
        ErrorCategory::Business,
        ErrorCategory::Permission,
        ErrorCategory::Other,
    ]);
    (
        (select(ErrorCode::ALL.to_vec()), category, text(), any::<bool>()),
        prop::collection::vec(field_error(), 0..3),
        proptest::option::of(json_value()),
        proptest::option::of(prop::collection::vec(json_value(), 0..3)),
        proptest::option::of(any::<u64>()),
        text(),
    )
        .prop_map(
            |((code, category, message, retryable), field_errors, attempted, partial_results, retry, reference)| {
                ToolError {
                    code,
                    category,
                    message,
                    retryable,
                    field_errors,
                    attempted,
                    partial_results,
                    retry_after_ms: retry,
                    reference,
                }
            },
        )
}

fn notice() -> impl Strategy<Value = Notice> {
    let suggestion = (text(), json_object(), any::<u32>()).prop_map(|(message, set_arguments, matches)| Suggestion {
        message,
        set_arguments,
        matches,
    });
    (select(vec![NoticeCode::NoMatches, NoticeCode::FewMatches]), text(), prop::collection::vec(suggestion, 0..3))
        .prop_map(|(code, message, suggestions)| Notice { code, message, suggestions })
}

fn partial() -> impl Strategy<Value = Partial> {
    let failed = (text(), select(ErrorCode::ALL.to_vec()), text()).prop_map(|(source, code, message)| FailedSource {
        source,
        code,
        message,
    });
    (text(), prop::collection::vec(failed, 0..3))
        .prop_map(|(message, failed_sources)| Partial { message, failed_sources })
}

fn why() -> impl Strategy<Value = Why> {
    prop_oneof![
        (text(), select(vec![MatchVia::Tag, MatchVia::Title, MatchVia::Description]), text())
            .prop_map(|(interest, via, term)| Why::Interest { interest, via, term }),
        (text(), select(vec![MatchVia::Tag, MatchVia::Title, MatchVia::Description]), text())
            .prop_map(|(interest, via, term)| Why::Nearest { interest, via, term }),
        (money(), money(), money()).prop_map(|(price, budget_max, left)| Why::Budget { price, budget_max, left }),
        (any::<u8>(), any::<u8>()).prop_map(|(age_min, age_max)| Why::Age { age_min, age_max }),
        select(RelationshipType::ALL.to_vec()).prop_map(|relationship| Why::Relationship { relationship }),
        select(Occasion::ALL.to_vec()).prop_map(|occasion| Why::Occasion { occasion }),
        text().prop_map(|tag| Why::Popular { tag }),
        text().prop_map(|tag| Why::OnlyTag { tag }),
        money().prop_map(|price| Why::Price { price }),
    ]
}

fn gift() -> impl Strategy<Value = GiftCard> {
    let reason = (text(), why()).prop_map(|(text, why)| Reason { text, why });
    (
        (text(), text(), text(), money()),
        (text(), text()),
        prop::collection::vec(text(), 0..3),
        prop::collection::vec(reason, 0..3),
        any::<bool>(),
        text(),
    )
        .prop_map(|((id, title, description, price), (mid, mname), tags, reasons, in_stock, image_url)| GiftCard {
            id,
            title,
            description,
            price,
            merchant: Merchant { id: mid, name: mname },
            tags,
            reasons,
            in_stock,
            image_url,
        })
}

fn query() -> impl Strategy<Value = SuggestGiftsQuery> {
    (
        select(RelationshipType::ALL.to_vec()),
        proptest::option::of(any::<u8>()),
        prop::collection::vec(text(), 0..3),
        proptest::option::of(money()),
        proptest::option::of(money()),
        proptest::option::of(select(Occasion::ALL.to_vec())),
        currency(),
        any::<u8>(),
    )
        .prop_map(|(relationship_type, age, interests, budget_min, budget_max, occasion, currency, limit)| {
            SuggestGiftsQuery { relationship_type, age, interests, budget_min, budget_max, occasion, currency, limit }
        })
}

fn destination() -> impl Strategy<Value = Option<Destination>> {
    proptest::option::of((text(), text()).prop_map(|(city, country)| Destination { city, country }))
}

fn delivery_option() -> impl Strategy<Value = DeliveryOption> {
    (select(vec![ShippingSpeed::Standard, ShippingSpeed::Express]), money(), text(), text(), any::<Option<bool>>())
        .prop_map(|(shipping, cost, earliest, latest, in_time)| DeliveryOption {
            shipping,
            cost,
            earliest,
            latest,
            in_time,
        })
}

fn draft_line() -> impl Strategy<Value = DraftLine> {
    (gift(), any::<u32>(), money(), proptest::option::of(money()))
        .prop_map(|(gift, quantity, subtotal, gift_wrap_cost)| DraftLine { gift, quantity, subtotal, gift_wrap_cost })
}

fn order_line() -> impl Strategy<Value = OrderLine> {
    (text(), text(), text(), any::<u32>(), proptest::option::of(money())).prop_map(
        |(gift_id, gift_title, merchant, quantity, subtotal)| OrderLine {
            gift_id,
            gift_title,
            merchant,
            quantity,
            subtotal,
        },
    )
}

fn draft() -> impl Strategy<Value = OrderDraft> {
    (
        (
            text(),
            gift(),
            any::<u32>(),
            select(vec![ShippingSpeed::Standard, ShippingSpeed::Express]),
            prop::collection::vec(draft_line(), 1..3),
        ),
        (money(), money(), money()),
        (text(), destination(), any::<bool>()),
        (proptest::option::of(text()), prop::collection::vec(delivery_option(), 0..3)),
        (proptest::option::of(money()), proptest::option::of(money()), any::<bool>()),
    )
        .prop_map(
            |(
                (id, gift, quantity, shipping, lines),
                (subtotal, shipping_cost, total),
                (expires_at, destination, msg),
                (needed_by, delivery_options),
                (gift_wrap_price, gift_wrap_cost, gift_receipt),
            )| {
                OrderDraft {
                    id,
                    gift,
                    quantity,
                    lines,
                    shipping,
                    subtotal,
                    shipping_cost,
                    total,
                    expires_at,
                    destination,
                    has_gift_message: msg,
                    needed_by,
                    delivery_options,
                    gift_wrap_price,
                    gift_wrap_cost,
                    gift_receipt,
                }
            },
        )
}

fn order() -> impl Strategy<Value = Order> {
    let status = select(OrderStatus::ALL.to_vec());
    let refund_status = || select(vec![RefundStatus::Pending, RefundStatus::Succeeded]);
    let refund = (text(), money(), refund_status(), text()).prop_map(|(id, amount, status, created_at)| Refund {
        id,
        amount,
        status,
        created_at,
    });
    let fulfillment = (text(), text(), text()).prop_map(|(carrier, tracking_number, tracking_url)| Fulfillment {
        carrier,
        tracking_number,
        tracking_url,
    });
    let step = (select(OrderStatus::ALL.to_vec()), text()).prop_map(|(status, at)| OrderStep { status, at });
    let adjustment = (text(), money(), text(), refund_status(), text())
        .prop_map(|(id, amount, reason, status, created_at)| Adjustment { id, amount, reason, status, created_at });
    (
        (text(), text(), text(), text(), text()),
        (any::<u32>(), money(), status, text(), prop::collection::vec(order_line(), 1..3)),
        (destination(), proptest::option::of(text()), proptest::option::of(refund)),
        (
            proptest::option::of(fulfillment),
            prop::collection::vec(step, 0..3),
            prop::collection::vec(adjustment, 0..3),
            proptest::option::of(money()),
        ),
        (proptest::option::of(money()), any::<bool>(), proptest::option::of((text(), text()))),
    )
        .prop_map(
            |(
                (id, draft_id, gift_id, gift_title, merchant),
                (quantity, total, status, created_at, lines),
                (destination, cancellable_until, refund),
                (fulfillment, timeline, adjustments, amount_refunded),
                (gift_wrap_cost, gift_receipt, arrives),
            )| Order {
                id,
                draft_id,
                gift_id,
                gift_title,
                merchant,
                quantity,
                lines,
                total,
                status,
                created_at,
                destination,
                cancellable_until,
                refund,
                fulfillment,
                timeline,
                adjustments,
                amount_refunded,
                gift_wrap_cost,
                gift_receipt,
                arrives: arrives.map(|(earliest, latest)| DeliveryWindow { earliest, latest }),
            },
        )
}

fn delivery() -> impl Strategy<Value = DeliveryDetails> {
    let address = (text(), proptest::option::of(text()), text(), proptest::option::of(text())).prop_flat_map(
        |(line1, line2, city, region)| {
            (proptest::option::of(text()), text()).prop_map(move |(postal_code, country)| Address {
                line1: line1.clone(),
                line2: line2.clone(),
                city: city.clone(),
                region: region.clone(),
                postal_code,
                country,
            })
        },
    );
    (text(), address, proptest::option::of(text()), any::<bool>(), any::<bool>()).prop_map(
        |(name, address, gift_message, save_address, from_saved_address)| DeliveryDetails {
            recipient: Recipient { name, address },
            gift_message,
            save_address,
            from_saved_address,
        },
    )
}

/// An envelope around `data`: ok (with or without notice and partial), or an error.
fn envelope<T: std::fmt::Debug + Clone + 'static>(
    data: impl Strategy<Value = T>,
) -> impl Strategy<Value = Envelope<T>> {
    let tool = select(ToolName::ALL.to_vec());
    prop_oneof![
        (tool.clone(), data, proptest::option::of(notice()), proptest::option::of(partial()))
            .prop_map(|(tool, data, notice, partial)| Envelope::Ok { tool, data, notice, partial }),
        (tool, tool_error()).prop_map(|(tool, error)| Envelope::Err { tool, error }),
    ]
}

/// One change to the node at pre-order position `at` (modulo the node count): a key taken away
/// or added, a value turned null, into another JSON type, or a number out of its type's range.
/// It never builds an array where an object was, nor an object where a string was: the two
/// serde-only forms (see `serde_only_forms_are_refused`).
fn mutate(value: &mut Value, at: usize, how: u8) {
    let count = count_nodes(value);
    let mut left = at % count;
    if let Some(node) = nth_node(value, &mut left) {
        match (how % 8, &mut *node) {
            (0, Value::Object(map)) if !map.is_empty() => {
                let key = map.keys().nth(at % map.len()).cloned().unwrap_or_default();
                map.remove(&key);
            }
            (1, Value::Object(map)) => {
                map.insert("unexpected".into(), json!(1));
            }
            (2, _) => *node = Value::Null,
            (3, Value::String(_)) => *node = json!(0.5),
            (3, Value::Number(_)) => *node = json!("1"),
            (3, Value::Bool(b)) => *node = json!(b.to_string()),
            (3, Value::Array(_) | Value::Object(_)) => *node = json!(true),
            (4, Value::Number(_)) => *node = json!(-1),
            (5, Value::Number(_)) => *node = json!(1u64 << 40),
            (6, Value::Number(_)) => *node = json!(2.5),
            (7, Value::String(s)) => s.push_str("zz"),
            (_, Value::Array(items)) if !items.is_empty() => {
                items.remove(at % items.len());
            }
            _ => *node = json!({}),
        }
    }
}

fn count_nodes(value: &Value) -> usize {
    1 + match value {
        Value::Array(items) => items.iter().map(count_nodes).sum(),
        Value::Object(map) => map.values().map(count_nodes).sum(),
        _ => 0,
    }
}

fn nth_node<'a>(value: &'a mut Value, left: &mut usize) -> Option<&'a mut Value> {
    if *left == 0 {
        return Some(value);
    }
    *left -= 1;
    match value {
        Value::Array(items) => items.iter_mut().find_map(|item| nth_node(item, left)),
        Value::Object(map) => map.values_mut().find_map(|item| nth_node(item, left)),
        _ => None,
    }
}

/// The property: for `value` and up to three mutations of it, the hand reader gives what serde
/// gives (`None` where serde errs), and for the unchanged value both accept.
fn reads_like_serde<T>(value: &T, mutations: &[(usize, u8)]) -> Result<(), TestCaseError>
where
    T: Serialize + DeserializeOwned + ReadJson + PartialEq + std::fmt::Debug,
{
    let mut json = serde_json::to_value(value).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let serde_reads = serde_json::from_value::<T>(json.clone()).ok();
    prop_assert!(serde_reads.is_some(), "serde reads its own output {json}");
    prop_assert_eq!(T::read_json(&json), serde_reads, "{}", json);
    for (at, how) in mutations {
        mutate(&mut json, *at, *how);
        let serde_reads = serde_json::from_value::<T>(json.clone()).ok();
        prop_assert_eq!(T::read_json(&json), serde_reads, "{}", json);
    }
    Ok(())
}

fn mutations() -> impl Strategy<Value = Vec<(usize, u8)>> {
    prop::collection::vec((any::<usize>(), any::<u8>()), 1..4)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn suggest_gifts_results_read_like_serde(
        env in envelope((query(), prop::collection::vec(gift(), 0..3))
            .prop_map(|(query, gifts)| SuggestGiftsData { query, gifts })),
        m in mutations(),
    ) {
        reads_like_serde(&env, &m)?;
    }

    #[test]
    fn drafts_read_like_serde(env in envelope(draft().prop_map(|draft| PrepareOrderData { draft })), m in mutations()) {
        reads_like_serde(&env, &m)?;
    }

    #[test]
    fn orders_read_like_serde(
        one in envelope(order().prop_map(|order| OrderData { order })),
        list in envelope((prop::collection::vec(order(), 0..3), proptest::option::of(text()))
            .prop_map(|(orders, next_cursor)| ListOrdersData { orders, next_cursor })),
        m in mutations(),
    ) {
        reads_like_serde(&one, &m)?;
        reads_like_serde(&list, &m)?;
    }

    #[test]
    fn checkouts_and_deletions_read_like_serde(
        checkout in envelope((text(), text(), money(), text(), text()).prop_map(|(id, gift_id, amount, checkout_url, expires_at)| {
            CheckoutData { checkout: CheckoutSession { id, gift_id, amount, checkout_url, expires_at } }
        })),
        deleted in envelope(any::<[u64; 7]>().prop_map(|n| DeleteMyDataData {
            saved_addresses_deleted: n[0],
            drafts_deleted: n[1],
            idempotency_keys_deleted: n[2],
            checkout_sessions_deleted: n[3],
            orders_anonymized: n[4],
            financial_records_kept: n[5],
            financial_records_retention_days: n[6],
        })),
        m in mutations(),
    ) {
        reads_like_serde(&checkout, &m)?;
        reads_like_serde(&deleted, &m)?;
    }

    #[test]
    fn delivery_details_read_like_serde(details in delivery(), m in mutations()) {
        reads_like_serde(&details, &m)?;
    }

    /// The widget's few writers (`giftgenius_types::write`) write what serde writes.
    #[test]
    fn orders_and_recipients_write_like_serde(
        order in order(),
        details in delivery(),
        currency in currency(),
        shipping in select(vec![ShippingSpeed::Standard, ShippingSpeed::Express]),
    ) {
        let serde = |v: &dyn erased::Ser| v.to_value();
        prop_assert_eq!(order.write_json(), serde(&order));
        prop_assert_eq!(details.recipient.write_json(), serde(&details.recipient));
        prop_assert_eq!(currency.write_json(), serde(&currency));
        prop_assert_eq!(shipping.write_json(), serde(&shipping));
    }

    /// Any JSON at all: no panic, and whatever the reader accepts, serde accepts as the same value.
    #[test]
    fn arbitrary_json_is_refused_or_read_as_serde_reads_it(value in json_value()) {
        fn check<T: DeserializeOwned + ReadJson + PartialEq + std::fmt::Debug>(value: &Value) -> Result<(), TestCaseError> {
            if let Some(read) = T::read_json(value) {
                prop_assert_eq!(Some(read), serde_json::from_value::<T>(value.clone()).ok());
            }
            Ok(())
        }
        check::<Envelope<SuggestGiftsData>>(&value)?;
        check::<Envelope<OrderData>>(&value)?;
        check::<DeliveryDetails>(&value)?;
        check::<Money>(&value)?;
        check::<Why>(&value)?;
    }
}

/// The contract's fixtures (what the server's own tests send) read the same both ways.
#[test]
fn the_contract_fixtures_read_like_serde() {
    let results = Envelope::Ok {
        tool: ToolName::SuggestGifts,
        data: crate::fixtures::suggest_data(),
        notice: Some(crate::fixtures::few_matches_notice()),
        partial: Some(crate::fixtures::one_catalog_timed_out()),
    };
    reads_like_serde(&results, &[]).unwrap();
    reads_like_serde(&Envelope::ok(ToolName::GetOrder, crate::fixtures::order_data()), &[]).unwrap();
}

/// Forms serde's derives also accept and no server writes: refused here, as the widget's strict
/// parsing wants (a payload off the contract shows as out of date).
#[test]
fn serde_only_forms_are_refused() {
    let array_struct = json!([1250, "EUR"]);
    assert_eq!(serde_json::from_value::<Money>(array_struct.clone()).ok(), Some(Money::new(1250, Currency::EUR)));
    assert_eq!(Money::read_json(&array_struct), None);
    let map_variant = json!({ "paid": null });
    assert_eq!(serde_json::from_value::<OrderStatus>(map_variant.clone()).ok(), Some(OrderStatus::Paid));
    assert_eq!(OrderStatus::read_json(&map_variant), None);
}

/// serde's `to_value` behind a trait object, so one closure serves every type above.
mod erased {
    pub trait Ser {
        fn to_value(&self) -> serde_json::Value;
    }

    impl<T: serde::Serialize> Ser for T {
        fn to_value(&self) -> serde_json::Value {
            serde_json::to_value(self).expect("contract values serialize")
        }
    }
}
