//! The ACP MCP binding at `/acp/mcp` (docs/acp.md §9, the spec's `docs/mcp-binding.md`): the
//! checkout operations as MCP tools over Streamable HTTP, for the same platforms with the same
//! keys as the REST routes, on an endpoint of its own so they never mix with the app's tools
//! on `/mcp` (whose `create_checkout_session` means something else).
//!
//! - this file: the HTTP layer in front (the platform's bearer key, checked before any JSON-RPC
//!   is read), the tool registry (`#[tool_router]`: each tool's name, schemas and annotations
//!   on the function that runs it) and the `ServerHandler`;
//! - `arguments.rs`: `{meta, id, payload}` and the envelope's checks (-32602);
//! - `answer.rs`: the operation's answer as a `CallToolResult`, or -32000 with ACP's `Error`.
//!
//! Each tool reads its arguments into the REST request's pieces and runs the same operation
//! as the REST route ([`Acp::handle_post`], [`Acp::handle_get`]), with the same idempotency
//! scope, so a key used over REST replays over MCP and the other way round.

pub mod answer;
pub mod arguments;

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use giftgenius_types::acp::AcpCheckoutSession;
use giftgenius_types::schema::{input_schema, output_schema};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::{Extension, ToolCallContext};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CustomRequest, CustomResult, DiscoverResult,
    Implementation, InitializeRequestParams, InitializeResult, JsonObject, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, tool, tool_router};
use serde_json::Value;
use tracing::Instrument;

use super::Acp;
use super::error::AcpFailure;
use super::routes::{Post, Reply, Via, check_version, idempotency_key, respond};
use crate::metrics::{McpMethod, McpMetrics, McpServer};
use crate::web::mcp::{measure, traced};
use answer::render;
use arguments::{AcpMeta, CancelArguments, CompleteArguments, CreateArguments, GetArguments, UpdateArguments, parse};

/// Largest JSON-RPC message: REST's body limit for the payload, and room for the envelope.
pub const MAX_BODY_BYTES: usize = super::routes::MAX_BODY_BYTES + 8 * 1024;

/// The binding's tools (the `#[tool]` names below; a test holds them equal): the `tool` label's
/// values on `/metrics` for this server.
pub const TOOLS: &[&str] = giftgenius_types::acp::ACP_MCP_TOOLS;

/// Requests this endpoint answers; one that reaches `on_custom_request` had params rmcp could not read.
const SERVED_METHODS: &[&str] = &["initialize", "ping", "server/discover", "tools/list", "tools/call"];

const INSTRUCTIONS: &str = "The Agentic Commerce Protocol (API version 2026-04-17) checkout of GiftGenius, \
as MCP tools: create, get, update, complete (pay with a delegated-payment vault token) and cancel a checkout \
session. Every call takes meta.api_version; create and complete need meta.idempotency_key. ACP errors come back as JSON-RPC error -32000 with ACP's Error object in data.";

/// The platform a request's bearer key belongs to, put in its extensions by [`authenticate`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcpCaller {
    pub platform: String,
}

/// In front of `/acp/mcp`: the platform's bearer key, checked as the REST routes check it
/// (401 with `WWW-Authenticate: Bearer` and ACP's Error) before any JSON-RPC is read.
pub async fn authenticate(State(acp): State<Arc<Acp>>, mut request: Request, next: Next) -> Response {
    match acp.authenticate(request.headers()) {
        Ok(platform) => {
            request.extensions_mut().insert(AcpCaller { platform });
            next.run(request).await
        }
        Err(failure) => {
            let headers = request.headers();
            respond(failure.into(), headers, &super::routes::request_id(headers), false)
        }
    }
}

/// `/acp/mcp`: `mount` serves a copy of the binding per MCP session (or stateless request) at
/// the path, as the app's `/mcp` is served (`startup::mcp_routes`: Host and Origin checks,
/// sessions); in front of it the platform's key, then JSON-RPC's own body checks.
pub fn routes(acp: Arc<Acp>, mount: impl FnOnce(AcpBinding) -> anyhow::Result<Router>) -> anyhow::Result<Router> {
    Ok(mount(AcpBinding::new(acp.clone()))?
        .layer(axum::middleware::from_fn_with_state(MAX_BODY_BYTES, crate::web::mcp::request_body::json_rpc_body))
        .layer(axum::middleware::from_fn_with_state(acp, authenticate)))
}

/// What a tool asks of the operations: a POST with its body, or a GET.
enum Operation {
    Post(Post, Value),
    Get(String),
}

/// The binding's MCP server handler (cheap to make and to clone: one per session, or per
/// stateless request).
#[derive(Clone)]
pub struct AcpBinding {
    acp: Arc<Acp>,
    tool_router: &'static ToolRouter<Self>,
}

