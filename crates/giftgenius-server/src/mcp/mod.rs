//! The MCP face of GiftGenius: the tool registry, the handler, and how answers become results.
//!
//! - this file: the `#[tool_router]` impl block, the one registry of tools (each tool's name,
//!   description, annotations and schemas sit on the function that implements it; schemas come
//!   from the contract types), and the `ServerHandler` that builds one `CallContext` per call;
//! - `arguments.rs`: raw arguments → typed input, or a validation error;
//! - `reply.rs`: a service's `Outcome` → `CallToolResult` (the one place);
//! - `policy.rs`: invariants after every call;
//! - `measure.rs`: each request's method, tool, outcome and time for `/metrics`;
//! - `traced.rs`: one server span per MCP request (OpenTelemetry's MCP conventions);
//! - `request_body.rs`: in front of rmcp over HTTP, a body that is no JSON-RPC message gets a
//!   JSON-RPC error (parse error -32700, invalid request -32600) with HTTP 400.

pub mod arguments;
pub mod policy;
pub mod reply;

use std::sync::Arc;

use giftgenius_types::bounded::cut;
use giftgenius_types::schema::{input_schema, output_schema};
use giftgenius_types::sheet::CompleteCheckoutInput;
use giftgenius_types::{
    CancelOrderInput, CheckoutData, CommitOrderInput, CreateCheckoutSessionInput, DeleteMyDataData, DeleteMyDataInput,
    Envelope, ErrorCode, GetOrderInput, ListOrdersData, ListOrdersInput, OrderData, PrepareOrderData,
    PrepareOrderInput, ProductCheckoutInput, RemoveSavedCardInput, ReopenOrderDraftInput, SuggestGiftsData,
    SuggestGiftsInput, ToolError, ToolName,
};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::{Extension, ToolCallContext};
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, CustomRequest, CustomResult, DiscoverResult,
    Implementation, InitializeRequestParams, InitializeResult, JsonObject, ListResourcesResult, ListToolsResult,
    MetaObject, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, tool, tool_router};
use serde_json::{Map, Value, json};
use tracing::Instrument;

use crate::auth::{AuthMode, Caller, challenge};
use crate::context::{CallContext, DEFAULT_LOCALE};
use crate::metrics::{McpMethod, McpServer};
use crate::state::AppState;
use crate::web::mcp::{MAX_ECHOED_NAME_CHARS, unmatched_request};
pub use crate::web::mcp::{measure, request_body, traced};
use crate::widget_resource::WIDGET_DESCRIPTION;
use arguments::parse;
use giftgenius_commerce::failpoints::SUGGEST_GIFTS_PANICS;
use reply::{render, render_error};

/// Requests this server answers; one that reaches `on_custom_request` had params rmcp could not read.
const SERVED_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
];

pub const INSTRUCTIONS: &str = "GiftGenius finds gift ideas and can buy one. \
Call suggest_gifts when the user wants gift ideas; relationship_type is required, and age, interests, budget (in the user's currency) and occasion make results better. \
When nothing matches, the result's notice lists concrete changes that would match: offer them to the user instead of guessing. \
Errors come back as structured results with a code, a category and whether retrying helps: fix validation errors before calling again, and never retry permission errors yourself. \
Purchases need the user's click on Confirm in the widget; you cannot complete a purchase on your own.";

/// Cache hints (MCP 2026-07-28, SEP-2549) on what a client may keep instead of asking again.
/// Everything listed is `public`: the tool list, the resource list and discovery are the same
/// for every caller (no per-user or per-connection variation, which a test holds), so a shared
/// cache may serve them. Lists and discovery live for minutes, so a deploy that changes a tool
/// reaches clients soon; the widget resource's URI changes with its content, so one read of a
/// URI stays true for a day.
const LIST_TTL_MS: u64 = 5 * 60 * 1000;

/// The widget URI ChatGPT's product checkout entry requires of the `checkout_session` tool
/// (OpenAI's "product checkout conversion spec"): a second name of the one widget artifact.
pub const PRODUCT_CHECKOUT_WIDGET_URI: &str = "ui://widget/checkout-session.html";
const WIDGET_READ_TTL_MS: u64 = 24 * 60 * 60 * 1000;

