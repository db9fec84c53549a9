//! Compaction: the older turns of a session summarized by its model into one entry,
//! committed in one statement once the summary has arrived (a crash before leaves the
//! transcript as it was; the next run compacts again). It runs inside a run, on its
//! session's lane, or for `/compact`; two that race both commit whole summaries, and the
//! one that reaches furthest is read (see `Store::latest_compaction`).

use std::sync::Arc;

use super::estimate::{self, Estimator};
use super::view;
use crate::agent::provider::{
    complete_with_retry, ChatMessage, ModelRequest, Provider, ProviderError, RetryPolicy, ToolSpecs,
};
use crate::store::{CompactionRow, MessageRow, NewCompaction, Role, Store, StoreError};

/// The words that open every summary request (the fake model in the tests recognizes
/// them).
pub const SUMMARY_REQUEST: &str = "Summarize the conversation so far";

/// The system prompt of a summary request.
const SUMMARY_SYSTEM: &str = "You compact conversations between a user and an AI assistant. \
Write a faithful summary that lets the assistant continue the conversation without the \
original messages: the user's goals and requests, decisions made, facts learnt (names, \
paths, numbers, commands, results of tools), open questions and what was about to happen \
next. Write it in the conversation's language, as plain text, without preamble.";

/// Most bytes of one message quoted in a summary request (tool results and long pastes
/// are cut; the recent turns stay verbatim in the transcript anyway).
const QUOTE_BYTES: usize = 4000;

/// How a compaction went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// Messages summarized this time.
    pub messages: usize,
    /// Estimated tokens they (and the earlier summary) weighed, and the summary weighs.
    pub tokens_before: u64,
    pub tokens_after: u64,
    /// The compaction as committed.
    pub row: CompactionRow,
    /// Model calls it took (more than one when the older part did not fit one request).
    pub calls: u32,
}

/// Why a compaction did not happen.
#[derive(Debug, thiserror::Error)]
pub enum CompactError {
    #[error("there is nothing old enough to compact yet")]
    Nothing,
    #[error("the summary request failed: {0}")]
    Provider(#[from] ProviderError),
    #[error("the model answered the summary request with nothing")]
    Empty,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The model a summary is asked of.
pub struct Summarizer<'a> {
    pub provider: &'a dyn Provider,
    pub model_id: &'a str,
    pub policy: RetryPolicy,
    /// Room for the summary's own answer, in tokens.
    pub max_tokens: u32,
    /// What one summary request may weigh, in (scaled) tokens.
    pub budget: u64,
    pub estimator: Estimator,
    /// An OpenAI reasoning model (`max_completion_tokens`).
    pub reasoning_model: bool,
}

/// One stored message as the summary request quotes it.
fn quote(r: &MessageRow, out: &mut String) {
    let cut = |s: &str| -> String {
        if s.len() > QUOTE_BYTES {
            format!("{}… [{} bytes]", crate::text::head(s, QUOTE_BYTES), s.len())
        } else {
            s.to_string()
        }
    };
    match r.role {
        Role::User => out.push_str(&format!("\nUser: {}\n", cut(&r.content))),
        Role::Assistant => {
            if !r.content.trim().is_empty() {
                out.push_str(&format!("\nAssistant: {}\n", cut(&r.content)));
            }
            for c in &r.tool_calls {
                out.push_str(&format!(
                    "\nAssistant called {}({})\n",
                    c.name,
                    cut(&c.arguments)
                ));
            }
        }
        Role::Tool => out.push_str(&format!(
            "\nResult of {}: {}\n",
            r.tool_name.as_deref().unwrap_or("tool"),
            cut(&r.content)
        )),
    }
}

impl Summarizer<'_> {
    /// The summary of `earlier` (the summary so far) followed by `rows`, asked in as
    /// many requests as it takes for each to fit the budget; its calls counted in `calls`.
    pub async fn summarize(
        &self,
        earlier: Option<&str>,
        rows: &[MessageRow],
        focus: Option<&str>,
        calls: &mut u32,
    ) -> Result<String, CompactError> {
        let fixed = estimate::of_bytes(SUMMARY_SYSTEM.len() + 600) + 2 * estimate::PER_MESSAGE;
        let room = self
            .budget
            .saturating_sub(self.estimator.scaled(fixed))
            .max(256);
        let mut summary = earlier.map(str::to_string);
        let mut i = 0;
        while i < rows.len() {
            let mut text = String::new();
            let base = summary.as_deref().map_or(0, |s| s.len());
            // At least one message per request, so the loop always moves on.
            loop {
                let mut next = String::new();
                quote(&rows[i], &mut next);
                let weight = self
                    .estimator
                    .scaled(estimate::of_bytes(base + text.len() + next.len()));
                if !text.is_empty() && weight > room {
                    break;
                }
                text.push_str(&next);
                i += 1;
                if i == rows.len() {
                    break;
                }
            }
            summary = Some(self.ask(summary.as_deref(), &text, focus).await?);
            *calls += 1;
        }
        summary.ok_or(CompactError::Nothing)
    }