#[tool_router]
impl AcpBinding {
    /// A handler over `acp`, with the tool registry built once per process (see `GiftGenius::new`).
    pub fn new(acp: Arc<Acp>) -> Self {
        static REGISTRY: std::sync::OnceLock<ToolRouter<AcpBinding>> = std::sync::OnceLock::new();
        Self { acp, tool_router: REGISTRY.get_or_init(Self::tool_router) }
    }

    #[tool(
        name = "create_checkout_session",
        title = "Create an ACP checkout session",
        description = "Create a checkout session (ACP POST /checkout_sessions). payload is the REST request body: \
line_items (catalog ids; the same id twice is two units), currency, capabilities, and optionally buyer, \
fulfillment_details (with the shipping address), order_notes (the gift message). meta.idempotency_key is required; \
retrying with the same key and payload returns the same session.",
        input_schema = input_schema::<CreateArguments>(),
        output_schema = output_schema::<AcpCheckoutSession>(),
        annotations(title = "Create an ACP checkout session", read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = true)
    )]
    async fn create_checkout_session(
        &self,
        Extension(caller): Extension<AcpCaller>,
        arguments: JsonObject,
    ) -> Result<CallToolResult, ErrorData> {
        let arguments: CreateArguments = parse("create_checkout_session", arguments)?;
        let operation = Operation::Post(Post::Create, Value::Object(arguments.payload));
        self.run(&caller, arguments.meta, operation, false).await
    }

    #[tool(
        name = "get_checkout_session",
        title = "Get an ACP checkout session",
        description = "Read a checkout session as it is now (ACP GET /checkout_sessions/{id}): items, prices, \
fulfillment options, totals, messages and status. Read-only.",
        input_schema = input_schema::<GetArguments>(),
        output_schema = output_schema::<AcpCheckoutSession>(),
        annotations(title = "Get an ACP checkout session", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn get_checkout_session(
        &self,
        Extension(caller): Extension<AcpCaller>,
        arguments: JsonObject,
    ) -> Result<CallToolResult, ErrorData> {
        let arguments: GetArguments = parse("get_checkout_session", arguments)?;
        self.run(&caller, arguments.meta, Operation::Get(arguments.id), true).await
    }

    #[tool(
        name = "update_checkout_session",
        title = "Update an ACP checkout session",
        description = "Change a checkout session (ACP POST /checkout_sessions/{id}): payload is the REST request body; \
fields left out stay, null clears, values replace (line_items, buyer, fulfillment_details, \
selected_fulfillment_options, order_notes). Returns the session recomputed.",
        input_schema = input_schema::<UpdateArguments>(),
        output_schema = output_schema::<AcpCheckoutSession>(),
        annotations(title = "Update an ACP checkout session", read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn update_checkout_session(
        &self,
        Extension(caller): Extension<AcpCaller>,
        arguments: JsonObject,
    ) -> Result<CallToolResult, ErrorData> {
        let arguments: UpdateArguments = parse("update_checkout_session", arguments)?;
        let operation = Operation::Post(Post::Update(arguments.id), Value::Object(arguments.payload));
        self.run(&caller, arguments.meta, operation, true).await
    }

    #[tool(
        name = "complete_checkout_session",
        title = "Complete an ACP checkout session",
        description = "Pay for a ready_for_payment checkout session and place its order (ACP POST \
/checkout_sessions/{id}/complete). payload is the REST request body: payment_data {handler_id: card_tokenized, \
instrument: {type: card, credential: {type: spt, token}}} with a vault token from the payment provider's \
delegate_payment, and optionally buyer and order_notes. meta.idempotency_key is required. One order per session \
whatever the retries: a completed session answers with its order; a declined payment leaves it ready_for_payment \
with a message.",
        input_schema = input_schema::<CompleteArguments>(),
        output_schema = output_schema::<AcpCheckoutSession>(),
        annotations(title = "Complete an ACP checkout session", read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = true)
    )]
    async fn complete_checkout_session(
        &self,
        Extension(caller): Extension<AcpCaller>,
        arguments: JsonObject,
    ) -> Result<CallToolResult, ErrorData> {
        let arguments: CompleteArguments = parse("complete_checkout_session", arguments)?;
        let operation = Operation::Post(Post::Complete(arguments.id), Value::Object(arguments.payload));
        self.run(&caller, arguments.meta, operation, true).await
    }

    #[tool(
        name = "cancel_checkout_session",
        title = "Cancel an ACP checkout session",
        description = "Cancel a checkout session that is neither canceled nor expired (ACP POST \
/checkout_sessions/{id}/cancel); payload is optional and may carry an intent_trace saying why.",
        input_schema = input_schema::<CancelArguments>(),
        output_schema = output_schema::<AcpCheckoutSession>(),
        annotations(title = "Cancel an ACP checkout session", read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn cancel_checkout_session(
        &self,
        Extension(caller): Extension<AcpCaller>,
        arguments: JsonObject,
    ) -> Result<CallToolResult, ErrorData> {
        let arguments: CancelArguments = parse("cancel_checkout_session", arguments)?;
        let body = Value::Object(arguments.payload.unwrap_or_default());
        self.run(&caller, arguments.meta, Operation::Post(Post::Cancel(arguments.id), body), true).await
    }
}

