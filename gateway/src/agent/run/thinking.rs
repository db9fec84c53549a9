//! The thinking level of a run: a child's from its spawn (the `thinking` argument, else its
//! agent definition's, else `agents.defaults.subagents.thinking`), a top-level run's from
//! its session's `/think` choice, else its agent definition.

use crate::agent::provider::Thinking;
use crate::agents::AgentDef;
use crate::config::Config;
use crate::runtime::Runtime;
use crate::store::RunRow;

/// The level, or `None` for the provider's default. A stored value that no longer parses
/// (written by an older build) is logged and ignored.
pub(crate) async fn of_run(
    rt: &Runtime,
    run: &RunRow,
    is_subagent: bool,
    def: Option<&AgentDef>,
    cfg: &Config,
    session: Option<&str>,
) -> Option<Thinking> {
    let stored = if is_subagent {
        match rt.store.subagent_by_child(&run.session_key).await {
            Ok(row) => row.and_then(|r| r.thinking),
            Err(e) => {
                tracing::warn!(run_id = %run.id, error = %e, "could not read the child's thinking level");
                None
            }
        }
        .or_else(|| cfg.agents.defaults.subagents.thinking.clone())
    } else {
        session.map(str::to_string)
    };
    let text = stored.or_else(|| def.and_then(|d| d.thinking.clone()))?;
    match text.parse() {
        Ok(level) => Some(level),
        Err(e) => {
            tracing::warn!(run_id = %run.id, error = %e, "thinking level ignored");
            None
        }
    }
}
