//! Long polling: `getUpdates` with the offset persisted only after the gateway has taken
//! each update, a watchdog for stalled calls, and backoff on conflicts and errors.

use std::time::Duration;

use teloxide::prelude::*;
use teloxide::types::{AllowedUpdate, Update};
use teloxide::{ApiError, RequestError};
use tokio_util::sync::CancellationToken;

use super::{convert, BotInfo, Telegram};
use crate::{Inbound, InboundSink};

/// How much longer than the long-poll timeout a `getUpdates` call may take before the
/// watchdog abandons it and polls again: the timeout again, at least 2 s, at most 10 s.
fn watchdog(poll_timeout: Duration) -> Duration {
    poll_timeout + poll_timeout.clamp(Duration::from_secs(2), Duration::from_secs(10))
}
const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// How long an update waits for the gateway to take it before polling goes on anyway
/// (the offset is then not advanced past it, so it comes again).
const ACK_WAIT: Duration = Duration::from_secs(30);

impl Telegram {
    pub(super) async fn poll(&self, sink: &InboundSink, me: &BotInfo, cancel: &CancellationToken) {
        let mut offset = self.offsets.load().await;
        let mut backoff = Duration::from_secs(1);
        let timeout_secs = self.settings.poll_timeout.as_secs().clamp(0, 50) as u32;
        let watchdog = watchdog(self.settings.poll_timeout);
        tracing::info!(offset = ?offset, "telegram: polling");
        loop {
            let mut req = self
                .bot
                .get_updates()
                .timeout(timeout_secs)
                .allowed_updates(vec![AllowedUpdate::Message]);
            if let Some(o) = offset {
                req = req.offset(o as i32);
            }
            let result = tokio::select! {
                r = tokio::time::timeout(watchdog, req.send()) => r,
                _ = cancel.cancelled() => return,
            };
            let wait = match result {
                Err(_) => {
                    tracing::warn!(after = ?watchdog, "telegram: getUpdates stalled past its timeout; restarting polling");
                    continue;
                }
                Ok(Ok(updates)) => {
                    backoff = Duration::from_secs(1);
                    for update in updates {
                        let next = update.id.0 as i64 + 1;
                        if !self.deliver_update(sink, me, update).await {
                            break; // not taken: poll again from this update
                        }
                        offset = Some(next);
                        self.offsets.save(next).await;
                    }
                    continue;
                }
                Ok(Err(RequestError::Api(ApiError::TerminatedByOtherGetUpdates))) => {
                    tracing::warn!(retry_in = ?backoff, "telegram: 409 Conflict: another process is polling this bot token; backing off");
                    backoff
                }
                Ok(Err(RequestError::RetryAfter(s))) => {
                    tracing::warn!(retry_after = ?s.duration(), "telegram: getUpdates rate limited");
                    s.duration()
                }
                Ok(Err(e)) => {
                    tracing::warn!(error = %e, retry_in = ?backoff, "telegram: getUpdates failed");
                    backoff
                }
            };
            backoff = (backoff * 2).min(MAX_BACKOFF);
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = cancel.cancelled() => return,
            }
        }
    }

    /// Hand one update to the gateway and wait until it has been committed. Returns false
    /// if the gateway did not take it in time (it will be fetched again).
    pub(super) async fn deliver_update(
        &self,
        sink: &InboundSink,
        me: &BotInfo,
        update: Update,
    ) -> bool {
        let Some(msg) = convert::inbound(&update, me) else {
            return true;
        };
        let (inbound, taken) = Inbound::with_ack(msg);
        if sink.send(inbound).await.is_err() {
            return false;
        }
        matches!(tokio::time::timeout(ACK_WAIT, taken).await, Ok(Ok(())))
    }
}