/// The `_meta["openai/subject"]` a client sent: a hint, never identity. It names the user only
/// in local mode (see `auth::Caller::subject`) and is otherwise logged hashed.
fn client_hint(context: &RequestContext<RoleServer>) -> Option<&str> {
    context.meta.0.0.get("openai/subject").and_then(Value::as_str)
}

/// Whose drafts, keys, orders and limits a call may touch: the verified account, the local
/// user(s) or the single user; `None` for a signed-out caller (verified mode, no token).
fn subject_of(caller: &Caller, context: &RequestContext<RoleServer>) -> Option<String> {
    caller.subject(client_hint(context))
}

/// The budget a signed-out caller's suggestions count against: one per client address (an
/// IPv6 client's /64), hashed. The address is the client's (the peer, or the client a trusted
/// proxy names: `http::client_addr`).
fn signed_out_subject(parts: Option<&axum::http::request::Parts>) -> String {
    let address = parts
        .and_then(|p| crate::client_addr::ClientAddr::of(&p.extensions))
        .map(|ip| crate::client_addr::client_group(ip).to_string())
        .unwrap_or_default();
    format!("anon:{}", crate::context::hashed(&address))
}

/// The host's locale (`_meta["openai/locale"]`), for what the widget shows.
fn locale_of(context: &RequestContext<RoleServer>) -> String {
    context
        .meta
        .0
        .0
        .get("openai/locale")
        .and_then(Value::as_str)
        .filter(|l| !l.is_empty() && l.len() <= 35)
        .unwrap_or(DEFAULT_LOCALE)
        .to_string()
}

/// The MCP server handler (one per session, or per request for stateless 2026-07-28 clients;
/// cheap to make and to clone).
#[derive(Clone)]
pub struct GiftGenius {
    app: Arc<AppState>,
    tool_router: &'static ToolRouter<Self>,
}

#[tool_router]
impl GiftGenius {
    /// A handler over `app`. The tool registry is built once per process: building it
    /// validates and hashes every tool's name and schema, which was a fifth of a
    /// `suggest_gifts` call's instructions when a stateless request made its own handler.
    pub fn new(app: Arc<AppState>) -> Self {
        static REGISTRY: std::sync::OnceLock<ToolRouter<GiftGenius>> = std::sync::OnceLock::new();
        Self { app, tool_router: REGISTRY.get_or_init(Self::tool_router) }
    }

    #[tool(
        name = "suggest_gifts",
        title = "Suggest gifts",
        description = "Suggest gifts for someone, ranked best first, each with its price, store and why it fits. \
Use this when the user asks for gift ideas. relationship_type is required; pass age, interests, budget_min/budget_max \
(in `currency`, default USD) and occasion when the user mentioned them, and in `about` anything else they said about \
the recipient (it is used for meaning only and never repeated). Read-only: it never buys anything. \
An empty result comes with a notice suggesting changes that would match.",
        input_schema = input_schema::<SuggestGiftsInput>(),
        output_schema = output_schema::<Envelope<SuggestGiftsData>>(),
        annotations(title = "Suggest gifts", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn suggest_gifts(&self, Extension(call): Extension<CallContext>, arguments: JsonObject) -> CallToolResult {
        let relationship = arguments.get("relationship_type").and_then(|v| v.as_str()).unwrap_or_default();
        self.app.failpoints.panic_if(SUGGEST_GIFTS_PANICS, relationship);
        let outcome = match parse::<SuggestGiftsInput>(&call, &arguments) {
            Ok(input) => self.app.suggester.suggest(&call, &input).await,
            Err(error) => error.into(),
        };
        render(&call, outcome)
    }

    #[tool(
        name = "prepare_order",
        title = "Prepare an order",
        description = "Prepare an order for one gift the user picked (gift_id from suggest_gifts), or for several gifts \
bought together (items: each gift_id with its quantity, one recipient, one payment): checks stock and price \
and returns a draft that the widget shows with Confirm and Cancel buttons. Pass the recipient (name and postal address, \
country as ISO 3166-1 alpha-2) and gift_message when the user gave them; without a recipient the user's saved address is \
used if they have one, and the user can edit every detail on the card. Set save_address only when the user asked to \
remember the address. Nothing is bought by this call; the purchase happens only when the user presses Confirm. The same \
arguments return the same draft while it is valid (30 minutes).",
        input_schema = input_schema::<PrepareOrderInput>(),
        output_schema = output_schema::<Envelope<PrepareOrderData>>(),
        annotations(title = "Prepare an order", read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn prepare_order(&self, Extension(call): Extension<CallContext>, arguments: JsonObject) -> CallToolResult {
        let outcome = match parse::<PrepareOrderInput>(&call, &arguments) {
            Ok(input) => self.app.checkout.prepare_order(&call, &input).await,
            Err(error) => error.into(),
        };
        render(&call, outcome)
    }

    #[tool(
        name = "commit_order",
        title = "Place the order",
        description = "Charge and place the order for a draft, only after the user confirmed it by pressing Confirm in the \
GiftGenius widget. Called by the widget, not by the model: it needs the confirmation token only the widget holds. \
idempotency_key is minted once per draft; retrying with the same key never charges twice.",
        input_schema = input_schema::<CommitOrderInput>(),
        output_schema = output_schema::<Envelope<OrderData>>(),
        annotations(title = "Place the order", read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = true)
    )]
    async fn commit_order(&self, Extension(call): Extension<CallContext>, arguments: JsonObject) -> CallToolResult {
        let outcome = match parse::<CommitOrderInput>(&call, &arguments) {
            Ok(input) => self.app.checkout.commit_order(&call, &input, &arguments).await,
            Err(error) => error.into(),
        };
        render(&call, outcome)
    }

