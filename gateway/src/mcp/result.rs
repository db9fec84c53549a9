//! An MCP tool result as the text the model gets: text parts joined, other content types
//! named (an image by its type and size, a resource by its URI), structured content as
//! JSON when there is nothing else, cut at [`MAX_RESULT`] with the cut said. `isError` is
//! told to the model as a tool error.

use rmcp::model::{CallToolResult, RawContent, ResourceContents};

use crate::agent::tools::ToolError;

/// Most bytes of a result, the note saying what was cut included (the run cuts any tool
/// result past 64 KB itself, which would drop that note).
pub const MAX_RESULT: usize = 64 * 1024;
/// Room kept for the note: the answer's own text is cut at `MAX_RESULT - NOTE_ROOM`.
const NOTE_ROOM: usize = 128;

/// The model's view of `result`: `Ok(text)`, or a tool error when the server set `isError`.
pub fn to_tool_result(result: &CallToolResult) -> Result<String, ToolError> {
    let mut out = Bounded::default();
    for part in &result.content {
        match &part.raw {
            RawContent::Text(t) => out.push(&t.text),
            RawContent::Image(i) => out.push(&format!(
                "[image: {}, {} bytes base64]",
                i.mime_type,
                i.data.len()
            )),
            RawContent::Audio(a) => out.push(&format!(
                "[audio: {}, {} bytes base64]",
                a.mime_type,
                a.data.len()
            )),
            RawContent::Resource(r) => match &r.resource {
                ResourceContents::TextResourceContents { uri, text, .. } => {
                    out.push(&format!("[resource: {uri}]\n{text}"))
                }
                ResourceContents::BlobResourceContents {
                    uri,
                    mime_type,
                    blob,
                    ..
                } => out.push(&format!(
                    "[resource: {uri}, {}, {} bytes base64]",
                    mime_type.as_deref().unwrap_or("binary"),
                    blob.len()
                )),
            },
            RawContent::ResourceLink(l) => out.push(&format!("[resource link: {}]", l.uri)),
        }
    }
    if out.is_empty() {
        if let Some(v) = &result.structured_content {
            out.push(&v.to_string());
        }
    }
    let text = out.finish();
    if result.is_error == Some(true) {
        let text = if text.is_empty() {
            "the tool failed (no details)".to_string()
        } else {
            text
        };
        return Err(ToolError::Model(text));
    }
    Ok(text)
}

/// Parts joined by newlines, at most [`MAX_RESULT`] bytes, counting what was cut.
#[derive(Default)]
struct Bounded {
    text: String,
    cut: usize,
    parts: usize,
}

impl Bounded {
    fn push(&mut self, part: &str) {
        let sep = usize::from(self.parts > 0);
        self.parts += 1;
        let room = (MAX_RESULT - NOTE_ROOM).saturating_sub(self.text.len() + sep);
        if self.cut > 0 || room == 0 {
            self.cut += part.len() + sep;
            return;
        }
        if sep == 1 {
            self.text.push('\n');
        }
        if part.len() <= room {
            self.text.push_str(part);
            return;
        }
        let end = crate::text::floor_boundary(part, room);
        self.text.push_str(&part[..end]);
        self.cut += part.len() - end;
    }

    fn is_empty(&self) -> bool {
        self.parts == 0
    }

