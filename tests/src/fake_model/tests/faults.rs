//! Tests of the fake model's fault steps: headers as written, raw and truncated SSE, and
//! a flood without event separators.

use super::*;

/// Catches: a scripted header not sent as written (an absurd Retry-After must reach the
/// client verbatim to test its parser).
#[tokio::test]
async fn status_with_sends_headers_verbatim() {
    let model = FakeModel::start().await.unwrap();
    model.push(Step::rate_limited("1e20"));
    model.push(Step::StatusWith {
        code: 503,
        headers: vec![
            ("Retry-After".into(), "Wed, 21 Oct 2015 07:28:00 GMT".into()),
            ("bad name".into(), "x".into()),
        ],
        body: "down".into(),
    });
    let r = chat(&model, user("a")).await;
    assert_eq!(r.status(), 429);
    assert_eq!(r.headers()["retry-after"], "1e20");
    assert_eq!(
        r.text().await.unwrap(),
        r#"{"error":{"message":"slow down"}}"#
    );
    let r = chat(&model, user("b")).await;
    assert_eq!(r.status(), 503);
    assert_eq!(r.headers()["retry-after"], "Wed, 21 Oct 2015 07:28:00 GMT");
}

/// Catches: raw SSE chunks altered or completed (a `[DONE]` added to a truncated stream).
#[tokio::test]
async fn raw_and_truncated_streams_are_sent_as_scripted() {
    let model = FakeModel::start().await.unwrap();
    model.push(Step::RawSse(vec![
        "data: {\"a\"".into(),
        ":1}\n\nda".into(),
    ]));
    model.push(Step::truncated_text(&["Hel", "lo\""]));
    let mut body = user("x");
    body["stream"] = json!(true);
    let r = chat(&model, body.clone()).await;
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    assert_eq!(r.text().await.unwrap(), "data: {\"a\":1}\n\nda");
    let text = chat(&model, body).await.text().await.unwrap();
    assert!(
        !text.contains("[DONE]") && !text.contains("finish_reason\":\"stop"),
        "{text}"
    );
    let pieces: Vec<String> = text
        .split("\n\n")
        .filter(|e| !e.is_empty())
        .map(|e| {
            let v: Value = serde_json::from_str(e.strip_prefix("data: ").unwrap()).unwrap();
            v["choices"][0]["delta"]["content"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(pieces, ["Hel", "lo\""]);
}

/// Catches: a flood of the wrong size or with a line break in it.
#[tokio::test]
async fn flood_sends_that_many_bytes_without_a_line_break() {
    let model = FakeModel::start().await.unwrap();
    model.push(Step::Flood(200_000));
    let mut body = user("x");
    body["stream"] = json!(true);
    let bytes = chat(&model, body).await.bytes().await.unwrap();
    assert_eq!(bytes.len(), 200_000);
    assert!(bytes.iter().all(|b| *b == b'x'));
}
