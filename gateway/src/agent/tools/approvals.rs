//! Exec approvals in chat (docs/tools.md): a command that needs approval becomes a durable
//! request (`store::approvals`), posted through the outbox to the chat that owns the run
//! (a sub-agent's: its requester's chat) with buttons (where the platform has them) and the
//! text form `/approve <id> allow-once|allow-always|deny`, and announced on the event bus as `approval.requested`
//! (`approval.resolved` when it ends) so a web page can show it. The run waits until an
//! answer, `/stop`, or `tools.exec.approvalTimeout`; a shutdown leaves the request
//! pending, and the resumed run (which re-executes the call, see [`resumable_calls`])
//! waits on the same request.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use std::time::Duration;

use switchboard_channels::Origin;
use tokio::sync::Notify;

use super::{ToolContext, ToolError};
use crate::events::{ApprovalRequested, ApprovalResolved, Event};
use crate::runtime::Runtime;
use crate::store::{
    now_ms, ApprovalRow, ApprovalStatus, MessageRow, NewApproval, Role, Store, StoreError,
    ToolCallRecord,
};

/// How often a waiting run re-reads its request (besides being woken by `/approve`).
const RECHECK: Duration = Duration::from_secs(5);
/// Characters of a command shown in the chat.
const SHOWN_COMMAND: usize = 1000;

/// The runs waiting on a request, by request id: `/approve` wakes them.
#[derive(Default)]
pub struct ApprovalHub {
    waiters: Mutex<HashMap<String, Arc<Notify>>>,
}

impl ApprovalHub {
    fn waiter(&self, id: &str) -> Arc<Notify> {
        self.waiters
            .lock()
            .entry(id.to_string())
            .or_default()
            .clone()
    }

    fn forget(&self, id: &str) {
        self.waiters.lock().remove(id);
    }

    /// Wake the run waiting on request `id` (if any).
    pub fn wake(&self, id: &str) {
        if let Some(n) = self.waiters.lock().get(id) {
            n.notify_one();
        }
    }
}

/// What the command asks for.
pub struct Ask<'a> {
    pub workdir: &'a str,
    pub command: &'a str,
    /// Resolved executables `allow-always` would allow.
    pub executables: &'a [String],
    /// Why it is asked (what is not covered), shown in the chat.
    pub why: &'a str,
}

