//! The arguments of `sessions_spawn`, checked before anything is stored: types, lengths,
//! and the run timeout's range. Every problem is a [`ToolError::Model`] the model can act on.

use serde_json::Value;

use crate::agent::provider::{Thinking, UnknownThinking};
use crate::agent::tools::{args, ToolError};
use crate::agents::Isolation;
use crate::config::limits::MAX_RUN_TIMEOUT_SECS;

/// Longest task, in characters.
pub const MAX_TASK_CHARS: usize = 32_000;
/// Longest label, in characters (it is shown in `/subagents list` and the announce).
pub const MAX_LABEL_CHARS: usize = 200;
/// Longest `agentId`, `model` or `thinking`, in characters.
pub const MAX_NAME_CHARS: usize = 200;

pub use crate::store::Cleanup;

/// Checked `sessions_spawn` arguments. Optional strings are trimmed; blank ones are unset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnArgs {
    pub task: String,
    pub label: Option<String>,
    pub agent_id: Option<String>,
    pub model: Option<String>,
    pub thinking: Option<String>,
    /// `worktree` | `none`; `None`: the agent definition's.
    pub isolation: Option<Isolation>,
    /// `None`: the configured default. `Some(0)`: no timeout.
    pub run_timeout_seconds: Option<u64>,
    pub cleanup: Cleanup,
}

/// Checks the arguments object of a `sessions_spawn` call.
pub fn parse(v: &Value) -> Result<SpawnArgs, ToolError> {
    let task = args::req_str(v, "task", MAX_TASK_CHARS)?.to_string();
    let cleanup = match args::opt_str(v, "cleanup", MAX_NAME_CHARS)? {
        None | Some("keep") => Cleanup::Keep,
        Some("delete") => Cleanup::Delete,
        Some(other) => {
            return Err(ToolError::Model(format!(
                "`cleanup` must be \"keep\" or \"delete\", not {other:?}"
            )))
        }
    };
    Ok(SpawnArgs {
        task,
        label: args::opt_str(v, "label", MAX_LABEL_CHARS)?.map(str::to_string),
        agent_id: args::opt_str(v, "agentId", MAX_NAME_CHARS)?.map(str::to_string),
        model: args::opt_str(v, "model", MAX_NAME_CHARS)?.map(str::to_string),
        thinking: thinking_arg(v)?,
        isolation: match args::opt_str(v, "isolation", MAX_NAME_CHARS)? {
            None => None,
            Some("none") => Some(Isolation::None),
            Some("worktree") => Some(Isolation::Worktree),
            Some(other) => {
                return Err(ToolError::Model(format!(
                    "`isolation` must be \"none\" or \"worktree\", not {other:?}"
                )))
            }
        },
        run_timeout_seconds: args::opt_u64(
            v,
            "runTimeoutSeconds",
            0,
            MAX_RUN_TIMEOUT_SECS,
            "seconds (0 = no timeout)",
        )?,
        cleanup,
    })
}

