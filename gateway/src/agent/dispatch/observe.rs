//! What a run on its lane leaves for operators: a `run` span with its session, run id and
//! channel on every log line it writes (`--log-format json` prints them as fields), and its
//! duration in the `switchboard_turn_seconds` histogram (`latency`).

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use tracing::Instrument;

use crate::runtime::Runtime;

/// The span of one run. `channel` is recorded once the run knows where its replies go.
pub(super) fn run_span(session_key: &str, run_id: &str) -> tracing::Span {
    tracing::info_span!(
        "run",
        session = %session_key,
        run = %run_id,
        channel = tracing::field::Empty
    )
}

/// `run` inside `span`, its time on `lane` observed when it ends (a panic included: the
/// guard inside catches it).
pub(super) async fn observed(
    rt: Arc<Runtime>,
    lane: &'static str,
    span: tracing::Span,
    run: impl Future<Output = ()> + Send,
) {
    let started = Instant::now();
    run.instrument(span).await;
    rt.parts
        .get::<crate::latency::Latency>()
        .observe_turn(lane, started.elapsed());
}
