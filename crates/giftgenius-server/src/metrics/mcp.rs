//! The MCP servers' own metrics: `mcp_server_operation_duration_seconds` (the OpenTelemetry MCP
//! conventions' `mcp.server.operation.duration`, in Prometheus' naming) by server (the app's
//! `/mcp` or the ACP binding's `/acp/mcp`, whose `create_checkout_session` is another tool than
//! the app's), method, tool and outcome, and the app's tool errors by code.
//!
//! suggest_gifts is benchmarked, so an observation costs one atomic load to find its histogram
//! (kept per label combination in a [`OnceLock`] after the first call) and the histogram's own
//! uncontended lock; the registry's map is read only on the first call of each combination.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use giftgenius_types::{ErrorCode, ToolName};
use prometheus_client::encoding::{EncodeLabel, EncodeLabelSet, LabelSetEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use super::label_values;

/// Upper bounds of the duration buckets, in seconds: the MCP conventions' advice (10 ms to
/// 300 s) below which three more, since a suggestion often answers within a millisecond or two.
pub const DURATION_BUCKETS: [f64; 17] =
    [0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0];

label_values! {
    /// The MCP methods timed (`mcp.method.name`).
    pub enum McpMethod {
        Initialize = "initialize",
        Ping = "ping",
        ToolsCall = "tools/call",
        ToolsList = "tools/list",
        ResourcesList = "resources/list",
        ResourcesRead = "resources/read",
        Discover = "server/discover",
    }
}

label_values! {
    /// Which MCP server answered (its `serverInfo.name`).
    pub enum McpServer {
        /// The app's tools at `/mcp` (and over stdio).
        App = "giftgenius",
        /// The ACP binding's checkout tools at `/acp/mcp`.
        Acp = "giftgenius-acp",
    }
}

impl McpServer {
    /// The tools this server serves: the only values its `tool` label takes.
    pub fn tools(self) -> &'static [&'static str] {
        match self {
            McpServer::App => &APP_TOOLS,
            McpServer::Acp => giftgenius_types::acp::ACP_MCP_TOOLS,
        }
    }
}

const APP_TOOLS: [&str; ToolName::ALL.len()] = {
    let mut names = [""; ToolName::ALL.len()];
    let mut i = 0;
    while i < names.len() {
        names[i] = ToolName::ALL[i].as_str();
        i += 1;
    }
    names
};

