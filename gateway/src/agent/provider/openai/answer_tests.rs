//! Tests of reading OpenAI answers: assembling deltas, the bounds, and property tests on
//! arbitrary, re-chunked and truncated streams.

use proptest::prelude::*;
use serde_json::json;

use super::*;
use crate::agent::provider::bounded::{MAX_ANSWER_BYTES, MAX_REPORTED_TOKENS};
use crate::agent::provider::sse::MAX_EVENT_BYTES;

/// Feeds `chunks` to a fresh reader; the answer or the error.
fn read(chunks: &[&[u8]]) -> Result<ModelResponse, ProviderError> {
    let mut r = StreamReader::default();
    for c in chunks {
        if r.feed(c)? {
            break;
        }
    }
    r.finish()
}

/// An answer's text, (name, arguments) of its tool calls, and usage.
type Read = (String, Vec<(String, String)>, Usage);

/// An answer without its generated ids, and errors as their text, for comparisons.
fn outcome(r: Result<ModelResponse, ProviderError>) -> Result<Read, String> {
    r.map(|m| {
        let calls = m
            .tool_calls
            .into_iter()
            .map(|c| (c.name, c.arguments))
            .collect();
        (m.text, calls, m.usage)
    })
    .map_err(|e| e.to_string())
}

/// A streamed chunk nested 100,000 levels deep is an error, not a stack overflow (serde_json
/// stops at 128 levels). Catches: a reader that parses model output without that limit.
#[test]
fn a_deeply_nested_chunk_is_an_error() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let body = format!("data: {{\"choices\": {deep}}}\n\ndata: [DONE]\n\n");
    let e = outcome(read(&[body.as_bytes()])).expect_err("refused");
    assert!(
        e.contains("recursion limit exceeded"),
        "{}",
        e.chars().take(200).collect::<String>()
    );
}

fn sse(events: &[serde_json::Value]) -> String {
    let mut s: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    s.push_str("data: [DONE]\n\n");
    s
}

#[test]
fn assembles_tool_calls_from_deltas() {
    let mut acc = Accumulator::default();
    let chunks = [
        json!({"choices":[{"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"sessions_list","arguments":""}}]}}]}),
        json!({"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"lim"}}]}}]}),
        json!({"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"it\":2}"}}]}}]}),
        json!({"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":3}}),
    ];
    for c in &chunks {
        acc.apply_chunk(c).expect("chunk");
    }
    let r = acc.finish().expect("finish");
    assert_eq!(
        r,
        ModelResponse {
            text: String::new(),
            tool_calls: vec![ToolCallRecord {
                id: "call_1".into(),
                name: "sessions_list".into(),
                arguments: "{\"limit\":2}".into()
            }],
            usage: Usage {
                input_tokens: 10,
                output_tokens: 3
            },
            reasoning: Vec::new(),
            cut: false,
        }
    );
}

#[test]
fn garbage_chunk_is_an_invalid_response() {
    let mut acc = Accumulator::default();
    assert!(matches!(
        handle_data(&mut acc, "not json"),
        Err(ProviderError::InvalidResponse(_))
    ));
}

/// Catches: a stream cut off mid-answer taken as the whole answer (the chat got half a
/// reply and no word of the failure).
#[test]
fn a_stream_cut_before_it_finished_is_a_retryable_error() {
    let content = |t: &str| json!({"choices":[{"delta":{"content": t}, "finish_reason": null}]});
    let cut = format!("data: {}\n\ndata: {}\n\n", content("Hel"), content("lo"));
    let err = read(&[cut.as_bytes()]).expect_err("cut off");
    assert!(
        matches!(err, ProviderError::Truncated(_)) && err.is_retryable(),
        "{err}"
    );
    // Ended by finish_reason without [DONE] (some servers): complete.
    let finished = format!(
        "{cut}data: {}\n\n",
        json!({"choices":[{"delta":{}, "finish_reason": "stop"}]})
    );
    assert_eq!(
        read(&[finished.as_bytes()]).expect("complete").text,
        "Hello"
    );
    // Cut inside an event: the half event is no valid chunk.
    let err = read(&[b"data: {\"choices\":[{\"delta\":{\"content\":\"hel"]).expect_err("cut");
    assert!(matches!(err, ProviderError::InvalidResponse(_)), "{err}");
    // Nothing at all.
    assert!(matches!(read(&[]), Err(ProviderError::Truncated(_))));
}