    fn finish(mut self) -> String {
        if self.cut > 0 {
            self.text.push_str(&format!(
                "\n…(cut: {} more bytes of the server's answer)",
                self.cut
            ));
        }
        self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{Content, RawResource};

    /// An MCP result nested 100,000 levels deep is refused when it is read (serde_json
    /// stops at 128 levels), never a stack overflow. Catches: a result parsed without
    /// that limit.
    #[test]
    fn a_deeply_nested_result_is_refused() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let text = format!(r#"{{"content": [], "structuredContent": {{"a": {deep}}}}}"#);
        let e = serde_json::from_str::<CallToolResult>(&text).expect_err("refused");
        assert!(e.to_string().contains("recursion limit exceeded"), "{e}");
    }

    #[test]
    fn parts_are_joined_and_other_types_named() {
        let r = CallToolResult::success(vec![
            Content::text("a picture:"),
            Content::image("aGVsbG8=", "image/png"),
            Content::new(
                RawContent::ResourceLink(RawResource::new("file:///r.txt", "r.txt")),
                None,
            ),
        ]);
        assert_eq!(
            to_tool_result(&r).ok(),
            Some(
                "a picture:\n[image: image/png, 8 bytes base64]\n[resource link: file:///r.txt]"
                    .to_string()
            )
        );
    }

    /// `isError` reaches the model as a tool error. Catches: a failed call presented as
    /// a success.
    #[test]
    fn is_error_is_a_tool_error() {
        let r = CallToolResult::error(vec![Content::text("boom")]);
        assert!(matches!(to_tool_result(&r), Err(ToolError::Model(m)) if m == "boom"));
        let r = CallToolResult::error(vec![]);
        assert!(matches!(to_tool_result(&r), Err(ToolError::Model(m)) if m.contains("no details")));
    }

    /// A huge answer is cut under 64 KB on a character boundary, and the cut is said
    /// within the 64 KB the run keeps. Catches: an unbounded result, a panic cutting
    /// inside a character, or the note lost to the run's own cut.
    #[test]
    fn huge_answers_are_cut_and_say_so() {
        let big = "é".repeat(MAX_RESULT);
        let r = CallToolResult::success(vec![Content::text(big.clone()), Content::text("tail")]);
        let text = to_tool_result(&r).unwrap_or_default();
        let (kept, note) = text.split_once("\n…(cut: ").unwrap_or_default();
        assert!(text.len() <= MAX_RESULT, "{}", text.len());
        assert!(kept.len() > MAX_RESULT - NOTE_ROOM - 4);
        assert_eq!(
            note,
            format!(
                "{} more bytes of the server's answer)",
                big.len() - kept.len() + "\ntail".len()
            )
        );
    }

    /// Whatever a server answers — well-formed results with arbitrary parts, arbitrary
    /// JSON, deep nesting, garbage — is read without a panic, and what reaches the model
    /// stays within [`MAX_RESULT`]. Catches: a panic on a hostile answer, an unbounded
    /// result. (`SWITCHBOARD_PROPTEST_CASES` for a long run.)
    mod properties {
        use super::*;
        use proptest::prelude::*;

        fn json() -> impl Strategy<Value = serde_json::Value> {
            let leaf = prop_oneof![
                Just(serde_json::Value::Null),
                any::<bool>().prop_map(serde_json::Value::from),
                any::<i64>().prop_map(serde_json::Value::from),
                ".{0,40}".prop_map(serde_json::Value::from),
            ];
            leaf.prop_recursive(6, 64, 6, |inner| {
                prop_oneof![
                    proptest::collection::vec(inner.clone(), 0..6)
                        .prop_map(serde_json::Value::Array),
                    proptest::collection::btree_map(
                        prop_oneof![
                            Just("type".to_string()),
                            Just("text".to_string()),
                            Just("content".to_string()),
                            Just("isError".to_string()),
                            Just("structuredContent".to_string()),
                            Just("uri".to_string()),
                            Just("data".to_string()),
                            Just("mimeType".to_string()),
                            Just("resource".to_string()),
                            "[a-z]{1,8}",
                        ],
                        inner,
                        0..6,
                    )
                    .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
                ]
            })
        }

        fn part() -> impl Strategy<Value = serde_json::Value> {
            prop_oneof![
                ".{0,200}".prop_map(|t| serde_json::json!({"type": "text", "text": t})),
                (".{0,20}", "[A-Za-z0-9+/=]{0,64}").prop_map(|(m, d)| {
                    serde_json::json!({"type": "image", "mimeType": m, "data": d})
                }),
                (".{0,40}", ".{0,200}").prop_map(|(u, t)| {
                    serde_json::json!({"type": "resource", "resource": {"uri": u, "text": t}})
                }),
                (".{0,40}", 0..200_000usize).prop_map(|(u, n)| {
                    serde_json::json!({"type": "resource", "resource": {"uri": u, "blob": "A".repeat(n)}})
                }),
                json(),
            ]
        }

        fn answer() -> impl Strategy<Value = String> {
            prop_oneof![
                (
                    proptest::collection::vec(part(), 0..8),
                    proptest::option::of(any::<bool>()),
                    proptest::option::of(json())
                )
                    .prop_map(|(content, is_error, structured)| {
                        let mut v = serde_json::json!({"content": content});
                        if let Some(e) = is_error {
                            v["isError"] = e.into();
                        }
                        if let Some(s) = structured {
                            v["structuredContent"] = s;
                        }
                        v.to_string()
                    }),
                json().prop_map(|v| v.to_string()),
                (1..200_000usize, prop_oneof![Just('['), Just('{')]).prop_map(|(n, c)| {
                    let open = if c == '[' { "[" } else { "{\"a\":" };
                    format!("{{\"content\":[],\"structuredContent\":{}", open.repeat(n))
                }),
                ".{0,300}",
            ]
        }

        proptest! {
            #![proptest_config(crate::proptest_cases::config())]
            #[test]
            fn any_answer_is_read_without_a_panic_and_stays_bounded(text in answer()) {
                if let Ok(result) = serde_json::from_str::<CallToolResult>(&text) {
                    let shown = match to_tool_result(&result) {
                        Ok(t) | Err(ToolError::Model(t)) => t,
                        Err(other) => panic!("not a model error: {other:?}"),
                    };
                    prop_assert!(shown.len() <= MAX_RESULT, "{}", shown.len());
                }
            }
        }
    }

    #[test]
    fn structured_content_alone_is_shown_as_json() {
        let mut r = CallToolResult::success(vec![]);
        r.structured_content = Some(serde_json::json!({"n": 1}));
        assert_eq!(to_tool_result(&r).ok(), Some("{\"n\":1}".to_string()));
    }
}
