//! The built-in web chat channel: a hub of browser WebSocket connections.
//!
//! The gateway's HTTP server owns the sockets and pumps frames; this module owns the
//! frame protocol (JSON text frames, see [`ClientFrame`] and [`ServerFrame`]) and routes
//! outbound messages to every socket open on a chat.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::{
    Channel, ChannelError, ChatKind, InboundMessage, InboundSink, Origin, OutboundMessage,
};

pub const CHANNEL_ID: &str = "webchat";

/// Largest text a web chat message may carry, in characters.
pub const TEXT_LIMIT: usize = 16_000;

/// Frames queued per socket before the slowest reader starts losing them.
/// (Bounded so one stuck browser tab cannot grow the daemon's memory.)
const SOCKET_QUEUE: usize = 256;

/// A frame the browser sends.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase", deny_unknown_fields)]
pub enum ClientFrame {
    /// A chat message typed by the user.
    Message { text: String },
    /// Keep-alive; answered with `pong`.
    Ping,
}

/// A frame the gateway sends to the browser.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ServerFrame {
    /// Sent once on connect: which chat this socket is attached to.
    Hello {
        chat_id: String,
    },
    /// A message from the assistant (reply, announce or command answer).
    Message {
        text: String,
        key: String,
    },
    /// Typing indicator on/off.
    Typing {
        active: bool,
    },
    /// The client sent something the gateway could not accept.
    Error {
        error: String,
    },
    /// A live event (run started/step/tool/ended, sub-agent events).
    Event {
        event: serde_json::Value,
    },
    Pong,
}

impl ServerFrame {
    pub fn to_json(&self) -> String {
        // Serializing these plain enums cannot fail (no maps with non-string keys).
        serde_json::to_string(self).unwrap_or_else(|_| String::from("{\"type\":\"error\"}"))
    }
}

/// Identifies one open socket.
pub type ConnId = u64;

struct Conn {
    id: ConnId,
    chat_id: String,
    tx: mpsc::Sender<ServerFrame>,
}

/// The web chat hub. Cheap to share behind an `Arc`.
#[derive(Default)]
pub struct WebChat {
    next_id: AtomicU64,
    conns: Mutex<Vec<Conn>>,
    sink: Mutex<Option<InboundSink>>,
}

impl WebChat {
    pub fn new() -> Self {
        Self::default()
    }

    /// Register a socket on `chat_id`; frames for it arrive on the returned receiver.
    pub fn connect(&self, chat_id: &str) -> (ConnId, mpsc::Receiver<ServerFrame>) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::channel(SOCKET_QUEUE);
        let _ = tx.try_send(ServerFrame::Hello {
            chat_id: chat_id.to_string(),
        });
        self.lock_conns().push(Conn {
            id,
            chat_id: chat_id.to_string(),
            tx,
        });
        (id, rx)
    }

    pub fn disconnect(&self, conn: ConnId) {
        self.lock_conns().retain(|c| c.id != conn);
    }

    /// Number of open sockets (for metrics).
    pub fn connections(&self) -> usize {
        self.lock_conns().len()
    }

    /// Handle one text frame from socket `conn`. Returns the frame to answer with directly
    /// (an error or a pong), if any; chat messages go to the inbound sink.
    pub async fn handle_frame(&self, conn: ConnId, raw: &str) -> Option<ServerFrame> {
        let frame: ClientFrame = match serde_json::from_str(raw) {
            Ok(f) => f,
            Err(e) => {
                return Some(ServerFrame::Error {
                    error: format!(
                        "invalid frame: {e}; expected {{\"type\":\"message\",\"text\":\"...\"}}"
                    ),
                })
            }
        };
        let text = match frame {
            ClientFrame::Ping => return Some(ServerFrame::Pong),
            ClientFrame::Message { text } => text,
        };
        if text.trim().is_empty() {
            return Some(ServerFrame::Error {
                error: "empty message".to_string(),
            });
        }
        if text.chars().count() > TEXT_LIMIT {
            return Some(ServerFrame::Error {
                error: format!("message too long: the limit is {TEXT_LIMIT} characters"),
            });
        }
        let Some(chat_id) = self
            .lock_conns()
            .iter()
            .find(|c| c.id == conn)
            .map(|c| c.chat_id.clone())
        else {
            return Some(ServerFrame::Error {
                error: "connection is closed".to_string(),
            });
        };
        let sink = self.sink.lock().ok().and_then(|s| s.clone());
        let Some(sink) = sink else {
            return Some(ServerFrame::Error {
                error: "the web chat channel is not running".to_string(),
            });
        };
        let msg = InboundMessage {
            origin: Origin::webchat(chat_id.clone(), kind_of(&chat_id)),
            sender_id: sender_id(&chat_id),
            sender_name: None,
            sender_username: None,
            text,
            message_id: None,
            addressed: true,
        };
        if sink.send(crate::Inbound::new(msg)).await.is_err() {
            return Some(ServerFrame::Error {
                error: "the gateway is shutting down".to_string(),
            });
        }
        None
    }

    /// Push a frame to every socket on `chat_id`; returns how many took it.
    fn push(&self, chat_id: &str, frame: &ServerFrame) -> usize {
        let mut delivered = 0;
        for c in self.lock_conns().iter().filter(|c| c.chat_id == chat_id) {
            if c.tx.try_send(frame.clone()).is_ok() {
                delivered += 1;
            }
        }
        delivered
    }

    fn lock_conns(&self) -> std::sync::MutexGuard<'_, Vec<Conn>> {
        // A poisoned lock only means another thread panicked mid-push; the Vec is intact.
        self.conns.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The sender id of the person at a web chat: one per chat id.