/// Catches: an answer, a tool call list or a token count without bound.
#[test]
fn answers_past_the_bounds_are_refused() {
    // In events within the SSE bound, adding up past the answer's.
    let piece = MAX_EVENT_BYTES / 2;
    let big = "x".repeat(piece);
    let events: Vec<_> = (0..=MAX_ANSWER_BYTES / piece)
        .map(|_| json!({"choices":[{"delta":{"content": big}}]}))
        .collect();
    let err = read(&[sse(&events).as_bytes()]).expect_err("too large");
    assert!(
        err.to_string().contains("the answer is larger than"),
        "{err}"
    );

    let calls: Vec<_> = (0..=MAX_TOOL_CALLS)
        .map(|i| json!({"choices":[{"delta":{"tool_calls":[{"index": i, "function": {"name": "f", "arguments": "{}"}}]}}]}))
        .collect();
    let err = read(&[sse(&calls).as_bytes()]).expect_err("too many");
    assert!(
        err.to_string().contains("more than 128 tool calls"),
        "{err}"
    );

    let usage = json!({"choices":[{"delta":{"content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":u64::MAX,"completion_tokens":u64::MAX}});
    let r = read(&[sse(&[usage]).as_bytes()]).expect("ok");
    assert_eq!(r.usage.input_tokens, MAX_REPORTED_TOKENS);

    let whole = json!({"choices":[{"message":{"content": "x".repeat(MAX_ANSWER_BYTES + 1)}}]});
    assert!(parse_completion(&whole).is_err());
}

/// One scripted answer as a server streams it.
#[derive(Debug, Clone)]
struct Answer {
    pieces: Vec<String>,
    calls: Vec<(String, Vec<String>)>,
}

impl Answer {
    fn text(&self) -> String {
        self.pieces.concat()
    }

    fn events(&self) -> Vec<serde_json::Value> {
        let mut out = vec![
            json!({"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}),
        ];
        for p in &self.pieces {
            out.push(json!({"choices":[{"index":0,"delta":{"content":p},"finish_reason":null}]}));
        }
        for (i, (name, args)) in self.calls.iter().enumerate() {
            out.push(json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":i,"id":format!("c{i}"),"type":"function","function":{"name":name,"arguments":""}}]}}]}));
            for a in args {
                out.push(json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":i,"function":{"arguments":a}}]}}]}));
            }
        }
        out.push(json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}));
        out.push(json!({"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":7}}));
        out
    }
}

fn answer() -> impl Strategy<Value = Answer> {
    (
        prop::collection::vec(".{0,8}", 0..5),
        prop::collection::vec(("[a-z_]{1,8}", prop::collection::vec(".{0,6}", 0..4)), 0..3),
    )
        .prop_map(|(pieces, calls)| Answer { pieces, calls })
}

/// Cuts `bytes` at the given places.
fn chunked<'a>(bytes: &'a [u8], cuts: &[prop::sample::Index]) -> Vec<&'a [u8]> {
    let mut at: Vec<usize> = cuts.iter().map(|i| i.index(bytes.len() + 1)).collect();
    at.sort_unstable();
    let mut out = Vec::new();
    let mut from = 0;
    for to in at {
        out.push(&bytes[from..to]);
        from = to;
    }
    out.push(&bytes[from..]);
    out
}

/// Pieces of streams: SSE framing, chunk JSON fragments, [DONE], and anything.
fn stream_bytes() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        prop::sample::select(
            &[
                "data: ",
                "\n\n",
                "\r\n",
                "[DONE]",
                ": ping\n\n",
                "{\"choices\":[",
                "{\"delta\":{\"content\":\"",
                "\"}}]}",
                "\"tool_calls\":[{\"index\":",
                "\"function\":{\"name\":\"f\",\"arguments\":\"",
                "\"finish_reason\":\"stop\"",
                "\"usage\":{\"prompt_tokens\":",
                "\"error\":{}",
                "null",
                "}",
                "]",
                ",",
                "1",
            ][..]
        )
        .prop_map(|s| s.as_bytes().to_vec()),
        ".{0,4}".prop_map(String::into_bytes),
        any::<u8>().prop_map(|b| vec![b]),
    ];
    prop::collection::vec(piece, 0..48).prop_map(|p| p.concat())
}

