//! Saved cards with Stripe, against localstripe: the confirm card's `_meta` (the card that pays
//! and the card page's capability link), the hosted card page (whose account it saves to, the
//! person's confirmation before any SetupIntent, its CSP, the card taken only as Stripe reports
//! it), the capability refused when expired, tampered or
//! someone else's (one page, no detail), `remove_saved_card` (hidden from the model,
//! idempotent, only the caller's own cards), and a Confirm with no saved card (`NO_SAVED_CARD`
//! with the link; the same Confirm pays once a card is saved). The Card Element in a real browser is
//! browser-tests/tests/stripe-card.test.mjs; here the browser's part (Stripe.js confirming the
//! SetupIntent with the publishable key) is the same request sent by the test.

use giftgenius_commerce::store::OrderStatusColumn;
use giftgenius_types::wire::META_PAYMENT_CARD;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::stripe::{app_on, app_on_with};
use crate::support::{LocalStripe, STRIPE_PUBLISHABLE_KEY, TestApp, call_as, commit_args, meta_of, prepare_as};

/// The subject the local-mode hint `hint` becomes.
fn subject(hint: &str) -> String {
    format!("{}:{hint}", giftgenius_server::auth::caller::LOCAL_SUBJECT)
}

/// A draft for `who`; its id and its payment card `_meta`.
async fn draft_of(app: &TestApp, who: &str) -> (String, Value) {
    let client = app.client().await;
    let (result, structured) = call_as(&client, who, "prepare_order", json!({"gift_id": "tr-001"})).await;
    assert_eq!(structured["ok"], true, "{structured}");
    let meta = meta_of(&result, META_PAYMENT_CARD).cloned().expect("the payment card in _meta");
    assert!(!structured.to_string().contains("/pay/card/"), "the link is not for the model: {structured}");
    (structured["draft"]["id"].as_str().unwrap().to_string(), meta)
}

struct Page {
    status: StatusCode,
    csp: String,
    body: String,
}

async fn open(url: &str) -> Page {
    page_of(reqwest::get(url).await.unwrap()).await
}

async fn page_of(response: reqwest::Response) -> Page {
    let status = response.status();
    let csp =
        response.headers().get("content-security-policy").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    Page { status, csp, body: response.text().await.unwrap() }
}

/// Posts the card page's confirmation form at `link` as a browser on `origin` would, `ticked` or
/// not.
async fn post_confirmation(link: &str, origin: &str, ticked: bool) -> Page {
    let body = if ticked { "account_confirmed=yes" } else { "" };
    let response = reqwest::Client::new()
        .post(link)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("origin", origin)
        .body(body)
        .send()
        .await
        .unwrap();
    page_of(response).await
}

/// The card form behind `link`, once the person confirmed the account is theirs on our page.
async fn confirm(app: &TestApp, link: &str) -> Page {
    let page = post_confirmation(link, &app.base_url, true).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    page
}

/// The value of `data-{name}="…"` in a page.
fn data(body: &str, name: &str) -> String {
    let start = body.find(&format!("data-{name}=\"")).unwrap_or_else(|| panic!("no data-{name} in {body}"));
    let rest = &body[start + name.len() + 7..];
    rest[..rest.find('"').unwrap()].to_string()
}

/// What Stripe.js does on Save card: confirms the SetupIntent with the card, the publishable
/// key and the client secret (localstripe's stand-in sends exactly this).
async fn confirm_in_browser(stripe: &LocalStripe, secret: &str, number: &str) -> Value {
    let seti = secret.split("_secret_").next().unwrap();
    let body = json!({
        "key": STRIPE_PUBLISHABLE_KEY,
        "use_stripe_sdk": true,
        "client_secret": secret,
        "payment_method_data": {"type": "card", "card": {"number": number, "exp_month": "12", "exp_year": "2034", "cvc": "123"}},
    });
    let response =
        reqwest::Client::new().post(format!("{}/v1/setup_intents/{seti}/confirm", stripe.url)).json(&body).send().await;
    response.unwrap().json().await.unwrap()
}

