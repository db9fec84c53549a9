//! `POST /telegram/webhook`: Telegram's webhook calls, checked by the secret-token header
//! instead of the bearer token (Telegram cannot send one). 200 only once the update was
//! taken (or recorded as poisoned); 503 otherwise, so Telegram delivers it again.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use switchboard_channels::telegram::WebhookError;

use super::error::ApiError;
use super::AppState;

const SECRET_HEADER: &str = "x-telegram-bot-api-secret-token";

pub async fn webhook(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<StatusCode, ApiError> {
    let Some(tg) = state
        .adapters
        .handle::<switchboard_channels::telegram::Telegram>(
            switchboard_channels::telegram::CHANNEL_ID,
        )
    else {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the Telegram channel is not running",
        ));
    };
    let secret = headers.get(SECRET_HEADER).and_then(|v| v.to_str().ok());
    match tg.handle_webhook(secret, &body).await {
        Ok(()) => Ok(StatusCode::OK),
        Err(e @ WebhookError::Unauthorized) => {
            Err(ApiError::new(StatusCode::UNAUTHORIZED, e.to_string()))
        }
        Err(e @ WebhookError::BadUpdate(_)) => Err(ApiError::bad_request(e.to_string())),
        // A 5xx: Telegram delivers the update again later.
        Err(e @ (WebhookError::NotRunning | WebhookError::NotTaken(_))) => Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            e.to_string(),
        )),
    }
}
