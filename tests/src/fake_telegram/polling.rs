//! `getUpdates`: offsets confirm updates, and a long poll waits (event-driven) for a pushed
//! update or its `timeout`.

use std::time::Duration;

use serde_json::{json, Value};

use super::state::State;
use super::wire::{int, structured, Reply};

/// `limit` bounds and default, per the Bot API.
const MAX_LIMIT: i64 = 100;

/// The 409 Telegram answers a poll while a webhook is set.
const WEBHOOK_ACTIVE: &str = "Conflict: can't use getUpdates method while webhook is active; \
                              use deleteWebhook to delete the webhook first";

/// Answers `getUpdates`; `arrived` is when the request came in, so a stall before it counts
/// against the poll's `timeout`.
pub(super) async fn get_updates(
    state: &State,
    params: &Value,
    arrived: tokio::time::Instant,
) -> Reply {
    let (offset, limit, timeout) = match (
        int(params, "offset"),
        int(params, "limit"),
        int(params, "timeout"),
    ) {
        (Ok(offset), Ok(limit), Ok(timeout)) => (offset, limit, timeout),
        (Err(reply), _, _) | (_, Err(reply), _) | (_, _, Err(reply)) => return reply,
    };
    let limit = usize::try_from(limit.unwrap_or(MAX_LIMIT).clamp(1, MAX_LIMIT)).unwrap_or(1);
    let timeout = Duration::from_secs(timeout.and_then(|t| u64::try_from(t).ok()).unwrap_or(0));
    let allowed = match structured(params, "allowed_updates") {
        Some(Value::Array(kinds)) => Some(
            kinds
                .iter()
                .filter_map(|kind| kind.as_str().map(str::to_owned))
                .collect::<Vec<_>>(),
        ),
        _ => None,
    };

    let webhook_active = state.change(|world| {
        if world.webhook.is_some() {
            return true;
        }
        world.confirm(offset);
        if allowed.is_some() {
            world.allowed_updates = allowed;
        }
        false
    });
    if webhook_active {
        return Reply::error(409, WEBHOOK_ACTIVE);
    }

    let deadline = arrived + timeout;
    loop {
        let mut notified = std::pin::pin!(state.changed.notified());
        // Register before checking, so an update pushed between the check and the wait counts.
        notified.as_mut().enable();
        let batch = state.world().batch(offset, limit);
        if !batch.is_empty() || tokio::time::Instant::now() >= deadline {
            return Reply::Ok(Value::Array(batch));
        }
        tokio::select! {
            () = notified.as_mut() => {}
            () = tokio::time::sleep_until(deadline) => {}
            () = state.cancel.cancelled() => return Reply::Ok(json!([])),
        }
    }
}
