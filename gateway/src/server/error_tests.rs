//! A view that cannot be written is a 500 with the API's error body, never `null`.

use std::collections::BTreeMap;

use axum::body::to_bytes;
use serde::ser::Error as _;

use super::*;

/// A view whose `Serialize` fails, as a custom one may.
struct Unwritable;

impl Serialize for Unwritable {
    fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
        Err(S::Error::custom("this view cannot be written"))
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Fine {
    session_key: &'static str,
    b: u8,
    a: Option<u8>,
}

async fn answer(r: Response) -> (StatusCode, Option<String>, String) {
    let status = r.status();
    let mime = r
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body = to_bytes(r.into_body(), 1 << 20).await.unwrap_or_default();
    (status, mime, String::from_utf8_lossy(&body).into_owned())
}

/// Catches: a serialization failure answered as `200 null` or `{}` (the old
/// `to_value(…).unwrap_or_default()`), or as axum's plain-text 500.
#[tokio::test]
async fn an_unwritable_view_is_a_500_with_an_error_body() {
    let expected = (
        StatusCode::INTERNAL_SERVER_ERROR,
        Some("application/json".to_string()),
        r#"{"error":"internal error"}"#.to_string(),
    );
    assert_eq!(answer(Json(Unwritable).into_response()).await, expected);
    // A map whose keys are not strings cannot be JSON either.
    let by_pair: BTreeMap<(u8, u8), u8> = BTreeMap::from([((1, 2), 3)]);
    assert_eq!(answer(Json(by_pair).into_response()).await, expected);
    let mut out = String::new();
    let line = push_line(&mut out, &Unwritable).map_err(|e| (e.status, e.message));
    assert_eq!(
        line,
        Err((StatusCode::INTERNAL_SERVER_ERROR, "internal error".into()))
    );
    assert_eq!(out, "");
}

/// Catches: a view answered with its keys out of the API's alphabetical order, or a
/// `null` field dropped.
#[tokio::test]
async fn a_view_is_answered_with_sorted_keys() {
    let view = Fine {
        session_key: "agent:main:main",
        b: 2,
        a: None,
    };
    assert_eq!(
        answer(Json(view).into_response()).await,
        (
            StatusCode::OK,
            Some("application/json".to_string()),
            r#"{"a":null,"b":2,"sessionKey":"agent:main:main"}"#.to_string()
        )
    );
}