pub fn sender_id(chat_id: &str) -> String {
    format!("webchat:{chat_id}")
}

/// The default chat (`main`) is the user's direct chat with the default agent; any other
/// chat id (`/?chat=name`) is a separate group-style conversation with its own session.
pub fn kind_of(chat_id: &str) -> ChatKind {
    if chat_id == DEFAULT_CHAT {
        ChatKind::Direct
    } else {
        ChatKind::Group
    }
}

/// Chat id of a browser that did not ask for a specific chat.
pub const DEFAULT_CHAT: &str = "main";

#[async_trait]
impl Channel for WebChat {
    fn id(&self) -> &str {
        CHANNEL_ID
    }

    fn text_limit(&self) -> usize {
        TEXT_LIMIT
    }

    async fn run(&self, sink: InboundSink, cancel: CancellationToken) -> Result<(), ChannelError> {
        if let Ok(mut s) = self.sink.lock() {
            *s = Some(sink);
        }
        cancel.cancelled().await;
        if let Ok(mut s) = self.sink.lock() {
            *s = None;
        }
        Ok(())
    }

    async fn send(&self, msg: &OutboundMessage) -> Result<(), ChannelError> {
        let mut delivered = 0;
        for part in crate::split::split_text(&msg.text, TEXT_LIMIT) {
            delivered = self.push(
                &msg.origin.chat_id,
                &ServerFrame::Message {
                    text: part,
                    key: msg.key.clone(),
                },
            );
        }
        if delivered == 0 {
            // Nobody has this chat open: keep the message in the outbox and retry later.
            return Err(ChannelError::Temporary(format!(
                "no browser connected to web chat '{}'",
                msg.origin.chat_id
            )));
        }
        Ok(())
    }

    async fn typing(&self, origin: &Origin, active: bool) -> Result<(), ChannelError> {
        self.push(&origin.chat_id, &ServerFrame::Typing { active });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn malformed_frames_get_a_clear_error() {
        let hub = WebChat::new();
        let (conn, _rx) = hub.connect("main");
        let answer = hub.handle_frame(conn, "{not json").await;
        assert!(
            matches!(answer, Some(ServerFrame::Error { ref error }) if error.starts_with("invalid frame")),
            "{answer:?}"
        );
        let answer = hub.handle_frame(conn, r#"{"type":"message"}"#).await;
        assert!(
            matches!(answer, Some(ServerFrame::Error { .. })),
            "{answer:?}"
        );
    }

    #[tokio::test]
    async fn messages_reach_the_sink_and_replies_reach_the_socket() {
        let hub = std::sync::Arc::new(WebChat::new());
        let (tx, mut inbound) = mpsc::channel(4);
        let cancel = CancellationToken::new();
        let runner = {
            let hub = hub.clone();
            let cancel = cancel.clone();
            tokio::spawn(async move { hub.run(tx, cancel).await })
        };
        tokio::task::yield_now().await;
        let (conn, mut frames) = hub.connect("main");
        assert_eq!(
            frames.recv().await,
            Some(ServerFrame::Hello {
                chat_id: "main".into()
            })
        );
        assert_eq!(
            hub.handle_frame(conn, r#"{"type":"message","text":"hi"}"#)
                .await,
            None
        );
        let msg = inbound.recv().await.expect("inbound message").msg;
        assert_eq!(msg.text, "hi");
        assert_eq!(msg.origin, Origin::webchat("main", ChatKind::Direct));
        hub.send(&OutboundMessage {
            origin: msg.origin,
            text: "hello".into(),
            key: "k".into(),
        })
        .await
        .expect("send");
        assert_eq!(
            frames.recv().await,
            Some(ServerFrame::Message {
                text: "hello".into(),
                key: "k".into()
            })
        );
        cancel.cancel();
        runner.await.expect("join").expect("run");
    }
}
