//! A scripted fake model server (OpenAI chat completions and Anthropic Messages) that checks
//! the client's requests.
//!
//! ```ignore
//! let model = FakeModel::start().await?;
//! model.push_for("weather", Step::tool_call("get_weather", r#"{"city":"Paris"}"#));
//! model.push_for("weather", Step::text("It is sunny."));
//! // … point the gateway at `model.base_url()` and talk to it …
//! model.wait_for_requests(2, Duration::from_secs(5)).await?;
//! model.assert_no_violations();
//! ```
//!
//! Which step answers a request: the first `push_for` queue whose trigger is contained in the
//! last user message's text and still has steps, else the global `push` queue, else the
//! default reply (`echo: <text>`). Every request is checked against the protocol's invariants
//! (JSON shape, tool call / tool result pairing, offered tools, Anthropic headers and role
//! alternation); problems are recorded as violations and the request is still answered.

mod anthropic;
mod anthropic_stream;
mod lean;
mod media;
mod openai;
mod script;
mod server;
mod state;
mod window;
mod wire;

#[cfg(test)]
mod tests;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;

use crate::fake_support::ServerTask;

pub use media::{images_of, Transcription};
pub use script::{DefaultReply, Gate, Step, ToolCall};
pub use state::RecordedRequest;
use state::State;

/// Handle to a running fake model; clones share the server, which stops when the last
/// handle is dropped or on `shutdown`.
#[derive(Debug, Clone)]
pub struct FakeModel {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    state: Arc<State>,
    addr: SocketAddr,
    server: ServerTask,
}

impl FakeModel {
    /// Binds `127.0.0.1:0` and serves until shut down.
    pub async fn start() -> anyhow::Result<FakeModel> {
        FakeModel::serve(State::default()).await
    }

    /// [`FakeModel::start`] for load tools: answers the same, but checks nothing and never
    /// builds the request's `tools`, so the rig's own work per request does not grow with
    /// the tool set the daemon offers. Requests are still recorded; violations are never.
    pub async fn start_unchecked() -> anyhow::Result<FakeModel> {
        FakeModel::serve(State::unchecked()).await
    }

    async fn serve(state: State) -> anyhow::Result<FakeModel> {
        let (listener, addr) = crate::fake_support::bind("fake model").await?;
        let state = Arc::new(state);
        let app = server::router(Arc::clone(&state));
        let server = ServerTask::spawn("fake model", state.cancel.clone(), |stop| {
            axum::serve(listener, app).with_graceful_shutdown(stop)
        });
        Ok(FakeModel {
            inner: Arc::new(Inner {
                state,
                addr,
                server,
            }),
        })
    }

