//! Shared state of the fake model: the request log, violations, counters and their wake-ups.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::script::Script;

/// One request the fake model received.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// Request path, e.g. `/v1/chat/completions`.
    pub path: String,
    /// The body; `Value::String` holding the raw text when it was not valid JSON.
    pub body: serde_json::Value,
    /// The `Authorization` header.
    pub auth: Option<String>,
    /// The `x-api-key` header (Anthropic).
    pub api_key: Option<String>,
    /// Every header as received (names lowercase), in order.
    pub headers: Vec<(String, String)>,
    /// The URL's query, if it had one (e.g. Azure's `api-version=…`).
    pub query: Option<String>,
    /// When the request arrived.
    pub at: Instant,
}

impl RecordedRequest {
    /// The value of header `name` (any case), if the request had it.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A request as the log keeps it: the body as it arrived, parsed when a test asks.
#[derive(Debug, Clone)]
pub(super) struct LoggedRequest {
    pub(super) path: &'static str,
    pub(super) raw: bytes::Bytes,
    pub(super) auth: Option<String>,
    pub(super) api_key: Option<String>,
    pub(super) headers: Vec<(String, String)>,
    pub(super) query: Option<String>,
    pub(super) at: Instant,
}

impl LoggedRequest {
    fn recorded(&self) -> RecordedRequest {
        let body = serde_json::from_slice(&self.raw).unwrap_or_else(|_| {
            serde_json::Value::String(String::from_utf8_lossy(&self.raw).into_owned())
        });
        RecordedRequest {
            path: self.path.to_owned(),
            body,
            auth: self.auth.clone(),
            api_key: self.api_key.clone(),
            headers: self.headers.clone(),
            query: self.query.clone(),
            at: self.at,
        }
    }
}

#[derive(Debug, Default)]
struct Log {
    requests: Vec<LoggedRequest>,
    violations: Vec<String>,
    transcriptions: Vec<super::media::Transcription>,
}

/// State shared by the handle and the server's handlers.
#[derive(Debug, Default)]
pub(super) struct State {
    log: Mutex<Log>,
    script: Mutex<Script>,
    /// Woken whenever a request is recorded or dropped.
    changed: Notify,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    /// Concurrency per marker: (marker, in flight now, most at once), for requests whose
    /// last user text contains the marker.
    tracked: Mutex<Vec<(String, usize, usize)>>,
    dropped: AtomicUsize,
    /// Source of `call_<n>` tool call ids, unique for the server's life.
    next_call: AtomicU64,
    /// Source of response ids (`chatcmpl-<n>`, `msg_<n>`).
    next_response: AtomicU64,
    /// Fired on shutdown: hanging and delayed answers give up.
    pub(super) cancel: CancellationToken,
    /// Requests are answered without the protocol checks (`FakeModel::start_unchecked`).
    pub(super) unchecked: bool,
    /// The context window in tokens (0: none); see `window.rs`.
    pub(super) window: AtomicU64,
    /// Requests refused as over the window.
    pub(super) refused: AtomicUsize,
}

/// Locks ignoring poisoning: a panicking test thread must not hide the log from the others.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl State {
    /// A state whose requests are answered without the protocol checks.
    pub(super) fn unchecked() -> State {
        State {
            unchecked: true,
            ..State::default()
        }
    }

    pub(super) fn track(&self, marker: &str) {
        lock(&self.tracked).push((marker.to_owned(), 0, 0));
    }

    pub(super) fn tracked_max(&self, marker: &str) -> usize {
        lock(&self.tracked)
            .iter()
            .find(|(m, _, _)| m == marker)
            .map_or(0, |t| t.2)
    }