    #[tool(
        name = "complete_checkout",
        title = "Pay in the host's checkout sheet",
        description = "Pay for a draft in the host's payment sheet (window.openai.requestCheckout): checkout_session_id \
is the session prepare_order gave the widget, payment_data.token the sheet's delegated-payment vault token. Called by the \
host, not by the model. One order per checkout session whatever the retries; a retry after success answers with the same \
order.",
        input_schema = input_schema::<CompleteCheckoutInput>(),
        output_schema = output_schema::<Envelope<OrderData>>(),
        annotations(title = "Pay in the host's checkout sheet", read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = true)
    )]
    async fn complete_checkout(
        &self,
        Extension(call): Extension<CallContext>,
        arguments: JsonObject,
    ) -> CallToolResult {
        let outcome = match parse::<CompleteCheckoutInput>(&call, &arguments) {
            Ok(input) => self.app.checkout.complete_checkout(&call, &input).await,
            Err(error) => error.into(),
        };
        render(&call, outcome)
    }

    #[tool(
        name = "reopen_order_draft",
        title = "Reopen an order draft",
        description = "Show a draft from prepare_order again by its draft_id, unchanged, with a fresh confirmation token for \
the widget. Called by the GiftGenius widget when a reloaded confirmation card lost its token, not by the model. Buys \
nothing. A draft that expired or no longer exists answers DRAFT_EXPIRED.",
        input_schema = input_schema::<ReopenOrderDraftInput>(),
        output_schema = output_schema::<Envelope<PrepareOrderData>>(),
        annotations(title = "Reopen an order draft", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn reopen_order_draft(
        &self,
        Extension(call): Extension<CallContext>,
        arguments: JsonObject,
    ) -> CallToolResult {
        let outcome = match parse::<ReopenOrderDraftInput>(&call, &arguments) {
            Ok(input) => self.app.checkout.reopen_order_draft(&call, &input).await,
            Err(error) => error.into(),
        };
        render(&call, outcome)
    }

    #[tool(
        name = "remove_saved_card",
        title = "Remove the saved card",
        description = "Remove the user's saved payment card, after the user pressed Remove card on the confirmation card in \
the GiftGenius widget, and show that draft again without it. Called by the widget, not by the model. Removing a card that \
is already gone changes nothing.",
        input_schema = input_schema::<RemoveSavedCardInput>(),
        output_schema = output_schema::<Envelope<PrepareOrderData>>(),
        annotations(title = "Remove the saved card", read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = true)
    )]
    async fn remove_saved_card(
        &self,
        Extension(call): Extension<CallContext>,
        arguments: JsonObject,
    ) -> CallToolResult {
        let outcome = match parse::<RemoveSavedCardInput>(&call, &arguments) {
            Ok(input) => self.app.checkout.remove_saved_card(&call, &input).await,
            Err(error) => error.into(),
        };
        render(&call, outcome)
    }

    #[tool(
        name = "checkout_session",
        title = "Check out",
        description = "Open checkout for products the user picked in ChatGPT's shopping results (ChatGPT's product \
checkout entry): `checkout_session.items` are our product feed's ids (`id`, with `offerId` when the feed gave one) and \
quantities. Answers the same draft as prepare_order with those gifts as one basket; the widget asks for whatever is \
missing (who it is for, the address) and the user confirms there. Nothing is bought by this call.",
        input_schema = input_schema::<ProductCheckoutInput>(),
        output_schema = output_schema::<Envelope<PrepareOrderData>>(),
        annotations(title = "Check out", read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn checkout_session(&self, Extension(call): Extension<CallContext>, arguments: JsonObject) -> CallToolResult {
        let outcome = match parse::<ProductCheckoutInput>(&call, &arguments) {
            Ok(input) => self.app.checkout.prepare_order(&call, &input.basket()).await,
            Err(error) => error.into(),
        };
        render(&call, outcome)
    }

    #[tool(
        name = "create_checkout_session",
        title = "Create a checkout link",
        description = "Create a hosted checkout page for ONE gift. Call only after the user has explicitly confirmed they \
want to buy this gift. Pass a unique idempotency_key and reuse the same key when retrying: a duplicate call returns the \
same session instead of creating another. Nothing is charged until the user pays on the page.",
        input_schema = input_schema::<CreateCheckoutSessionInput>(),
        output_schema = output_schema::<Envelope<CheckoutData>>(),
        annotations(title = "Create a checkout link", read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = true)
    )]
    async fn create_checkout_session(
        &self,
        Extension(call): Extension<CallContext>,
        arguments: JsonObject,
    ) -> CallToolResult {
        let outcome = match parse::<CreateCheckoutSessionInput>(&call, &arguments) {
            Ok(input) => self.app.checkout.create_checkout_session(&call, &input, &arguments).await,
            Err(error) => error.into(),
        };
        render(&call, outcome)
    }

    #[tool(
        name = "get_order",
        title = "Get an order",
        description = "Read the status of an order placed through GiftGenius (order_id from a placed order). Read-only.",
        input_schema = input_schema::<GetOrderInput>(),
        output_schema = output_schema::<Envelope<OrderData>>(),
        annotations(title = "Get an order", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn get_order(&self, Extension(call): Extension<CallContext>, arguments: JsonObject) -> CallToolResult {
        let outcome = match parse::<GetOrderInput>(&call, &arguments) {
            Ok(input) => self.app.checkout.get_order(&call, &input).await,
            Err(error) => error.into(),
        };
        render(&call, outcome)
    }

    #[tool(
        name = "list_orders",
        title = "List my orders",
        description = "List the user's own GiftGenius orders, newest first, with status, total and where each goes (city, \
country). Pass next_cursor as cursor for older ones. Read-only. The widget shows the list, with Cancel order on orders \
that may still be cancelled; you cannot cancel an order yourself.",
        input_schema = input_schema::<ListOrdersInput>(),
        output_schema = output_schema::<Envelope<ListOrdersData>>(),
        annotations(title = "List my orders", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn list_orders(&self, Extension(call): Extension<CallContext>, arguments: JsonObject) -> CallToolResult {
        let outcome = match parse::<ListOrdersInput>(&call, &arguments) {
            Ok(input) => self.app.checkout.list_orders(&call, &input).await,
            Err(error) => error.into(),
        };
        render(&call, outcome)
    }

    #[tool(
        name = "cancel_order",
        title = "Cancel an order",
        description = "Cancel a paid order before its fulfilment cut-off and refund it, only after the user pressed Cancel \
order in the GiftGenius widget. Called by the widget, not by the model: it needs the token only the widget holds. \
idempotency_key is minted once per cancellation; retrying with the same key never refunds twice.",
        input_schema = input_schema::<CancelOrderInput>(),
        output_schema = output_schema::<Envelope<OrderData>>(),
        annotations(title = "Cancel an order", read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = true)
    )]
    async fn cancel_order(&self, Extension(call): Extension<CallContext>, arguments: JsonObject) -> CallToolResult {
        let outcome = match parse::<CancelOrderInput>(&call, &arguments) {
            Ok(input) => self.app.checkout.cancel_order(&call, &input, &arguments).await,
            Err(error) => error.into(),
        };
        render(&call, outcome)
    }

    #[tool(
        name = "delete_my_data",
        title = "Delete my data",
        description = "Delete the user's saved address, drafts and stored requests, and anonymize their orders (financial \
records are kept as the law requires), only after the user pressed Delete my data in the GiftGenius widget. Called by the \
widget, not by the model.",
        input_schema = input_schema::<DeleteMyDataInput>(),
        output_schema = output_schema::<Envelope<DeleteMyDataData>>(),
        annotations(title = "Delete my data", read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn delete_my_data(&self, Extension(call): Extension<CallContext>, arguments: JsonObject) -> CallToolResult {
        let outcome = match parse::<DeleteMyDataInput>(&call, &arguments) {
            Ok(input) => self.app.checkout.delete_my_data(&call, &input).await,
            Err(error) => error.into(),
        };
        render(&call, outcome)
    }
}

