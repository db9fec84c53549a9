//! `GET /api/events`: the whole live event stream for operators (tools, the benchmark
//! harness, a control page) as a WebSocket of `{"event":{…},"type":"event"}` text frames —
//! every session's events, unlike a web chat socket's. It is an API route: the bearer
//! token in `Authorization` when one is set, and the Origin/Host doors.

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::response::Response;
use tokio::sync::broadcast::error::RecvError;

use super::event_json;
use super::AppState;

/// Largest frame an events client may send (it has nothing to say; pings and a close).
const MAX_FRAME: usize = 4 * 1024;

pub async fn upgrade(State(state): State<AppState>, ws: WebSocketUpgrade) -> Response {
    ws.max_message_size(MAX_FRAME)
        .max_frame_size(MAX_FRAME)
        .on_upgrade(move |socket| serve(state, socket))
}

async fn serve(state: AppState, mut socket: WebSocket) {
    let mut events = state.rt.events.subscribe();
    loop {
        tokio::select! {
            ev = events.recv() => {
                let event = match ev {
                    Ok(ev) => ev,
                    Err(RecvError::Lagged(n)) => {
                        tracing::debug!(missed = n, "an events client fell behind the event bus");
                        continue;
                    }
                    Err(RecvError::Closed) => break,
                };
                let frame = match event_json::events_frame(&event) {
                    Ok(frame) => frame,
                    Err(e) => {
                        tracing::error!(error = %e, scope = ?event.scope(), "cannot write an event as JSON; not sent");
                        continue;
                    }
                };
                if socket.send(Message::Text(frame.into())).await.is_err() {
                    break;
                }
            }
            incoming = socket.recv() => match incoming {
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                Some(Ok(_)) => {}
            },
            _ = state.closing.cancelled() => {
                let _ = socket.send(Message::Close(None)).await;
                break;
            }
        }
    }
}