/// Saves `number` for `who` through the card page: (the page's link, the saved page).
async fn save_through_page(stripe: &LocalStripe, app: &TestApp, who: &str, number: &str) -> (String, Page) {
    let (_, meta) = draft_of(app, who).await;
    let link = meta["add_url"].as_str().expect("an Add a card link").to_string();
    let page = confirm(app, &link).await;
    let confirmed = confirm_in_browser(stripe, &data(&page.body, "secret"), number).await;
    assert_eq!(confirmed["status"], "succeeded", "{confirmed}");
    let saved = open(&format!("{link}/saved?setup_intent={}", confirmed["id"].as_str().unwrap())).await;
    (link, saved)
}

#[tokio::test]
async fn the_card_page_saves_a_card_the_confirm_card_then_shows_and_charges() {
    let stripe = LocalStripe::start().await;
    let app = app_on(&stripe).await;
    stripe.step("prepare_order for `u1` (no card yet: the confirm card offers Add a card)");
    let (_, before) = draft_of(&app, "u1").await;
    assert_eq!(before["card"], Value::Null, "no card yet: {before}");
    let link = before["add_url"].as_str().unwrap();
    assert!(link.starts_with(&format!("{}/pay/card/cus_", app.base_url)), "{link}");

    stripe.step("The hosted card page opens: whose account, and the confirmation (nothing at Stripe yet)");
    let asked = open(link).await;
    assert_eq!(asked.status, StatusCode::OK);
    assert!(asked.body.contains("This is my account (u1)"), "{}", asked.body);
    stripe.step("The person ticks This is my account and goes on: a SetupIntent for the account's Customer");
    let page = confirm(&app, link).await;
    let js_origin = stripe.url.clone();
    assert!(page.csp.contains(&format!("script-src 'self' {js_origin};")), "{}", page.csp);
    assert!(page.csp.starts_with("default-src 'none'") && !page.csp.contains("unsafe-eval"), "{}", page.csp);
    assert!(!page.body.contains("<script>"), "no inline script: {}", page.body);
    assert!(page.body.contains(&format!("<script src=\"{}\">", stripe.js_url())), "{}", page.body);
    assert_eq!(data(&page.body, "key"), STRIPE_PUBLISHABLE_KEY);
    let customer = app.state.store.stripe_customer(&subject("u1")).await.unwrap().expect("the Customer");
    let setups = stripe.get("/v1/setup_intents", &[("limit", "100")]).await;
    let setup = &setups["data"][0];
    assert_eq!((setup["customer"].as_str(), setup["usage"].as_str()), (Some(customer.as_str()), Some("off_session")));

    stripe.step("prepare_order, the card page again, Stripe.js confirms the SetupIntent with 4242 (browser → localstripe, not recorded), the page's Saved step reads it and attaches the card");
    let (_, saved) = save_through_page(&stripe, &app, "u1", "4242424242424242").await;
    assert_eq!(saved.status, StatusCode::OK, "{}", saved.body);
    assert!(saved.body.contains("Visa •••• 4242"), "{}", saved.body);
    let cards = stripe.get("/v1/payment_methods", &[("customer", &customer), ("type", "card")]).await;
    assert_eq!(cards["data"].as_array().map(Vec::len), Some(1), "attached to our Customer: {cards}");
    let held = stripe.get(&format!("/v1/customers/{customer}"), &[]).await;
    assert_eq!(held["invoice_settings"]["default_payment_method"], cards["data"][0]["id"], "the one charged");

    stripe.step("prepare_order: the confirm card shows Visa •••• 4242");
    let (_, after) = draft_of(&app, "u1").await;
    assert_eq!(after["card"], json!({"brand": "visa", "last4": "4242"}));

    // Confirm charges that card: one PaymentIntent, succeeded, with the saved PaymentMethod.
    let client = app.client().await;
    stripe.step("prepare_order, then commit_order (ik_1) → paid");
    let (draft, token) = prepare_as(&client, "u1", "tr-001").await;
    let (_, paid) = call_as(&client, "u1", "commit_order", commit_args(&draft, "ik_1", &token)).await;
    assert_eq!(paid["order"]["status"], "paid", "{paid}");
    let intents = stripe.payment_intents().await;
    assert_eq!(intents.len(), 1, "{intents:?}");
    assert_eq!(
        (intents[0]["status"].as_str(), intents[0]["payment_method"].as_str()),
        (Some("succeeded"), cards["data"][0]["id"].as_str())
    );
    stripe
        .write_transcript(
            "01-card-saved-on-hosted-page-then-paid",
            "A card saved through the hosted card page → commit → paid",
            "`stripe_cards::the_card_page_saves_a_card_the_confirm_card_then_shows_and_charges`: the \
             confirm card offers Add a card; the hosted page makes a SetupIntent; the browser's part \
             (Stripe.js `confirmCardSetup`) is the same request sent by the test straight to localstripe \
             (the Chromium run of it is browser-tests/tests/stripe-card.test.mjs); the saved card pays \
             with one PaymentIntent.",
        )
        .await;
}

