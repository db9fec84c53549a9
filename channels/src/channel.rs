//! The [`Channel`] trait: what the gateway needs from every chat adapter.

use async_trait::async_trait;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::{InboundMessage, LineError, Origin, OutboundMessage, PressAnswer};

/// Where adapters push inbound messages. Bounded: an adapter that outruns the gateway
/// waits (backpressure) instead of growing memory without limit.
pub type InboundSink = mpsc::Sender<Inbound>;

/// An inbound message with an optional acknowledgement: the gateway fires `ack` once the
/// message is committed (or deliberately dropped), so an adapter can confirm it to the
/// platform only then (e.g. Telegram's update offset) and a crash never loses it. A button
/// press is acknowledged with the gateway's answer instead (`answer`), which the adapter
/// gives the platform.
#[derive(Debug)]
pub struct Inbound {
    pub msg: InboundMessage,
    pub ack: Option<oneshot::Sender<()>>,
    pub answer: Option<oneshot::Sender<PressAnswer>>,
}

impl Inbound {
    pub fn new(msg: InboundMessage) -> Self {
        Inbound {
            msg,
            ack: None,
            answer: None,
        }
    }

    /// A message and the receiver that fires when the gateway has taken it.
    pub fn with_ack(msg: InboundMessage) -> (Self, oneshot::Receiver<()>) {
        let (tx, rx) = oneshot::channel();
        let inbound = Inbound {
            msg,
            ack: Some(tx),
            answer: None,
        };
        (inbound, rx)
    }

    /// A button press (`msg.press` set) and the receiver of the gateway's answer, which
    /// comes once the press is handled (dropped unanswered if it could not be: the
    /// platform may deliver it again).
    pub fn press(msg: InboundMessage) -> (Self, oneshot::Receiver<PressAnswer>) {
        let (tx, rx) = oneshot::channel();
        let inbound = Inbound {
            msg,
            ack: None,
            answer: Some(tx),
        };
        (inbound, rx)
    }
}

/// An error from a channel operation. `retryable` decides whether the outbox tries again.
#[derive(Debug, thiserror::Error)]
pub enum ChannelError {
    /// The platform asked us to slow down; try again after the given delay.
    #[error("rate limited, retry after {0:?}")]
    RateLimited(std::time::Duration),
    /// A transient failure (network, 5xx, recipient not connected right now).
    #[error("temporary failure: {0}")]
    Temporary(String),
    /// A permanent failure: retrying the same message will not help.
    #[error("permanent failure: {0}")]
    Permanent(String),
}

impl ChannelError {
    pub fn is_retryable(&self) -> bool {
        !matches!(self, ChannelError::Permanent(_))
    }
}

/// Where the delivery of one (possibly split) message stands, kept durably by the caller
/// (the gateway's outbox): a crash between two parts resumes after the last part the
/// platform accepted instead of sending the earlier parts again. The one window left is a
/// part the platform accepted right before the crash.
#[async_trait]
pub trait DeliveryProgress: Send + Sync {
    /// How many leading parts of the message earlier attempts delivered: send from there.
    fn delivered(&self) -> usize;

    /// The first `parts` parts are delivered. Returns once that is recorded; an error stops
    /// the delivery before the next part (it is retried later from the recorded point).
    async fn part_delivered(&self, parts: usize) -> Result<(), ChannelError>;
}

/// Progress kept in memory only: for callers without a durable record (tests, one-off
/// sends). Starts at zero.
#[derive(Debug, Default)]
pub struct MemoryProgress(std::sync::atomic::AtomicUsize);

impl MemoryProgress {
    /// Progress that starts after `delivered` parts.
    pub fn after(delivered: usize) -> Self {
        MemoryProgress(std::sync::atomic::AtomicUsize::new(delivered))
    }
}

#[async_trait]
impl DeliveryProgress for MemoryProgress {
    fn delivered(&self) -> usize {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }

    async fn part_delivered(&self, parts: usize) -> Result<(), ChannelError> {
        self.0.store(parts, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }
}

/// Send the parts of a split message that `progress` does not count as delivered, in order:
/// the shared loop of every adapter's `send`. `send_part` gets each part and whether it is
/// the last (the one that carries the message's buttons). Reports each part but the last
/// as delivered once `send_part` returned `Ok` for it, before the next one is sent.
pub async fn send_parts<'a, F, Fut>(
    parts: &'a [String],
    progress: &dyn DeliveryProgress,
    mut send_part: F,
) -> Result<(), ChannelError>
where
    F: FnMut(&'a str, bool) -> Fut + Send,
    Fut: std::future::Future<Output = Result<(), ChannelError>> + Send,
{
    let start = progress.delivered().min(parts.len());
    for (i, part) in parts.iter().enumerate().skip(start) {
        send_part(part, i + 1 == parts.len()).await?;
        if i + 1 < parts.len() {
            progress.part_delivered(i + 1).await?;
        }
    }
    Ok(())
}

/// What a channel can do on its platform, declared once by its registration (the
/// gateway's channel registry) so callers ask instead of naming channels.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// Edits a message in place ([`Channel::post_line`], [`Channel::edit_line`]).
    pub edit: bool,
    /// Shows buttons under a message and reports presses.
    pub buttons: bool,
    /// Sends and receives files.
    pub files: bool,
    /// Has threads (forum topics, Discord threads) a session can live in.
    pub threads: bool,
    /// Shows a typing indicator.
    pub typing: bool,
}

/// A chat channel adapter (Telegram, Discord, web chat).
#[async_trait]
pub trait Channel: Send + Sync + 'static {
    /// The channel id used in [`crate::Origin::channel`] and in config (`channels.<id>`).
    fn id(&self) -> &str;

    /// The longest text one platform message may hold; `send` splits to this.
    fn text_limit(&self) -> usize;

    /// Start receiving: push every inbound message into `sink` until `cancel` fires.
    /// Returns when the adapter has stopped.
    async fn run(&self, sink: InboundSink, cancel: CancellationToken) -> Result<(), ChannelError>;

    /// Send one message, split to [`Channel::text_limit`], its footer (if any) whole and
    /// last.
    ///
    /// Resumes after the parts `progress` says were delivered before, and reports each part
    /// the platform accepted (all but the last: the caller records the whole message as
    /// sent once this returns `Ok`) before sending the next one.
    async fn send(
        &self,
        msg: &OutboundMessage,
        progress: &dyn DeliveryProgress,
    ) -> Result<(), ChannelError>;

    /// Whether this process can deliver to the chat of `origin` now: a platform reached
    /// over HTTP can from any process; the web chat only where a browser has the chat
    /// open. (With several active gateway processes, the outbox leaves a message to a
    /// process that reaches its chat.)
    fn reaches(&self, _origin: &crate::Origin) -> bool {
        true
    }

    /// Show (or refresh) a typing indicator in the chat of `origin`.
    async fn typing(&self, origin: &crate::Origin, active: bool) -> Result<(), ChannelError>;

    /// Fetch a file an inbound message of this channel carries into `out`, refusing it
    /// past `max_bytes` while reading (never after). Returns the bytes written. Default:
    /// [`crate::MediaError::Unsupported`].
    async fn fetch_media(
        &self,
        media: &crate::MediaRef,
        max_bytes: u64,
        out: &mut (dyn tokio::io::AsyncWrite + Unpin + Send),
    ) -> Result<u64, crate::MediaError> {
        let _ = (media, max_bytes, out);
        Err(crate::MediaError::Unsupported)
    }

    /// The largest file this channel sends as `kind` (the platform's own upload limit), or
    /// `None` when it sends no files.
    fn file_limit(&self, kind: crate::FileKind) -> Option<u64> {
        let _ = kind;
        None
    }

    /// Post a one-line message meant to be edited in place later (see [`crate::line`]) in
    /// the chat of `origin`; `key` is the caller's stable name for it. Returns the
    /// platform's id of the message, for [`Channel::edit_line`]. Default: not supported.
    async fn post_line(&self, origin: &Origin, key: &str, text: &str) -> Result<String, LineError> {
        let _ = (origin, key, text);
        Err(LineError::Unsupported)
    }

    /// Replace the text of a line posted by [`Channel::post_line`] (`message_id` is what it
    /// returned). A message the platform no longer has is [`LineError::Gone`]. Default:
    /// not supported.
    async fn edit_line(
        &self,
        origin: &Origin,
        message_id: &str,
        text: &str,
    ) -> Result<(), LineError> {
        let _ = (origin, message_id, text);
        Err(LineError::Unsupported)
    }
}
