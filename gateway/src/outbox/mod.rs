//! Outbox delivery: the one place that writes to channels. Takes due rows from the
//! store's outbox, sends them (in order per chat, chats in parallel), commits each part of
//! a split message as the channel delivers it, and records the result: sent, retry later
//! with backoff (honouring a platform's rate-limit delay), or failed for good. Once that
//! is committed, a delivered or failed row's file copy is removed (`media::sweep`).

pub mod copies;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use parking_lot::Mutex;
use switchboard_channels::backoff::Backoff;
use switchboard_channels::{ChannelError, DeliveryProgress, Origin, OutboundMessage};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::events::Event;
use crate::runtime::Runtime;
use crate::store::{now_ms, OutboxRow, Store};

/// Rows taken per pass.
const BATCH: i64 = 256;
/// Longest wait between retries of one message.
const MAX_BACKOFF: Duration = Duration::from_secs(300);
/// Waits between retries of one message (and of an announce): 1 s doubling to
/// [`MAX_BACKOFF`], jittered. A channel's rate-limit delay comes first.
pub const BACKOFF: Backoff = Backoff::new(Duration::from_secs(1), MAX_BACKOFF);
/// Attempts before a message is marked failed.
const MAX_ATTEMPTS: i64 = 25;
/// Idle re-check interval, in case a wake-up was missed.
const IDLE_POLL: Duration = Duration::from_secs(5);
pub use crate::store::API_CHANNEL;

/// Whether an origin is a chat people read: not an HTTP API caller (who reads replies from
/// the run) and not the gateway's own internal origin. Only such a chat is offered as the
/// default place to post approvals, messages and job answers.
pub fn is_chat(origin: &Origin) -> bool {
    origin.channel != API_CHANNEL && origin.channel != crate::store::INTERNAL_CHANNEL
}

/// Run the delivery loop until `cancel` fires, then make one last bounded pass.
pub async fn run(rt: Arc<Runtime>, cancel: CancellationToken) {
    match rt.store.reset_sending_outbox().await {
        Ok(0) => {}
        Ok(n) => tracing::warn!(
            rows = n,
            "re-sending messages whose delivery was cut by a crash"
        ),
        Err(e) => tracing::error!(error = %e, "cannot reset the outbox"),
    }
    let in_flight: Arc<Mutex<HashSet<String>>> = Arc::default();
    let mut tasks = JoinSet::new();
    loop {
        let wake = rt.tasks.outbox_wake.notified();
        let left = pass(&rt, &in_flight, &mut tasks).await;
        let wait = match rt.store.next_outbox_due().await {
            // Due rows left to other processes: look again when woken or after a while.
            _ if left => IDLE_POLL,
            Ok(Some(t)) => {
                Duration::from_millis((t - now_ms()).clamp(0, IDLE_POLL.as_millis() as i64) as u64)
            }
            _ => IDLE_POLL,
        };
        tokio::select! {
            _ = wake => {}
            _ = tokio::time::sleep(wait.max(Duration::from_millis(5))) => {}
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
            _ = cancel.cancelled() => break,
        }
    }
    // Flush what is due now; the rest stays in the outbox for the next start.
    pass(&rt, &in_flight, &mut tasks).await;
    let _ = tokio::time::timeout(Duration::from_secs(3), async {
        while tasks.join_next().await.is_some() {}
    })
    .await;
    tasks.abort_all();
}

/// Start sending the due rows, a task per chat; returns whether due rows were left to
/// another process (shared mode: a web chat open only there).
async fn pass(
    rt: &Arc<Runtime>,
    in_flight: &Arc<Mutex<HashSet<String>>>,
    tasks: &mut JoinSet<()>,
) -> bool {
    let rows = match rt.store.due_outbox(BATCH).await {
        Ok(r) => r,
        Err(e) => {
            tracing::error!(error = %e, "cannot read the outbox");
            return false;
        }
    };
    let mut left = false;
    let mut groups: HashMap<String, Vec<OutboxRow>> = HashMap::new();
    for row in rows {
        if rt.home.member.is_some() && !reaches(rt, &row.origin) {
            left = true;
            continue;
        }
        let chat = format!(
            "{}\u{0}{}\u{0}{}",
            row.origin.channel,
            row.origin.chat_id,
            row.origin.thread_id.as_deref().unwrap_or("")
        );
        groups.entry(chat).or_default().push(row);
    }
    for (chat, rows) in groups {
        if !in_flight.lock().insert(chat.clone()) {
            continue; // this chat is being sent to; keep its order
        }
        let rt = rt.clone();
        let in_flight = in_flight.clone();
        tasks.spawn(async move {
            for row in rows {
                if !deliver(&rt, &row).await {
                    break; // keep later messages of this chat behind the failed one
                }
            }
            in_flight.lock().remove(&chat);
            rt.tasks.outbox_wake.notify_one();
        });
    }
    left
}

