//! Tests of the streamed Messages answer reader.

use super::*;
use proptest::prelude::*;
use serde_json::json;

/// The SSE bytes of `events` (each with its `event:` line, as the API sends them).
fn sse(events: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for e in events {
        let kind = e["type"].as_str().unwrap_or("unknown");
        out.extend_from_slice(format!("event: {kind}\ndata: {e}\n\n").as_bytes());
    }
    out
}

fn read(chunks: &[&[u8]]) -> Result<ModelResponse, ProviderError> {
    let mut r = StreamReader::default();
    for c in chunks {
        if r.feed(c)? {
            break;
        }
    }
    r.finish()
}

/// An answer as the API streams it: thinking, text, then a tool use.
fn answer_events() -> Vec<Value> {
    vec![
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "c", "usage": {"input_tokens": 25, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Let me "}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "look."}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqQB"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "ping"}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Checking "}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "the weather."}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": ""}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"city\": \"Pa"}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "ris\"}"}}),
        json!({"type": "content_block_stop", "index": 2}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 89}}),
        json!({"type": "message_stop"}),
    ]
}

/// Catches: a block type, a delta type or the usage read wrong from the documented stream.
#[test]
fn a_documented_stream_is_assembled() {
    let got = read(&[&sse(&answer_events())]).expect("answer");
    assert_eq!(
        got,
        ModelResponse {
            text: "Checking the weather.".into(),
            tool_calls: vec![ToolCallRecord {
                id: "toolu_1".into(),
                name: "get_weather".into(),
                arguments: "{\"city\": \"Paris\"}".into(),
            }],
            usage: Usage {
                input_tokens: 25,
                output_tokens: 89,
            },
            reasoning: vec![ReasoningBlock::Thinking {
                thinking: "Let me look.".into(),
                signature: "EqQB".into(),
            }],
            cut: false,
        }
    );
}

/// Catches: the reply's text not handed over as it streams (the web chat's preview), or
/// thinking and tool-call input handed over as if they were the reply.
#[test]
fn text_deltas_are_handed_over_as_they_come_and_nothing_else() {
    let bytes = sse(&answer_events());
    let mut r = StreamReader::default();
    let mut pieces = Vec::new();
    for chunk in bytes.chunks(7) {
        if r.feed_with(chunk, &mut |p: &str| pieces.push(p.to_string()))
            .expect("feed")
        {
            break;
        }
    }
    assert_eq!(pieces, ["Checking ", "the weather."]);
    assert_eq!(r.finish().expect("answer").text, pieces.concat());
}

/// Catches: a stream cut short taken for a whole answer, a mid-stream `error` event
/// ignored or not retried when the server is overloaded, and deltas that do not fit
/// their block accepted.
#[test]
fn cut_streams_errors_and_mismatched_deltas() {
    let events = answer_events();
    let cut = read(&[&sse(&events[..events.len() - 1])]).expect_err("no message_stop");
    assert!(matches!(cut, ProviderError::Truncated(_)), "{cut:?}");
    assert!(cut.is_retryable());
    let overloaded =
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    let err = read(&[&sse(&[events[0].clone(), overloaded])]).expect_err("error event");
    assert!(
        matches!(err, ProviderError::Server { status: 529, .. }),
        "{err:?}"
    );
    let bad = json!({"type": "error", "error": {"type": "invalid_request_error", "message": "no"}});
    let err = read(&[&sse(&[bad])]).expect_err("error event");
    assert!(!err.is_retryable(), "{err:?}");
    let mismatched = vec![
        events[0].clone(),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{}"}}),
    ];
    let err = read(&[&sse(&mismatched)]).expect_err("mismatch");
    assert_eq!(
        err.to_string(),
        "model API returned an invalid response: a input_json_delta for content block 0 of another type"
    );
    let orphan = vec![
        json!({"type": "content_block_delta", "index": 3, "delta": {"type": "text_delta", "text": "x"}}),
    ];
    assert!(read(&[&sse(&orphan)]).is_err());
    // Unknown event and block types are skipped, not fatal.
    let future = vec![
        events[0].clone(),
        json!({"type": "brand_new_event", "x": 1}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "server_tool_use", "id": "s"}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "citations_delta"}}),
        json!({"type": "message_stop"}),
    ];
    assert_eq!(read(&[&sse(&future)]).expect("skipped").text, "");
}

