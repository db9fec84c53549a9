//! One envelope from Socket Mode: handed to the gateway, then acked on the connection it
//! came on. A message is acked once the gateway has committed it (or deliberately dropped
//! it), so a crash before that leaves Slack to deliver it again; a slash command is acked
//! within Slack's 3 s whatever the gateway is doing (Slack does not retry commands, and
//! shows the user an error when the ack is late); a press is acked at once and answered
//! through the Web API. Deliveries of one key after the first are only acked (see `dedup`).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::convert::Item;
use super::dedup::{self, Begin};
use super::Inner;
use crate::{Inbound, InboundMessage, InboundSink};

/// Longest wait for the gateway to commit a message before giving up on acking it (Slack
/// then delivers it again).
const COMMIT_WAIT: Duration = Duration::from_secs(30);
/// A slash command is acked within this, committed or not (Slack's limit is 3 s).
const COMMAND_ACK_WITHIN: Duration = Duration::from_millis(2500);

/// Handle envelope `id` in a task of the adapter's tracker; its ack goes to `acks`.
pub(super) fn spawn(
    inner: &Arc<Inner>,
    sink: &InboundSink,
    id: String,
    item: Item,
    acks: mpsc::Sender<String>,
) {
    let (task_inner, sink) = (inner.clone(), sink.clone());
    inner.tasks.spawn(async move {
        let ack = Ack { id, acks };
        handle(&task_inner, &sink, item, ack).await;
    });
}

struct Ack {
    id: String,
    acks: mpsc::Sender<String>,
}

impl Ack {
    /// `{"envelope_id": …}` on the connection the envelope came on. Lost when that
    /// connection is gone: Slack delivers the envelope again on the next one.
    async fn send(self) {
        let frame = serde_json::json!({ "envelope_id": self.id }).to_string();
        if self.acks.send(frame).await.is_err() {
            tracing::debug!(envelope = %self.id, "slack: connection gone before the ack");
        }
    }
}

async fn handle(inner: &Inner, sink: &InboundSink, item: Item, ack: Ack) {
    match item {
        Item::Ignore(why) => {
            tracing::debug!(reason = why, "slack: envelope ignored");
            ack.send().await;
        }
        Item::Press { key, msg, at } => {
            ack.send().await;
            if let Begin::First(handling) = inner.seen.begin(&key) {
                handling.finish(true);
                super::actions::answer(inner, sink, msg, at).await;
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
                    if dedup::outcome(outcome).await {
                        ack.send().await;
                    }
                }
                Begin::First(handling) => {
                    let taken = match push(sink, msg).await {
                        Some(taken) => matches!(
                            tokio::time::timeout(COMMIT_WAIT, taken).await,
                            Ok(Ok(()))
                        ),
                        None => false,
                    };
                    handling.finish(taken);
                    if taken {
                        ack.send().await;
                    }
                }
            }
        }
        Item::Command { key, msg } => match inner.seen.begin(&key) {
            Begin::Again(_) => ack.send().await,
            Begin::First(handling) => {
                let Some(mut taken) = push(sink, msg).await else {
                    ack.send().await;
                    return;
                };
                let in_time = tokio::time::timeout(COMMAND_ACK_WITHIN, &mut taken).await;
                ack.send().await;
                let done = match in_time {
                    Ok(r) => r.is_ok(),
                    Err(_) => matches!(tokio::time::timeout(COMMIT_WAIT, taken).await, Ok(Ok(()))),
                };
                handling.finish(done);
            }
        },
    }
}

/// Hand `msg` to the gateway; the receiver fires when it is committed or dropped. `None`
/// when the gateway is gone.
async fn push(sink: &InboundSink, msg: InboundMessage) -> Option<tokio::sync::oneshot::Receiver<()>> {
    let (inbound, taken) = Inbound::with_ack(msg);
    sink.send(inbound).await.ok().map(|()| taken)
}