label_values! {
    /// How an operation ended.
    pub enum CallOutcome {
        /// Answered, and for a tool call `isError: false`.
        Ok = "ok",
        /// A tool result with `isError: true` (the contract's error envelope; its code is counted
        /// in `giftgenius_tool_errors_total`).
        ToolError = "tool_error",
        /// A JSON-RPC error (unknown tool or resource, params that do not fit, a refused call).
        Error = "error",
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Operation {
    server: McpServer,
    method: McpMethod,
    /// The tool's name for `tools/call` of one of ours; no `tool` label otherwise.
    tool: Option<&'static str>,
    outcome: CallOutcome,
}

impl EncodeLabelSet for Operation {
    fn encode(&self, encoder: &mut LabelSetEncoder) -> std::fmt::Result {
        ("server", self.server).encode(encoder.encode_label())?;
        ("method", self.method).encode(encoder.encode_label())?;
        if let Some(tool) = self.tool {
            ("tool", tool).encode(encoder.encode_label())?;
        }
        ("outcome", self.outcome).encode(encoder.encode_label())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct ToolErrorLabels {
    tool: &'static str,
    code: &'static str,
}

type Durations = Family<Operation, Histogram, fn() -> Histogram>;

fn duration_histogram() -> Histogram {
    Histogram::new(DURATION_BUCKETS)
}

/// Label combinations: every server × method × (no tool, or one of the server's) × outcome.
const TOOL_SLOTS: usize = 1 + max(APP_TOOLS.len(), giftgenius_types::acp::ACP_MCP_TOOLS.len());
const SLOTS: usize = McpServer::ALL.len() * McpMethod::ALL.len() * TOOL_SLOTS * CallOutcome::ALL.len();

const fn max(a: usize, b: usize) -> usize {
    if a > b { a } else { b }
}

#[derive(Debug)]
struct Inner {
    durations: Durations,
    /// Each combination's histogram once it was first used.
    slots: Vec<OnceLock<Histogram>>,
    tool_errors: Family<ToolErrorLabels, Counter>,
}

/// The handle the MCP handler feeds. Cheap to clone.
#[derive(Debug, Clone)]
pub struct McpMetrics {
    inner: Arc<Inner>,
}

impl Default for McpMetrics {
    fn default() -> Self {
        Self {
            inner: Arc::new(Inner {
                durations: Durations::new_with_constructor(duration_histogram),
                slots: (0..SLOTS).map(|_| OnceLock::new()).collect(),
                tool_errors: Family::default(),
            }),
        }
    }
}

impl McpMetrics {
    pub(super) fn register(&self, registry: &mut Registry) {
        registry.register(
            "mcp_server_operation_duration_seconds",
            "Time to answer an MCP request, by method, tool (tools/call) and outcome",
            self.inner.durations.clone(),
        );
        registry.register(
            "giftgenius_tool_errors",
            "Tool results with isError true, by tool and error code",
            self.inner.tool_errors.clone(),
        );
    }

    /// One request `server` answered: `tool` for a tools/call (a name it does not serve gets no
    /// `tool` label, so label values stay a fixed set).
    pub fn observe(
        &self,
        server: McpServer,
        method: McpMethod,
        tool: Option<&str>,
        outcome: CallOutcome,
        took: Duration,
    ) {
        let tools = server.tools();
        let tool = tool.and_then(|t| tools.iter().position(|&known| known == t));
        let tool_slot = tool.map_or(0, |i| i + 1);
        let slot = ((server as usize * McpMethod::ALL.len() + method as usize) * TOOL_SLOTS + tool_slot)
            * CallOutcome::ALL.len()
            + outcome as usize;
        let Some(cell) = self.inner.slots.get(slot) else { return };
        let histogram = cell.get_or_init(|| {
            let labels = Operation { server, method, tool: tool.map(|i| tools[i]), outcome };
            self.inner.durations.get_or_create_owned(&labels)
        });
        histogram.observe(took.as_secs_f64());
    }

    /// A tool result with `isError: true` and this code.
    pub fn tool_error(&self, tool: ToolName, code: ErrorCode) {
        self.inner.tool_errors.get_or_create(&ToolErrorLabels { tool: tool.as_str(), code: code.as_str() }).inc();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_combination_has_a_slot_of_its_own_and_only_tool_calls_name_a_tool() {
        let metrics = McpMetrics::default();
        for &server in McpServer::ALL {
            for &method in McpMethod::ALL {
                for tool in std::iter::once(None).chain(server.tools().iter().copied().map(Some)) {
                    for &outcome in CallOutcome::ALL {
                        metrics.observe(server, method, tool, outcome, Duration::from_millis(3));
                    }
                }
            }
        }
        let filled = metrics.inner.slots.iter().filter(|s| s.get().is_some()).count();
        let used: usize =
            McpServer::ALL.iter().map(|s| (1 + s.tools().len()) * McpMethod::ALL.len() * CallOutcome::ALL.len()).sum();
        assert_eq!(filled, used, "each combination filled its own slot");
        // A name the server does not serve is counted without a tool label.
        metrics.observe(McpServer::App, McpMethod::ToolsCall, Some("not_ours"), CallOutcome::Error, Duration::ZERO);
        assert_eq!(metrics.inner.slots.iter().filter(|s| s.get().is_some()).count(), used);
        let mut registry = Registry::default();
        metrics.register(&mut registry);
        let mut text = String::new();
        prometheus_client::encoding::prometheus_text::encode(&mut text, &registry).unwrap();
        assert!(text.contains(
            r#"mcp_server_operation_duration_seconds_count{server="giftgenius",method="tools/call",tool="suggest_gifts",outcome="ok"} 1"#
        ));
        assert!(text.contains(
            r#"mcp_server_operation_duration_seconds_count{server="giftgenius-acp",method="tools/call",tool="create_checkout_session",outcome="ok"} 1"#
        ));
        let list = r#"mcp_server_operation_duration_seconds_bucket{server="giftgenius",method="tools/list",outcome="error",le="0.005"} 1"#;
        assert!(text.contains(list), "{text}");
        assert!(!text.contains(r#"tool="""#), "{text}");
    }
}
