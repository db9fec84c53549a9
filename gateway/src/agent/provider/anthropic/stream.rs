//! Reading a streamed Messages API answer: SSE events parsed into typed events
//! (`message_start`, `content_block_start` / `_delta` / `_stop`, `message_delta`,
//! `message_stop`, `ping`, `error`) and assembled into one answer within the bounds of
//! `provider::bounded`.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::agent::provider::bounded::{self, AnswerBudget, MAX_STREAM_BYTES, MAX_TOOL_CALLS};
use crate::agent::provider::sse::SseParser;
use crate::agent::provider::{ModelResponse, ProviderError, ReasoningBlock, Usage};
use crate::store::ToolCallRecord;

/// Most content blocks one answer may open (text, tool use and thinking together).
const MAX_BLOCKS: usize = 4 * MAX_TOOL_CALLS;

/// One event of the stream. Fields the gateway does not use are ignored; an event type it
/// does not know is skipped (the API adds new ones over time).
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum Event {
    MessageStart {
        message: StartedMessage,
    },
    ContentBlockStart {
        index: u64,
        content_block: BlockStart,
    },
    ContentBlockDelta {
        index: u64,
        delta: Delta,
    },
    ContentBlockStop,
    MessageDelta {
        #[serde(default)]
        usage: Option<WireUsage>,
        #[serde(default)]
        delta: Option<MessageDeltaBody>,
    },
    MessageStop,
    Ping,
    Error {
        error: WireError,
    },
    #[serde(other)]
    Unknown,
}

