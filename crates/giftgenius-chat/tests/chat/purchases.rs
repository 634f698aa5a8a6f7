//! Human confirmation: the person's "no" charges nothing, "yes" charges once (even when the
//! model prepares the same draft again and the person says yes twice: one key per draft), and a
//! model that asks for commit_order itself, with whatever it can make up, is refused.

use serde_json::json;

use crate::support::{Format, Person, ScriptedModel, Step, field, session, spawn_app};

/// suggest → prepare the first gift → (the person answers) → the scripted `after` steps.
fn buying_script(after: Vec<Step>) -> impl FnMut(&crate::support::Request) -> Step + Send + 'static {
    let mut after = after.into_iter();
    move |r| match r.index {
        0 => Step::Calls(vec![("suggest_gifts", json!({"relationship_type": "partner", "budget_max": 80}))]),
        1 => Step::Calls(vec![(
            "prepare_order",
            json!({"gift_id": field(&r.result(0).content, "id"), "recipient": crate::support::recipient()}),
        )]),
        _ => after.next().unwrap_or_else(|| Step::Answer("done".into())),
    }
}

#[tokio::test]
async fn a_purchase_the_person_declines_charges_nothing() {
    let app = spawn_app(|_| {}).await;
    let model = ScriptedModel::start(Format::Anthropic, buying_script(vec![])).await;
    let mut person = Person::answering(&["no"]);
    let mut chat = session(&app, &model, &[]).await;
    chat.run_task(&mut person, "buy my partner something").await.unwrap();

    assert_eq!(person.cards.len(), 1, "{}", person.transcript());
    assert!(person.cards[0].contains("Confirm purchase") && person.cards[0].contains("TOTAL $"), "{}", person.cards[0]);
    assert!(person.transcript().contains("Not bought: nothing was ordered or charged."));
    let requests = model.requests();
    let told = requests[2].to_string();
    assert!(told.contains("declined it. Nothing was ordered or charged"), "{told}");
    assert_eq!(app.charges().await, 0);
    assert_eq!(app.orders().await, 0);
}

#[tokio::test]
async fn a_purchase_the_person_confirms_charges_once_even_if_the_model_prepares_it_again() {
    let app = spawn_app(|_| {}).await;
    let model = ScriptedModel::start(Format::Openai, move |r| match r.index {
        0 => Step::Calls(vec![("suggest_gifts", json!({"relationship_type": "partner", "budget_max": 80}))]),
        1 => Step::Calls(vec![(
            "prepare_order",
            json!({"gift_id": field(&r.result(0).content, "id"), "recipient": crate::support::recipient()}),
        )]),
        // The model prepares the same gift again (same arguments: the same draft) and the person
        // says yes again: the host reuses the draft's key, so it is still one order, one charge.
        2 => {
            assert!(r.result(0).content.contains("HOST NOTE: the person confirmed"), "{}", r.result(0).content);
            Step::Calls(vec![(
                "prepare_order",
                json!({"gift_id": field(&r.result(0).content, "gift_id"), "recipient": crate::support::recipient()}),
            )])
        }
        _ => Step::Answer("Ordered.".into()),
    })
    .await;
    let mut person = Person::answering(&["yes", "YES"]);
    let mut chat = session(&app, &model, &[]).await;
    chat.run_task(&mut person, "buy my partner something").await.unwrap();

    assert_eq!(person.cards.len(), 2, "{}", person.transcript());
    let placed: Vec<&String> = person.lines.iter().filter(|l| l.starts_with("Order placed: ")).collect();
    assert_eq!(placed.len(), 2, "{}", person.transcript());
    assert_eq!(placed[0], placed[1], "the second commit replays the first order");
    assert_eq!(app.charges().await, 1);
    assert_eq!(app.orders().await, 1);
    for body in model.requests() {
        assert!(!body.to_string().contains("confirmation_token"), "{body}");
    }
}

#[tokio::test]
async fn a_model_that_asks_for_commit_order_itself_is_refused_and_nothing_is_charged() {
    let app = spawn_app(|_| {}).await;
    let model = ScriptedModel::start(
        Format::Anthropic,
        buying_script(vec![Step::Calls(vec![(
            "commit_order",
            json!({"draft_id": "d_guess", "idempotency_key": "ik_model", "confirmation_token": "made-up"}),
        )])]),
    )
    .await;
    // The person declines the card; the model then tries to buy on its own.
    let mut person = Person::answering(&["no"]);
    let mut chat = session(&app, &model, &[]).await;
    chat.run_task(&mut person, "just buy it").await.unwrap();

    let requests = model.requests();
    assert_eq!(requests.len(), 4, "{}", person.transcript());
    let refusal = requests[3].to_string();
    assert!(refusal.contains("commit_order is not available to you"), "{refusal}");
    assert!(
        person.transcript().contains("commit_order not run: commit_order is not available"),
        "{}",
        person.transcript()
    );
    assert_eq!(app.charges().await, 0);
    assert_eq!(app.orders().await, 0);
}
