//! One update from Telegram to the gateway, polling and webhook alike: its attempt counted
//! durably before it is handled (so an attempt that kills the task still counts), then
//! converted and handed over until the gateway acknowledges it; an update whose handling
//! failed [`MAX_ATTEMPTS`] times is recorded as poisoned and skipped, never retried forever.

use std::panic::AssertUnwindSafe;
use std::time::Duration;

use async_trait::async_trait;
use teloxide::types::{Update, UpdateKind};
use tokio_util::sync::CancellationToken;

use super::convert::{self, Converted};
use super::{BotInfo, Telegram};
use crate::{Inbound, InboundSink};

/// Failed attempts after which an update is recorded as poisoned and skipped.
pub const MAX_ATTEMPTS: u32 = 3;
/// How long an update waits for the gateway to take it before the attempt counts as failed
/// (the offset is then not advanced past it, so it comes again).
const ACK_WAIT: Duration = Duration::from_secs(30);
/// Most of a poisoned update's JSON kept with its record.
const MAX_PAYLOAD: usize = 64 * 1024;

/// The adapter's durable bookkeeping, kept by the gateway's store: the polling offset, and
/// the attempts at handling each update not yet done with.
#[async_trait]
pub trait OffsetStore: Send + Sync {
    /// The saved polling offset, if any.
    async fn load(&self) -> Option<i64>;
    /// Every update below `next_offset` is done with: save the offset and forget their
    /// attempts.
    async fn save(&self, next_offset: i64);
    /// Count one more attempt at handling `update_id`, durably, before it is handled.
    /// Returns the attempts counted so far, this one included.
    async fn begin_attempt(&self, update_id: i64) -> Result<u32, LedgerError>;
    /// The last attempt was cut short by a shutdown, not failed: it does not count.
    async fn interrupted(&self, update_id: i64);
    /// The update was handled (webhook mode, where no offset moves): forget its attempts.
    async fn handled(&self, update_id: i64);
    /// Record an update as poisoned (and forget its attempts): it is skipped for good.
    async fn poison(&self, record: &Poisoned) -> Result<(), LedgerError>;
}

/// The ledger could not record something.
#[derive(Debug, thiserror::Error)]
#[error("cannot record the update: {0}")]
pub struct LedgerError(pub String);

/// An update skipped for good, as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Poisoned {
    pub update_id: i64,
    /// Failed attempts.
    pub attempts: u32,
    /// Why the last attempt failed.
    pub reason: String,
    /// What the update was, without its content (safe for a log line).
    pub summary: String,
    /// The update's JSON (at most 64 KB), for whoever investigates.
    pub payload: String,
}

/// How handling an update ended.
#[derive(Debug)]
pub(super) enum Outcome {
    /// Taken by the gateway, or nothing for it: done with.
    Done,
    /// Recorded as poisoned: done with.
    Poisoned,
    /// Not taken (or its attempt not recorded): it must come again.
    NotTaken(String),
    /// Cut short by a shutdown; the attempt does not count.
    Interrupted,
}

/// How one delivery to the gateway ended.
enum Delivery {
    Taken,
    Ignored,
    NotTaken(String),
    /// It can never be taken (unreadable, or its conversion panicked): poison it now.
    Rejected(String),
    Interrupted,
}

impl Telegram {
    /// Count the attempt, hand the update to the gateway, and poison it on its last failure.
    pub(super) async fn handle_update(
        &self,
        sink: &InboundSink,
        me: &BotInfo,
        update: Update,
        cancel: &CancellationToken,
    ) -> Outcome {
        let id = i64::from(update.id.0);
        let attempt = match self.offsets.begin_attempt(id).await {
            Ok(n) => n,
            Err(e) => return Outcome::NotTaken(e.to_string()),
        };
        if attempt > MAX_ATTEMPTS {
            let why = "its handling never completed: the adapter or the gateway stopped while handling it";
            return self.poison(&update, attempt - 1, why).await;
        }
        if attempt > 1 {
            tracing::warn!(
                update_id = id,
                attempt,
                "telegram: handling an update again (attempt {attempt} of {MAX_ATTEMPTS})"
            );
        }
        let why = match self.deliver(sink, me, &update, cancel).await {
            Delivery::Taken | Delivery::Ignored => return Outcome::Done,
            Delivery::Interrupted => {
                self.offsets.interrupted(id).await;
                return Outcome::Interrupted;
            }
            Delivery::Rejected(why) => why,
            Delivery::NotTaken(why) if attempt >= MAX_ATTEMPTS => why,
            Delivery::NotTaken(why) => return Outcome::NotTaken(why),
        };
        self.poison(&update, attempt, &why).await
    }