/// Where a tool result asks the host to sign the user in (OpenAI Apps SDK).
pub const AUTH_CHALLENGE_META: &str = "mcp/www_authenticate";

/// The tool's `securitySchemes` (in `_meta`; rmcp's `Tool` has no top-level field for it). With
/// an authorization server (verified mode): suggest_gifts works signed out and signed in, the
/// order tools need OAuth with their scope. Without one nobody can sign in, so every tool says
/// `noauth` (local and single-user modes serve everyone as a known user).
pub fn security_schemes(tool: ToolName, verified: bool) -> Value {
    match crate::auth::required_scope(tool.as_str()) {
        _ if !verified => json!([{ "type": "noauth" }]),
        Some(scope) => json!([{ "type": "oauth2", "scopes": [scope] }]),
        None => json!([{ "type": "noauth" }, { "type": "oauth2", "scopes": [] }]),
    }
}

/// `_meta` of a tool in both hosts' vocabularies: which widget renders it (every tool's result
/// is one of the widget's states), what the host shows while it runs, and who may call it.
pub fn tool_meta(tool: ToolName, widget_uri: &str) -> Map<String, Value> {
    let (invoking, invoked, visibility): (&str, &str, &[&str]) = match tool {
        ToolName::SuggestGifts => ("Finding gift ideas…", "Gift ideas ready", &["model", "app"]),
        ToolName::PrepareOrder => ("Checking price and stock…", "Order ready to confirm", &["model", "app"]),
        ToolName::CommitOrder => ("Placing your order…", "Order placed", &["app"]),
        ToolName::ReopenOrderDraft => ("Opening the order…", "Order ready to confirm", &["app"]),
        ToolName::CreateCheckoutSession => ("Creating checkout…", "Checkout ready", &["model", "app"]),
        ToolName::GetOrder => ("Looking up the order…", "Order status", &["model", "app"]),
        ToolName::ListOrders => ("Looking up your orders…", "Your orders", &["model", "app"]),
        ToolName::CancelOrder => ("Cancelling your order…", "Order cancelled", &["app"]),
        ToolName::DeleteMyData => ("Deleting your data…", "Your data was deleted", &["app"]),
        ToolName::CompleteCheckout => ("Paying…", "Order placed", &["app"]),
        ToolName::RemoveSavedCard => ("Removing the card…", "Card removed", &["app"]),
        ToolName::CheckoutSession => ("Opening checkout…", "Ready to confirm", &["model", "app"]),
    };
    let mut meta = Map::new();
    meta.insert("openai/toolInvocation/invoking".into(), json!(invoking));
    meta.insert("openai/toolInvocation/invoked".into(), json!(invoked));
    meta.insert("openai/widgetAccessible".into(), json!(true));
    meta.insert("openai/outputTemplate".into(), json!(widget_uri));
    meta.insert("ui".into(), json!({ "visibility": visibility, "resourceUri": widget_uri }));
    if visibility == ["app"] {
        // Apps SDK: hidden from the model, callable from the widget.
        meta.insert("openai/visibility".into(), json!("private"));
    }
    meta
}

