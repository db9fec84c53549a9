//! A non-streamed Messages API answer (a `message` object), read within
//! `provider::bounded`'s limits: for servers that ignore `stream: true`.

use serde_json::Value;

use crate::agent::provider::bounded::{self, AnswerBudget, MAX_TOOL_CALLS};
use crate::agent::provider::{ModelResponse, ProviderError, ReasoningBlock, Usage};
use crate::store::ToolCallRecord;

/// A Messages API answer body: the answer, or a clear error for anything else (not JSON,
/// cut off, without a `content` array, past the bounds).
pub(super) fn parse_body(text: &str) -> Result<ModelResponse, ProviderError> {
    let v: Value = serde_json::from_str(text).map_err(|e| {
        ProviderError::InvalidResponse(format!(
            "{e}; body starts: {}",
            text.chars().take(120).collect::<String>()
        ))
    })?;
    parse_message(&v)
}

fn parse_message(v: &Value) -> Result<ModelResponse, ProviderError> {
    let content = v
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| ProviderError::InvalidResponse("no content array in the answer".into()))?;
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    let mut reasoning = Vec::new();
    let mut budget = AnswerBudget::default();
    for block in content {
        let str_of = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or_default();
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                let t = str_of("text");
                budget.take(t.len())?;
                text.push_str(t);
            }
            Some("tool_use") => {
                if tool_calls.len() >= MAX_TOOL_CALLS {
                    return Err(ProviderError::InvalidResponse(format!(
                        "the answer makes more than {MAX_TOOL_CALLS} tool calls"
                    )));
                }
                let arguments = block
                    .get("input")
                    .map(Value::to_string)
                    .unwrap_or_else(|| "{}".into());
                let (id, name) = (str_of("id"), str_of("name"));
                budget.take(id.len() + name.len() + arguments.len())?;
                tool_calls.push(ToolCallRecord {
                    id: id.to_string(),
                    name: name.to_string(),
                    arguments,
                });
            }
            Some("thinking") => {
                let block = ReasoningBlock::Thinking {
                    thinking: str_of("thinking").to_string(),
                    signature: str_of("signature").to_string(),
                };
                budget.take(block.weight())?;
                reasoning.push(block);
            }
            Some("redacted_thinking") => {
                let block = ReasoningBlock::Redacted {
                    data: str_of("data").to_string(),
                };
                budget.take(block.weight())?;
                reasoning.push(block);
            }
            _ => {}
        }
    }
    let usage = Usage {
        input_tokens: bounded::tokens(v.pointer("/usage/input_tokens").and_then(Value::as_u64)),
        output_tokens: bounded::tokens(v.pointer("/usage/output_tokens").and_then(Value::as_u64)),
    };
    Ok(ModelResponse {
        text,
        tool_calls,
        usage,
        reasoning,
        cut: v.get("stop_reason").and_then(Value::as_str) == Some("max_tokens"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Catches: a panic or a partial answer on a body cut anywhere, and unbounded answers.
    #[test]
    fn truncated_and_oversized_bodies_are_clear_errors() {
        let body = json!({
            "content": [
                {"type": "text", "text": "héllo"},
                {"type": "tool_use", "id": "t1", "name": "x", "input": {"a": [1, 2]}},
            ],
            "usage": {"input_tokens": u64::MAX, "output_tokens": 2},
        })
        .to_string();
        let whole = parse_body(&body).expect("whole body");
        assert_eq!(whole.text, "héllo");
        assert_eq!(whole.usage.input_tokens, bounded::MAX_REPORTED_TOKENS);
        for (end, _) in body.char_indices() {
            assert!(
                matches!(
                    parse_body(&body[..end]),
                    Err(ProviderError::InvalidResponse(_))
                ),
                "cut at {end}"
            );
        }
        let calls: Vec<Value> = (0..=MAX_TOOL_CALLS)
            .map(|i| json!({"type": "tool_use", "id": i.to_string(), "name": "x", "input": {}}))
            .collect();
        let err = parse_message(&json!({ "content": calls })).expect_err("too many");
        assert!(
            err.to_string().contains("more than 128 tool calls"),
            "{err}"
        );
        let big = "x".repeat(bounded::MAX_ANSWER_BYTES + 1);
        assert!(parse_message(&json!({"content": [{"type": "text", "text": big}]})).is_err());
    }

    /// Catches: a plain answer cut at `max_tokens` passed off as complete.
    #[test]
    fn a_max_tokens_stop_marks_a_plain_answer_cut() {
        let body = |reason: &str| {
            json!({"content": [{"type": "text", "text": "x"}], "stop_reason": reason}).to_string()
        };
        let cut = |reason: &str| parse_body(&body(reason)).expect("answer").cut;
        assert_eq!((cut("max_tokens"), cut("end_turn")), (true, false));
    }

    use proptest::prelude::*;

    fn block() -> impl Strategy<Value = Value> {
        prop_oneof![
            ".{0,8}".prop_map(|t| json!({"type": "text", "text": t})),
            (".{0,4}", "[a-z]{0,4}").prop_map(
                |(id, n)| json!({"type": "tool_use", "id": id, "name": n, "input": {"q": id}})
            ),
            Just(json!({"type": "text"})),
            Just(json!({"type": "tool_use"})),
            Just(json!({"type": 5, "text": []})),
            Just(json!(null)),
            Just(json!("text")),
        ]
    }

    proptest! {
        #![proptest_config(crate::proptest_cases::config())]

        /// Catches: a panic on any answer shape, and text read wrong.
        #[test]
        fn any_answer_shape_parses_without_panic(
            blocks in prop::collection::vec(block(), 0..6),
            usage in prop::option::of((any::<u64>(), ".{0,3}")),
            cut in any::<prop::sample::Index>(),
        ) {
            let v = json!({"content": blocks, "usage": usage.map(|(i, o)| json!({"input_tokens": i, "output_tokens": o}))});
            let want: String = blocks
                .iter()
                .filter(|b| b["type"] == "text")
                .filter_map(|b| b["text"].as_str())
                .collect();
            let body = v.to_string();
            let r = parse_body(&body).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(r.text, want);
            prop_assert!(r.usage.input_tokens <= bounded::MAX_REPORTED_TOKENS);
            let end = cut.index(body.len());
            if let Some(prefix) = body.get(..end) {
                prop_assert!(parse_body(prefix).is_err(), "a cut body parsed");
            }
        }
    }
}
