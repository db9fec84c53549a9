//! What every fake server shares: stopping its server task gracefully, and failing a test
//! with the protocol violations it recorded.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio_util::task::AbortOnDropHandle;

/// How long a stopping fake lets open connections finish before its server is aborted.
pub(crate) const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);

/// Take the server task out of `slot` and give it [`SHUTDOWN_GRACE`] to end (the caller
/// has already fired its cancel token), then abort it.
pub(crate) async fn stop_server(slot: &Mutex<Option<AbortOnDropHandle<()>>>) {
    let server = slot.lock().unwrap_or_else(PoisonError::into_inner).take();
    if let Some(mut server) = server {
        if tokio::time::timeout(SHUTDOWN_GRACE, &mut server)
            .await
            .is_err()
        {
            server.abort();
        }
    }
}

/// Panic listing `violations`, if any, naming the fake that saw them.
#[track_caller]
pub(crate) fn assert_no_violations(fake: &str, violations: &[String]) {
    assert!(
        violations.is_empty(),
        "{fake} saw {} protocol violation(s):\n  {}",
        violations.len(),
        violations.join("\n  ")
    );
}