/// Ask the chat that owns the run, and wait for the outcome.
pub async fn ask(ctx: &ToolContext<'_>, ask: &Ask<'_>) -> Result<ApprovalStatus, ToolError> {
    let (origin, label) = owner(ctx).await?;
    let Some(origin) = origin else {
        return Err(ToolError::Model(
            "this command needs approval, but the run has no chat to ask (tools.exec.ask); it was not run".into(),
        ));
    };
    let timeout = ctx.cfg.tools.exec.approval_timeout;
    let store = &ctx.rt.store;
    let id = uuid::Uuid::new_v4().simple().to_string()[..8].to_string();
    let hub = ctx.rt.parts.get::<super::ToolRegistry>().approvals.clone();
    let (row, created) = store
        .request_approval(&NewApproval {
            id: &id,
            run_id: ctx.run_id,
            tool_call_id: ctx.call_id,
            session_key: ctx.session_key,
            agent_id: ctx.agent_id,
            label: label.as_deref(),
            origin: &origin,
            workdir: ask.workdir,
            command: ask.command,
            executables: ask.executables,
            expires_at: now_ms() + timeout.as_millis() as i64,
        })
        .await?;
    if row.status != ApprovalStatus::Pending {
        return Ok(row.status);
    }
    // Idempotent by key: a resumed run re-posting is a no-op.
    let sandboxed = ctx
        .cfg
        .agents
        .defaults
        .sandbox
        .for_agent(ctx.agent.and_then(|a| a.sandbox.as_ref()))
        .applies(ctx.agent_id, ctx.session_key);
    let text = request_text(&row, ask.why, sandboxed);
    let buttons = buttons(&row.id);
    store
        .enqueue_outbox_with_actions(
            &format!("approval:{}", row.id),
            &row.origin,
            &text,
            &buttons,
        )
        .await?;
    ctx.rt.tasks.outbox_wake.notify_one();
    if created {
        tracing::info!(approval = %row.id, run_id = ctx.run_id, command = %cut(ask.command, 200), "exec approval requested");
        ctx.rt.emit(Event::ApprovalRequested(ApprovalRequested {
            session_key: ctx.session_key.to_string(),
            id: row.id.clone(),
            run_id: row.run_id.clone(),
            tool_call_id: row.tool_call_id.clone(),
            agent_id: row.agent_id.clone(),
            label: row.label.clone(),
            workdir: row.workdir.clone(),
            command: row.command.clone(),
            executables: row.executables.clone(),
            expires_at: row.expires_at,
            channel: row.origin.channel.clone(),
            chat_id: row.origin.chat_id.clone(),
        }));
    }
    let notify = hub.waiter(&row.id);
    let mut guard = Waiting {
        rt: ctx.rt.clone(),
        id: row.id.clone(),
        run_id: row.run_id.clone(),
        session_key: ctx.session_key.to_string(),
        armed: true,
    };
    loop {
        let Some(now) = store.approval(&row.id).await? else {
            return Err(ToolError::Fatal(format!(
                "approval request {} vanished",
                row.id
            )));
        };
        if now.status != ApprovalStatus::Pending {
            guard.armed = false;
            hub.forget(&row.id);
            return Ok(now.status);
        }
        let left = now.expires_at - now_ms();
        if left <= 0 {
            guard.armed = false;
            hub.forget(&row.id);
            if store
                .close_approval(&row.id, ApprovalStatus::Expired)
                .await?
            {
                ctx.rt.emit(Event::ApprovalResolved(ApprovalResolved {
                    session_key: ctx.session_key.to_string(),
                    id: row.id.clone(),
                    run_id: row.run_id.clone(),
                    decision: ApprovalStatus::Expired,
                    by: None,
                }));
                let note = format!(
                    "⌛ Approval {} expired after {} without an answer: the command was not run.",
                    row.id,
                    humantime::format_duration(timeout)
                );
                store
                    .enqueue_outbox(&format!("approval-expired:{}", row.id), &row.origin, &note)
                    .await?;
                ctx.rt.tasks.outbox_wake.notify_one();
            }
            continue;
        }
        let wait = RECHECK.min(Duration::from_millis(left as u64));
        tokio::select! {
            _ = notify.notified() => {}
            _ = tokio::time::sleep(wait) => {}
            _ = ctx.cancel.cancelled() => {
                if ctx.rt.tasks.shutdown.is_cancelled() {
                    // Shutdown: no result may be recorded for this call (the resumed run
                    // re-executes it and waits on the same request); the run drops us.
                    std::future::pending::<()>().await;
                }
                return Err(ToolError::Model("the run was stopped while waiting for approval".into()));
            }
        }
    }
}

/// While a run waits on a request: if the wait ends without an outcome (the run was
/// stopped or timed out), the request is cancelled — unless the gateway is shutting down,
/// in which case it stays pending for the resumed run.
struct Waiting {
    rt: Arc<Runtime>,
    id: String,
    run_id: String,
    session_key: String,
    armed: bool,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        self.rt
            .parts
            .get::<super::ToolRegistry>()
            .approvals
            .forget(&self.id);
        if !self.armed || self.rt.tasks.shutdown.is_cancelled() {
            return;
        }
        let (rt, id, run_id, key) = (
            self.rt.clone(),
            std::mem::take(&mut self.id),
            std::mem::take(&mut self.run_id),
            std::mem::take(&mut self.session_key),
        );
        self.rt.tasks.spawn(async move {
            match rt
                .store
                .close_approval(&id, ApprovalStatus::Cancelled)
                .await
            {
                Ok(true) => rt.emit(Event::ApprovalResolved(ApprovalResolved {
                    session_key: key,
                    id,
                    run_id,
                    decision: ApprovalStatus::Cancelled,
                    by: None,
                })),
                Ok(false) => {}
                Err(e) => {
                    tracing::warn!(approval = %id, error = %e, "cannot cancel an approval request")
                }
            }
        });
    }
}