    pub(super) fn script(&self) -> MutexGuard<'_, Script> {
        lock(&self.script)
    }

    /// Records a request with the problems found in it, then wakes the waiters, so whoever
    /// sees the request also sees its violations.
    pub(super) fn record(&self, request: LoggedRequest, problems: Vec<String>) {
        {
            let mut log = lock(&self.log);
            let index = log.requests.len();
            for problem in problems {
                let violation = format!("request #{index} ({}): {problem}", request.path);
                tracing::warn!(%violation, "fake model saw a protocol violation");
                log.violations.push(violation);
            }
            log.requests.push(request);
        }
        self.changed.notify_waiters();
    }

    /// A violation not tied to a recorded request (e.g. an unknown path).
    pub(super) fn transcribed(&self, t: super::media::Transcription) {
        lock(&self.log).transcriptions.push(t);
        self.changed.notify_waiters();
    }

    pub(super) fn transcriptions(&self) -> Vec<super::media::Transcription> {
        lock(&self.log).transcriptions.clone()
    }

    pub(super) fn violation(&self, violation: String) {
        tracing::warn!(%violation, "fake model saw a protocol violation");
        lock(&self.log).violations.push(violation);
    }

    pub(super) fn requests(&self) -> Vec<RecordedRequest> {
        let logged = lock(&self.log).requests.clone();
        // Parsed outside the lock: the server keeps answering meanwhile.
        logged.iter().map(LoggedRequest::recorded).collect()
    }

    pub(super) fn request_count(&self) -> usize {
        lock(&self.log).requests.len()
    }

    pub(super) fn violations(&self) -> Vec<String> {
        lock(&self.log).violations.clone()
    }

    /// A fresh tool call id, `call_<n>`.
    pub(super) fn call_id(&self) -> String {
        format!(
            "call_{}",
            self.next_call.fetch_add(1, Ordering::Relaxed) + 1
        )
    }

    /// A fresh number for a response id.
    pub(super) fn response_number(&self) -> u64 {
        self.next_response.fetch_add(1, Ordering::Relaxed) + 1
    }

    pub(super) fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::SeqCst)
    }

    pub(super) fn max_in_flight(&self) -> usize {
        self.max_in_flight.load(Ordering::SeqCst)
    }

    /// How many requests so far have `needle` in their body (as sent).
    pub(super) fn requests_containing(&self, needle: &str) -> usize {
        let needle = needle.as_bytes();
        lock(&self.log)
            .requests
            .iter()
            .filter(|r| r.raw.windows(needle.len().max(1)).any(|w| w == needle))
            .count()
    }

    pub(super) fn dropped(&self) -> usize {
        self.dropped.load(Ordering::SeqCst)
    }

    /// Waits, without polling, until `ready` holds; woken by every recorded or dropped request.
    pub(super) async fn wait_until(
        &self,
        timeout: Duration,
        ready: impl Fn(&State) -> bool,
    ) -> Result<(), tokio::time::error::Elapsed> {
        tokio::time::timeout(timeout, async {
            loop {
                let notified = self.changed.notified();
                let mut notified = std::pin::pin!(notified);
                // Register before checking, so a wake-up between the check and the await is kept.
                notified.as_mut().enable();
                if ready(self) {
                    return;
                }
                notified.await;
            }
        })
        .await
    }
}

/// Counts a request as in flight while it lives. Dropped before `finish` means the client went
/// away before the answer was complete (axum drops the handler future or the streaming body).
#[derive(Debug)]
pub(super) struct InFlight {
    state: Arc<State>,
    finished: bool,
    /// Indexes into `State::tracked` this request counts toward.
    tagged: Vec<usize>,
}

impl InFlight {
    pub(super) fn start(state: &Arc<State>) -> InFlight {
        let now = state.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        state.max_in_flight.fetch_max(now, Ordering::SeqCst);
        InFlight {
            state: Arc::clone(state),
            finished: false,
            tagged: Vec::new(),
        }
    }

    /// Count this request toward every tracked marker its last user text contains.
    pub(super) fn tag(&mut self, user_text: &str) {
        let mut tracked = lock(&self.state.tracked);
        for (i, (marker, now, max)) in tracked.iter_mut().enumerate() {
            if user_text.contains(marker.as_str()) {
                *now += 1;
                *max = (*max).max(*now);
                self.tagged.push(i);
            }
        }
    }

    /// The answer is complete (or abandoned by the server itself on shutdown).
    pub(super) fn finish(&mut self) {
        self.finished = true;
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.state.in_flight.fetch_sub(1, Ordering::SeqCst);
        if !self.tagged.is_empty() {
            let mut tracked = lock(&self.state.tracked);
            for &i in &self.tagged {
                if let Some(t) = tracked.get_mut(i) {
                    t.1 = t.1.saturating_sub(1);
                }
            }
        }
        if !self.finished {
            self.state.dropped.fetch_add(1, Ordering::SeqCst);
            self.state.changed.notify_waiters();
        }
    }
}