    /// The OpenAI-style base URL, `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("{}/v1", self.origin())
    }

    /// The server's origin without a path, `http://127.0.0.1:PORT` (Anthropic-style base URL).
    pub fn origin(&self) -> String {
        format!("http://{}", self.inner.addr)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.inner.addr
    }

    /// Appends a step to the global script.
    pub fn push(&self, step: Step) {
        self.inner.state.script().push(step);
    }

    /// Appends a step to the script used when the last user message's text contains
    /// `trigger`; it takes precedence over the global script.
    pub fn push_for(&self, trigger: &str, step: Step) {
        self.inner.state.script().push_for(trigger, step);
    }

    /// What to answer when no scripted step is left (initially `DefaultReply::Echo`).
    pub fn set_default(&self, reply: DefaultReply) {
        self.inner.state.script().set_default(reply);
    }

    /// Refuse requests longer than `tokens` (0: no window) as the providers do: HTTP 400
    /// `context_length_exceeded` (OpenAI; the requested completion counts) or `prompt is
    /// too long` (Anthropic), counting the prompt as the fake's `usage` does (the JSON of
    /// the messages at 4 characters a token). A refused request is recorded, and its
    /// script step is not played.
    pub fn set_context_window(&self, tokens: u64) {
        self.inner
            .state
            .window
            .store(tokens, std::sync::atomic::Ordering::Relaxed);
    }

    /// Requests refused as over the context window so far.
    pub fn refused_as_too_long(&self) -> usize {
        self.inner
            .state
            .refused
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Answer every summary request — one whose last user text contains `trigger` — with
    /// `reply`, unless a `push_for` step matches it first (a test that holds one summary).
    pub fn answer_summaries(&self, trigger: &str, reply: &str) {
        self.inner.state.script().answer_summaries(trigger, reply);
    }

    /// Scripted steps not played yet.
    pub fn pending_steps(&self) -> usize {
        self.inner.state.script().pending()
    }

    /// Every `/audio/transcriptions` request received so far, in order.
    pub fn transcriptions(&self) -> Vec<Transcription> {
        self.inner.state.transcriptions()
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.inner.state.requests()
    }

    pub fn request_count(&self) -> usize {
        self.inner.state.request_count()
    }

    /// Waits until at least `n` requests were received.
    pub async fn wait_for_requests(&self, n: usize, timeout: Duration) -> anyhow::Result<()> {
        let state = &self.inner.state;
        state
            .wait_until(timeout, |state| state.request_count() >= n)
            .await
            .with_context(|| {
                format!(
                    "fake model: waited {timeout:?} for {n} requests, saw {}",
                    state.request_count()
                )
            })
    }

    /// How many requests so far have `needle` in their body, as sent (JSON-escaped).
    pub fn requests_containing(&self, needle: &str) -> usize {
        self.inner.state.requests_containing(needle)
    }

    /// Waits until at least `n` requests have `needle` in their body.
    pub async fn wait_for_requests_containing(
        &self,
        needle: &str,
        n: usize,
        timeout: Duration,
    ) -> anyhow::Result<()> {
        let state = &self.inner.state;
        state
            .wait_until(timeout, |state| state.requests_containing(needle) >= n)
            .await
            .with_context(|| {
                format!(
                    "fake model: waited {timeout:?} for {n} requests containing {needle:?}, saw {}",
                    state.requests_containing(needle)
                )
            })
    }

    /// Requests being answered right now.
    pub fn in_flight(&self) -> usize {
        self.inner.state.in_flight()
    }

    /// The most requests ever answered at the same time.
    pub fn max_in_flight(&self) -> usize {
        self.inner.state.max_in_flight()
    }

    /// Start counting concurrency of requests whose last user text contains `marker`
    /// (e.g. only the children of a test, not the parent turn that spawned them).
    pub fn track_concurrency(&self, marker: &str) {
        self.inner.state.track(marker);
    }

    /// The most requests containing `marker` answered at the same time (see
    /// [`FakeModel::track_concurrency`]).
    pub fn max_in_flight_of(&self, marker: &str) -> usize {
        self.inner.state.tracked_max(marker)
    }

    /// Requests whose client went away before the answer was complete.
    pub fn dropped(&self) -> usize {
        self.inner.state.dropped()
    }

    /// Waits until at least `n` requests were dropped by their client.
    pub async fn wait_for_dropped(&self, n: usize, timeout: Duration) -> anyhow::Result<()> {
        let state = &self.inner.state;
        state
            .wait_until(timeout, |state| state.dropped() >= n)
            .await
            .with_context(|| {
                format!(
                    "fake model: waited {timeout:?} for {n} dropped requests, saw {}",
                    state.dropped()
                )
            })
    }

    /// Protocol invariant violations seen so far, each naming its request.
    pub fn violations(&self) -> Vec<String> {
        self.inner.state.violations()
    }

    /// Panics listing the violations, if any.
    #[track_caller]
    pub fn assert_no_violations(&self) {
        crate::fake_support::assert_no_violations("fake model", &self.violations());
    }

    /// Stops the server: hanging and delayed answers end with a 503, open connections get
    /// `fake_support::SHUTDOWN_GRACE` to close, then the server is aborted. Later requests are refused.
    pub async fn shutdown(&self) {
        self.inner.server.stop().await;
    }
}
