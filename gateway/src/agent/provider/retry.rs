//! Bounded retry with exponential backoff (the shared jittered policy) around one model
//! call, honouring Retry-After, with a per-attempt timeout. Cancellation is the caller's:
//! drop the future.

use std::time::Duration;

use switchboard_channels::backoff::Backoff;

use super::{ModelRequest, ModelResponse, Provider, ProviderError};

#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// Timeout of each attempt.
    pub step_timeout: Duration,
    /// Waits between attempts: 500 ms doubling to a minute, jittered. A server asking for
    /// longer than its cap (Retry-After) is not retried.
    pub backoff: Backoff,
}

impl RetryPolicy {
    pub fn new(max_retries: u32, step_timeout: Duration) -> Self {
        RetryPolicy {
            max_retries,
            step_timeout,
            backoff: Backoff::new(Duration::from_millis(500), Duration::from_secs(60)),
        }
    }

    /// How long to wait before retry number `retry + 1`; `None` when the server asks for
    /// a longer wait than the backoff's cap (a retry sooner would be refused too: fail
    /// now, with the server's answer, instead of sleeping and failing later).
    fn delay(&self, retry: u32, err: &ProviderError) -> Option<Duration> {
        match err.retry_after() {
            Some(asked) if asked > self.backoff.max() => None,
            Some(asked) => Some(asked),
            None => Some(self.backoff.delay(retry.saturating_add(1))),
        }
    }
}

/// Call the provider, retrying retryable failures. `on_retry` is told about each retry.
pub async fn complete_with_retry(
    provider: &dyn Provider,
    req: &ModelRequest,
    policy: RetryPolicy,
    on_retry: impl FnMut(u32, &ProviderError, Duration),
) -> Result<ModelResponse, ProviderError> {
    complete_with_retry_streaming(provider, req, policy, on_retry, &mut |_, _| {}).await
}

/// [`complete_with_retry`], handing the answer's text to `on_text` as it streams in:
/// `on_text(fresh, piece)`, where `fresh` marks the first piece of an attempt (a retry
/// starts the text over).
pub async fn complete_with_retry_streaming(
    provider: &dyn Provider,
    req: &ModelRequest,
    policy: RetryPolicy,
    mut on_retry: impl FnMut(u32, &ProviderError, Duration),
    on_text: &mut (dyn FnMut(bool, &str) + Send),
) -> Result<ModelResponse, ProviderError> {
    let mut retry = 0;
    loop {
        let mut fresh = true;
        let mut pieces = |piece: &str| {
            on_text(fresh, piece);
            fresh = false;
        };
        let call = provider.complete_streaming(req, &mut pieces);
        let result = match tokio::time::timeout(policy.step_timeout, call).await {
            Ok(r) => r,
            Err(_) => Err(ProviderError::Timeout(policy.step_timeout)),
        };
        match result {
            Ok(resp) => return Ok(resp),
            Err(e) if e.is_retryable() && retry < policy.max_retries => {
                let Some(delay) = policy.delay(retry, &e) else {
                    return Err(e);
                };
                on_retry(retry + 1, &e, delay);
                tokio::time::sleep(delay).await;
                retry += 1;
            }
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::provider::Usage;
    use async_trait::async_trait;
    use std::sync::Mutex;

    struct Scripted(Mutex<Vec<Result<ModelResponse, ProviderError>>>);

    #[async_trait]
    impl Provider for Scripted {
        async fn complete(&self, _: &ModelRequest) -> Result<ModelResponse, ProviderError> {
            self.0.lock().expect("lock").remove(0)
        }
    }

    fn req() -> ModelRequest {
        ModelRequest {
            model: "m".into(),
            system: String::new(),
            messages: vec![],
            tools: Default::default(),
            max_tokens: 10,
            thinking: None,
            reasoning: Vec::new(),
            reasoning_model: false,
        }
    }

    fn ok() -> ModelResponse {
        ModelResponse {
            text: "hi".into(),
            tool_calls: vec![],
            usage: Usage::default(),
            reasoning: Vec::new(),
            cut: false,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn retries_429_honouring_retry_after() {
        let p = Scripted(Mutex::new(vec![
            Err(ProviderError::RateLimited {
                retry_after: Some(Duration::from_secs(7)),
                message: "slow".into(),
            }),
            Ok(ok()),
        ]));
        let mut delays = vec![];
        let start = tokio::time::Instant::now();
        let r = complete_with_retry(
            &p,
            &req(),
            RetryPolicy::new(3, Duration::from_secs(5)),
            |_, _, d| delays.push(d),
        )
        .await;
        assert_eq!(r.expect("ok"), ok());
        assert_eq!(delays, vec![Duration::from_secs(7)]);
        assert!(start.elapsed() >= Duration::from_secs(7));
    }

    /// Catches: sleeping (capped) and retrying when the server asked for a wait far past
    /// the cap (`Retry-After: 1e20`): the run should fail at once with the server's answer.
    #[tokio::test(start_paused = true)]
    async fn a_retry_after_past_the_cap_fails_at_once() {
        let p = Scripted(Mutex::new(vec![Err(ProviderError::RateLimited {
            retry_after: Some(crate::agent::provider::retry_after::MAX_RETRY_AFTER),
            message: "come back tomorrow".into(),
        })]));
        let start = tokio::time::Instant::now();
        let mut retries = 0;
        let r = complete_with_retry(
            &p,
            &req(),
            RetryPolicy::new(3, Duration::from_secs(5)),
            |_, _, _| retries += 1,
        )
        .await;
        assert!(matches!(r, Err(ProviderError::RateLimited { .. })));
        assert_eq!(retries, 0);
        assert_eq!(start.elapsed(), Duration::ZERO);
    }

    #[tokio::test(start_paused = true)]
    async fn client_errors_are_not_retried() {
        let p = Scripted(Mutex::new(vec![Err(ProviderError::Client {
            status: 400,
            message: "bad".into(),
        })]));
        let r = complete_with_retry(
            &p,
            &req(),
            RetryPolicy::new(3, Duration::from_secs(5)),
            |_, _, _| {},
        )
        .await;
        assert!(matches!(r, Err(ProviderError::Client { status: 400, .. })));
    }

    #[tokio::test(start_paused = true)]
    async fn gives_up_after_max_retries_with_backoff() {
        let errs = (0..3)
            .map(|_| {
                Err(ProviderError::Server {
                    status: 500,
                    retry_after: None,
                    message: "x".into(),
                })
            })
            .collect();
        let p = Scripted(Mutex::new(errs));
        let mut delays = vec![];
        let policy = RetryPolicy::new(2, Duration::from_secs(5));
        let policy = RetryPolicy {
            backoff: policy.backoff.without_jitter(),
            ..policy
        };
        let r = complete_with_retry(&p, &req(), policy, |_, _, d| delays.push(d)).await;
        assert!(matches!(r, Err(ProviderError::Server { .. })));
        assert_eq!(
            delays,
            vec![Duration::from_millis(500), Duration::from_millis(1000)]
        );
    }
}
