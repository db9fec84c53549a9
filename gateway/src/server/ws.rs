//! `/ws`: the web chat socket. Frames are the web chat channel's protocol; this file
//! pumps them between the socket and the channel hub, and passes on the live events the
//! socket may see (`visibility.rs`).

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Query, State};
use axum::response::Response;
use serde::Deserialize;
use switchboard_channels::webchat::{kind_of, ServerFrame, DEFAULT_CHAT};
use switchboard_channels::Origin;
use tokio::sync::broadcast::error::RecvError;

use super::error::ApiError;
use super::event_json;
use super::visibility::Visibility;
use super::AppState;
use crate::routing;

/// Largest frame a browser may send (bytes); bigger ones close the socket with 1009.
const MAX_FRAME: usize = 64 * 1024;

#[derive(Deserialize)]
pub struct WsQuery {
    chat: Option<String>,
}

pub async fn upgrade(
    State(state): State<AppState>,
    Query(q): Query<WsQuery>,
    ws: WebSocketUpgrade,
) -> Result<Response, ApiError> {
    let chat = q.chat.unwrap_or_else(|| DEFAULT_CHAT.to_string());
    if chat.is_empty()
        || chat.len() > 64
        || !chat
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(ApiError::bad_request(
            "chat must be 1-64 characters of [A-Za-z0-9_-]",
        ));
    }
    Ok(ws
        .max_message_size(MAX_FRAME)
        .max_frame_size(MAX_FRAME)
        .on_upgrade(move |socket| serve(state, socket, chat)))
}

async fn serve(state: AppState, mut socket: WebSocket, chat: String) {
    // Each socket listens to the event bus itself, from before it registers: with no
    // socket open, nobody listens and `Runtime::emit` costs nothing.
    let mut events = state.rt.events.subscribe();
    // The chat's session, keyed the way routing keys the messages this socket sends.
    let own = {
        let cfg = state.rt.config();
        let origin = Origin::webchat(chat.clone(), kind_of(&chat));
        routing::session_key(
            cfg.session.dm_scope,
            &routing::default_agent_id(&cfg),
            &origin,
            &switchboard_channels::webchat::sender_id(&chat),
        )
    };
    let mut visible = Visibility::new(&chat, &own);
    if let Err(e) = visible.seed(&state.rt.store).await {
        tracing::warn!(error = %e, "cannot read this chat's sub-agents; their events are not shown until they spawn anew");
    }
    let (conn, mut frames) = state.webchat.connect(&chat);
    // The conversation so far, read after registering: a message stored later is
    // delivered live (no gap); one delivered live that is also in the history carries
    // its key there, and the page shows it once.
    let history = match super::history::frame(&state.rt.store, &own).await {
        Ok(frame) => frame,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read this chat's history");
            ServerFrame::Error {
                error: "the conversation so far could not be read".into(),
            }
        }
    };
    if socket
        .send(Message::Text(history.to_json().into()))
        .await
        .is_err()
    {
        state.webchat.disconnect(conn);
        return;
    }
    // Messages that waited for this chat (nobody had it open) go out now, not after backoff.
    match state
        .rt
        .store
        .retry_chat_now(switchboard_channels::webchat::CHANNEL_ID, &chat)
        .await
    {
        Ok(0) => {}
        Ok(_) => state.rt.tasks.outbox_wake.notify_one(),
        Err(e) => tracing::warn!(error = %e, "cannot reschedule waiting web chat messages"),
    }
    loop {
        tokio::select! {
            // Frames before events: a message is queued before the event that reports it.
            biased;
            out = frames.recv() => {
                let Some(out) = out else { break };
                if socket.send(Message::Text(out.frame.to_json().into())).await.is_err() {
                    break;
                }
                // Written (and flushed) to the socket: the delivery is done.
                out.written();
            }
            incoming = socket.recv() => {
                let answer = match incoming {
                    Some(Ok(Message::Text(text))) => state.webchat.handle_frame(conn, text.as_str()).await,
                    Some(Ok(Message::Binary(_))) => Some(ServerFrame::Error { error: "binary frames are not supported; send JSON text frames".into() }),
                    Some(Ok(Message::Ping(_) | Message::Pong(_))) => None,
                    Some(Ok(Message::Close(_))) | None => break,
                    Some(Err(e)) => {
                        tracing::debug!(error = %e, "web chat socket error");
                        break;
                    }
                };
                if let Some(frame) = answer {
                    if socket.send(Message::Text(frame.to_json().into())).await.is_err() {
                        break;
                    }
                }
            }
            ev = events.recv() => {
                let event = match ev {
                    Ok(ev) if visible.admits(ev.scope()) => match event_json::to_value(&ev) {
                        Ok(event) => event,
                        Err(e) => {
                            tracing::error!(error = %e, scope = ?ev.scope(), "cannot write an event as JSON; not sent");
                            continue;
                        }
                    },
                    Ok(_) => continue,
                    // A socket too slow for the bus misses events, not messages.
                    Err(RecvError::Lagged(n)) => {
                        tracing::debug!(missed = n, "web chat socket fell behind the event bus");
                        continue;
                    }
                    Err(RecvError::Closed) => break,
                };
                let frame = ServerFrame::Event { event };
                if socket.send(Message::Text(frame.to_json().into())).await.is_err() {
                    break;
                }
            }
            _ = state.closing.cancelled() => {
                let _ = socket.send(Message::Close(None)).await;
                break;
            }
        }
    }
    state.webchat.disconnect(conn);
}
