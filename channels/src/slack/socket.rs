//! The Socket Mode connection loop: `auth.test` once (who the bot is), then, until the
//! adapter stops, `apps.connections.open` (app token) → the WebSocket it answers →
//! frames read, envelopes handed to `envelope`, acks written. A `disconnect` with
//! `refresh_requested` (or `warning`, `too_many_websockets`…) opens a new connection at
//! once; `link_disabled` (Socket Mode turned off for the app), a lost socket, or a
//! connection with no frame for [`IDLE`] reconnects on the shared backoff. Envelopes Slack
//! had not seen acked are delivered again on the new connection, and `dedup` keeps them
//! from being handled twice.

use std::sync::Arc;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

use super::convert::{self, Frame, Me};
use super::web::{Body, Token};
use super::Inner;
use crate::{ChannelError, InboundSink};

/// Largest frame read (Slack's envelopes are a few KB; a message is at most 40,000
/// characters).
const MAX_FRAME: usize = 1 << 20;
/// How often we ping the server.
const PING_EVERY: Duration = Duration::from_secs(30);
/// No frame at all (Slack pings) for this long: the connection is taken for lost.
const IDLE: Duration = Duration::from_secs(120);
/// Pending acks per connection.
const ACK_QUEUE: usize = 256;

/// How a connection ended.
#[derive(Debug)]
enum Ended {
    Cancelled,
    /// Slack asked for a new connection.
    Refresh,
    /// It failed (`hello` seen or not first).
    Failed {
        why: String,
        greeted: bool,
    },
}

pub(super) async fn run(
    inner: Arc<Inner>,
    sink: InboundSink,
    cancel: CancellationToken,
) -> Result<(), ChannelError> {
    if !identify(&inner, &cancel).await {
        return Ok(());
    }
    let mut failures = 0u32;
    loop {
        let ended = tokio::select! {
            e = session(&inner, &sink, &cancel) => e,
            _ = cancel.cancelled() => Ended::Cancelled,
        };
        let wait = match ended {
            Ended::Cancelled => return Ok(()),
            Ended::Refresh => {
                failures = 0;
                tracing::info!("slack: Slack asked for a new connection; reconnecting");
                continue;
            }
            Ended::Failed { why, greeted } => {
                if greeted {
                    failures = 0;
                }
                failures += 1;
                let wait = crate::backoff::CONNECT.delay(failures);
                tracing::warn!(reason = %why, retry_in = ?wait, "slack: Socket Mode connection ended; reconnecting");
                wait
            }
        };
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = cancel.cancelled() => return Ok(()),
        }
    }
}

/// `auth.test` until it answers (the bot's user id); false when cancelled first.
async fn identify(inner: &Inner, cancel: &CancellationToken) -> bool {
    let mut failures = 0;
    loop {
        let e = match inner.web.call("auth.test", Body::None).await {
            Ok(v) => match v["user_id"].as_str().filter(|u| convert::is_slack_id(u)) {
                Some(user) => {
                    let _ = inner.me.set(user.to_owned());
                    tracing::info!(bot = user, "slack: authenticated");
                    return true;
                }
                None => "auth.test answered no user_id".to_owned(),
            },
            Err(e) => e.to_string(),
        };
        failures += 1;
        let delay = crate::backoff::CONNECT.delay(failures);
        tracing::error!(error = %e, api_url = %inner.settings.api_url, retry_in = ?delay,
            "slack: auth.test failed; not connecting (check channels.slack.botToken and apiUrl)");
        tokio::select! {
            _ = tokio::time::sleep(delay) => {}
            _ = cancel.cancelled() => return false,
        }
    }
}

fn failed(why: impl Into<String>, greeted: bool) -> Ended {
    Ended::Failed {
        why: why.into(),
        greeted,
    }
}

/// One connection, from `apps.connections.open` to its end.
async fn session(inner: &Arc<Inner>, sink: &InboundSink, cancel: &CancellationToken) -> Ended {
    let answer = match inner
        .web
        .call_with("apps.connections.open", Token::App, Body::None)
        .await
    {
        Ok(a) => a,
        Err(e) => return failed(format!("{e} (check channels.slack.appToken)"), false),
    };
    let Some(url) = answer["url"]
        .as_str()
        .filter(|u| u.starts_with("wss://") || u.starts_with("ws://"))
    else {
        return failed("apps.connections.open answered no WebSocket URL", false);
    };
    let config = WebSocketConfig::default()
        .max_message_size(Some(MAX_FRAME))
        .max_frame_size(Some(MAX_FRAME));
    let ws = match tokio_tungstenite::connect_async_with_config(url, Some(config), false).await {
        Ok((ws, _)) => ws,
        Err(e) => return failed(format!("connecting the WebSocket: {e}"), false),
    };
    let me = inner.me.get().cloned().unwrap_or_default();
    let me = Me {
        user_id: &me,
        reply_in_thread: inner.settings.reply_in_thread,
    };
    let (mut write, mut read) = ws.split();
    let (acks, mut ack_rx) = tokio::sync::mpsc::channel::<String>(ACK_QUEUE);
    let mut ping = tokio::time::interval(PING_EVERY);
    ping.tick().await;
    let mut last_frame = tokio::time::Instant::now();
    let mut greeted = false;
    loop {
        tokio::select! {
            _ = cancel.cancelled() => {
                let _ = write.send(Message::Close(None)).await;
                return Ended::Cancelled;
            }
            Some(ack) = ack_rx.recv() => {
                if let Err(e) = write.send(Message::Text(ack.into())).await {
                    return failed(format!("writing an ack: {e}"), greeted);
                }
            }
            _ = ping.tick() => {
                if last_frame.elapsed() > IDLE {
                    return failed(format!("no frame for {IDLE:?}"), greeted);
                }
                if let Err(e) = write.send(Message::Ping(Vec::new().into())).await {
                    return failed(format!("writing a ping: {e}"), greeted);
                }
            }
            frame = read.next() => {
                last_frame = tokio::time::Instant::now();
                let text = match frame {
                    None => return failed("the socket closed", greeted),
                    Some(Err(e)) => return failed(format!("reading: {e}"), greeted),
                    Some(Ok(Message::Close(c))) => {
                        return failed(format!("Slack closed the socket: {c:?}"), greeted)
                    }
                    Some(Ok(Message::Text(t))) => t,
                    Some(Ok(_)) => continue,
                };
                match convert::frame(text.as_str(), me) {
                    Ok(Frame::Hello) => {
                        greeted = true;
                        tracing::info!("slack: connected (Socket Mode)");
                    }
                    Ok(Frame::Disconnect(reason)) if reason == "link_disabled" => {
                        tracing::error!("slack: Socket Mode is disabled for this app (link_disabled); turn it on in the app's settings");
                        return failed("link_disabled", false);
                    }
                    Ok(Frame::Disconnect(reason)) => {
                        tracing::info!(%reason, "slack: disconnect");
                        let _ = write.send(Message::Close(None)).await;
                        return Ended::Refresh;
                    }
                    Ok(Frame::Envelope { id, item }) => {
                        let ack = super::envelope::Ack { id, acks: acks.clone() };
                        super::envelope::take(inner, sink, *item, ack).await;
                    }
                    Ok(Frame::Other) => {}
                    Err(e) => tracing::warn!(error = %e, "slack: a frame out of shape ignored"),
                }
            }
        }
    }
}