/// The `delta` of a `message_delta` event: why the answer stopped.
#[derive(Debug, Default, Deserialize)]
pub(super) struct MessageDeltaBody {
    #[serde(default)]
    stop_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(super) struct StartedMessage {
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
}

#[derive(Debug, Deserialize)]
pub(super) struct WireError {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    message: String,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum BlockStart {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Option<Value>,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        signature: String,
    },
    RedactedThinking {
        data: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum Delta {
    #[serde(rename = "text_delta")]
    Text { text: String },
    #[serde(rename = "input_json_delta")]
    InputJson { partial_json: String },
    #[serde(rename = "thinking_delta")]
    Thinking { thinking: String },
    #[serde(rename = "signature_delta")]
    Signature { signature: String },
    #[serde(other)]
    Other,
}

/// A content block being assembled.
#[derive(Debug)]
enum Block {
    Text(String),
    ToolUse {
        id: String,
        name: String,
        /// The `input` of the start event (used when no `input_json_delta` follows).
        start_input: Option<Value>,
        json: String,
    },
    Thinking {
        thinking: String,
        signature: String,
    },
    Redacted(String),
    /// A block type the gateway does not use (server tool results, citations…).
    Other,
}

/// One answer being assembled from its events.
#[derive(Debug, Default)]
pub(super) struct Accumulator {
    blocks: BTreeMap<u64, Block>,
    tool_uses: usize,
    usage: Usage,
    budget: AnswerBudget,
    started: bool,
    /// `message_stop` was seen: the answer is complete.
    done: bool,
    /// `stop_reason: "max_tokens"`: the answer was cut at its limit.
    cut: bool,
}

impl Accumulator {
    pub(super) fn apply(&mut self, event: Event) -> Result<(), ProviderError> {
        match event {
            Event::MessageStart { message } => {
                self.started = true;
                if let Some(u) = message.usage {
                    self.take_usage(&u);
                }
            }
            Event::ContentBlockStart {
                index,
                content_block,
            } => self.start_block(index, content_block)?,
            Event::ContentBlockDelta { index, delta } => self.delta(index, delta)?,
            Event::ContentBlockStop | Event::Ping | Event::Unknown => {}
            Event::MessageDelta { usage, delta } => {
                if let Some(u) = usage {
                    self.take_usage(&u);
                }
                if let Some(reason) = delta.and_then(|d| d.stop_reason) {
                    self.cut = reason == "max_tokens";
                }
            }
            Event::MessageStop => self.done = true,
            Event::Error { error } => return Err(stream_error(error)),
        }
        Ok(())
    }

    /// `output_tokens` is cumulative in `message_delta`; `input_tokens` comes with
    /// `message_start` (and again in newer `message_delta`s).
    fn take_usage(&mut self, u: &WireUsage) {
        if let Some(i) = u.input_tokens {
            self.usage.input_tokens = bounded::tokens(Some(i));
        }
        if let Some(o) = u.output_tokens {
            self.usage.output_tokens = bounded::tokens(Some(o));
        }
    }

    fn start_block(&mut self, index: u64, start: BlockStart) -> Result<(), ProviderError> {
        if self.blocks.contains_key(&index) {
            return Err(invalid(format!("content block {index} is started twice")));
        }
        if self.blocks.len() >= MAX_BLOCKS {
            return Err(invalid(format!(
                "the answer opens more than {MAX_BLOCKS} content blocks"
            )));
        }
        let block = match start {
            BlockStart::Text { text } => {
                self.budget.take(text.len())?;
                Block::Text(text)
            }
            BlockStart::ToolUse { id, name, input } => {
                if self.tool_uses >= MAX_TOOL_CALLS {
                    return Err(invalid(format!(
                        "the answer makes more than {MAX_TOOL_CALLS} tool calls"
                    )));
                }
                self.tool_uses += 1;
                let input = input.filter(|v| v.as_object().is_some_and(|o| !o.is_empty()));
                let input_len = input.as_ref().map_or(0, |v| v.to_string().len());
                self.budget.take(id.len() + name.len() + input_len)?;
                Block::ToolUse {
                    id,
                    name,
                    start_input: input,
                    json: String::new(),
                }
            }
            BlockStart::Thinking {
                thinking,
                signature,
            } => {
                self.budget.take(thinking.len() + signature.len())?;
                Block::Thinking {
                    thinking,
                    signature,
                }
            }
            BlockStart::RedactedThinking { data } => {
                self.budget.take(data.len())?;
                Block::Redacted(data)
            }
            BlockStart::Other => Block::Other,
        };
        self.blocks.insert(index, block);
        Ok(())
    }

    fn delta(&mut self, index: u64, delta: Delta) -> Result<(), ProviderError> {
        let Some(block) = self.blocks.get_mut(&index) else {
            return Err(invalid(format!(
                "a delta for content block {index}, which was not started"
            )));
        };
        let piece = match (&delta, block) {
            (Delta::Text { text }, Block::Text(t)) => (text, t),
            (Delta::InputJson { partial_json }, Block::ToolUse { json, .. }) => {
                (partial_json, json)
            }
            (Delta::Thinking { thinking: d }, Block::Thinking { thinking, .. }) => (d, thinking),
            (Delta::Signature { signature: d }, Block::Thinking { signature, .. }) => {
                (d, signature)
            }
            (Delta::Other, _) | (_, Block::Other) => return Ok(()),
            (delta, _) => {
                return Err(invalid(format!(
                    "a {} for content block {index} of another type",
                    delta_name(delta)
                )))
            }
        };
        self.budget.take(piece.0.len())?;
        piece.1.push_str(piece.0);
        Ok(())
    }

    pub(super) fn finish(self) -> Result<ModelResponse, ProviderError> {
        let mut text = String::new();
        let mut tool_calls = Vec::new();
        let mut reasoning = Vec::new();
        for (index, block) in self.blocks {
            match block {
                Block::Text(t) => text.push_str(&t),
                Block::ToolUse {
                    id,
                    name,
                    start_input,
                    json,
                } => {
                    if name.is_empty() {
                        return Err(invalid(format!("tool use block {index} has no name")));
                    }
                    let arguments = if !json.is_empty() {
                        json
                    } else {
                        start_input.map_or_else(|| "{}".to_string(), |v| v.to_string())
                    };
                    tool_calls.push(ToolCallRecord {
                        id,
                        name,
                        arguments,
                    });
                }
                Block::Thinking {
                    thinking,
                    signature,
                } => reasoning.push(ReasoningBlock::Thinking {
                    thinking,
                    signature,
                }),
                Block::Redacted(data) => reasoning.push(ReasoningBlock::Redacted { data }),
                Block::Other => {}
            }
        }
        Ok(ModelResponse {
            text,
            tool_calls,
            usage: self.usage,
            reasoning,
            cut: self.cut,
        })
    }
}

fn delta_name(delta: &Delta) -> &'static str {
    match delta {
        Delta::Text { .. } => "text_delta",
        Delta::InputJson { .. } => "input_json_delta",
        Delta::Thinking { .. } => "thinking_delta",
        Delta::Signature { .. } => "signature_delta",
        Delta::Other => "delta",
    }
}

fn invalid(message: String) -> ProviderError {
    ProviderError::InvalidResponse(message)
}

/// An `error` event: overloaded and API errors are the server's (retried), a rate limit is
/// one, anything else is a bad answer.
fn stream_error(e: WireError) -> ProviderError {
    let message: String = format!("{}: {}", e.kind, e.message)
        .chars()
        .take(300)
        .collect();
    match e.kind.as_str() {
        "rate_limit_error" => ProviderError::RateLimited {
            retry_after: None,
            message,
        },
        "overloaded_error" => ProviderError::Server {
            status: 529,
            retry_after: None,
            message,
        },
        "api_error" => ProviderError::Server {
            status: 500,
            retry_after: None,
            message,
        },
        _ => invalid(format!("error in stream: {message}")),
    }
}

/// A streamed answer being read: bytes → SSE events → typed events → one answer.
#[derive(Debug, Default)]
pub(super) struct StreamReader {
    parser: SseParser,
    acc: Accumulator,
    bytes: usize,
}

impl StreamReader {
    /// Feeds the next bytes; `Ok(true)` once `message_stop` came (what follows is not read).
    #[cfg(test)]
    pub(super) fn feed(&mut self, chunk: &[u8]) -> Result<bool, ProviderError> {
        self.feed_with(chunk, &mut |_| {})
    }

