//! The Bot API's wire shapes: request parameters (JSON body, form or query string) and the
//! `{"ok": …}` answers.

use std::fmt::Display;

use axum::http::{header, HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Map, Value};

/// What a method answers.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Reply {
    Ok(Value),
    Error {
        code: u16,
        description: String,
        retry_after: Option<u64>,
    },
}

impl Reply {
    pub(super) fn error(code: u16, description: impl Into<String>) -> Reply {
        Reply::Error {
            code,
            description: description.into(),
            retry_after: None,
        }
    }

    /// 400 `Bad Request: <what>`.
    pub(super) fn bad_request(what: impl Display) -> Reply {
        Reply::error(400, format!("Bad Request: {what}"))
    }

    /// The HTTP status, equal to `error_code` for errors.
    pub(super) fn status(&self) -> u16 {
        match self {
            Reply::Ok(_) => 200,
            Reply::Error { code, .. } => *code,
        }
    }

    pub(super) fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status()).unwrap_or_else(|_| {
            tracing::warn!(status = self.status(), "invalid status code; answering 500");
            StatusCode::INTERNAL_SERVER_ERROR
        });
        let body = match self {
            Reply::Ok(result) => json!({"ok": true, "result": result}),
            Reply::Error {
                code,
                description,
                retry_after,
            } => {
                let mut body = json!({"ok": false, "error_code": code, "description": description});
                if let Some(seconds) = retry_after {
                    body["parameters"] = json!({ "retry_after": seconds });
                }
                body
            }
        };
        (status, axum::Json(body)).into_response()
    }
}

/// The call's parameters as one JSON object: query string fields, overridden by the body's
/// (JSON, or `application/x-www-form-urlencoded`). Form and query values stay strings; the
/// field readers below convert them. `Err` says why the request cannot be read.
pub(super) fn params(uri: &Uri, headers: &HeaderMap, body: &[u8]) -> Result<Value, String> {
    let mut params = uri.query().map(form_fields).unwrap_or_default();
    let raw_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("");
    let content_type = raw_type.to_ascii_lowercase();
    if content_type.starts_with("multipart/form-data") {
        // Text fields as values; a file part (an upload) as `{"attached": name, "bytes": n}`,
        // its bytes read by `uploads`.
        params.extend(multipart_fields(body, raw_type)?);
        return Ok(Value::Object(params));
    }
    if !body.iter().all(u8::is_ascii_whitespace) {
        let fields = if content_type.starts_with("application/x-www-form-urlencoded") {
            form_fields(&String::from_utf8_lossy(body))
        } else {
            match serde_json::from_slice::<Value>(body) {
                Ok(Value::Object(fields)) => fields,
                Ok(other) => return Err(format!("the JSON body is not an object: {other}")),
                Err(error) => return Err(format!("the body is not valid JSON: {error}")),
            }
        };
        params.extend(fields);
    }
    Ok(Value::Object(params))
}

/// The fields of a multipart body. Values that are JSON objects or arrays (teloxide
/// sends e.g. `allowed_updates` that way) are parsed; file parts are described.
fn multipart_fields(body: &[u8], content_type: &str) -> Result<Map<String, Value>, String> {
    let boundary =
        crate::multipart::boundary(content_type).ok_or("multipart/form-data without a boundary")?;
    let mut fields = Map::new();
    for part in crate::multipart::parse(body, &boundary)? {
        let value = match &part.filename {
            Some(name) => json!({"attached": name, "bytes": part.data.len()}),
            None => {
                let value = part.text();
                match serde_json::from_str::<Value>(&value) {
                    Ok(v @ (Value::Object(_) | Value::Array(_))) => v,
                    _ => Value::String(value),
                }
            }
        };
        fields.insert(part.name, value);
    }
    Ok(fields)
}

/// The file parts (uploads) of a multipart body; none for any other body.
pub(super) fn uploads(headers: &HeaderMap, body: &[u8]) -> Vec<crate::multipart::Part> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("");
    match crate::multipart::boundary(content_type) {
        Some(b) => crate::multipart::parse(body, &b)
            .unwrap_or_default()
            .into_iter()
            .filter(|p| p.filename.is_some())
            .collect(),
        None => Vec::new(),
    }
}

fn form_fields(encoded: &str) -> Map<String, Value> {
    match reqwest::Url::parse(&format!("http://fake.invalid/?{encoded}")) {
        Ok(url) => url
            .query_pairs()
            .map(|(key, value)| (key.into_owned(), Value::String(value.into_owned())))
            .collect(),
        Err(_) => Map::new(),
    }
}

/// An integer field: a JSON number or a string holding one. 400 when it is something else.
pub(super) fn int(params: &Value, key: &str) -> Result<Option<i64>, Reply> {
    match params.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value
            .as_i64()
            .or_else(|| value.as_str().and_then(|text| text.trim().parse().ok()))
            .map(Some)
            .ok_or_else(|| Reply::bad_request(format!("field \"{key}\" must be an integer"))),
    }
}

/// A text field; numbers and booleans count as their JSON text, as Telegram reads them.
pub(super) fn text(params: &Value, key: &str) -> Option<String> {
    match params.get(key)? {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        Value::Bool(flag) => Some(flag.to_string()),
        _ => None,
    }
}

/// A boolean field: `true` or `"true"`.
pub(super) fn flag(params: &Value, key: &str) -> bool {
    match params.get(key) {
        Some(Value::Bool(flag)) => *flag,
        Some(Value::String(text)) => text == "true",
        _ => false,
    }
}

/// An object or array field; form and query fields carry these as JSON text.
pub(super) fn structured(params: &Value, key: &str) -> Option<Value> {
    match params.get(key)? {
        Value::String(text) => serde_json::from_str::<Value>(text)
            .ok()
            .filter(|value| value.is_object() || value.is_array()),
        value @ (Value::Object(_) | Value::Array(_)) => Some(value.clone()),
        _ => None,
    }
}
