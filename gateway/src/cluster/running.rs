//! Which run of a session is running now, whichever process runs it. One process acting
//! (SQLite, standby mode) knows its runs in memory; in shared mode another process may run
//! a session's run, and the store says so (`/status`'s "Running:", `GET /api/sessions`'
//! `running`).

use std::collections::HashMap;

use crate::runtime::Runtime;
use crate::store::StoreError;

/// The id of `session_key`'s running run, if any.
pub async fn of_session(rt: &Runtime, session_key: &str) -> Result<Option<String>, StoreError> {
    if let Some(local) = rt.active_run(session_key) {
        return Ok(Some(local.run_id));
    }
    if rt.home.member.is_none() {
        return Ok(None);
    }
    Ok(rt
        .store
        .running_runs()
        .await?
        .into_iter()
        .find_map(|(key, id)| (key == session_key).then_some(id)))
}

/// Every running run's id, by session key.
pub async fn by_session(rt: &Runtime) -> Result<HashMap<String, String>, StoreError> {
    let mut out: HashMap<String, String> = if rt.home.member.is_some() {
        rt.store.running_runs().await?.into_iter().collect()
    } else {
        HashMap::new()
    };
    // This process's own runs as it knows them: a run that has just started here may not
    // be `running` in the store yet.
    out.extend(
        rt.runs
            .all()
            .into_iter()
            .map(|(key, run)| (key, run.run_id)),
    );
    Ok(out)
}
