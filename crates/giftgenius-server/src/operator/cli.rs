//! `giftgenius-server orders show|processing|ship|complete|refund ORDER …`: the operator's API
//! on the database itself (`--db`), for an operator at a shell. Safe while servers run on the
//! same database: the same checked steps (`service.rs`). Prints `{changed, order}` as JSON (and
//! a refund's `idempotency_key`, to send again after a failure); a refusal is the command's
//! error, on stderr, with exit status 1.

use serde::Serialize;
use serde_json::json;

use super::input;
use super::service::{Done, Operator};
use crate::config::OrdersCommand;
use giftgenius_commerce::order::Step;

/// What a command prints.
#[derive(Debug, Clone, Serialize)]
pub struct Printed {
    #[serde(flatten)]
    pub done: Done,
    /// The refund's key (given, or made up for this run): the same command with it again is the
    /// same refund.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
}

/// Runs `command` with `operator` (`startup::orders` opens it on the configured database and
/// payment provider).
pub async fn run(operator: &Operator, command: &OrdersCommand) -> anyhow::Result<Printed> {
    let printed = |done: Done| Printed { done, idempotency_key: None };
    let done = match command {
        OrdersCommand::Show { order } => printed(operator.order(order).await?),
        OrdersCommand::Processing { order } => printed(operator.advance(order, &Step::Processing).await?),
        OrdersCommand::Complete { order } => printed(operator.advance(order, &Step::Complete).await?),
        OrdersCommand::Ship { order, carrier, tracking_number, tracking_url } => {
            let body = json!({"carrier": carrier, "tracking_number": tracking_number, "tracking_url": tracking_url});
            let shipment = input::shipment(&body).map_err(super::OperatorError::Invalid)?;
            printed(operator.advance(order, &Step::Ship(shipment)).await?)
        }
        OrdersCommand::Refund { order, amount, reason, idempotency_key } => {
            let key = idempotency_key.clone().unwrap_or_else(|| giftgenius_commerce::ids::random_id("cli"));
            let body = json!({"amount": amount, "reason": reason, "idempotency_key": key});
            let ask = input::refund(&body).map_err(super::OperatorError::Invalid)?;
            Printed { done: operator.refund(order, &ask).await?, idempotency_key: Some(key) }
        }
    };
    Ok(done)
}