#[tokio::test]
async fn confirm_without_a_saved_card_says_so_with_the_add_a_card_link_and_the_same_confirm_pays_once_a_card_is_saved()
{
    let stripe = LocalStripe::start().await;
    let app = app_on(&stripe).await;
    let client = app.client().await;
    let (draft, token) = prepare_as(&client, "u1", "tr-001").await;
    let (result, refused) = call_as(&client, "u1", "commit_order", commit_args(&draft, "ik_nocard", &token)).await;
    assert_eq!(refused["error"]["code"], "NO_SAVED_CARD", "not a decline: no bank said no: {refused}");
    assert_eq!(
        (refused["error"]["category"].as_str(), refused["error"]["retryable"].as_bool()),
        (Some("business"), Some(false))
    );
    let link = meta_of(&result, META_PAYMENT_CARD).and_then(|m| m["add_url"].as_str()).expect("the Add a card link");
    assert!(link.starts_with(&format!("{}/pay/card/cus_", app.base_url)), "{link}");
    assert!(!refused.to_string().contains("/pay/card/"), "the link is for the widget, not the model: {refused}");
    assert!(stripe.payment_intents().await.is_empty(), "nothing was asked of Stripe");
    let pending = app.state.store.orders_with_status(OrderStatusColumn::PendingPayment).await.unwrap();
    assert_eq!(pending.len(), 1, "the order waits for a card, holding its stock: {pending:?}");
    assert!(app.state.store.orders_with_status(OrderStatusColumn::PaymentDeclined).await.unwrap().is_empty());

    // Asked again before a card exists: the same answer, and still nothing at Stripe.
    let (_, again) = call_as(&client, "u1", "commit_order", commit_args(&draft, "ik_nocard", &token)).await;
    assert_eq!(again["error"]["code"], "NO_SAVED_CARD", "{again}");
    assert!(stripe.payment_intents().await.is_empty());

    // The person adds a card with the link, then presses the same Confirm (same draft, same key).
    let page = confirm(&app, link).await;
    let confirmed = confirm_in_browser(&stripe, &data(&page.body, "secret"), "4242424242424242").await;
    assert_eq!(confirmed["status"], "succeeded", "{confirmed}");
    let saved = open(&format!("{link}/saved?setup_intent={}", confirmed["id"].as_str().unwrap())).await;
    assert_eq!(saved.status, StatusCode::OK, "{}", saved.body);
    let (_, paid) = call_as(&client, "u1", "commit_order", commit_args(&draft, "ik_nocard", &token)).await;
    assert_eq!(paid["order"]["status"], "paid", "{paid}");
    assert_eq!(paid["order"]["id"], pending[0].id, "the order that waited is the one paid");
    let (_, replay) = call_as(&client, "u1", "commit_order", commit_args(&draft, "ik_nocard", &token)).await;
    assert_eq!(replay["order"], paid["order"], "a replay answers the payment");
    let intents = stripe.payment_intents().await;
    assert_eq!(intents.len(), 1, "one charge: {intents:?}");
    assert_eq!(intents[0]["status"], "succeeded");
}

