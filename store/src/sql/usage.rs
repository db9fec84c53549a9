//! Usage and cost statements (read back from `runs`), the same on both engines. The sums
//! are cast to `BIGINT`: PostgreSQL's sum of `BIGINT` is `NUMERIC`.

use super::{sql, Sql};

/// A model call of a running run (`CallUsage`): steps, input_tokens, output_tokens,
/// context_tokens, cost_usd, run_id.
pub(crate) const MODEL_CALL: Sql = sql!(
    "UPDATE runs SET steps = $1, input_tokens = $2, output_tokens = $3, context_tokens = $4,
         cost_usd = $5
     WHERE id = $6 AND status = 'running'"
);

/// `sql!` of the totals' columns over the rows the tail picks, after `head`'s columns.
macro_rules! totals {
    ($head:literal; $($tail:tt)+) => {
        sql!($head "COUNT(*) AS runs,
                 CAST(COALESCE(SUM(input_tokens), 0) AS BIGINT) AS input_tokens,
                 CAST(COALESCE(SUM(output_tokens), 0) AS BIGINT) AS output_tokens,
                 SUM(cost_usd) AS cost_usd FROM runs" $($tail)+)
    };
}

/// A session's totals per model (a run without one counts as `?`), the costliest first:
/// session_key, session_id (the key reaches its runs through the index on `session_key`).
pub(crate) const SESSION_BY_MODEL: Sql = totals!("SELECT COALESCE(model, '?') AS model, ";
    " WHERE session_key = $1 AND session_id = $2 GROUP BY model ORDER BY SUM(cost_usd) DESC NULLS LAST, model"
);

/// A session's totals: session_key, session_id.
pub(crate) const SESSION: Sql = totals!("SELECT "; " WHERE session_key = $1 AND session_id = $2");

/// The totals since a time, of one agent or all: since, agent_id.
pub(crate) const SINCE: Sql = totals!("SELECT ";
    " WHERE created_at >= $1 AND (" [cast 2 text] " IS NULL OR agent_id = $2)"
);

/// A session's newest context size: session_key, session_id.
pub(crate) const SESSION_CONTEXT: Sql = sql!(
    "SELECT context_tokens FROM runs
     WHERE session_key = $1 AND session_id = $2 AND context_tokens IS NOT NULL
     ORDER BY COALESCE(started_at, created_at) DESC, " [rowid] " DESC LIMIT 1"
);