impl GiftGenius {
    /// The tool list with each tool's `_meta` attached; the same for every connection.
    pub fn tools(&self) -> Vec<Tool> {
        let uri = self.app.widget.uri();
        let verified = matches!(self.app.auth, AuthMode::Verified { .. });
        self.tool_router
            .list_all()
            .into_iter()
            .map(|tool| match ToolName::parse(&tool.name) {
                Some(name) => {
                    // The product checkout entry names its own widget URI (the same artifact).
                    let uri = if name == ToolName::CheckoutSession { PRODUCT_CHECKOUT_WIDGET_URI } else { uri };
                    let mut meta = tool_meta(name, uri);
                    meta.insert("securitySchemes".into(), security_schemes(name, verified));
                    tool.with_meta(MetaObject(meta))
                }
                None => tool,
            })
            .collect()
    }

    /// AUTH_REQUIRED for a call without the account (or the scope) its tool needs. The result's
    /// `_meta["mcp/www_authenticate"]` is the challenge a host such as ChatGPT reads to start
    /// account linking; the text tells the model to ask the user to connect their account.
    fn auth_required(&self, call: &CallContext, scope: &str) -> CallToolResult {
        let error = ToolError::new(
            ErrorCode::AuthRequired,
            format!(
                "{} needs a signed-in GiftGenius account with the {scope} permission. Ask the user to connect \
                 their GiftGenius account, then try again.",
                call.tool.as_str()
            ),
            &call.reference,
        );
        let mut result = render_error(call, error);
        if let (Some(metadata), Some(meta)) = (&self.app.resource_metadata, result.meta.as_mut()) {
            let challenge = challenge::auth_required_meta(metadata, scope, "Sign in to GiftGenius to buy gifts");
            meta.0.insert(AUTH_CHALLENGE_META.into(), challenge);
        }
        result
    }