/// The chat that owns the run (a sub-agent's: its requester's) and the sub-agent's label.
async fn owner(ctx: &ToolContext<'_>) -> Result<(Option<Origin>, Option<String>), ToolError> {
    // An HTTP API caller or an internal origin has no chat to answer in.
    let chat = crate::outbox::is_chat;
    if ctx.is_subagent {
        let row = ctx.rt.store.subagent_by_child(ctx.session_key).await?;
        return Ok(match row {
            Some(r) => {
                let label = r.label.clone().unwrap_or_else(|| cut(&r.task, 60));
                (r.requester_origin.clone().filter(chat), Some(label))
            }
            None => (None, None),
        });
    }
    Ok((ctx.origin.filter(|o| chat(o)).cloned(), None))
}

/// The message posted to the chat. The command is shown verbatim in a code block (never
/// rendered as Markdown: Telegram gets it as `<pre>`, HTML-escaped; Discord in a fence
/// the command cannot close), with its working folder and whether it runs sandboxed.
pub fn request_text(row: &ApprovalRow, why: &str, sandboxed: bool) -> String {
    let agent = match &row.label {
        Some(label) => format!("{} (sub-agent \"{label}\")", row.agent_id),
        None => row.agent_id.clone(),
    };
    let minutes = ((row.expires_at - row.created_at).max(0) / 60_000).max(1);
    let sandbox = if sandboxed {
        "yes"
    } else {
        "no (it runs with the gateway's own rights)"
    };
    format!(
        "🔐 Approval needed [{id}]\nAgent: {agent}\nDirectory: {dir}\nSandboxed: {sandbox}\nWhy: {why}\nCommand:\n{cmd}\n\
         Reply /approve {id} allow-once|allow-always|deny (expires in {minutes} min)",
        id = row.id,
        dir = code_span(&row.workdir),
        cmd = code_block(&cut(&row.command, SHOWN_COMMAND)),
    )
}

/// `text` as a fenced code block that nothing in it can close: every run of backticks is
/// broken before its third by a zero-width space (Discord ends a block at the first three
/// backticks anywhere; CommonMark at a line of three). What the reader sees is the text.
pub fn code_block(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    out.push_str("```\n");
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            if run == 3 {
                out.push('\u{200B}');
                run = 1;
            }
        } else {
            run = 0;
        }
        out.push(c);
    }
    out.push_str("\n```");
    out
}

/// `text` as inline code: delimited by one backtick more than its longest run of them
/// (padded with a space where it starts or ends with one), so it is shown as written.
pub fn code_span(text: &str) -> String {
    let text = text.replace(['\n', '\r'], " ");
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// The request message once settled (what a pressed button turns it into): the outcome,
/// who settled it when a press did, and what was asked; no buttons, no text form.
pub fn settled_text(row: &ApprovalRow, by: Option<&str>) -> String {
    let outcome = match row.status {
        ApprovalStatus::Pending => "⏳ waiting for an answer",
        ApprovalStatus::AllowOnce => "✅ allowed once",
        ApprovalStatus::AllowAlways => "✅ allowed always",
        ApprovalStatus::Denied => "🚫 denied",
        ApprovalStatus::Cancelled => "✖️ cancelled (the run was stopped)",
        ApprovalStatus::Expired => "⌛ expired without an answer",
    };
    let by = by
        .map(|b| format!(" by {}", cut(b, 64)))
        .unwrap_or_default();
    let agent = match &row.label {
        Some(label) => format!("{} (sub-agent \"{label}\")", row.agent_id),
        None => row.agent_id.clone(),
    };
    format!(
        "🔐 Approval [{id}]: {outcome}{by}\nAgent: {agent}\nDirectory: {dir}\nCommand:\n{cmd}",
        id = row.id,
        dir = code_span(&row.workdir),
        cmd = code_block(&cut(&row.command, SHOWN_COMMAND)),
    )
}

fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}

/// The tool calls of the last assistant message of `rows` that have no result yet.
pub fn open_calls(rows: &[MessageRow]) -> Vec<ToolCallRecord> {
    let Some(pos) = rows.iter().rposition(|m| m.role != Role::Tool) else {
        return Vec::new();
    };
    let last = &rows[pos];
    if last.role != Role::Assistant {
        return Vec::new();
    }
    let answered: Vec<&str> = rows[pos + 1..]
        .iter()
        .filter_map(|m| m.tool_call_id.as_deref())
        .collect();
    last.tool_calls
        .iter()
        .filter(|c| !answered.contains(&c.id.as_str()))
        .cloned()
        .collect()
}