    /// [`StreamReader::feed`], handing each piece of the answer's text (a `text_delta`
    /// taken into the answer) to `on_text`.
    pub(super) fn feed_with(
        &mut self,
        chunk: &[u8],
        on_text: &mut (impl FnMut(&str) + ?Sized),
    ) -> Result<bool, ProviderError> {
        self.bytes = self.bytes.saturating_add(chunk.len());
        if self.bytes > MAX_STREAM_BYTES {
            return Err(invalid(format!(
                "the answer stream is longer than {MAX_STREAM_BYTES} bytes"
            )));
        }
        let events = self
            .parser
            .feed(chunk)
            .map_err(|e| invalid(e.to_string()))?;
        for data in events {
            if self.acc.done {
                break;
            }
            if let Some(piece) = self.handle(&data)? {
                on_text(&piece);
            }
        }
        Ok(self.acc.done)
    }

    /// One event into the answer; the text it added, if it was a non-empty `text_delta`.
    fn handle(&mut self, data: &str) -> Result<Option<String>, ProviderError> {
        let event: Event = serde_json::from_str(data).map_err(|e| {
            invalid(format!(
                "bad stream event ({e}): {}",
                data.chars().take(120).collect::<String>()
            ))
        })?;
        let piece = match &event {
            Event::ContentBlockDelta {
                delta: Delta::Text { text },
                ..
            } if !text.is_empty() => Some(text.clone()),
            _ => None,
        };
        self.acc.apply(event)?;
        Ok(piece)
    }

    /// The stream ended: the answer, or why there is none. A stream that ends before
    /// `message_stop` was cut off (a retryable failure), even if it carried text.
    pub(super) fn finish(mut self) -> Result<ModelResponse, ProviderError> {
        for data in self.parser.finish() {
            if self.acc.done {
                break;
            }
            self.handle(&data)?;
        }
        if !self.acc.done {
            return Err(ProviderError::Truncated(if self.acc.started {
                "the answer stream ended before message_stop".into()
            } else {
                "the answer stream ended before message_start".into()
            }));
        }
        self.acc.finish()
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
