//! The body of `POST /api/sessions/{key}/messages`: parsed and checked by one pure
//! function, so every input — arbitrary bytes included — gets a message or a clear 4xx.

use std::time::Duration;

use axum::http::StatusCode;
use serde::Deserialize;

/// Longest message text accepted through the API, in characters.
pub const MAX_TEXT: usize = 32_000;
/// Longest excerpt of a JSON error quoted back (serde quotes the offending value).
const MAX_ERROR: usize = 200;

/// A checked message body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostMessage {
    pub text: String,
    /// Wait for the run that answers this message and return its reply.
    pub wait: bool,
    /// How long to wait (`timeoutSeconds`); the handler caps it.
    pub timeout: Option<Duration>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Wire {
    text: String,
    #[serde(default)]
    wait: bool,
    timeout_seconds: Option<u64>,
}

/// Why a body was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BodyError {
    /// Not JSON at all (or cut short, or nested past serde's depth limit).
    #[error("invalid JSON body: {0}")]
    Syntax(String),
    /// JSON of the wrong shape: a missing or unknown field, a wrong type, a bad number.
    #[error("invalid JSON body: {0}; expected {{\"text\": \"...\", \"wait\": false, \"timeoutSeconds\": 120}}")]
    Shape(String),
    #[error("`text` must not be empty")]
    EmptyText,
    #[error("`text` is longer than {MAX_TEXT} characters")]
    TooLong,
    #[error("`text` must not contain NUL characters")]
    Nul,
}

impl BodyError {
    pub fn status(&self) -> StatusCode {
        match self {
            BodyError::Shape(_) => StatusCode::UNPROCESSABLE_ENTITY,
            _ => StatusCode::BAD_REQUEST,
        }
    }
}

/// Parses and checks a message body.
pub fn parse(body: &[u8]) -> Result<PostMessage, BodyError> {
    // An object first: serde would also read a struct from a JSON array.
    let object: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(body).map_err(json_error)?;
    let wire: Wire =
        serde_json::from_value(serde_json::Value::Object(object)).map_err(json_error)?;
    if wire.text.trim().is_empty() {
        return Err(BodyError::EmptyText);
    }
    if wire.text.contains('\0') {
        return Err(BodyError::Nul);
    }
    if wire.text.chars().count() > MAX_TEXT {
        return Err(BodyError::TooLong);
    }
    Ok(PostMessage {
        text: wire.text,
        wait: wire.wait,
        timeout: wire.timeout_seconds.map(Duration::from_secs),
    })
}

fn json_error(e: serde_json::Error) -> BodyError {
    let text = excerpt(&e.to_string());
    if e.is_data() {
        BodyError::Shape(text)
    } else {
        BodyError::Syntax(text)
    }
}

fn excerpt(s: &str) -> String {
    if s.chars().count() <= MAX_ERROR {
        return s.to_string();
    }
    let cut: String = s.chars().take(MAX_ERROR).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(body: &str) -> BodyError {
        parse(body.as_bytes()).expect_err(body)
    }

    #[test]
    fn good_bodies_parse() {
        assert_eq!(
            parse(br#"{"text":"hi","wait":true,"timeoutSeconds":5}"#),
            Ok(PostMessage {
                text: "hi".into(),
                wait: true,
                timeout: Some(Duration::from_secs(5)),
            })
        );
        assert_eq!(
            parse(br#"{"text":"hi"}"#).map(|m| (m.wait, m.timeout)),
            Ok((false, None))
        );
    }

    /// Catches: NUL characters reaching the store and the model, and error answers that
    /// quote a megabyte of the caller's input back.
    #[test]
    fn bad_bodies_get_a_clear_4xx() {
        assert_eq!(err(r#"{"text":"a\u0000b"}"#), BodyError::Nul);
        assert_eq!(err(r#"{"text":"  \n"}"#), BodyError::EmptyText);
        let long = format!(r#"{{"text":"{}"}}"#, "é".repeat(MAX_TEXT + 1));
        assert_eq!(err(&long), BodyError::TooLong);
        assert!(matches!(err("{nope"), BodyError::Syntax(_)));
        assert!(matches!(err(""), BodyError::Syntax(_)));
        let deep = format!(r#"{{"text":{}{}}}"#, "[".repeat(10_000), "]".repeat(10_000));
        assert!(matches!(err(&deep), BodyError::Syntax(_)));
        for shape in [
            r#"{"txt":"typo"}"#,
            r#"{"text":5}"#,
            r#"{"text":"a","timeoutSeconds":-1}"#,
            r#"{"text":"a","timeoutSeconds":99999999999999999999999}"#,
            r#"{"text":"a","wait":"yes"}"#,
            r#"[]"#,
            r#"["hi", true, null]"#,
            r#"null"#,
        ] {
            let e = err(shape);
            assert_eq!(e.status(), StatusCode::UNPROCESSABLE_ENTITY, "{shape}: {e}");
        }
        assert!(err(r#"{"text":"a","timeoutSeconds":1e400}"#)
            .status()
            .is_client_error());
        let quoted = format!(r#"{{"text":"a","wait":"{}"}}"#, "x".repeat(100_000));
        assert!(err(&quoted).to_string().len() < 2 * MAX_ERROR + 200);
    }
}

#[cfg(test)]
mod properties {
    use proptest::prelude::*;
    use serde_json::{json, Value};

    use super::*;

    /// Text mixing arbitrary Unicode with what the checks look at.
    fn text() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                4 => any::<char>().prop_map(String::from),
                1 => Just("\0".to_string()),
                1 => Just(" ".to_string()),
                1 => Just("\n".to_string()),
                1 => Just("\"".to_string()),
            ],
            0..40,
        )
        .prop_map(|parts| parts.concat())
    }

    /// Arbitrary JSON values, nested a little.
    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            text().prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
                proptest::collection::btree_map(
                    prop_oneof![
                        Just("text".to_string()),
                        Just("wait".to_string()),
                        Just("timeoutSeconds".to_string()),
                        text()
                    ],
                    inner,
                    0..5
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// Bodies: raw bytes, broken JSON text, and objects with the real keys and any values.
    fn body() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..200),
            text().prop_map(String::into_bytes),
            value().prop_map(|v| v.to_string().into_bytes()),
            (text(), any::<bool>(), value()).prop_map(|(t, w, n)| {
                json!({"text": t, "wait": w, "timeoutSeconds": n})
                    .to_string()
                    .into_bytes()
            }),
            (1usize..300).prop_map(|n| format!("{}1{}", "[".repeat(n), "]".repeat(n)).into_bytes()),
        ]
    }

    proptest! {
        #![proptest_config(crate::proptest_cases::config())]

        /// Never panics; anything accepted obeys every rule, anything refused is a 4xx.
        #[test]
        fn every_body_is_a_message_or_a_clear_4xx(b in body()) {
            match parse(&b) {
                Ok(m) => {
                    prop_assert!(!m.text.trim().is_empty());
                    prop_assert!(!m.text.contains('\0'));
                    prop_assert!(m.text.chars().count() <= MAX_TEXT);
                }
                Err(e) => {
                    prop_assert!(e.status().is_client_error());
                    prop_assert!(!e.to_string().is_empty());
                }
            }
        }
    }
}
