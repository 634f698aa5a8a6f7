//! The MCP handler. The `#[tool_router]` impl block below is the one registry of tools: each
//! tool's name, description, annotations and schemas sit on the function that implements it,
//! and the schemas come from the contract types, so contract and handler cannot drift.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use giftgenius_types::schema::{input_schema, output_schema};
use giftgenius_types::{
    CheckoutData, CommitOrderInput, CreateCheckoutSessionInput, Envelope, GetOrderInput, OrderData, PrepareOrderData,
    PrepareOrderInput, SuggestGiftsData, SuggestGiftsInput, ToolError, ToolName,
};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, JsonObject, ListResourcesResult,
    ListToolsResult, MetaObject, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource, ResourceContents, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, tool, tool_router};
use serde_json::{Map, Value, json};

use crate::arguments::parse_args;
use crate::catalog::Catalog;
use crate::config::WidgetMime;
use crate::error::new_reference;
use crate::orders::Checkout;
use crate::reply::{error_result, internal_error_result, tool_result};
use crate::suggest;
use crate::widget::WidgetResource;

/// Everything a tool call may need; shared by every MCP session.
#[derive(Debug)]
pub struct AppState {
    pub catalog: Arc<Catalog>,
    pub widget: WidgetResource,
    /// Base URL clients reach us at (no trailing slash).
    pub public_url: String,
    pub checkout: Checkout,
    /// suggest_gifts: catalog sources and the daily limit.
    pub suggester: suggest::Suggester,
}

/// Whose drafts, keys and orders a call may touch: ChatGPT's anonymized `openai/subject`,
/// else the MCP session, else (stdio: one local user) `local`.
pub fn subject_of(context: &RequestContext<RoleServer>) -> String {
    let valid = |s: &&str| !s.is_empty() && s.len() <= 200;
    if let Some(subject) = context.meta.0.0.get("openai/subject").and_then(Value::as_str).filter(valid) {
        return format!("openai:{subject}");
    }
    if let Some(parts) = context.extensions.get::<axum::http::request::Parts>() {
        if let Some(session) = parts.headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).filter(valid) {
            return format!("session:{session}");
        }
        return "anonymous".into();
    }
    "local".into()
}

/// Parses arguments or returns the validation error result for `tool`.
fn parse<T>(tool: ToolName, arguments: &JsonObject) -> Result<T, CallToolResult>
where
    T: serde::de::DeserializeOwned + schemars::JsonSchema + giftgenius_types::args::Validate + 'static,
{
    parse_args::<T>(arguments).map_err(|field_errors| {
        let mut attempted = arguments.clone();
        // Never echo secrets back, even to the widget.
        if attempted.contains_key("confirmation_token") {
            attempted.insert("confirmation_token".into(), json!("(hidden)"));
        }
        error_result(
            tool,
            ToolError::validation(field_errors, new_reference()).with_attempted(Value::Object(attempted)),
        )
    })
}

pub const INSTRUCTIONS: &str = "GiftGenius finds gift ideas and can buy one. \
Call suggest_gifts when the user wants gift ideas; relationship_type is required, and age, interests, budget (in the user's currency) and occasion make results better. \
When nothing matches, the result's notice lists concrete changes that would match: offer them to the user instead of guessing. \
Errors come back as structured results with a code, a category and whether retrying helps: fix validation errors before calling again, and never retry permission errors yourself. \
Purchases need the user's click on Confirm in the widget; you cannot complete a purchase on your own.";

/// The MCP server handler (one per session; cheap to clone).
#[derive(Clone)]
pub struct GiftGenius {
    app: Arc<AppState>,
    tool_router: ToolRouter<Self>,
    /// This session's last calls, for the repeated-call valve.
    recent: crate::policy::RecentCalls,
}

#[tool_router]
impl GiftGenius {
    pub fn new(app: Arc<AppState>) -> Self {
        Self { app, tool_router: Self::tool_router(), recent: Default::default() }
    }