    /// Builds the call's context once, runs the tool inside its span, and applies the policy.
    async fn run_tool(
        &self,
        request: CallToolRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(tool) = ToolName::parse(&request.name) else {
            // Not one of ours: the router answers with the protocol's "unknown tool" error.
            return self.tool_router.call(ToolCallContext::new(self, request, context)).await;
        };
        let parts = context.extensions.get::<axum::http::request::Parts>();
        let Some(caller) = Caller::from_parts(parts, &self.app.auth) else {
            // Verified mode, and no HTTP request under the call: nobody's token was checked.
            tracing::warn!(tool = tool.as_str(), "refused a tool call that carries no HTTP request in verified mode");
            return Err(ErrorData::invalid_request(
                "this server identifies callers by their access token over HTTP; the call carries none",
                None,
            ));
        };
        let subject = subject_of(&caller, &context).unwrap_or_else(|| signed_out_subject(parts));
        let hint = client_hint(&context).map(str::to_owned);
        let mut call = CallContext::with_client_hint(tool, subject, locale_of(&context), hint.as_deref());
        call.account_name = caller.account_name(client_hint(&context));
        traced::record_reference(&call.reference);
        // The middleware refuses a token without the tool's scope (HTTP 403); this is the second
        // line, and the only one for a caller with no token at all.
        if let Some(scope) = crate::auth::required_scope(tool.as_str())
            && !caller.has_scope(scope)
        {
            return Ok(self.auth_required(&call, scope).into());
        }
        context.extensions.insert(call.clone());
        let output_schema = self.tool_router.get(&request.name).and_then(|t| t.output_schema.clone());
        let run = self.tool_router.call(ToolCallContext::new(self, request, context)).instrument(call.span.clone());
        // A panic in a handler becomes an honest INTERNAL_ERROR for this call; the server goes on.
        match crate::panics::caught(run).await {
            Ok(Ok(CallToolResponse::Complete(result))) => {
                Ok(policy::enforce(&call, result, output_schema.as_deref()).into())
            }
            Ok(other) => other,
            Err(panicked) => Ok(render_error(&call, crate::error::internal(&call, &panicked)).into()),
        }
    }

    /// The widget resource under `uri` (its own, versioned URI, or the product checkout
    /// entry's fixed one): the same artifact for every connection.
    fn widget_resource(&self, uri: &str, name: &str) -> Resource {
        let widget = &self.app.widget;
        Resource::new(uri, name)
            .with_title("GiftGenius")
            .with_description(WIDGET_DESCRIPTION)
            .with_mime_type(widget.mime().mime_type())
            .with_size(widget.html().len() as u64)
            .with_meta(MetaObject(widget.resource_meta()))
    }
}