/// Whether this process can deliver to `origin`'s chat now (see `Channel::reaches`).
fn reaches(rt: &Runtime, origin: &Origin) -> bool {
    origin.channel == API_CHANNEL
        || rt
            .channel(&origin.channel)
            .is_some_and(|ch| ch.reaches(origin))
}

/// Send one row; returns whether it was sent.
async fn deliver(rt: &Runtime, row: &OutboxRow) -> bool {
    match rt.store.claim_outbox(row.id).await {
        Ok(true) => {}
        Ok(false) => return true, // already handled by an earlier pass
        Err(e) => {
            tracing::error!(key = %row.key, error = %e, "cannot claim an outbox row");
            return false;
        }
    }
    let result = if row.origin.channel == API_CHANNEL {
        Ok(())
    } else {
        match rt.channel(&row.origin.channel) {
            Some(ch) => {
                let msg = OutboundMessage {
                    origin: row.origin.clone(),
                    text: row.text.clone(),
                    footer: row.footer.clone(),
                    actions: row.actions.clone(),
                    file: row.file.clone(),
                    key: row.key.clone(),
                };
                let progress = RowProgress {
                    store: &rt.store,
                    row,
                };
                let span =
                    tracing::info_span!("send", channel = %row.origin.channel, key = %row.key);
                let started = std::time::Instant::now();
                let sent = tracing::Instrument::instrument(ch.send(&msg, &progress), span).await;
                rt.parts.get::<crate::latency::Latency>().observe_send(
                    &row.origin.channel,
                    sent.is_ok(),
                    started.elapsed(),
                );
                sent
            }
            None => Err(ChannelError::Temporary(format!(
                "channel `{}` is not running",
                row.origin.channel
            ))),
        }
    };
    match result {
        Ok(()) => {
            match rt.store.mark_outbox_sent(row.id).await {
                // Committed: the file's copy is no longer needed (unless it is a download).
                Ok(()) => copies::remove_sent(rt, row).await,
                Err(e) => {
                    tracing::error!(key = %row.key, error = %e, "sent, but cannot mark the outbox row sent")
                }
            }
            rt.emit(Event::OutboxSent {
                channel: row.origin.channel.clone(),
                chat_id: row.origin.chat_id.clone(),
                key: row.key.clone(),
            });
            true
        }
        Err(e) => {
            let attempts = row.attempts + 1;
            let retry_at = if e.is_retryable() && attempts < MAX_ATTEMPTS {
                let delay = match &e {
                    ChannelError::RateLimited(d) => *d,
                    _ => BACKOFF.delay(u32::try_from(attempts).unwrap_or(u32::MAX)),
                };
                Some(now_ms() + delay.as_millis() as i64)
            } else {
                None
            };
            match retry_at {
                Some(_) => {
                    tracing::warn!(key = %row.key, attempts, error = %e, "delivery failed; will retry")
                }
                None => {
                    tracing::error!(key = %row.key, attempts, error = %e, "delivery failed for good")
                }
            }
            match rt
                .store
                .mark_outbox_failed(row.id, &e.to_string(), retry_at)
                .await
            {
                // Failed for good, and committed: nobody will send or fetch its file.
                Ok(()) if retry_at.is_none() => copies::remove_copy(rt, row).await,
                Ok(()) => {}
                Err(se) => {
                    tracing::error!(key = %row.key, error = %se, "cannot record a failed delivery")
                }
            }
            false
        }
    }
}

/// A row's delivered parts: read from the row, each new one committed before the channel
/// sends the next part.
struct RowProgress<'a> {
    store: &'a Store,
    row: &'a OutboxRow,
}

#[async_trait]
impl DeliveryProgress for RowProgress<'_> {
    fn delivered(&self) -> usize {
        usize::try_from(self.row.parts_sent).unwrap_or(0)
    }

    async fn part_delivered(&self, parts: usize) -> Result<(), ChannelError> {
        let parts = i64::try_from(parts).unwrap_or(i64::MAX);
        self.store
            .mark_outbox_progress(self.row.id, parts)
            .await
            .map_err(|e| {
                tracing::error!(key = %self.row.key, error = %e, "cannot record a delivered part; stopping before the next");
                ChannelError::Temporary(format!("cannot record the delivered part: {e}"))
            })
    }
}

/// The longest wait after `attempts` failed attempts, before jitter: 1 s, 2 s, 4 s …
/// capped at [`MAX_BACKOFF`] (the wait itself is [`BACKOFF`]`.delay`, within its upper half).
pub fn backoff(attempts: i64) -> Duration {
    BACKOFF.ceiling(u32::try_from(attempts.max(1)).unwrap_or(u32::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_caps() {
        assert_eq!(backoff(1), Duration::from_secs(1));
        assert_eq!(backoff(3), Duration::from_secs(4));
        assert_eq!(backoff(30), MAX_BACKOFF);
    }
}