    #[tool(
        name = "suggest_gifts",
        title = "Suggest gifts",
        description = "Suggest gifts for someone, ranked best first, each with its price, store and why it fits. \
Use this when the user asks for gift ideas. relationship_type is required; pass age, interests, budget_min/budget_max \
(in `currency`, default USD) and occasion when the user mentioned them. Read-only: it never buys anything. \
An empty result comes with a notice suggesting changes that would match.",
        input_schema = input_schema::<SuggestGiftsInput>(),
        output_schema = output_schema::<Envelope<SuggestGiftsData>>(),
        annotations(title = "Suggest gifts", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn suggest_gifts(&self, arguments: JsonObject, context: RequestContext<RoleServer>) -> CallToolResult {
        self.app.checkout.failpoints.panic_if(crate::failpoints::SUGGEST_GIFTS_PANICS);
        let input = match parse::<SuggestGiftsInput>(ToolName::SuggestGifts, &arguments) {
            Ok(input) => input,
            Err(result) => return result,
        };
        let envelope = self.app.suggester.suggest(&subject_of(&context), &input, &new_reference()).await;
        tool_result(&envelope, || suggest::summary(&envelope), Map::new())
    }

    #[tool(
        name = "prepare_order",
        title = "Prepare an order",
        description = "Prepare an order for one gift the user picked (gift_id from suggest_gifts): checks stock and price \
and returns a draft that the widget shows with Confirm and Cancel buttons. Nothing is bought by this call; the purchase \
happens only when the user presses Confirm. The same arguments return the same draft while it is valid (30 minutes).",
        input_schema = input_schema::<PrepareOrderInput>(),
        output_schema = output_schema::<Envelope<PrepareOrderData>>(),
        annotations(title = "Prepare an order", read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn prepare_order(&self, arguments: JsonObject, context: RequestContext<RoleServer>) -> CallToolResult {
        let input = match parse::<PrepareOrderInput>(ToolName::PrepareOrder, &arguments) {
            Ok(input) => input,
            Err(result) => return result,
        };
        self.app.checkout.prepare_order(&subject_of(&context), &input, &new_reference()).await
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
    async fn commit_order(&self, arguments: JsonObject, context: RequestContext<RoleServer>) -> CallToolResult {
        let input = match parse::<CommitOrderInput>(ToolName::CommitOrder, &arguments) {
            Ok(input) => input,
            Err(result) => return result,
        };
        self.app.checkout.commit_order(&subject_of(&context), &input, &arguments, &new_reference()).await
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
        arguments: JsonObject,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let input = match parse::<CreateCheckoutSessionInput>(ToolName::CreateCheckoutSession, &arguments) {
            Ok(input) => input,
            Err(result) => return result,
        };
        self.app.checkout.create_checkout_session(&subject_of(&context), &input, &arguments, &new_reference()).await
    }

    #[tool(
        name = "get_order",
        title = "Get an order",
        description = "Read the status of an order placed through GiftGenius (order_id from a placed order). Read-only.",
        input_schema = input_schema::<GetOrderInput>(),
        output_schema = output_schema::<Envelope<OrderData>>(),
        annotations(title = "Get an order", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn get_order(&self, arguments: JsonObject, context: RequestContext<RoleServer>) -> CallToolResult {
        let input = match parse::<GetOrderInput>(ToolName::GetOrder, &arguments) {
            Ok(input) => input,
            Err(result) => return result,
        };
        self.app.checkout.get_order(&subject_of(&context), &input, &new_reference()).await
    }
}

/// The capability key MCP Apps hosts declare (SEP-1865).
pub const MCP_APPS_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// Tools whose results the widget renders.
fn renders_widget(tool: ToolName) -> bool {
    matches!(
        tool,
        ToolName::SuggestGifts
            | ToolName::PrepareOrder
            | ToolName::CommitOrder
            | ToolName::GetOrder
            | ToolName::CreateCheckoutSession
    )
}

/// `_meta` of a tool in both hosts' vocabularies: which widget renders it, what the host shows
/// while it runs, and who may call it (model, widget, or both).
pub fn tool_meta(tool: ToolName, widget_uri: &str) -> Map<String, Value> {
    let (invoking, invoked, visibility): (&str, &str, &[&str]) = match tool {
        ToolName::SuggestGifts => ("Finding gift ideas…", "Gift ideas ready", &["model", "app"]),
        ToolName::PrepareOrder => ("Checking price and stock…", "Order ready to confirm", &["model", "app"]),
        ToolName::CommitOrder => ("Placing your order…", "Order placed", &["app"]),
        ToolName::CreateCheckoutSession => ("Creating checkout…", "Checkout ready", &["model", "app"]),
        ToolName::GetOrder => ("Looking up the order…", "Order status", &["model", "app"]),
    };
    let mut meta = json!({
        "openai/toolInvocation/invoking": invoking,
        "openai/toolInvocation/invoked": invoked,
        "openai/widgetAccessible": true,
        "ui": { "visibility": visibility },
    });
    if visibility == ["app"] {
        // Apps SDK: hidden from the model, callable from the widget.
        meta["openai/visibility"] = json!("private");
    }
    if renders_widget(tool) {
        meta["openai/outputTemplate"] = json!(widget_uri);
        meta["ui"]["resourceUri"] = json!(widget_uri);
    }
    match meta {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

impl GiftGenius {
    /// The tool list with each tool's `_meta` attached, pointing at `variant` of the widget.
    pub fn tools(&self, variant: WidgetMime) -> Vec<Tool> {
        let uri = self.app.widget.uri_for(variant);
        self.tool_router
            .list_all()
            .into_iter()
            .map(|tool| match ToolName::parse(&tool.name) {
                Some(name) => tool.with_meta(MetaObject(tool_meta(name, &uri))),
                None => tool,
            })
            .collect()
    }

    /// MCP Apps hosts declare the `io.modelcontextprotocol/ui` extension at initialize and get
    /// `text/html;profile=mcp-app`; everyone else gets the configured default (skybridge).
    fn variant_for(&self, context: &RequestContext<RoleServer>) -> WidgetMime {
        let declares_mcp_apps = context
            .peer
            .peer_info()
            .and_then(|info| info.capabilities.extensions.as_ref().map(|e| e.contains_key(MCP_APPS_EXTENSION)))
            .unwrap_or(false);
        if declares_mcp_apps { WidgetMime::McpApp } else { self.app.widget.default_variant() }
    }

    fn widget_resource(&self, variant: WidgetMime) -> Resource {
        let widget = &self.app.widget;
        Resource::new(widget.uri_for(variant), "giftgenius-widget")
            .with_title("GiftGenius")
            .with_description(crate::widget::WIDGET_DESCRIPTION)
            .with_mime_type(variant.mime_type())
            .with_size(widget.html().len() as u64)
            .with_meta(MetaObject(widget.resource_meta()))
    }
}

impl ServerHandler for GiftGenius {
    fn get_info(&self) -> ServerConfig {
        let mut info = Implementation::new("giftgenius", env!("CARGO_PKG_VERSION"));
        info.title = Some("GiftGenius".into());
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().build())
            .with_server_info(info)
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools(self.variant_for(&context))))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools(self.app.widget.default_variant()).into_iter().find(|t| t.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let tool = ToolName::parse(&request.name);
        let locale = context
            .meta
            .0
            .0
            .get("openai/locale")
            .and_then(Value::as_str)
            .filter(|l| l.len() <= 35)
            .unwrap_or("en-US")
            .to_string();
        if let Some(tool) = tool
            && let Some(short_circuit) = self.recent.check(&subject_of(&context), tool, request.arguments.as_ref())
        {
            return Ok(short_circuit.into());
        }
        let output_schema = self.tool_router.get(&request.name).and_then(|t| t.output_schema.clone());
        let call = crate::reply::REQUEST_LOCALE
            .scope(locale, self.tool_router.call(ToolCallContext::new(self, request, context)));
        // A panic in a handler becomes an honest INTERNAL_ERROR for this call; the server goes on.
        match AssertUnwindSafe(call).catch_unwind().await {
            Ok(Ok(CallToolResponse::Complete(result))) => match tool {
                Some(tool) => Ok(crate::policy::enforce(tool, result, output_schema.as_deref()).into()),
                None => Ok(CallToolResponse::Complete(result)),
            },
            Ok(result) => result,
            Err(panic) => {
                let detail = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "panic".into());
                match tool {
                    Some(tool) => Ok(internal_error_result(tool, &format!("handler panicked: {detail}")).into()),
                    None => Err(ErrorData::internal_error("internal error", None)),
                }
            }
        }
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![self.widget_resource(self.variant_for(&context))]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let widget = &self.app.widget;
        let Some(variant) = widget.variant_of(&request.uri) else {
            return Err(ErrorData::resource_not_found(
                "no such resource; list resources to get the current widget URI",
                Some(json!({ "uri": request.uri })),
            ));
        };
        let contents = ResourceContents::TextResourceContents {
            uri: request.uri.clone(),
            mime_type: Some(variant.mime_type().to_string()),
            text: widget.html().to_string(),
            meta: Some(MetaObject(widget.resource_meta())),
        };
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}