impl AcpBinding {
    /// One call, after its envelope: `meta` checked as REST checks the headers (version, then
    /// the key), the operation run, its answer rendered.
    async fn run(
        &self,
        caller: &AcpCaller,
        meta: AcpMeta,
        operation: Operation,
        id_argument: bool,
    ) -> Result<CallToolResult, ErrorData> {
        let request_id = meta.request_id();
        crate::web::mcp::traced::record_reference(&request_id);
        let reply = self.reply(&caller.platform, &meta, operation, &request_id).await.unwrap_or_else(Reply::from);
        render(reply, &request_id, id_argument)
    }

    async fn reply(
        &self,
        platform: &str,
        meta: &AcpMeta,
        operation: Operation,
        request_id: &str,
    ) -> Result<Reply, AcpFailure> {
        check_version(meta.api_version.as_deref().map(str::as_bytes), Via::Mcp)?;
        match operation {
            Operation::Get(id) => self.acp.handle_get(platform, &id, request_id).await,
            Operation::Post(route, body) => {
                let key = meta.idempotency_key.as_deref().map(str::as_bytes);
                let key = idempotency_key(key, route.key_required(), Via::Mcp)?;
                let accept_language = meta.accept_language.as_deref();
                self.acp.handle_post(platform, route, key, body, accept_language, request_id).await
            }
        }
    }
}

impl ServerHandler for AcpBinding {
    fn get_info(&self) -> ServerConfig {
        let mut info = Implementation::new("giftgenius-acp", env!("CARGO_PKG_VERSION"));
        info.title = Some("GiftGenius ACP checkout".into());
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(info)
            .with_instructions(INSTRUCTIONS)
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Err(crate::web::mcp::unmatched_request(&request.method, SERVED_METHODS))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        measure::initialize(self, self.metrics(), McpServer::Acp, request, context).await
    }

    async fn ping(&self, context: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        measure::observed(self.metrics(), McpServer::Acp, McpMethod::Ping, None, &context, async { Ok(()) }).await
    }

    async fn discover(&self, context: RequestContext<RoleServer>) -> Result<DiscoverResult, ErrorData> {
        measure::observed(self.metrics(), McpServer::Acp, McpMethod::Discover, None, &context, async {
            Ok(DiscoverResult::from_server_info(self.supported_protocol_versions().into_owned(), self.get_info()))
        })
        .await
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        measure::observed(self.metrics(), McpServer::Acp, McpMethod::ToolsList, None, &context, async {
            Ok(ListToolsResult::with_all_items(self.tool_router.list_all()))
        })
        .await
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tool_router.get(name).cloned()
    }

    /// The call inside its server span (`mcp::traced`), timed for `/metrics`.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let started = std::time::Instant::now();
        let tool = request.name.clone();
        let span = traced::request_span("tools/call", Some(&tool), None, &context);
        let response = self.run_tool(request, context).instrument(span.clone()).await;
        traced::record_call_outcome(&span, &response);
        let outcome = measure::call_outcome(&response);
        self.metrics().observe(McpServer::Acp, McpMethod::ToolsCall, Some(&tool), outcome, started.elapsed());
        response
    }
}

impl AcpBinding {
    fn metrics(&self) -> &McpMetrics {
        &self.acp.metrics.mcp
    }

    /// Hands the platform from the HTTP request to the tool, and turns a panic into an ACP
    /// `processing_error` for this call (the server goes on).
    async fn run_tool(
        &self,
        request: CallToolRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let caller = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<AcpCaller>())
            .cloned();
        let Some(caller) = caller else {
            // Only reachable without the HTTP layer in front, which checks every request.
            return Err(answer::failure(AcpFailure::unauthorized()));
        };
        context.extensions.insert(caller);
        let tool = request.name.clone();
        match crate::panics::caught(self.tool_router.call(ToolCallContext::new(self, request, context))).await {
            Ok(response) => response,
            Err(panicked) => {
                let request_id = super::routes::fresh_request_id();
                let detail = format!("{tool}: {panicked}");
                Err(answer::failure(AcpFailure::internal(&request_id, &detail)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metrics_tool_list_is_the_registry_s() {
        let mut registered: Vec<String> =
            AcpBinding::tool_router().list_all().into_iter().map(|t| t.name.to_string()).collect();
        let mut listed: Vec<String> = TOOLS.iter().map(|t| t.to_string()).collect();
        registered.sort();
        listed.sort();
        assert_eq!(registered, listed);
    }
}
