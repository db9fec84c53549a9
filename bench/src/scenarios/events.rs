//! Reading the daemon's live event stream (`/api/events`, every session's events).

use std::time::Duration;

use anyhow::Context as _;
use serde_json::Value;
use switchboard_testkit::harness::WsClient;
use tokio::time::Instant;

/// The next live event (the `event` of a `{"type":"event"}` frame) for which `wanted` holds,
/// skipping other frames; an error at `deadline`.
pub async fn next_event(
    ws: &mut WsClient,
    deadline: Instant,
    what: &str,
    mut wanted: impl FnMut(&Value) -> bool,
) -> anyhow::Result<(Value, std::time::Instant)> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let frame = ws
            .next_frame(left.max(Duration::from_millis(1)))
            .await
            .with_context(|| format!("waiting for {what}"))?;
        let at = std::time::Instant::now();
        if frame["type"] != "event" {
            continue;
        }
        if wanted(&frame["event"]) {
            let mut frame = frame;
            return Ok((frame["event"].take(), at));
        }
    }
}