#[tokio::test]
async fn the_page_in_spanish_and_portuguese() {
    let stripe = LocalStripe::start().await;
    let app = app_on(&stripe).await;
    let (_, meta) = draft_of(&app, "u1").await;
    let link = meta["add_url"].as_str().unwrap();
    for (lang, account, save) in [
        ("es-MX", "Esta es mi cuenta (u1)", "Guardar tarjeta"),
        ("pt-BR", "Esta é a minha conta (u1)", "Guardar cartão"),
    ] {
        let client = reqwest::Client::new();
        let asked = client.get(link).header("accept-language", lang).send().await.unwrap().text().await.unwrap();
        assert!(asked.contains(account), "{lang}: {asked}");
        let form = client
            .post(link)
            .header("accept-language", lang)
            .header("content-type", "application/x-www-form-urlencoded")
            .header("sec-fetch-site", "same-origin")
            .body("account_confirmed=yes")
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(form.contains(save), "{lang}: {form}");
    }
}

/// Issue 39 item 7: a card page link is a bearer link for one account, so someone could send
/// theirs to another person and have that person save a card into the sender's account. The
/// page says whose account it is (what the account signed in as, escaped) and creates nothing
/// at Stripe until the person ticks "This is my account (…)" on that page: going on without the
/// tick, or posting from another site, is refused; a SetupIntent made without the confirmation
/// saves nothing; with it the card is saved.
#[tokio::test]
async fn the_card_page_says_whose_account_and_saves_nothing_without_its_confirmation() {
    let stripe = LocalStripe::start().await;
    let app = app_on(&stripe).await;
    let (_, meta) = draft_of(&app, "u1").await;
    let link = meta["add_url"].as_str().unwrap().to_string();
    let customer = app.state.store.stripe_customer(&subject("u1")).await.unwrap().expect("the Customer");
    let setups = || async { stripe.get("/v1/setup_intents", &[("limit", "100")]).await["data"].clone() };

    stripe.step("GET the card page: it names the account (u1) and asks for the confirmation; nothing at Stripe");
    let asked = open(&link).await;
    assert_eq!(asked.status, StatusCode::OK, "{}", asked.body);
    assert_eq!(data(&asked.body, "account"), "u1");
    assert!(asked.body.contains("saved to the GiftGenius account of u1"), "{}", asked.body);
    assert!(asked.body.contains("This is my account (u1)"), "{}", asked.body);
    assert!(!asked.body.contains("<script") && !asked.body.contains("data-secret"), "{}", asked.body);
    assert!(asked.csp.contains("form-action 'self'"), "{}", asked.csp);
    assert_eq!(setups().await, json!([]), "no SetupIntent before the confirmation");

    stripe.step("POST it without ticking the box → 422, asked again; from another site → 403; nothing at Stripe");
    let unticked = post_confirmation(&link, &app.base_url, false).await;
    assert_eq!(unticked.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", unticked.body);
    assert!(unticked.body.contains("data-confirm-first") && !unticked.body.contains("data-secret"));
    let forged = post_confirmation(&link, "https://attacker.example", true).await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN, "{}", forged.body);
    assert_eq!(setups().await, json!([]), "still no SetupIntent");

    stripe.step(
        "A SetupIntent for u1's Customer made without the confirmation, confirmed with a card → Saved refuses it",
    );
    let unconfirmed = stripe.post("/v1/setup_intents", &[("customer", &customer), ("usage", "off_session")]).await;
    let done = confirm_in_browser(&stripe, unconfirmed["client_secret"].as_str().unwrap(), "4242424242424242").await;
    assert_eq!(done["status"], "succeeded", "{done}");
    let refused = open(&format!("{link}/saved?setup_intent={}", done["id"].as_str().unwrap())).await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", refused.body);
    let held = stripe.get(&format!("/v1/customers/{customer}"), &[]).await;
    assert_eq!(held["invoice_settings"]["default_payment_method"], Value::Null, "not made the card charged: {held}");

    stripe.step("Ticked on our page → the card form; the card is saved");
    let form = confirm(&app, &link).await;
    let confirmed = confirm_in_browser(&stripe, &data(&form.body, "secret"), "4242424242424242").await;
    let saved = open(&format!("{link}/saved?setup_intent={}", confirmed["id"].as_str().unwrap())).await;
    assert_eq!(saved.status, StatusCode::OK, "{}", saved.body);
    assert!(saved.body.contains("Visa •••• 4242"), "{}", saved.body);

    // What the account is shown as is escaped.
    let (_, odd) = draft_of(&app, "eve\"<i>").await;
    let page = open(odd["add_url"].as_str().unwrap()).await;
    assert!(page.body.contains("eve&quot;&lt;i&gt;") && !page.body.contains("<i>"), "{}", page.body);
}

