//! Reading an OpenAI chat completions answer: the streamed `chat.completion.chunk` events
//! (assembled into one answer) or a plain `chat.completion` object, within the bounds of
//! `provider::bounded`.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::agent::provider::bounded::{self, AnswerBudget, MAX_STREAM_BYTES, MAX_TOOL_CALLS};
use crate::agent::provider::sse::SseParser;
use crate::agent::provider::{ModelResponse, ProviderError, Usage};
use crate::store::ToolCallRecord;

/// Tool call being assembled from stream deltas, by index.
#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// One answer being assembled.
#[derive(Debug, Default)]
pub(super) struct Accumulator {
    text: String,
    calls: BTreeMap<u64, PartialCall>,
    usage: Usage,
    budget: AnswerBudget,
    /// `data: [DONE]` was seen.
    done: bool,
    /// A choice said why it finished (`finish_reason`): the answer is complete.
    finished: bool,
    /// It finished with `finish_reason: "length"`: cut at its token limit.
    cut: bool,
}

impl Accumulator {
    fn push_text(&mut self, t: &str) -> Result<(), ProviderError> {
        self.budget.take(t.len())?;
        self.text.push_str(t);
        Ok(())
    }

    fn call(&mut self, index: u64) -> Result<&mut PartialCall, ProviderError> {
        if !self.calls.contains_key(&index) && self.calls.len() >= MAX_TOOL_CALLS {
            return Err(ProviderError::InvalidResponse(format!(
                "the answer makes more than {MAX_TOOL_CALLS} tool calls"
            )));
        }
        Ok(self.calls.entry(index).or_default())
    }

    pub(super) fn apply_chunk(&mut self, chunk: &Value) -> Result<(), ProviderError> {
        if let Some(err) = chunk.get("error") {
            let text = err.to_string();
            return Err(ProviderError::InvalidResponse(format!(
                "error in stream: {}",
                head(&text)
            )));
        }
        if let Some(u) = chunk.get("usage").filter(|u| !u.is_null()) {
            self.usage = parse_usage(u);
        }
        let Some(choices) = chunk.get("choices").and_then(Value::as_array) else {
            return Ok(());
        };
        for choice in choices {
            if let Some(reason) = choice.get("finish_reason").filter(|r| !r.is_null()) {
                self.finished = true;
                self.cut = reason.as_str() == Some("length");
            }
            let Some(delta) = choice.get("delta") else {
                continue;
            };
            if let Some(t) = delta.get("content").and_then(Value::as_str) {
                self.push_text(t)?;
            }
            for tc in delta
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let index = tc.get("index").and_then(Value::as_u64).unwrap_or(0);
                let id = tc.get("id").and_then(Value::as_str);
                let f = tc.get("function");
                let name = f.and_then(|f| f.get("name")).and_then(Value::as_str);
                let arguments = f.and_then(|f| f.get("arguments")).and_then(Value::as_str);
                let size = [id, name, arguments]
                    .iter()
                    .flatten()
                    .map(|s| s.len())
                    .sum();
                self.budget.take(size)?;
                let call = self.call(index)?;
                if let Some(id) = id {
                    call.id = id.to_string();
                }
                if let Some(n) = name {
                    call.name.push_str(n);
                }
                if let Some(a) = arguments {
                    call.arguments.push_str(a);
                }
            }
        }
        Ok(())
    }

    pub(super) fn finish(self) -> Result<ModelResponse, ProviderError> {
        let mut tool_calls = Vec::with_capacity(self.calls.len());
        for (i, c) in self.calls {
            if c.name.is_empty() {
                return Err(ProviderError::InvalidResponse(format!(
                    "tool call #{i} has no function name"
                )));
            }
            let id = if c.id.is_empty() {
                format!("call_{}", uuid::Uuid::new_v4().simple())
            } else {
                c.id
            };
            tool_calls.push(ToolCallRecord {
                id,
                name: c.name,
                arguments: c.arguments,
            });
        }
        Ok(ModelResponse {
            text: self.text,
            tool_calls,
            usage: self.usage,
            reasoning: Vec::new(),
            cut: self.cut,
        })
    }
}

fn parse_usage(u: &Value) -> Usage {
    Usage {
        input_tokens: bounded::tokens(u.get("prompt_tokens").and_then(Value::as_u64)),
        output_tokens: bounded::tokens(u.get("completion_tokens").and_then(Value::as_u64)),
    }
}