    /// Record `update` as poisoned and report it; if that cannot be recorded, it is not
    /// skipped (it comes again).
    async fn poison(&self, update: &Update, attempts: u32, reason: &str) -> Outcome {
        let record = Poisoned {
            update_id: i64::from(update.id.0),
            attempts,
            reason: reason.to_string(),
            summary: summary(update),
            payload: payload(update),
        };
        match self.offsets.poison(&record).await {
            Ok(()) => {
                tracing::error!(
                    update_id = record.update_id,
                    attempts,
                    reason,
                    update = %record.summary,
                    "telegram: update recorded as poisoned and skipped"
                );
                Outcome::Poisoned
            }
            Err(e) => Outcome::NotTaken(e.to_string()),
        }
    }

    /// Hand one update to the gateway and wait until it has been committed.
    async fn deliver(
        &self,
        sink: &InboundSink,
        me: &BotInfo,
        update: &Update,
        cancel: &CancellationToken,
    ) -> Delivery {
        // The conversion is total; this only keeps a future bug from killing the task.
        let converted = std::panic::catch_unwind(AssertUnwindSafe(|| convert::convert(update, me)));
        let msg = match converted {
            Ok(Converted::Message(m)) => m,
            Ok(Converted::Press(m, callback)) => {
                return self.deliver_press(sink, *m, callback, cancel).await
            }
            Ok(Converted::Ignored) => return Delivery::Ignored,
            Ok(Converted::Unreadable(why)) => return Delivery::Rejected(why),
            Err(panic) => {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                return Delivery::Rejected(format!("its conversion panicked: {what}"));
            }
        };
        let (inbound, taken) = Inbound::with_ack(*msg);
        tokio::select! {
            sent = sink.send(inbound) => if sent.is_err() {
                return Delivery::Interrupted; // the gateway stopped taking messages
            },
            _ = cancel.cancelled() => return Delivery::Interrupted,
        }
        let acked = tokio::select! {
            acked = tokio::time::timeout(ACK_WAIT, taken) => acked,
            _ = cancel.cancelled() => return Delivery::Interrupted,
        };
        match acked {
            Ok(Ok(())) => Delivery::Taken,
            Ok(Err(_)) if sink.is_closed() => Delivery::Interrupted,
            Ok(Err(_)) => Delivery::NotTaken("the gateway could not take it".to_string()),
            Err(_) => {
                Delivery::NotTaken(format!("the gateway did not take it within {ACK_WAIT:?}"))
            }
        }
    }
}

impl Telegram {
    /// Hand a button press to the gateway, then give its answer to Telegram: the callback
    /// query answered (a toast, an alert for a refusal), the pressed message edited to show
    /// the outcome (its keyboard gone). A press the gateway could not handle is not taken,
    /// so it comes again.
    async fn deliver_press(
        &self,
        sink: &InboundSink,
        msg: crate::InboundMessage,
        callback: convert::Callback,
        cancel: &CancellationToken,
    ) -> Delivery {
        let (inbound, answered) = Inbound::press(msg);
        tokio::select! {
            sent = sink.send(inbound) => if sent.is_err() {
                return Delivery::Interrupted;
            },
            _ = cancel.cancelled() => return Delivery::Interrupted,
        }
        let answer = tokio::select! {
            a = tokio::time::timeout(ACK_WAIT, answered) => a,
            _ = cancel.cancelled() => return Delivery::Interrupted,
        };
        let answer = match answer {
            Ok(Ok(a)) => a,
            Ok(Err(_)) if sink.is_closed() => return Delivery::Interrupted,
            Ok(Err(_)) => {
                return Delivery::NotTaken("the gateway could not handle the press".into())
            }
            Err(_) => {
                return Delivery::NotTaken(format!(
                    "the gateway did not handle the press within {ACK_WAIT:?}"
                ))
            }
        };
        self.answer_press(&callback, &answer).await;
        Delivery::Taken
    }
}

/// What an update is, without its text: kind, chat, sender, message id.
fn summary(update: &Update) -> String {
    match &update.kind {
        UpdateKind::Message(m) => format!(
            "message {} in chat {} from {}",
            m.id.0,
            m.chat.id.0,
            m.from
                .as_ref()
                .map_or_else(|| "nobody".to_string(), |u| u.id.0.to_string())
        ),
        UpdateKind::CallbackQuery(q) => format!("button press {} from {}", q.id.0, q.from.id.0),
        UpdateKind::Error(_) => "an unreadable update".to_string(),
        _ => "an update of another kind".to_string(),
    }
}

/// The update as JSON, cut to [`MAX_PAYLOAD`] bytes on a char boundary.
fn payload(update: &Update) -> String {
    let mut json = serde_json::to_string(update).unwrap_or_default();
    if json.len() > MAX_PAYLOAD {
        let mut cut = MAX_PAYLOAD;
        while !json.is_char_boundary(cut) {
            cut -= 1;
        }
        json.truncate(cut);
    }
    json
}
