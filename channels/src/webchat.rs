//! The built-in web chat channel: a hub of browser WebSocket connections.
//!
//! The gateway's HTTP server owns the sockets and pumps frames; this module owns the
//! frame protocol (JSON text frames, see [`ClientFrame`] and [`ServerFrame`]) and routes
//! outbound messages to every socket open on a chat. A message counts as delivered once a
//! socket has written it (not when it was queued for one): a crash in between leaves it in
//! the outbox, to be sent again.

use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use parking_lot::Mutex;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::{
    Channel, ChannelError, ChatKind, DeliveryProgress, InboundMessage, InboundSink, LineError,
    Origin, OutboundMessage, Press,
};

pub const CHANNEL_ID: &str = "webchat";

/// Largest text a web chat message may carry, in characters.
pub const TEXT_LIMIT: usize = 16_000;

/// Frames queued per socket before the slowest reader starts losing them.
/// (Bounded so one stuck browser tab cannot grow the daemon's memory.)
const SOCKET_QUEUE: usize = 256;
/// How long a message waits for some socket of its chat to write it before the delivery
/// counts as failed (and the outbox retries it).
const WRITE_WAIT: std::time::Duration = std::time::Duration::from_secs(10);
/// How long a button press waits for the gateway's answer before the presser is told it
/// could not be handled.
const PRESS_WAIT: std::time::Duration = std::time::Duration::from_secs(10);
/// Longest message key a press may name (the gateway's keys are far shorter).
const MAX_KEY: usize = 256;

#[path = "webchat_config.rs"]
mod config;
#[path = "webchat_files.rs"]
pub mod files;
#[path = "webchat_frames.rs"]
mod frames;
pub use config::WebchatConfig;
pub use frames::{ClientFrame, HistoryMessage, HistoryRole, ServerFrame};

/// Identifies one open socket.
pub type ConnId = u64;

/// A frame on its way to one socket. For a chat message, `written` is to be fired once the
/// socket has written the frame: only then is the message delivered.
#[derive(Debug)]
pub struct Outgoing {
    pub frame: ServerFrame,
    written: Option<oneshot::Sender<()>>,
}

impl Outgoing {
    fn new(frame: ServerFrame) -> Self {
        Outgoing {
            frame,
            written: None,
        }
    }

    /// The socket wrote the frame: confirm the delivery it belongs to, if any.
    pub fn written(self) {
        if let Some(tx) = self.written {
            let _ = tx.send(());
        }
    }
}

struct Conn {
    id: ConnId,
    chat_id: String,
    tx: mpsc::Sender<Outgoing>,
}

/// The web chat hub. Cheap to share behind an `Arc`.
#[derive(Default)]
pub struct WebChat {
    next_id: AtomicU64,
    conns: Mutex<Vec<Conn>>,
    sink: Mutex<Option<InboundSink>>,
    /// Where the gateway stages uploads (unset: the web chat takes no files).
    uploads: Mutex<Option<files::UploadDir>>,
}

impl WebChat {
    pub fn new() -> Self {
        Self::default()
    }

    /// Take files from the folder the gateway's upload route stages them in.
    pub fn set_upload_dir(&self, dir: std::path::PathBuf) {
        *self.uploads.lock() = Some(files::UploadDir(dir));
    }

