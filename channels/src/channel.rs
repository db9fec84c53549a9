//! The [`Channel`] trait: what the gateway needs from every chat adapter.

use async_trait::async_trait;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::{InboundMessage, OutboundMessage};

/// Where adapters push inbound messages. Bounded: an adapter that outruns the gateway
/// waits (backpressure) instead of growing memory without limit.
pub type InboundSink = mpsc::Sender<Inbound>;

/// An inbound message with an optional acknowledgement: the gateway fires `ack` once the
/// message is committed (or deliberately dropped), so an adapter can confirm it to the
/// platform only then (e.g. Telegram's update offset) and a crash never loses it.
#[derive(Debug)]
pub struct Inbound {
    pub msg: InboundMessage,
    pub ack: Option<oneshot::Sender<()>>,
}

impl Inbound {
    pub fn new(msg: InboundMessage) -> Self {
        Inbound { msg, ack: None }
    }

    /// A message and the receiver that fires when the gateway has taken it.
    pub fn with_ack(msg: InboundMessage) -> (Self, oneshot::Receiver<()>) {
        let (tx, rx) = oneshot::channel();
        (Inbound { msg, ack: Some(tx) }, rx)
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

    /// Send one message, split to [`Channel::text_limit`] with its stats line kept whole.
    async fn send(&self, msg: &OutboundMessage) -> Result<(), ChannelError>;

    /// Show (or refresh) a typing indicator in the chat of `origin`.
    async fn typing(&self, origin: &crate::Origin, active: bool) -> Result<(), ChannelError>;
}
