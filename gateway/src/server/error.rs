//! API errors as JSON `{"error": "..."}` with a fitting status code, and [`Json`], the
//! answer of a typed view: a view that cannot be written is a 500 with a logged error,
//! never `null` or an empty object.

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json as AxumJson;
use serde::Serialize;

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
            AxumJson(serde_json::json!({"error": self.message})),
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

/// An API answer: a view struct written as JSON with its keys in alphabetical order (through
/// a `serde_json::Value`, as the API has always answered). Unlike axum's `Json`, a view
/// that cannot be written is logged (with the view's type) and answered as a 500
/// [`ApiError`].
#[derive(Debug)]
pub struct Json<T>(pub T);

impl<T: Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Response {
        match to_sorted_json(&self.0) {
            Ok(body) => ([(header::CONTENT_TYPE, "application/json")], body).into_response(),
            Err(e) => unwritable::<T>(&e).into_response(),
        }
    }
}

/// `view` as JSON bytes, keys sorted.
fn to_sorted_json<T: Serialize>(view: &T) -> Result<Vec<u8>, serde_json::Error> {
    serde_json::to_vec(&serde_json::to_value(view)?)
}

/// A JSON Lines answer's next line (`view` and a newline), or the 500 of a view that
/// cannot be written. Keys in declaration order, as the transcript's lines have always had.
pub fn push_line<T: Serialize>(out: &mut String, view: &T) -> Result<(), ApiError> {
    let line = serde_json::to_string(view).map_err(|e| unwritable::<T>(&e))?;
    out.push_str(&line);
    out.push('\n');
    Ok(())
}

fn unwritable<T>(e: &serde_json::Error) -> ApiError {
    tracing::error!(error = %e, view = std::any::type_name::<T>(), "cannot write an API answer as JSON");
    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal error")
}

#[cfg(test)]
#[path = "error_tests.rs"]
mod tests;