    async fn ask(
        &self,
        earlier: Option<&str>,
        text: &str,
        focus: Option<&str>,
    ) -> Result<String, CompactError> {
        let mut prompt = format!("{SUMMARY_REQUEST} into one summary that replaces it.");
        if let Some(f) = focus.filter(|f| !f.trim().is_empty()) {
            prompt.push_str(&format!(" Focus on: {}.", crate::text::head(f.trim(), 500)));
        }
        if let Some(e) = earlier {
            prompt.push_str(&format!("\n\n<summary-so-far>\n{e}\n</summary-so-far>"));
        }
        prompt.push_str(&format!("\n\n<conversation>{text}</conversation>"));
        let req = ModelRequest {
            model: self.model_id.to_string(),
            system: SUMMARY_SYSTEM.into(),
            messages: vec![ChatMessage {
                role: Role::User,
                content: prompt,
                tool_calls: vec![],
                tool_call_id: None,
                tool_name: None,
                images: vec![],
            }],
            tools: Arc::new(ToolSpecs::default()),
            max_tokens: self.max_tokens,
            thinking: None,
            reasoning: Vec::new(),
            reasoning_model: self.reasoning_model,
        };
        let resp = complete_with_retry(self.provider, &req, self.policy, |n, e, d| {
            tracing::warn!(attempt = n, error = %e, delay = ?d, "summary request failed; retrying");
        })
        .await?;
        let text = resp.text.trim();
        if text.is_empty() {
            return Err(CompactError::Empty);
        }
        Ok(text.to_string())
    }
}

/// What a compaction of `rows` (the session's whole transcript, `summary` the compaction
/// in force) would summarize: the messages from the first one the summary does not stand
/// for up to the cut, keeping about `keep` tokens of the newest turns.
pub fn plan(
    rows: &[MessageRow],
    summary: Option<&CompactionRow>,
    keep: u64,
) -> Option<(usize, usize)> {
    let from = view::first_kept(rows, summary);
    let to = view::cut(rows, from, keep)?;
    Some((from, to))
}

/// Summarizes `rows[from..to]` (after the summary in force) and commits the compaction.
pub async fn compact(
    store: &Store,
    session_id: &str,
    rows: &[MessageRow],
    summary: Option<&CompactionRow>,
    (from, to): (usize, usize),
    who: &Summarizer<'_>,
    focus: Option<&str>,
) -> Result<Report, CompactError> {
    let part = &rows[from..to];
    let Some(last) = part.last() else {
        return Err(CompactError::Nothing);
    };
    let mut calls = 0;
    let earlier = summary.map(|c| c.summary.as_str());
    let text = who.summarize(earlier, part, focus, &mut calls).await?;
    let started = std::time::Instant::now();
    let tokens_before = part.iter().map(view::row_cost).sum::<u64>()
        + earlier.map_or(0, |e| estimate::of_bytes(e.len()));
    let tokens_after = estimate::of_message(&view::summary_message(&text));
    let new = NewCompaction {
        through_seq: last.seq,
        summary: text,
        replaced: part.len() as i64,
        tokens_before: tokens_before as i64,
        tokens_after: tokens_after as i64,
    };
    store.add_compaction(session_id, &new).await?;
    tracing::info!(
        session_id,
        messages = part.len(),
        tokens_before,
        tokens_after,
        calls,
        commit_us = started.elapsed().as_micros() as u64,
        "compacted the older turns"
    );
    Ok(Report {
        messages: part.len(),
        tokens_before,
        tokens_after,
        row: CompactionRow {
            session_id: session_id.to_string(),
            through_seq: new.through_seq,
            summary: new.summary,
            replaced: new.replaced,
            tokens_before: new.tokens_before,
            tokens_after: new.tokens_after,
            created_at: crate::store::now_ms(),
        },
        calls,
    })
}