/// A non-streamed `chat.completion` object.
pub(super) fn parse_completion(v: &Value) -> Result<ModelResponse, ProviderError> {
    let msg = v.pointer("/choices/0/message").ok_or_else(|| {
        ProviderError::InvalidResponse("no choices[0].message in the answer".into())
    })?;
    let mut acc = Accumulator {
        cut: v
            .pointer("/choices/0/finish_reason")
            .and_then(Value::as_str)
            == Some("length"),
        ..Accumulator::default()
    };
    if let Some(t) = msg.get("content").and_then(Value::as_str) {
        acc.push_text(t)?;
    }
    for (i, tc) in msg
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let text = |p: &str| tc.pointer(p).and_then(Value::as_str).unwrap_or_default();
        let (id, name, arguments) = (
            text("/id"),
            text("/function/name"),
            text("/function/arguments"),
        );
        acc.budget.take(id.len() + name.len() + arguments.len())?;
        *acc.call(i as u64)? = PartialCall {
            id: id.to_string(),
            name: name.to_string(),
            arguments: arguments.to_string(),
        };
    }
    if let Some(u) = v.get("usage") {
        acc.usage = parse_usage(u);
    }
    acc.finish()
}

/// A streamed answer being read: SSE events → chunks → one answer.
#[derive(Debug, Default)]
pub(super) struct StreamReader {
    parser: SseParser,
    acc: Accumulator,
    bytes: usize,
}

impl StreamReader {
    /// Feeds the next bytes of the stream; `Ok(true)` once the answer is complete
    /// (`[DONE]`): what follows is not read.
    #[cfg(test)]
    pub(super) fn feed(&mut self, chunk: &[u8]) -> Result<bool, ProviderError> {
        self.feed_with(chunk, &mut |_| {})
    }

    /// [`StreamReader::feed`], handing each piece of the answer's text to `on_text`.
    pub(super) fn feed_with(
        &mut self,
        chunk: &[u8],
        on_text: &mut (impl FnMut(&str) + ?Sized),
    ) -> Result<bool, ProviderError> {
        self.bytes = self.bytes.saturating_add(chunk.len());
        if self.bytes > MAX_STREAM_BYTES {
            return Err(ProviderError::InvalidResponse(format!(
                "the answer stream is longer than {MAX_STREAM_BYTES} bytes"
            )));
        }
        let events = self
            .parser
            .feed(chunk)
            .map_err(|e| ProviderError::InvalidResponse(e.to_string()))?;
        for data in events {
            if self.acc.done {
                break;
            }
            let before = self.acc.text.len();
            handle_data(&mut self.acc, &data)?;
            // Text is only ever appended, a whole `&str` at a time: a char boundary.
            if let Some(piece) = self.acc.text.get(before..).filter(|p| !p.is_empty()) {
                on_text(piece);
            }
        }
        Ok(self.acc.done)
    }

    /// The stream ended: the answer, or why there is none. A stream that stops before
    /// `[DONE]` and before any choice finished was cut off (a retryable failure), even
    /// if it carried some text.
    pub(super) fn finish(mut self) -> Result<ModelResponse, ProviderError> {
        for data in self.parser.finish() {
            if self.acc.done {
                break;
            }
            handle_data(&mut self.acc, &data)?;
        }
        if !self.acc.done && !self.acc.finished {
            return Err(ProviderError::Truncated(
                "the answer stream ended before the answer did (no finish_reason, no [DONE])"
                    .into(),
            ));
        }
        self.acc.finish()
    }
}

pub(super) fn handle_data(acc: &mut Accumulator, data: &str) -> Result<(), ProviderError> {
    if data.trim() == "[DONE]" {
        acc.done = true;
        return Ok(());
    }
    let v: Value = serde_json::from_str(data).map_err(|e| {
        ProviderError::InvalidResponse(format!("bad stream chunk ({e}): {}", head(data)))
    })?;
    acc.apply_chunk(&v)
}

/// The start of `s`, for error messages.
pub(super) fn head(s: &str) -> String {
    s.chars().take(120).collect()
}

#[cfg(test)]
#[path = "answer_tests.rs"]
mod tests;