impl ServerHandler for GiftGenius {
    /// A request rmcp could not match to a method it knows. rmcp's default answer is "method not
    /// found" with the method name whole (up to the body limit); ours cuts the name, and for a
    /// method we do serve (its params did not fit, e.g. `arguments` that are a string) says
    /// invalid params instead.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Err(unmatched_request(&request.method, SERVED_METHODS))
    }

    fn get_info(&self) -> ServerConfig {
        let mut info = Implementation::new("giftgenius", env!("CARGO_PKG_VERSION"));
        info.title = Some("GiftGenius".into());
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().build())
            .with_server_info(info)
            .with_instructions(INSTRUCTIONS)
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        measure::initialize(self, &self.app.metrics.mcp, McpServer::App, request, context).await
    }

    async fn ping(&self, context: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        measure::observed(&self.app.metrics.mcp, McpServer::App, McpMethod::Ping, None, &context, async { Ok(()) })
            .await
    }

    async fn discover(&self, context: RequestContext<RoleServer>) -> Result<DiscoverResult, ErrorData> {
        measure::observed(&self.app.metrics.mcp, McpServer::App, McpMethod::Discover, None, &context, async {
            Ok(DiscoverResult::from_server_info(self.supported_protocol_versions().into_owned(), self.get_info())
                .with_ttl_ms(LIST_TTL_MS)
                .with_cache_scope(CacheScope::Public))
        })
        .await
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        measure::observed(&self.app.metrics.mcp, McpServer::App, McpMethod::ToolsList, None, &context, async {
            Ok(ListToolsResult::with_all_items(self.tools())
                .with_ttl_ms(LIST_TTL_MS)
                .with_cache_scope(CacheScope::Public))
        })
        .await
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools().into_iter().find(|t| t.name == name)
    }

    /// The call inside its server span (`mcp::traced`; the span ends when the answer is ready),
    /// recorded for `/metrics`.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let started = std::time::Instant::now();
        let tool = ToolName::parse(&request.name);
        let span = traced::request_span("tools/call", Some(&request.name), None, &context);
        let response = self.run_tool(request, context).instrument(span.clone()).await;
        traced::record_call_outcome(&span, &response);
        measure::tool_call(&self.app.metrics.mcp, tool, started, &response);
        response
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        measure::observed(&self.app.metrics.mcp, McpServer::App, McpMethod::ResourcesList, None, &context, async {
            let resources = vec![
                self.widget_resource(self.app.widget.uri(), "giftgenius-widget"),
                self.widget_resource(PRODUCT_CHECKOUT_WIDGET_URI, "checkout-session"),
            ];
            Ok(ListResourcesResult::with_all_items(resources)
                .with_ttl_ms(LIST_TTL_MS)
                .with_cache_scope(CacheScope::Public))
        })
        .await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.clone();
        let read = self.read_widget(request);
        measure::observed(&self.app.metrics.mcp, McpServer::App, McpMethod::ResourcesRead, Some(&uri), &context, read)
            .await
    }
}

impl GiftGenius {
    /// The widget resource's contents, or resource-not-found for any other URI. Under the
    /// product checkout entry's fixed URI it is the same artifact, whose content changes with a
    /// deploy while the URI does not: kept for as long as the lists are, not a day.
    async fn read_widget(&self, request: ReadResourceRequestParams) -> Result<ReadResourceResponse, ErrorData> {
        let widget = &self.app.widget;
        let ttl = match request.uri.as_str() {
            uri if uri == widget.uri() => WIDGET_READ_TTL_MS,
            PRODUCT_CHECKOUT_WIDGET_URI => LIST_TTL_MS,
            _ => 0,
        };
        if ttl == 0 {
            // The URI is echoed cut short: it is whatever the client sent, up to the body limit.
            return Err(ErrorData::resource_not_found(
                "no such resource; list resources to get the current widget URI",
                Some(json!({ "uri": cut(&request.uri, MAX_ECHOED_NAME_CHARS) })),
            ));
        }
        let contents = ResourceContents::TextResourceContents {
            uri: request.uri.clone(),
            mime_type: Some(widget.mime().mime_type().to_string()),
            text: widget.html().to_string(),
            meta: Some(MetaObject(widget.resource_meta())),
        };
        Ok(ReadResourceResult::new(vec![contents]).with_ttl_ms(ttl).with_cache_scope(CacheScope::Public).into())
    }
}