    /// Register a socket on `chat_id`; frames for it arrive on the returned receiver (call
    /// [`Outgoing::written`] once each is written to the socket).
    pub fn connect(&self, chat_id: &str) -> (ConnId, mpsc::Receiver<Outgoing>) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::channel(SOCKET_QUEUE);
        let _ = tx.try_send(Outgoing::new(ServerFrame::Hello {
            chat_id: chat_id.to_string(),
        }));
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
        let (text, files) = match frame {
            ClientFrame::Ping {} => return Some(ServerFrame::Pong),
            ClientFrame::Message { text, files } => (text, files),
            ClientFrame::Press { action, key } => return Some(self.press(conn, action, key).await),
        };
        let media = match files::media_of(&files) {
            Ok(m) => m,
            Err(error) => return Some(ServerFrame::Error { error }),
        };
        if !media.is_empty() && self.uploads.lock().is_none() {
            return Some(ServerFrame::Error {
                error: "this web chat takes no files".to_string(),
            });
        }
        if text.trim().is_empty() && media.is_empty() {
            return Some(ServerFrame::Error {
                error: "empty message".to_string(),
            });
        }
        if text.chars().count() > TEXT_LIMIT {
            return Some(ServerFrame::Error {
                error: format!("message too long: the limit is {TEXT_LIMIT} characters"),
            });
        }
        let Some(chat_id) = self.chat_of(conn) else {
            return Some(ServerFrame::Error {
                error: "connection is closed".to_string(),
            });
        };
        let sink = self.sink.lock().clone();
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
            press: None,
            media,
        };
        if sink.send(crate::Inbound::new(msg)).await.is_err() {
            return Some(ServerFrame::Error {
                error: "the gateway is shutting down".to_string(),
            });
        }
        None
    }

    /// A button press from socket `conn`: handed to the gateway, whose answer rewrites the
    /// message on every socket of the chat and is told to the presser (the returned frame).
    async fn press(&self, conn: ConnId, action: String, key: String) -> ServerFrame {
        let error = |e: &str| ServerFrame::Error {
            error: e.to_string(),
        };
        if action.is_empty() || action.len() > crate::MAX_ACTION_ID || key.len() > MAX_KEY {
            return error("invalid press: unknown button");
        }
        let Some(chat_id) = self.chat_of(conn) else {
            return error("connection is closed");
        };
        let Some(sink) = self.sink.lock().clone() else {
            return error("the web chat channel is not running");
        };
        let msg = InboundMessage {
            origin: Origin::webchat(chat_id.clone(), kind_of(&chat_id)),
            sender_id: sender_id(&chat_id),
            sender_name: None,
            sender_username: None,
            text: String::new(),
            message_id: None,
            addressed: true,
            press: Some(Press {
                action,
                message_id: Some(key.clone()),
            }),
            media: Vec::new(),
        };
        let (inbound, answered) = crate::Inbound::press(msg);
        if sink.send(inbound).await.is_err() {
            return error("the gateway is shutting down");
        }
        match tokio::time::timeout(PRESS_WAIT, answered).await {
            Ok(Ok(answer)) => {
                if let Some(text) = answer.update {
                    self.push(&chat_id, &ServerFrame::Update { key, text });
                }
                ServerFrame::Notice {
                    text: answer.notice,
                    alert: answer.alert,
                }
            }
            _ => error("the press could not be handled; try again"),
        }
    }

    fn chat_of(&self, conn: ConnId) -> Option<String> {
        self.lock_conns()
            .iter()
            .find(|c| c.id == conn)
            .map(|c| c.chat_id.clone())
    }

    /// Push a frame to every socket on `chat_id` (best effort: typing indicators).
    fn push(&self, chat_id: &str, frame: &ServerFrame) {
        for c in self.lock_conns().iter().filter(|c| c.chat_id == chat_id) {
            let _ = c.tx.try_send(Outgoing::new(frame.clone()));
        }
    }

    /// Push a message frame to every socket on `chat_id`; one receiver per socket that
    /// took it, which fires once that socket has written it.
    fn push_confirmed(&self, chat_id: &str, frame: &ServerFrame) -> Vec<oneshot::Receiver<()>> {
        let mut out = Vec::new();
        for c in self.lock_conns().iter().filter(|c| c.chat_id == chat_id) {
            let (tx, rx) = oneshot::channel();
            let item = Outgoing {
                frame: frame.clone(),
                written: Some(tx),
            };
            if c.tx.try_send(item).is_ok() {
                out.push(rx);
            }
        }
        out
    }

    fn lock_conns(&self) -> parking_lot::MutexGuard<'_, Vec<Conn>> {
        self.conns.lock()
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
        *self.sink.lock() = Some(sink);
        cancel.cancelled().await;
        *self.sink.lock() = None;
        Ok(())
    }

    fn reaches(&self, origin: &crate::Origin) -> bool {
        self.lock_conns()
            .iter()
            .any(|c| c.chat_id == origin.chat_id)
    }

    async fn send(
        &self,
        msg: &OutboundMessage,
        progress: &dyn DeliveryProgress,
    ) -> Result<(), ChannelError> {
        let mut parts = crate::split::split_text(&msg.text, msg.footer.as_deref(), TEXT_LIMIT);
        // A file goes last, as its own `file` frame (the text's parts first).
        let file = match &msg.file {
            Some(f) => Some(files::link_of(f)?),
            None => None,
        };
        if file.is_some() {
            parts.push(String::new());
        }
        crate::send_parts(&parts, progress, |part, last| {
            let actions = if last {
                crate::renderable(&msg.actions).cloned().collect()
            } else {
                Vec::new()
            };
            let frame = match (&file, last) {
                (Some(file), true) => ServerFrame::File {
                    key: msg.key.clone(),
                    file: file.clone(),
                },
                _ => ServerFrame::Message {
                    text: part.to_string(),
                    key: msg.key.clone(),
                    actions,
                },
            };
            let written = self.push_confirmed(&msg.origin.chat_id, &frame);
            async move {
                if written.is_empty() {
                    // Nobody has this chat open: keep the message in the outbox, retry later.
                    return Err(ChannelError::Temporary(format!(
                        "no browser connected to web chat '{}'",
                        msg.origin.chat_id
                    )));
                }
                // Delivered once any socket of the chat has written it.
                match tokio::time::timeout(WRITE_WAIT, futures::future::select_ok(written)).await {
                    Ok(Ok(_)) => Ok(()),
                    Ok(Err(_)) => Err(ChannelError::Temporary(format!(
                        "web chat '{}' closed before the message was written",
                        msg.origin.chat_id
                    ))),
                    Err(_) => Err(ChannelError::Temporary(format!(
                        "web chat '{}' did not take the message within {WRITE_WAIT:?}",
                        msg.origin.chat_id
                    ))),
                }
            }
        })
        .await
    }

    async fn fetch_media(
        &self,
        media: &crate::MediaRef,
        max_bytes: u64,
        out: &mut (dyn tokio::io::AsyncWrite + Unpin + Send),
    ) -> Result<u64, crate::MediaError> {
        let dir = self.uploads.lock().clone();
        match dir {
            Some(dir) => dir.fetch(&media.source, max_bytes, out).await,
            None => Err(crate::MediaError::Unsupported),
        }
    }

    fn file_limit(&self, _kind: crate::FileKind) -> Option<u64> {
        self.uploads
            .lock()
            .is_some()
            .then_some(files::DOWNLOAD_LIMIT)
    }

    async fn typing(&self, origin: &Origin, active: bool) -> Result<(), ChannelError> {
        self.push(&origin.chat_id, &ServerFrame::Typing { active });
        Ok(())
    }

    /// A line is a `message` frame keyed `key` (its id is the key) for the sockets open
    /// now; the web chat keeps no message, so a page opened later sees the line from its
    /// next edit on.
    async fn post_line(&self, origin: &Origin, key: &str, text: &str) -> Result<String, LineError> {
        let frame = ServerFrame::Message {
            text: text.to_string(),
            key: key.to_string(),
            actions: Vec::new(),
        };
        self.push(&origin.chat_id, &frame);
        Ok(key.to_string())
    }

    /// An edit is an `update` frame of the line's key.
    async fn edit_line(
        &self,
        origin: &Origin,
        message_id: &str,
        text: &str,
    ) -> Result<(), LineError> {
        let frame = ServerFrame::Update {
            key: message_id.to_string(),
            text: text.to_string(),
        };
        self.push(&origin.chat_id, &frame);
        Ok(())
    }
}

#[cfg(test)]
#[path = "webchat_tests.rs"]
mod tests;
