//! An OTLP/HTTP trace receiver, as a collector runs one: `POST /v1/traces` with a protobuf
//! `ExportTraceServiceRequest`, decoded with the `opentelemetry-proto` types (not with the
//! exporter's code), every span kept with its service's name.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::common::v1::{AnyValue as Any, KeyValue};
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;

/// One exported span and the `service.name` of the process that sent it.
#[derive(Debug, Clone)]
pub struct Exported {
    pub service: String,
    pub span: Span,
}

impl Exported {
    /// An attribute's value as text (strings as they are, numbers and booleans printed).
    pub fn attr(&self, key: &str) -> Option<String> {
        attr_of(&self.span.attributes, key)
    }

    pub fn trace_id(&self) -> String {
        hex(&self.span.trace_id)
    }

    pub fn span_id(&self) -> String {
        hex(&self.span.span_id)
    }

    pub fn parent_id(&self) -> String {
        hex(&self.span.parent_span_id)
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn text_of(value: &Option<Any>) -> Option<String> {
    match value.as_ref()?.value.as_ref()? {
        AnyValue::StringValue(s) => Some(s.clone()),
        AnyValue::IntValue(i) => Some(i.to_string()),
        AnyValue::BoolValue(b) => Some(b.to_string()),
        AnyValue::DoubleValue(d) => Some(d.to_string()),
        other => Some(format!("{other:?}")),
    }
}

pub fn attr_of(attributes: &[KeyValue], key: &str) -> Option<String> {
    attributes.iter().find(|kv| kv.key == key).and_then(|kv| text_of(&kv.value))
}

/// The receiver: what it got, decoded, and its raw requests' debug text (every string in them).
#[derive(Clone, Default)]
pub struct OtlpReceiver {
    requests: Arc<Mutex<Vec<ExportTraceServiceRequest>>>,
    pub url: String,
}

impl OtlpReceiver {
    /// Listens on 127.0.0.1, a free port; `url` is the collector's base URL.
    pub async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        let receiver = Self { requests: Arc::default(), url };
        let app = Router::new().route("/v1/traces", post(export)).with_state(receiver.requests.clone());
        tokio::spawn(async move { axum::serve(listener, app).await });
        receiver
    }

    /// Every span received so far.
    pub fn spans(&self) -> Vec<Exported> {
        let requests = self.requests.lock().unwrap();
        let mut spans = Vec::new();
        for request in requests.iter() {
            for resource in &request.resource_spans {
                let service =
                    resource.resource.as_ref().and_then(|r| attr_of(&r.attributes, "service.name")).unwrap_or_default();
                for scope in &resource.scope_spans {
                    spans.extend(
                        scope.spans.iter().map(|span| Exported { service: service.clone(), span: span.clone() }),
                    );
                }
            }
        }
        spans
    }

    /// Everything received, as text: every name, attribute and event in it.
    pub fn everything(&self) -> String {
        format!("{:?}", self.requests.lock().unwrap())
    }
}

async fn export(State(requests): State<Arc<Mutex<Vec<ExportTraceServiceRequest>>>>, body: Bytes) -> StatusCode {
    match ExportTraceServiceRequest::decode(body) {
        Ok(request) => {
            requests.lock().unwrap().push(request);
            StatusCode::OK
        }
        Err(_) => StatusCode::BAD_REQUEST,
    }
}
