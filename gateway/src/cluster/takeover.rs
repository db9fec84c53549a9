//! Shared mode: taking over the work of processes that died. Every renewal period each
//! process looks for runs and outbox rows whose leases have expired — their process was
//! killed, lost its host or its database connection — and takes them: a run is queued on
//! this process's lane (a running one resumes from its stored transcript), an outbox row
//! goes back to pending and is sent by whichever process claims it next, after its
//! delivered parts; a pending announce is worked on by whichever process takes its lease
//! (`announce:<run id>`). What a live process holds is never taken: its keeper renews it.
//! (Timers need no lease: firing one is one transaction that deletes it first.)

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::Member;
use crate::agent::dispatch;
use crate::runtime::Runtime;

/// Look for orphaned work every renewal period until `cancel` fires.
pub async fn run(rt: Arc<Runtime>, member: Member, cancel: CancellationToken) {
    let every = crate::standby::rhythm::renew_every(member.lease_timeout);
    loop {
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = cancel.cancelled() => return,
        }
        pass(&rt).await;
        // The leases of processes gone for a while (each start makes a new one).
        if let Err(e) = rt.store.forget_dead_processes(member.lease_timeout).await {
            tracing::warn!(error = %e, "cannot forget the leases of stopped processes");
        }
    }
}

/// One look: runs first (their replies go to the outbox), then outbox rows.
pub async fn pass(rt: &Arc<Runtime>) {
    match dispatch::take_over(rt).await {
        Ok(0) => {}
        Ok(runs) => tracing::warn!(
            runs,
            "took over runs whose process stopped renewing its leases"
        ),
        Err(e) => tracing::warn!(error = %e, "cannot look for runs to take over"),
    }
    // Pending announces that no live process works on (each is taken under its lease).
    match rt.store.orphaned_announces().await {
        Ok(pending) => {
            for row in pending {
                crate::subagents::announce::schedule(rt, &row.run_id);
            }
        }
        Err(e) => tracing::warn!(error = %e, "cannot look for announces to take over"),
    }
    match rt.store.reset_sending_outbox().await {
        Ok(0) => {}
        Ok(rows) => {
            tracing::warn!(
                rows,
                "re-sending messages whose sender stopped renewing its leases"
            );
            rt.tasks.outbox_wake.notify_one();
        }
        Err(e) => tracing::warn!(error = %e, "cannot look for messages to take over"),
    }
}
