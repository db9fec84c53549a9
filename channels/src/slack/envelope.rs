//! One envelope from Socket Mode: handed to the gateway in the order the socket gave it
//! (so a chat's messages keep their order), then acked on the connection it came on, from
//! a task of the adapter's tracker. A message is acked once the gateway has committed it
//! (or deliberately dropped it), so a crash before that leaves Slack to deliver it again;
//! a slash command is acked within Slack's 3 s whatever the gateway is doing (Slack does
//! not retry commands, and shows the user an error when the ack is late); a press is acked
//! at once and answered through the Web API. Deliveries of one key after the first are
//! only acked (see `dedup`).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use super::convert::Item;
use super::dedup::{self, Begin};
use super::Inner;
use crate::{Inbound, InboundSink};

/// Longest wait for the gateway to commit a message before giving up on acking it (Slack
/// then delivers it again).
const COMMIT_WAIT: Duration = Duration::from_secs(30);
/// A slash command is acked within this, committed or not (Slack's limit is 3 s).
const COMMAND_ACK_WITHIN: Duration = Duration::from_millis(2500);

/// The ack of one envelope: `{"envelope_id": …}` on the connection it came on.
pub(super) struct Ack {
    pub(super) id: String,
    pub(super) acks: mpsc::Sender<String>,
}

impl Ack {
    /// Lost when that connection is gone: Slack delivers the envelope again on the next.
    async fn send(self) {
        let frame = serde_json::json!({ "envelope_id": self.id }).to_string();
        if self.acks.send(frame).await.is_err() {
            tracing::debug!(envelope = %self.id, "slack: connection gone before the ack");
        }
    }
}

/// Take one envelope: hand what it carries to the gateway now (waiting while the gateway
/// is behind), and leave the wait for its outcome and the ack to a task.
pub(super) async fn take(inner: &Arc<Inner>, sink: &InboundSink, item: Item, ack: Ack) {
    match item {
        Item::Ignore(why) => {
            tracing::debug!(reason = why, "slack: envelope ignored");
            inner.tasks.spawn(ack.send());
        }
        Item::Press { key, msg, at } => {
            inner.tasks.spawn(ack.send());
            if let Begin::First(handling) = inner.seen.begin(&key) {
                handling.finish(true);
                let (inbound, answered) = Inbound::press(msg);
                if sink.send(inbound).await.is_ok() {
                    let task_inner = inner.clone();
                    inner.tasks.spawn(async move {
                        super::actions::answer(&task_inner, answered, at).await;
                    });
                }
            }
        }
        Item::Message {
            key,
            mut msg,
            thread,
        } => {
            if let Some((channel, ts)) = thread {
                if inner.threads.lock().contains(&channel, &ts) {
                    msg.addressed = true;
                }
            }
            match inner.seen.begin(&key) {
                Begin::Again(outcome) => {
                    inner.tasks.spawn(async move {
                        if dedup::outcome(outcome).await {
                            ack.send().await;
                        }
                    });
                }
                Begin::First(handling) => {
                    let (inbound, taken) = Inbound::with_ack(msg);
                    if sink.send(inbound).await.is_err() {
                        return;
                    }
                    inner.tasks.spawn(async move {
                        let taken = committed(taken, COMMIT_WAIT).await;
                        handling.finish(taken);
                        if taken {
                            ack.send().await;
                        }
                    });
                }
            }
        }
        Item::Command { key, msg } => match inner.seen.begin(&key) {
            Begin::Again(_) => {
                inner.tasks.spawn(ack.send());
            }
            Begin::First(handling) => {
                let (inbound, mut taken) = Inbound::with_ack(msg);
                if sink.send(inbound).await.is_err() {
                    return;
                }
                inner.tasks.spawn(async move {
                    let in_time = tokio::time::timeout(COMMAND_ACK_WITHIN, &mut taken).await;
                    ack.send().await;
                    let done = match in_time {
                        Ok(r) => r.is_ok(),
                        Err(_) => committed(taken, COMMIT_WAIT).await,
                    };
                    handling.finish(done);
                });
            }
        },
    }
}

/// Whether the gateway took the message within `wait`.
async fn committed(taken: oneshot::Receiver<()>, wait: Duration) -> bool {
    matches!(tokio::time::timeout(wait, taken).await, Ok(Ok(())))
}
