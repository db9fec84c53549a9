//! API errors as JSON `{"error": "..."}` with a fitting status code.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
        }
    }
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (
            self.status,
            Json(serde_json::json!({"error": self.message})),
        )
            .into_response()
    }
}

impl From<crate::agent::AgentError> for ApiError {
    fn from(e: crate::agent::AgentError) -> Self {
        match e {
            crate::agent::AgentError::Store(e) => e.into(),
            other => {
                tracing::error!(error = %other, "agent error in API");
                ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal error")
            }
        }
    }
}

impl From<crate::store::StoreError> for ApiError {
    fn from(e: crate::store::StoreError) -> Self {
        tracing::error!(error = %e, "store error in API");
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
    }
}

pub async fn not_found() -> ApiError {
    ApiError::not_found("no such endpoint")
}
