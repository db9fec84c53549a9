//! Tests of reading a message's `files`: the shapes Slack sends, and hostile JSON (never a
//! panic, never more than the bounds).

use proptest::prelude::*;
use serde_json::{json, Value};

use super::received::{allowed, files_of, FILE_HOST, MAX_MIME, MAX_NAME, MAX_URL};
use crate::media::MAX_MEDIA_PER_MESSAGE;
use crate::MediaKind;

#[test]
fn slack_file_objects_become_references() {
    let event = json!({"files": [
        {"id": "F1", "name": "cat.png", "mimetype": "image/png", "size": 2048,
         "url_private": "https://files.slack.com/files-pri/T1-F1/cat.png",
         "url_private_download": "https://files.slack.com/files-pri/T1-F1/download/cat.png"},
        {"id": "F2", "title": "Report", "mimetype": "application/pdf",
         "url_private": "https://files.slack.com/files-pri/T1-F2/report.pdf"},
        {"id": "F3", "mode": "file_access", "file_access": "check_file_info"},
        {"id": "F4", "subtype": "slack_audio", "mimetype": "audio/webm", "name": "clip.webm",
         "url_private_download": "https://files.slack.com/x/clip.webm"},
        {"name": "no id, no url"},
        "not an object",
    ]});
    let refs = files_of(&event);
    let got: Vec<(MediaKind, &str, Option<&str>, Option<u64>)> = refs
        .iter()
        .map(|r| (r.kind, r.source.as_str(), r.name.as_deref(), r.size))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                MediaKind::Photo,
                "https://files.slack.com/files-pri/T1-F1/download/cat.png",
                Some("cat.png"),
                Some(2048)
            ),
            (
                MediaKind::Document,
                "https://files.slack.com/files-pri/T1-F2/report.pdf",
                Some("Report"),
                None
            ),
            (MediaKind::Document, "F3", None, None),
            (
                MediaKind::Voice,
                "https://files.slack.com/x/clip.webm",
                Some("clip.webm"),
                None
            ),
        ]
    );
    assert_eq!(refs[0].mime.as_deref(), Some("image/png"));
    assert!(files_of(&json!({"text": "no files"})).is_empty());
    assert!(files_of(&json!({"files": {"id": "F1"}})).is_empty());
}

#[test]
fn only_slack_files_and_the_configured_base_are_fetched() {
    let api = "http://127.0.0.1:4000/api";
    assert!(allowed(
        "https://files.slack.com/files-pri/T1-F1/a.png",
        api
    ));
    assert!(allowed("http://127.0.0.1:4000/files-pri/T1-F1/a.png", api));
    assert!(!allowed("http://files.slack.com/files-pri/a.png", api));
    assert!(!allowed("https://files.slack.com:8443/a.png", api));
    assert!(!allowed("https://files.slack.com.evil.test/a.png", api));
    assert!(!allowed("https://slack-files.com/a.png", api));
    assert!(!allowed("https://t@files.slack.com/a.png", api));
    assert!(!allowed("http://127.0.0.1:4001/a.png", api));
    assert!(!allowed("http://169.254.169.254/latest/meta-data", api));
    assert!(!allowed("file:///etc/passwd", api));
}

/// Hostile JSON values: any shape, nested a little, strings of any length.
fn hostile() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|n| json!(n)),
        ".{0,300}".prop_map(Value::String),
        "(https?://)?[a-z0-9.:@/%-]{0,40}".prop_map(Value::String),
        "F[A-Z0-9]{0,40}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("id".to_string()),
                        Just("name".to_string()),
                        Just("title".to_string()),
                        Just("mimetype".to_string()),
                        Just("size".to_string()),
                        Just("subtype".to_string()),
                        Just("url_private".to_string()),
                        Just("url_private_download".to_string()),
                        "[a-z_]{1,12}",
                    ],
                    inner
                ),
                0..8
            )
            .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(crate::proptest_cases::config())]

    /// Catches: a panic on a hostile `files` array, or references past the bounds.
    #[test]
    fn hostile_files_arrays_are_read_within_bounds(
        files in prop::collection::vec(hostile(), 0..24),
    ) {
        let refs = files_of(&json!({"files": files}));
        prop_assert!(refs.len() <= MAX_MEDIA_PER_MESSAGE);
        for r in &refs {
            prop_assert!(!r.source.is_empty() && r.source.len() <= MAX_URL);
            prop_assert!(r.name.as_ref().is_none_or(|n| n.chars().count() <= MAX_NAME));
            prop_assert!(r.mime.as_ref().is_none_or(|m| m.len() <= MAX_MIME));
        }
    }

    /// Catches: a URL off Slack's hosts accepted for a fetch with the bot token.
    #[test]
    fn an_allowed_url_names_slack_or_the_base(url in "(https?://)?[a-z0-9.:@/%-]{0,40}") {
        if allowed(&url, "http://127.0.0.1:4000/api") {
            let u = reqwest::Url::parse(&url).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let host = u.host_str().unwrap_or("");
            prop_assert!(host == FILE_HOST || host == "127.0.0.1");
        }
    }
}
