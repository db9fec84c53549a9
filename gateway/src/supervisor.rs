//! The channel supervisor: runs one adapter's `Channel::run` as a child task and restarts
//! it with backoff when it returns an error, returns early or panics — a stranger's
//! message that trips a bug in an adapter costs a restart, not the channel. Restarts are
//! logged and counted (`/metrics`).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use switchboard_channels::backoff::Backoff;
use switchboard_channels::{Channel, InboundSink};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::AbortOnDropHandle;

/// Waits before a restart: 1 s, doubling per restart in a row, up to a minute (jittered).
const BACKOFF: Backoff = Backoff::new(Duration::from_secs(1), Duration::from_secs(60));
/// A run that lasted this long was healthy: the next restart waits the shortest again.
const HEALTHY_FOR: Duration = Duration::from_secs(60);

/// Restarts per channel since the daemon started.
#[derive(Debug, Default)]
pub struct Restarts(Mutex<BTreeMap<String, u64>>);

impl Restarts {
    fn bump(&self, channel: &str) {
        *self.0.lock().entry(channel.to_string()).or_default() += 1;
    }

    /// `(channel, restarts)`, by channel id.
    pub fn snapshot(&self) -> Vec<(String, u64)> {
        self.0.lock().iter().map(|(k, v)| (k.clone(), *v)).collect()
    }
}

/// Run `adapter` until `cancel` fires, restarting it whenever it stops on its own.
pub async fn supervise(
    adapter: Arc<dyn Channel>,
    sink: InboundSink,
    cancel: CancellationToken,
    restarts: Arc<Restarts>,
) {
    let id = adapter.id().to_string();
    // Restarts in a row (since the last healthy run).
    let mut in_row = 0;
    loop {
        let started = Instant::now();
        let task = {
            let (adapter, sink, cancel) = (adapter.clone(), sink.clone(), cancel.clone());
            AbortOnDropHandle::new(tokio::spawn(async move { adapter.run(sink, cancel).await }))
        };
        let outcome = task.await;
        if cancel.is_cancelled() {
            return;
        }
        if started.elapsed() >= HEALTHY_FOR {
            in_row = 0;
        }
        in_row += 1;
        let backoff = BACKOFF.delay(in_row);
        match outcome {
            Ok(Ok(())) => {
                tracing::warn!(channel = %id, restart_in = ?backoff, "{id}: channel stopped on its own; restarting")
            }
            Ok(Err(e)) => {
                tracing::error!(channel = %id, error = %e, restart_in = ?backoff, "{id}: channel failed; restarting")
            }
            Err(e) if e.is_panic() => {
                let why = panic_message(e.into_panic());
                tracing::error!(channel = %id, panic = %why, restart_in = ?backoff, "{id}: channel panicked; restarting")
            }
            // Cancelled from outside (the runtime is going away).
            Err(_) => return,
        }
        restarts.bump(&id);
        tokio::select! {
            _ = tokio::time::sleep(backoff) => {}
            _ = cancel.cancelled() => return,
        }
    }
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    match payload.downcast::<String>() {
        Ok(s) => *s,
        Err(payload) => payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .unwrap_or_else(|| "unknown panic".into()),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use async_trait::async_trait;
    use switchboard_channels::{ChannelError, DeliveryProgress, Origin, OutboundMessage};

    use super::*;

    /// Panics on its first run, fails on its second, then runs until cancelled.
    struct Flaky(AtomicU32);

    #[async_trait]
    impl Channel for Flaky {
        fn id(&self) -> &str {
            "flaky"
        }
        fn text_limit(&self) -> usize {
            100
        }
        async fn run(&self, _: InboundSink, cancel: CancellationToken) -> Result<(), ChannelError> {
            match self.0.fetch_add(1, Ordering::SeqCst) {
                0 => panic!("a poison message"),
                1 => Err(ChannelError::Temporary("connection lost".into())),
                _ => {
                    cancel.cancelled().await;
                    Ok(())
                }
            }
        }
        async fn send(
            &self,
            _: &OutboundMessage,
            _: &dyn DeliveryProgress,
        ) -> Result<(), ChannelError> {
            Ok(())
        }
        async fn typing(&self, _: &Origin, _: bool) -> Result<(), ChannelError> {
            Ok(())
        }
    }

    /// A channel that panics or fails is restarted (with backoff) and counted; it is not
    /// left dead, and a cancel stops the supervisor.
    #[tokio::test(start_paused = true)]
    async fn a_panicking_or_failing_channel_is_restarted_and_counted() {
        let flaky = Arc::new(Flaky(AtomicU32::new(0)));
        let restarts = Arc::new(Restarts::default());
        let cancel = CancellationToken::new();
        let (sink, _rx) = tokio::sync::mpsc::channel(1);
        let task = tokio::spawn(supervise(
            flaky.clone(),
            sink,
            cancel.clone(),
            restarts.clone(),
        ));
        // 1 s after the panic, 2 s after the failure: the third run is up by 3 s.
        tokio::time::sleep(Duration::from_millis(3100)).await;
        assert_eq!(flaky.0.load(Ordering::SeqCst), 3);
        assert_eq!(restarts.snapshot(), vec![("flaky".to_string(), 2)]);
        cancel.cancel();
        tokio::time::timeout(Duration::from_secs(1), task)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            flaky.0.load(Ordering::SeqCst),
            3,
            "no restart after the cancel"
        );
    }
}