/// The tool calls a resumed run re-executes because of an approval: those among `open`
/// (see [`open_calls`]) that have an approval request (so the request is found again and
/// not re-asked). Other unanswered calls are not re-run (they get the "interrupted"
/// result), except `task` calls whose child exists (`subagents::task::resumable_calls`).
pub async fn resumable_calls(
    store: &Store,
    run_id: &str,
    open: &[ToolCallRecord],
) -> Result<Vec<ToolCallRecord>, StoreError> {
    if open.is_empty() {
        return Ok(Vec::new());
    }
    let asked = store.approvals_of_run(run_id).await?;
    Ok(open
        .iter()
        .filter(|c| asked.iter().any(|a| a.tool_call_id == c.id))
        .cloned()
        .collect())
}

/// Prefix of the action ids of a request's buttons: `approve:<id>:<decision>`, the
/// decision in the words of the text form (`/approve`'s parser reads them back:
/// `commands::approve::parse_press`, tested against these).
pub const ACTION_PREFIX: &str = "approve:";

/// The buttons of request `id`: allow once, allow always, deny.
pub fn buttons(id: &str) -> Vec<switchboard_channels::Action> {
    [
        ("✅ Allow once", "allow-once"),
        ("♾️ Allow always", "allow-always"),
        ("🚫 Deny", "deny"),
    ]
    .into_iter()
    .map(|(label, word)| {
        switchboard_channels::Action::new(label, format!("{ACTION_PREFIX}{id}:{word}"))
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(crate::proptest_cases::config())]

        /// Any command (the model writes it: hostile) stays inside its code block: no
        /// three backticks in a row between the fences, and without the zero-width spaces
        /// it is the command as written. Catches: a command closing the fence and
        /// showing the approver Markdown of its choosing.
        #[test]
        fn a_command_cannot_close_its_code_block(cmd in "[`a-z \n*_~\u{200B}]{0,40}") {
            let block = code_block(&cmd);
            let inner = &block[4..block.len() - 4];
            prop_assert!(block.starts_with("```\n") && block.ends_with("\n```"));
            prop_assert!(!inner.contains("```"), "{:?}", block);
            let zwsp_in = cmd.matches('\u{200B}').count();
            let shown: String = inner.chars().filter(|c| *c != '\u{200B}').collect();
            let original: String = cmd.chars().filter(|c| *c != '\u{200B}').collect();
            prop_assert_eq!(shown, original);
            let zwsp_out = inner.matches('\u{200B}').count();
            prop_assert!(zwsp_out >= zwsp_in);
        }

        /// A folder in inline code: delimited by more backticks than any run inside it.
        /// Catches: a folder name ending the code span early.
        #[test]
        fn a_folder_cannot_close_its_code_span(dir in "[`a-z/ ]{0,30}") {
            let span = code_span(&dir);
            let fence = span.chars().take_while(|c| *c == '`').count();
            let longest = dir.split(|c| c != '`').map(str::len).max().unwrap_or(0);
            prop_assert!(fence > longest);
            prop_assert!(span.ends_with(&"`".repeat(fence)));
        }
    }

    #[test]
    fn the_request_shows_the_command_in_a_block_with_folder_and_sandbox() {
        let row = ApprovalRow {
            id: "a1b2c3d4".into(),
            run_id: "r".into(),
            tool_call_id: "c".into(),
            session_key: "agent:main:main".into(),
            agent_id: "main".into(),
            label: None,
            origin: Origin::webchat("main", switchboard_channels::ChatKind::Direct),
            workdir: "/w/my_dir".into(),
            command: "echo ```hi```".into(),
            executables: vec![],
            status: ApprovalStatus::Pending,
            decided_by: None,
            created_at: 0,
            expires_at: 120_000,
            resolved_at: None,
        };
        assert_eq!(
            request_text(&row, "echo is not in the allowlist", true),
            "🔐 Approval needed [a1b2c3d4]\nAgent: main\nDirectory: `/w/my_dir`\n\
             Sandboxed: yes\n\
             Why: echo is not in the allowlist\nCommand:\n```\necho ``\u{200B}`hi``\u{200B}`\n```\n\
             Reply /approve a1b2c3d4 allow-once|allow-always|deny (expires in 2 min)"
        );
    }
}
