//! Long polling: `getUpdates` with the offset persisted only once each update is done with
//! (taken by the gateway, or recorded as poisoned), a watchdog for stalled calls, and
//! backoff on conflicts, errors and updates the gateway did not take.

use std::time::Duration;

use teloxide::requests::{JsonRequest, Request};
use teloxide::types::AllowedUpdate;
use teloxide::{ApiError, RequestError};
use tokio_util::sync::CancellationToken;

use super::inbound::Outcome;
use super::raw::{parse_update, GetUpdatesRaw};
use super::{BotInfo, Telegram};
use crate::backoff::Backoff;
use crate::InboundSink;

/// How much longer than the long-poll timeout a `getUpdates` call may take before the
/// watchdog abandons it and polls again: the timeout again, at least 2 s, at most 10 s.
fn watchdog(poll_timeout: Duration) -> Duration {
    poll_timeout + poll_timeout.clamp(Duration::from_secs(2), Duration::from_secs(10))
}
/// Waits after a failed `getUpdates` (a 409 conflict, an error): 1 s doubling to a minute.
const POLL_BACKOFF: Backoff = Backoff::new(Duration::from_secs(1), Duration::from_secs(60));
/// Waits before an update the gateway did not take is tried again: the same.
const RETRY_UPDATE: Backoff = POLL_BACKOFF;

impl Telegram {
    pub(super) async fn poll(&self, sink: &InboundSink, me: &BotInfo, cancel: &CancellationToken) {
        let mut offset = self.offsets.load().await;
        // Failed polls in a row, and tries of an update the gateway did not take.
        let mut failures = 0;
        let mut not_taken_tries = 0;
        let timeout_secs = self.settings.poll_timeout.as_secs().clamp(0, 50) as u32;
        let watchdog = watchdog(self.settings.poll_timeout);
        tracing::info!(offset = ?offset, "telegram: polling");
        loop {
            // Raw JSON, repaired before teloxide reads it (see `raw`).
            let req = JsonRequest::new(
                self.bot.clone(),
                GetUpdatesRaw {
                    offset: offset.map(|o| o as i32),
                    timeout: timeout_secs,
                    allowed_updates: vec![AllowedUpdate::Message, AllowedUpdate::CallbackQuery],
                },
            );
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
                    failures = 0;
                    let mut not_taken = None;
                    for raw in updates {
                        let Some(update) = parse_update(raw) else {
                            tracing::warn!("telegram: skipped an update without an update_id");
                            continue;
                        };
                        let next = i64::from(update.id.0) + 1;
                        match self.handle_update(sink, me, update, cancel).await {
                            Outcome::Done | Outcome::Poisoned => {
                                offset = Some(next);
                                self.offsets.save(next).await;
                            }
                            Outcome::NotTaken(why) => {
                                not_taken = Some((next - 1, why));
                                break; // poll again from this update
                            }
                            Outcome::Interrupted => return,
                        }
                    }
                    let Some((update_id, why)) = not_taken else {
                        not_taken_tries = 0;
                        continue;
                    };
                    not_taken_tries += 1;
                    let wait = RETRY_UPDATE.delay(not_taken_tries);
                    tracing::warn!(update_id, reason = %why, retry_in = ?wait, "telegram: the gateway did not take an update; trying it again");
                    tokio::select! {
                        _ = tokio::time::sleep(wait) => {}
                        _ = cancel.cancelled() => return,
                    }
                    continue;
                }
                Ok(Err(RequestError::Api(ApiError::TerminatedByOtherGetUpdates))) => {
                    failures += 1;
                    let wait = POLL_BACKOFF.delay(failures);
                    tracing::warn!(retry_in = ?wait, "telegram: 409 Conflict: another process is polling this bot token; backing off");
                    wait
                }
                Ok(Err(RequestError::RetryAfter(s))) => {
                    // Telegram's own delay comes first; the next failure still backs off further.
                    failures += 1;
                    tracing::warn!(retry_after = ?s.duration(), "telegram: getUpdates rate limited");
                    s.duration()
                }
                Ok(Err(e)) => {
                    failures += 1;
                    let wait = POLL_BACKOFF.delay(failures);
                    tracing::warn!(error = %e, retry_in = ?wait, "telegram: getUpdates failed");
                    wait
                }
            };
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = cancel.cancelled() => return,
            }
        }
    }
}
