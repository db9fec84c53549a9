//! What every fake server shares: binding 127.0.0.1, its accept loop (stopped gracefully,
//! aborted when dropped), and failing a test with the protocol violations it recorded.

use std::future::IntoFuture;
use std::net::SocketAddr;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use anyhow::Context as _;
use tokio::net::TcpListener;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};
use tokio_util::task::AbortOnDropHandle;

/// How long a stopping fake lets open connections finish before its server is aborted.
pub(crate) const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);

/// Bind `127.0.0.1:0` for the fake called `name`.
pub(crate) async fn bind(name: &str) -> anyhow::Result<(TcpListener, SocketAddr)> {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .with_context(|| format!("binding the {name} to 127.0.0.1:0"))?;
    let addr = listener
        .local_addr()
        .with_context(|| format!("reading the {name}'s address"))?;
    Ok((listener, addr))
}

/// A fake's accept loop. `cancel` is the fake's own token (its hanging answers end on it
/// too): [`ServerTask::stop`] fires it and gives open connections [`SHUTDOWN_GRACE`];
/// dropping the task fires it and aborts the loop.
#[derive(Debug)]
pub(crate) struct ServerTask {
    cancel: CancellationToken,
    task: Mutex<Option<AbortOnDropHandle<()>>>,
}

impl ServerTask {
    /// Spawn `serve`, given the future that resolves when the server should stop
    /// (for `axum::serve(..).with_graceful_shutdown`).
    pub(crate) fn spawn<F>(
        name: &'static str,
        cancel: CancellationToken,
        serve: impl FnOnce(WaitForCancellationFutureOwned) -> F,
    ) -> ServerTask
    where
        F: IntoFuture<Output = std::io::Result<()>>,
        F::IntoFuture: Send + 'static,
    {
        let serving = serve(cancel.clone().cancelled_owned()).into_future();
        let task = tokio::spawn(async move {
            if let Err(error) = serving.await {
                tracing::warn!(%error, "{name} server failed");
            }
        });
        ServerTask {
            cancel,
            task: Mutex::new(Some(AbortOnDropHandle::new(task))),
        }
    }

    /// Stop accepting, let open connections finish for [`SHUTDOWN_GRACE`], then abort.
    pub(crate) async fn stop(&self) {
        self.cancel.cancel();
        let task = self
            .task
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(mut task) = task {
            if tokio::time::timeout(SHUTDOWN_GRACE, &mut task)
                .await
                .is_err()
            {
                task.abort();
            }
        }
    }
}

impl Drop for ServerTask {
    fn drop(&mut self) {
        // Hanging answers and open connections give up; the loop is aborted by its handle.
        self.cancel.cancel();
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