#[tokio::test]
async fn an_expired_tampered_or_someone_elses_link_opens_nothing_and_says_why_to_no_one() {
    let stripe = LocalStripe::start().await;
    let app = app_on(&stripe).await;
    let (_, mine) = draft_of(&app, "u1").await;
    let (_, theirs) = draft_of(&app, "u2").await;
    let link = mine["add_url"].as_str().unwrap().to_string();
    let their_customer = app.state.store.stripe_customer(&subject("u2")).await.unwrap().unwrap();

    let (prefix, token) = link.rsplit_once('/').unwrap();
    let mut parts: Vec<&str> = token.split('.').collect();
    let flipped = if parts[2].ends_with('0') { '1' } else { '0' };
    let tampered_tag = format!("{prefix}/{}.{}.{}{flipped}", parts[0], parts[1], &parts[2][..31]);
    let later = (parts[1].parse::<i64>().unwrap() + 3_600_000).to_string();
    parts[1] = &later;
    let extended = format!("{prefix}/{}", parts.join("."));
    let (_, my_tag) = token.rsplit_once('.').unwrap();
    let expires = token.split('.').nth(1).unwrap();
    let someone_elses = format!("{prefix}/{their_customer}.{expires}.{my_tag}");
    let gone = open(&format!("{prefix}/garbage")).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
    for bad in [&tampered_tag, &extended, &someone_elses] {
        let page = open(bad).await;
        assert_eq!(page.status, StatusCode::NOT_FOUND, "{bad}");
        assert_eq!(page.body, gone.body, "the same page whatever is wrong: {bad}");
        assert!(!page.body.contains("cus_") && !page.body.contains("secret"), "{}", page.body);
    }
    // A link of theirs opens their page, never mine; a SetupIntent of theirs saves nothing for me.
    let their_page = confirm(&app, theirs["add_url"].as_str().unwrap()).await;
    let confirmed = confirm_in_browser(&stripe, &data(&their_page.body, "secret"), "4242424242424242").await;
    let stolen = open(&format!("{link}/saved?setup_intent={}", confirmed["id"].as_str().unwrap())).await;
    assert_eq!(stolen.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", stolen.body);
    let made_up = open(&format!("{link}/saved?setup_intent=seti_nothing")).await;
    assert_eq!(made_up.status, StatusCode::UNPROCESSABLE_ENTITY);
    let mine_customer = app.state.store.stripe_customer(&subject("u1")).await.unwrap().unwrap();
    let cards = stripe.get("/v1/payment_methods", &[("customer", &mine_customer), ("type", "card")]).await;
    assert_eq!(cards["data"], json!([]), "nothing saved for u1");

    // Thirty minutes later the link is dead, the same page again.
    app.clock.advance(std::time::Duration::from_secs(30 * 60));
    let expired = open(&link).await;
    assert_eq!((expired.status, expired.body), (StatusCode::NOT_FOUND, gone.body));
}

#[tokio::test]
async fn remove_card_detaches_the_callers_cards_once_and_shows_add_a_card_again() {
    let stripe = LocalStripe::start().await;
    let app = app_on(&stripe).await;
    save_through_page(&stripe, &app, "u1", "4242424242424242").await;
    save_through_page(&stripe, &app, "u2", "4242424242424242").await;
    let (draft, meta) = draft_of(&app, "u1").await;
    assert_eq!(meta["card"]["last4"], "4242");
    let client = app.client().await;

    let tools = client.list_all_tools().await.unwrap();
    let remove = tools.iter().find(|t| t.name == "remove_saved_card").expect("the tool is listed");
    let tool_meta = serde_json::to_value(&remove.meta).unwrap();
    assert_eq!(tool_meta["openai/visibility"], "private", "hidden from the model");
    assert_eq!(tool_meta["ui"]["visibility"], json!(["app"]));

    // Someone else's draft: refused like any draft not theirs, and u1's card stays.
    let (_, refused) = call_as(&client, "u3", "remove_saved_card", json!({"draft_id": draft})).await;
    assert_eq!(refused["error"]["code"], "DRAFT_EXPIRED", "{refused}");
    let u1 = app.state.store.stripe_customer(&subject("u1")).await.unwrap().unwrap();
    let u2 = app.state.store.stripe_customer(&subject("u2")).await.unwrap().unwrap();
    let cards_of = |customer: String| {
        let stripe = &stripe;
        async move {
            let list = stripe.get("/v1/payment_methods", &[("customer", &customer), ("type", "card")]).await;
            list["data"].as_array().unwrap().len()
        }
    };
    assert_eq!(cards_of(u1.clone()).await, 1);

    let (result, removed) = call_as(&client, "u1", "remove_saved_card", json!({"draft_id": draft})).await;
    assert_eq!(
        (removed["ok"].as_bool(), removed["tool"].as_str()),
        (Some(true), Some("remove_saved_card")),
        "{removed}"
    );
    assert_eq!(removed["draft"]["id"], draft.as_str(), "the same draft again");
    let shown = meta_of(&result, META_PAYMENT_CARD).unwrap();
    assert_eq!(shown["card"], Value::Null, "Add a card again: {shown}");
    assert!(shown["add_url"].as_str().is_some());
    assert_eq!(cards_of(u1.clone()).await, 0, "detached at Stripe");
    assert_eq!(cards_of(u2.clone()).await, 1, "only the caller's own");

    let (_, again) = call_as(&client, "u1", "remove_saved_card", json!({"draft_id": draft})).await;
    assert_eq!(again["ok"], true, "removing nothing is fine: {again}");
    assert_eq!(cards_of(u2).await, 1);
}

#[tokio::test]
async fn the_3_d_secure_page_refuses_a_link_not_ours_with_one_page_and_no_script() {
    let stripe = LocalStripe::start().await;
    let app = app_on(&stripe).await;
    let (_, meta) = draft_of(&app, "u1").await;
    // A card page link is no 3-D Secure link, nor is garbage: the same 404, no script, no detail.
    let (_, card_token) = meta["add_url"].as_str().unwrap().rsplit_once('/').unwrap();
    let garbage = open(&format!("{}/pay/authenticate/o_nothing.00ff", app.base_url)).await;
    let card = open(&format!("{}/pay/authenticate/{card_token}", app.base_url)).await;
    for page in [&garbage, &card] {
        assert_eq!(page.status, StatusCode::NOT_FOUND);
        assert!(page.body.contains("This link is not valid."), "{}", page.body);
        assert!(!page.body.contains("<script") && !page.csp.contains("script-src"), "{} {}", page.body, page.csp);
    }
    assert_eq!(garbage.body, card.body);
    let done = open(&format!("{}/pay/authenticate/o_nothing.00ff/done", app.base_url)).await;
    assert_eq!((done.status, done.body), (StatusCode::NOT_FOUND, garbage.body));
}

/// Every load of the card page asks Stripe (a SetupIntent); its link is one account's, so its
/// loads count against that account's hourly payment lookups: past them, 429 with Retry-After
/// and nothing asked of Stripe, while another account's link still opens.
#[tokio::test]
async fn card_page_loads_past_the_accounts_hourly_lookups_get_429_and_another_account_still_opens() {
    let stripe = LocalStripe::start().await;
    let app = app_on_with(&stripe, |c| c.hourly_payment_lookup_limit = 2).await;
    let (_, mine) = draft_of(&app, "u1").await;
    let (_, theirs) = draft_of(&app, "u2").await;
    let link = mine["add_url"].as_str().unwrap();
    for load in 0..2 {
        assert_eq!(open(link).await.status, StatusCode::OK, "load {load} is within the limit");
    }
    let response = reqwest::get(link).await.unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry_after: u64 = response.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=3600).contains(&retry_after), "{retry_after}");
    let body = response.text().await.unwrap();
    assert!(body.contains("data-rate-limited") && !body.contains("data-secret"), "{body}");
    assert_eq!(open(theirs["add_url"].as_str().unwrap()).await.status, StatusCode::OK, "u2 is not limited by u1");
}