proptest! {
    #![proptest_config(crate::proptest_cases::config())]

    /// Catches: a panic on any stream, or an outcome that depends on how it was chunked.
    #[test]
    fn any_stream_in_any_chunking_reads_the_same(
        bytes in stream_bytes(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..6),
    ) {
        let whole = outcome(read(&[&bytes]));
        prop_assert_eq!(outcome(read(&chunked(&bytes, &cuts))), whole);
    }

    /// Catches: an answer read wrong, or a truncated stream read as a different answer
    /// (cut anywhere: the whole answer, or an error; never a silently shorter one).
    #[test]
    fn a_streamed_answer_reads_back_and_truncation_is_an_error(
        a in answer(),
        cut in any::<prop::sample::Index>(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..6),
    ) {
        let text = sse(&a.events());
        let bytes = text.as_bytes();
        let want: Vec<(String, String)> = a.calls.iter().map(|(n, args)| (n.clone(), args.concat())).collect();
        let full = read(&chunked(bytes, &cuts)).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&full.text, &a.text());
        let got: Vec<(String, String)> = full.tool_calls.iter().map(|c| (c.name.clone(), c.arguments.clone())).collect();
        prop_assert_eq!(&got, &want);
        prop_assert_eq!(full.usage, Usage { input_tokens: 5, output_tokens: 7 });

        let end = cut.index(bytes.len() + 1);
        if let Ok(r) = read(&[&bytes[..end]]) {
            prop_assert_eq!(r.text, a.text());
            let got: Vec<(String, String)> = r.tool_calls.into_iter().map(|c| (c.name, c.arguments)).collect();
            prop_assert_eq!(got, want);
        }
    }

    /// Catches: a panic on any `chat.completion`-like value.
    #[test]
    fn any_completion_object_parses_without_panic(
        content in prop::option::of(".{0,12}"),
        calls in prop::collection::vec((prop::option::of(".{0,4}"), prop::option::of("[a-z]{0,4}"), any::<bool>()), 0..4),
        usage in prop::option::of((any::<u64>(), any::<i64>())),
        shape in 0u8..4,
    ) {
        let calls: Vec<_> = calls.into_iter().map(|(id, name, as_string)| {
            let args = if as_string { json!("{}") } else { json!({"a": 1}) };
            json!({"id": id, "function": {"name": name, "arguments": args}})
        }).collect();
        let message = json!({"content": content, "tool_calls": calls});
        let v = match shape {
            0 => json!({"choices": [{"message": message}], "usage": usage.map(|(i, o)| json!({"prompt_tokens": i, "completion_tokens": o}))}),
            1 => json!({"choices": []}),
            2 => json!({"choices": [{"message": null}]}),
            _ => message,
        };
        if let Ok(r) = parse_completion(&v) {
            prop_assert!(r.usage.input_tokens <= MAX_REPORTED_TOKENS);
            if shape == 0 {
                prop_assert_eq!(r.text, content.unwrap_or_default());
            }
        }
    }
}

/// Catches: a reply cut at `max_tokens` (`finish_reason: "length"`) passed off as
/// complete, in a stream or a plain answer, or a complete one taken for cut.
#[test]
fn a_length_finish_marks_the_answer_cut() {
    let chunk = |reason: &str| {
        sse(&[
            json!({"choices": [{"index": 0, "delta": {"content": "half a sen"}, "finish_reason": null}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}),
        ])
    };
    let cut = read(&[chunk("length").as_bytes()]).expect("answer");
    assert_eq!((cut.text.as_str(), cut.cut), ("half a sen", true));
    let whole = read(&[chunk("stop").as_bytes()]).expect("answer");
    assert!(!whole.cut);
    let plain = |reason: &str| {
        parse_completion(&json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "x"}, "finish_reason": reason}]}))
            .expect("answer")
            .cut
    };
    assert_eq!((plain("length"), plain("stop")), (true, false));
}