/// Catches: unbounded tool calls or blocks from a server gone wrong.
#[test]
fn too_many_blocks_or_tool_calls_are_refused() {
    let mut events = vec![json!({"type": "message_start", "message": {}})];
    for i in 0..=MAX_TOOL_CALLS {
        events.push(json!({"type": "content_block_start", "index": i, "content_block": {"type": "tool_use", "id": i.to_string(), "name": "x", "input": {}}}));
    }
    let err = read(&[&sse(&events)]).expect_err("too many calls");
    assert!(
        err.to_string().contains("more than 128 tool calls"),
        "{err}"
    );
    let mut events = vec![json!({"type": "message_start", "message": {}})];
    for i in 0..=MAX_BLOCKS {
        events.push(json!({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}));
    }
    let err = read(&[&sse(&events)]).expect_err("too many blocks");
    assert!(err.to_string().contains("content blocks"), "{err}");
}

/// The pieces of an answer a strategy draws: thinking, text pieces, tool calls.
#[derive(Debug, Clone)]
struct Drawn {
    thinking: Option<(Vec<String>, String)>,
    text: Vec<String>,
    calls: Vec<(String, String, Vec<String>)>,
    output_tokens: u64,
}

fn drawn() -> impl Strategy<Value = Drawn> {
    (
        prop::option::of((prop::collection::vec(".{0,6}", 0..3), "[A-Za-z0-9]{0,8}")),
        prop::collection::vec(".{0,8}", 0..4),
        prop::collection::vec(
            (
                "[a-z0-9_]{1,6}",
                "[a-z_]{1,6}",
                prop::collection::vec(".{0,5}", 0..3),
            ),
            0..3,
        ),
        any::<u64>(),
    )
        .prop_map(|(thinking, text, calls, output_tokens)| Drawn {
            thinking,
            text,
            calls,
            output_tokens,
        })
}

fn events_of(d: &Drawn) -> Vec<Value> {
    let mut ev = vec![
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 3, "output_tokens": 1}}}),
    ];
    let mut index = 0;
    if let Some((pieces, sig)) = &d.thinking {
        ev.push(json!({"type": "content_block_start", "index": index, "content_block": {"type": "thinking", "thinking": ""}}));
        for p in pieces {
            ev.push(json!({"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": p}}));
        }
        ev.push(json!({"type": "content_block_delta", "index": index, "delta": {"type": "signature_delta", "signature": sig}}));
        ev.push(json!({"type": "content_block_stop", "index": index}));
        index += 1;
    }
    ev.push(json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}));
    for p in &d.text {
        ev.push(json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": p}}));
        ev.push(json!({"type": "ping"}));
    }
    ev.push(json!({"type": "content_block_stop", "index": index}));
    for (id, name, json_pieces) in &d.calls {
        index += 1;
        ev.push(json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}));
        for p in json_pieces {
            ev.push(json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": p}}));
        }
        ev.push(json!({"type": "content_block_stop", "index": index}));
    }
    ev.push(json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": d.output_tokens}}));
    ev.push(json!({"type": "message_stop"}));
    ev
}

