//! How a run that ends without an answer is recorded: one pure table from the way it ended
//! to its status, its error and the notice sent to its chat.

use std::time::Duration;

use crate::store::RunStatus;

/// How a run ended without a final answer.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Failure {
    /// Its model cannot be used (the reason).
    NoModel(String),
    /// Stopped (`/stop`, `/new`, the API, a parent stopping its child).
    Stopped,
    /// Ran out of its run timeout.
    TimedOut(Duration),
    /// Showed no progress for this long (`staleAfter`, sub-agents only).
    Stale(Duration),
    /// Reached the step limit: `agents.defaults.maxSteps` model calls, or the agent's own
    /// `maxSteps` (the agent's id).
    StepLimit(u32, Option<String>),
    /// A model call failed for good (the error).
    Provider(String),
    /// The run could not go on (the reason).
    Fatal(String),
    /// Not started: the day's budget is spent (the message for the chat).
    Budget(String),
}

/// What a run that ended by a [`Failure`] records.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Outcome {
    pub(super) status: RunStatus,
    pub(super) error: String,
    /// Sent to the run's chat; `None`: nothing (a stop is answered by the command).
    pub(super) notice: Option<String>,
}

/// The status, error and notice of a run that ended by `failure`.
pub(super) fn outcome(failure: &Failure) -> Outcome {
    let failed = |error: String, notice: String| Outcome {
        status: RunStatus::Failed,
        error,
        notice: Some(notice),
    };
    match failure {
        Failure::NoModel(e) => failed(e.clone(), e.clone()),
        Failure::Stopped => Outcome {
            status: RunStatus::Cancelled,
            error: "stopped".into(),
            notice: None,
        },
        Failure::TimedOut(limit) => {
            let error = format!(
                "the run timed out after {}",
                humantime::format_duration(*limit)
            );
            Outcome {
                status: RunStatus::Timeout,
                notice: Some(format!("⚠️ {error}")),
                error,
            }
        }
        Failure::Stale(after) => {
            let error = format!(
                "stale: no progress for {}",
                humantime::format_duration(*after)
            );
            Outcome {
                status: RunStatus::Timeout,
                notice: Some(format!("⚠️ {error}")),
                error,
            }
        }
        Failure::StepLimit(n, agent) => {
            let limit = match agent {
                Some(id) => format!("maxSteps of agent `{id}`"),
                None => "agents.defaults.maxSteps".into(),
            };
            let error = format!("stopped after {n} model calls ({limit})");
            failed(error.clone(), format!("⚠️ {error}"))
        }
        Failure::Provider(e) => failed(e.clone(), format!("⚠️ The model call failed: {e}")),
        Failure::Fatal(e) => failed(e.clone(), format!("⚠️ The run failed: {e}")),
        Failure::Budget(message) => failed("daily budget spent".into(), message.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(f: Failure) -> (RunStatus, String, Option<String>) {
        let o = outcome(&f);
        (o.status, o.error, o.notice)
    }

    /// Catches: one way of ending recorded with another's status, error or chat notice
    /// (the texts users and the API see).
    #[test]
    fn each_failure_has_its_status_error_and_notice() {
        let s = |t: &str| t.to_string();
        assert_eq!(
            row(Failure::NoModel(s("no key"))),
            (RunStatus::Failed, s("no key"), Some(s("no key")))
        );
        assert_eq!(
            row(Failure::Stopped),
            (RunStatus::Cancelled, s("stopped"), None)
        );
        assert_eq!(
            row(Failure::TimedOut(Duration::from_secs(90))),
            (
                RunStatus::Timeout,
                s("the run timed out after 1m 30s"),
                Some(s("⚠️ the run timed out after 1m 30s"))
            )
        );
        assert_eq!(
            row(Failure::Stale(Duration::from_secs(300))),
            (
                RunStatus::Timeout,
                s("stale: no progress for 5m"),
                Some(s("⚠️ stale: no progress for 5m"))
            )
        );
        let steps = "stopped after 3 model calls (agents.defaults.maxSteps)";
        assert_eq!(
            row(Failure::StepLimit(3, None)),
            (RunStatus::Failed, s(steps), Some(format!("⚠️ {steps}")))
        );
        assert_eq!(
            row(Failure::Provider(s("HTTP 500"))),
            (
                RunStatus::Failed,
                s("HTTP 500"),
                Some(s("⚠️ The model call failed: HTTP 500"))
            )
        );
        assert_eq!(
            row(Failure::Fatal(s("bad"))),
            (
                RunStatus::Failed,
                s("bad"),
                Some(s("⚠️ The run failed: bad"))
            )
        );
    }
}