/// `thinking`, checked against the accepted levels and stored in its canonical spelling.
fn thinking_arg(v: &Value) -> Result<Option<String>, ToolError> {
    let Some(text) = args::opt_str(v, "thinking", MAX_NAME_CHARS)? else {
        return Ok(None);
    };
    let level: Thinking = text
        .parse()
        .map_err(|e: UnknownThinking| ToolError::Model(format!("`thinking`: {e}")))?;
    Ok(Some(level.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn err(v: Value) -> String {
        match parse(&v) {
            Err(ToolError::Model(m)) => m,
            other => panic!("expected a tool error, got {other:?}"),
        }
    }

    #[test]
    fn accepts_and_trims() {
        assert_eq!(
            parse(&json!({"task": " do it ", "label": " l ", "agentId": "", "runTimeoutSeconds": 30, "cleanup": "delete", "extra": 1})).ok(),
            Some(SpawnArgs {
                task: "do it".into(),
                label: Some("l".into()),
                agent_id: None,
                model: None,
                thinking: None,
                isolation: None,
                run_timeout_seconds: Some(30),
                cleanup: Cleanup::Delete,
            })
        );
        let a = parse(&json!({"task": "t", "runTimeoutSeconds": 604800.0, "model": null}))
            .expect("valid");
        assert_eq!(a.run_timeout_seconds, Some(MAX_RUN_TIMEOUT_SECS));
        assert_eq!(
            parse(&json!({"task": "t"}))
                .ok()
                .map(|a| a.run_timeout_seconds),
            Some(None)
        );
    }

    /// Catches: `runTimeoutSeconds: 10000000000000000` wrapping to a negative timeout (the
    /// child ended at once with `Status: timeout`) and arguments of the wrong type or size
    /// passing silently.
    #[test]
    fn out_of_range_and_wrong_types_are_told_to_the_model() {
        let range =
            "`runTimeoutSeconds` must be a whole number from 0 to 604800 seconds (0 = no timeout)";
        assert_eq!(
            err(json!({"task": "t", "runTimeoutSeconds": 10_000_000_000_000_000u64})),
            format!("{range}, got 10000000000000000")
        );
        assert_eq!(
            err(json!({"task": "t", "runTimeoutSeconds": 604801})),
            format!("{range}, got 604801")
        );
        assert_eq!(
            err(json!({"task": "t", "runTimeoutSeconds": -5})),
            format!("{range}, got -5")
        );
        assert_eq!(
            err(json!({"task": "t", "runTimeoutSeconds": 1.5})),
            format!("{range}, got 1.5")
        );
        assert_eq!(
            err(json!({"task": "t", "runTimeoutSeconds": 1e300})),
            format!("{range}, got 1e+300")
        );
        assert_eq!(
            err(json!({"task": "t", "thinking": "extreme"})),
            "`thinking`: unknown thinking level \"extreme\"; accepted: off, minimal, low, medium, high"
        );
        assert_eq!(
            parse(&json!({"task": "t", "thinking": " HIGH "}))
                .map(|a| a.thinking)
                .ok(),
            Some(Some("high".to_string()))
        );
        assert_eq!(
            err(json!({"task": "t", "runTimeoutSeconds": "60"})),
            format!("{range}, got a string")
        );
        assert_eq!(err(json!({})), "missing required string argument `task`");
        assert_eq!(
            err(json!({"task": 5})),
            "`task` must be a string, got a number"
        );
        assert_eq!(
            err(json!({"task": "t", "label": ["x"]})),
            "`label` must be a string, got an array"
        );
        assert_eq!(
            err(json!({"task": "t", "label": "x".repeat(201)})),
            "`label` is longer than 200 characters"
        );
        assert_eq!(
            err(json!({"task": "é".repeat(32_001)})),
            "`task` is longer than 32000 characters"
        );
        assert_eq!(
            err(json!({"task": "t", "cleanup": "burn"})),
            "`cleanup` must be \"keep\" or \"delete\", not \"burn\""
        );
    }

    fn value() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            ".{0,12}".prop_map(Value::String),
            (0usize..40_000).prop_map(|n| Value::String("x".repeat(n))),
            Just(json!([])),
            Just(json!({"a": 1})),
        ]
    }

    proptest! {
        #![proptest_config(crate::proptest_cases::config())]

        /// Catches: a panic on any arguments, or accepted values outside their bounds.
        #[test]
        fn any_arguments_are_checked_without_panic(
            fields in prop::collection::btree_map(
                prop::sample::select(&["task", "label", "agentId", "model", "thinking", "runTimeoutSeconds", "cleanup", "other"][..]),
                value(),
                0..8,
            ),
        ) {
            let v = Value::Object(fields.into_iter().map(|(k, v)| (k.to_string(), v)).collect());
            if let Ok(a) = parse(&v) {
                prop_assert!(!a.task.is_empty() && a.task.chars().count() <= MAX_TASK_CHARS);
                prop_assert!(a.label.as_ref().is_none_or(|l| l.chars().count() <= MAX_LABEL_CHARS));
                prop_assert!(a.run_timeout_seconds.is_none_or(|s| s <= MAX_RUN_TIMEOUT_SECS));
            }
        }
    }
}