fn expected(d: &Drawn) -> ModelResponse {
    ModelResponse {
        text: d.text.concat(),
        tool_calls: d
            .calls
            .iter()
            .map(|(id, name, pieces)| ToolCallRecord {
                id: id.clone(),
                name: name.clone(),
                arguments: if pieces.concat().is_empty() {
                    "{}".into()
                } else {
                    pieces.concat()
                },
            })
            .collect(),
        usage: Usage {
            input_tokens: 3,
            output_tokens: d.output_tokens.min(bounded::MAX_REPORTED_TOKENS),
        },
        reasoning: d
            .thinking
            .iter()
            .map(|(pieces, sig)| ReasoningBlock::Thinking {
                thinking: pieces.concat(),
                signature: sig.clone(),
            })
            .collect(),
        cut: false,
    }
}

/// Event shapes, right and wrong, mixed into arbitrary streams.
fn any_event() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!({"type": "message_start", "message": {}})),
        Just(json!({"type": "message_stop"})),
        Just(json!({"type": "ping"})),
        (0u64..3, prop::sample::select(vec!["text", "tool_use", "thinking", "redacted_thinking", "image"]))
            .prop_map(|(i, t)| json!({"type": "content_block_start", "index": i, "content_block": {"type": t, "id": "a", "name": "n", "data": "d", "text": "t"}})),
        (0u64..3, prop::sample::select(vec!["text_delta", "input_json_delta", "thinking_delta", "signature_delta", "x"]), ".{0,4}")
            .prop_map(|(i, t, s)| json!({"type": "content_block_delta", "index": i, "delta": {"type": t, "text": s, "partial_json": s, "thinking": s, "signature": s}})),
        any::<u64>().prop_map(|o| json!({"type": "message_delta", "usage": {"output_tokens": o}})),
        Just(json!({"type": "error", "error": {"type": "api_error", "message": "x"}})),
        Just(json!({"type": "content_block_delta"})),
        Just(json!({"type": 3})),
        Just(json!([])),
        Just(json!(null)),
    ]
}

proptest! {
    #![proptest_config(crate::proptest_cases::config())]

    /// Catches: an answer that depends on how the stream is cut into reads, or pieces
    /// of text, thinking or tool arguments lost or reordered.
    #[test]
    fn a_drawn_answer_comes_back_whole_however_it_is_chunked(
        d in drawn(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..6),
    ) {
        let bytes = sse(&events_of(&d));
        let mut at: Vec<usize> = cuts.iter().map(|i| i.index(bytes.len() + 1)).collect();
        at.sort_unstable();
        let mut chunks: Vec<&[u8]> = Vec::new();
        let mut from = 0;
        for to in at {
            chunks.push(&bytes[from..to]);
            from = to;
        }
        chunks.push(&bytes[from..]);
        let got = read(&chunks).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(got, expected(&d));
    }

    /// Catches: a panic on any sequence of events, and a cut stream taken as an answer.
    #[test]
    fn any_event_sequence_reads_without_panic(
        events in prop::collection::vec(any_event(), 0..12),
        cut in any::<prop::sample::Index>(),
    ) {
        let bytes = sse(&events);
        let whole = read(&[&bytes]);
        let complete = events.iter().any(|e| e["type"] == "message_stop");
        if whole.is_ok() {
            prop_assert!(complete, "an answer without message_stop");
        }
        let end = cut.index(bytes.len() + 1);
        let _ = read(&[&bytes[..end]]);
    }
}

/// Catches: a reply cut at `max_tokens` (`stop_reason: "max_tokens"`) passed off as
/// complete, or a complete one taken for cut.
#[test]
fn a_max_tokens_stop_marks_the_answer_cut() {
    let events = |reason: &str| {
        vec![
            json!({"type": "message_start", "message": {"usage": {"input_tokens": 3}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "half a sen"}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "message_delta", "delta": {"stop_reason": reason}, "usage": {"output_tokens": 4096}}),
            json!({"type": "message_stop"}),
        ]
    };
    let cut = read(&[&sse(&events("max_tokens"))]).expect("answer");
    assert_eq!((cut.text.as_str(), cut.cut), ("half a sen", true));
    assert!(!read(&[&sse(&events("end_turn"))]).expect("answer").cut);
}
