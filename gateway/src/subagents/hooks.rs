//! Sub-agent lifecycle hooks (`hooks.SubagentStart`, `hooks.SubagentStop`): a command run
//! with the event's JSON on its stdin, or an HTTP POST of the same JSON.
//!
//! A start hook runs before the child is created, inside the spawning tool call: a command
//! that exits non-zero, or outlives its timeout, refuses the spawn, and the model is told
//! its stderr. URL hooks only notify (their failures are logged). Stop hooks run as owned
//! tasks of the runtime beside the announce, never delaying it, and stop at shutdown.
//! Commands get a built environment (`exec`'s: no keys or tokens), run in their own process
//! group, and the whole group is killed at the timeout.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::config::hooks::HookEntry;
use crate::runtime::Runtime;
use crate::store::SubagentRow;

/// Most bytes of a command's stderr kept (the refusal reason).
const MAX_STDERR: usize = 4 * 1024;
/// Most bytes of an HTTP hook's answer read (then dropped).
const MAX_HTTP_BODY: usize = 64 * 1024;

/// How one hook went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookEnd {
    Ok,
    /// Ran and said no: the command's non-zero exit (its stderr), or an HTTP error status.
    Refused(String),
    /// Could not run, or outlived its timeout (then it was killed).
    Failed(String),
}

/// The payload of a `SubagentStart` event.
pub fn start_payload(
    run_id: &str,
    label: Option<&str>,
    agent_id: &str,
    task: &str,
    requester: &str,
) -> Value {
    json!({
        "event": "SubagentStart",
        "runId": run_id,
        "label": label,
        "agentId": agent_id,
        "task": task,
        "requesterSessionKey": requester,
    })
}

/// The payload of a `SubagentStop` event: the start's fields, how the child ended, its
/// result (its last answer) and its stats.
pub fn stop_payload(row: &SubagentRow, outcome: &str, result: Option<&str>) -> Value {
    let start = row.started_at.unwrap_or(row.created_at);
    let end = row.ended_at.unwrap_or(start);
    json!({
        "event": "SubagentStop",
        "runId": row.run_id,
        "label": row.label,
        "agentId": row.agent_id,
        "task": row.task,
        "requesterSessionKey": row.requester_session_key,
        "status": super::render::status_of(outcome),
        "outcome": outcome,
        "result": result,
        "error": row.error,
        "stats": {
            "runtimeMs": (end - start).max(0),
            "inputTokens": row.input_tokens,
            "outputTokens": row.output_tokens,
            "costUsd": row.cost_usd,
        },
    })
}

/// Run the start hooks in order; the first refusal (a non-zero exit or a timeout of a
/// command) is the reason the spawn is refused.
pub async fn run_start(rt: &Runtime, workspace: &Path, payload: &Value) -> Result<(), String> {
    let cfg = rt.config();
    let env =
        crate::agent::tools::exec::env::build(&cfg, &rt.http.keys, &|k| std::env::var(k).ok());
    for (i, hook) in cfg.hooks.subagent_start.iter().enumerate() {
        let end = run_one(rt, hook, &env, workspace, payload).await;
        match (&hook.command, end) {
            (_, HookEnd::Ok) => {}
            (Some(_), HookEnd::Refused(why) | HookEnd::Failed(why)) => {
                tracing::info!(hook = i, reason = %why, "SubagentStart hook refused a spawn");
                return Err(why);
            }
            (None, HookEnd::Refused(why) | HookEnd::Failed(why)) => {
                tracing::warn!(hook = i, error = %why, "SubagentStart URL hook failed");
            }
        }
    }
    Ok(())
}

/// Start the stop hooks for `payload` as owned tasks (nothing waits for them).
pub fn spawn_stop(rt: &Arc<Runtime>, workspace: std::path::PathBuf, payload: Value) {
    let cfg = rt.config();
    if cfg.hooks.subagent_stop.is_empty() {
        return;
    }
    let hooks = cfg.hooks.subagent_stop.clone();
    let env =
        crate::agent::tools::exec::env::build(&cfg, &rt.http.keys, &|k| std::env::var(k).ok());
    let rt2 = rt.clone();
    let cancel = rt.tasks.shutdown.child_token();
    rt.tasks.spawn(async move {
        for (i, hook) in hooks.iter().enumerate() {
            let end = tokio::select! {
                e = run_one(&rt2, hook, &env, &workspace, &payload) => e,
                _ = cancel.cancelled() => return,
            };
            if end != HookEnd::Ok {
                tracing::warn!(hook = i, outcome = ?end, "SubagentStop hook failed");
            }
        }
    });
}

async fn run_one(
    rt: &Runtime,
    hook: &HookEntry,
    env: &[(String, String)],
    cwd: &Path,
    payload: &Value,
) -> HookEnd {
    match (&hook.command, &hook.url) {
        (Some(cmd), _) => run_command(cmd, hook.timeout, env, cwd, payload).await,
        (None, Some(url)) => post(&rt.http, url, hook, payload).await,
        (None, None) => HookEnd::Failed("a hook with neither command nor url".into()),
    }
}

/// Run `command` under `/bin/sh -c` with `payload` on its stdin; its whole process group
/// is killed if it outlives `timeout`.
pub async fn run_command(
    command: &str,
    timeout: Duration,
    env: &[(String, String)],
    cwd: &Path,
    payload: &Value,
) -> HookEnd {
    // The workspace may not exist yet (it is made on first use).
    if let Err(e) = tokio::fs::create_dir_all(cwd).await {
        return HookEnd::Failed(format!(
            "the hook `{command}` has no working directory: {e}"
        ));
    }
    let mut cmd = tokio::process::Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .process_group(0)
        .kill_on_drop(true)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return HookEnd::Failed(format!("the hook `{command}` could not start: {e}")),
    };
    let pid = child.id();
    let mut stdin = child.stdin.take();
    let mut stderr = child.stderr.take();
    let body = payload.to_string();
    let run = async {
        let write = async {
            if let Some(mut w) = stdin.take() {
                // A hook that does not read its stdin is not an error.
                let _ = w.write_all(body.as_bytes()).await;
            }
        };
        let read = async {
            let mut err = Vec::new();
            if let Some(r) = stderr.as_mut() {
                let _ = r.take(MAX_STDERR as u64).read_to_end(&mut err).await;
            }
            err
        };
        let ((), err) = tokio::join!(write, read);
        (child.wait().await, err)
    };
    match tokio::time::timeout(timeout, run).await {
        Ok((Ok(status), _)) if status.success() => HookEnd::Ok,
        Ok((Ok(status), err)) => {
            let text = String::from_utf8_lossy(&err).trim().to_string();
            HookEnd::Refused(if text.is_empty() {
                format!("the hook `{command}` exited with {status}")
            } else {
                text
            })
        }
        Ok((Err(e), _)) => HookEnd::Failed(format!("the hook `{command}` failed: {e}")),
        Err(_) => {
            kill_group(pid);
            tracing::warn!(
                command,
                ?timeout,
                "a hook outlived its timeout and was killed"
            );
            HookEnd::Failed(format!(
                "the hook `{command}` timed out after {} and was killed",
                humantime::format_duration(timeout)
            ))
        }
    }
}

fn kill_group(pid: Option<u32>) {
    use rustix::process::{kill_process_group, Pid, Signal};
    if let Some(pid) = pid
        .and_then(|p| i32::try_from(p).ok())
        .and_then(Pid::from_raw)
    {
        let _ = kill_process_group(pid, Signal::KILL);
    }
}

/// POST `payload` to `url` with the hook's headers, bounded by its timeout; the answer's
/// body is read up to [`MAX_HTTP_BODY`] and dropped.
async fn post(http: &reqwest::Client, url: &str, hook: &HookEntry, payload: &Value) -> HookEnd {
    let mut req = http.post(url).json(payload).timeout(hook.timeout);
    for (k, v) in &hook.headers {
        req = req.header(k, v);
    }
    let call = async {
        let mut resp = req.send().await?;
        let status = resp.status();
        let mut read = 0usize;
        while let Some(chunk) = resp.chunk().await? {
            read += chunk.len();
            if read >= MAX_HTTP_BODY {
                break;
            }
        }
        Ok::<_, reqwest::Error>(status)
    };
    match tokio::time::timeout(hook.timeout, call).await {
        Ok(Ok(s)) if s.is_success() => HookEnd::Ok,
        Ok(Ok(s)) => HookEnd::Refused(format!("the hook {url} answered {s}")),
        Ok(Err(e)) => HookEnd::Failed(format!("the hook {url} failed: {e}")),
        Err(_) => HookEnd::Failed(format!("the hook {url} timed out")),
    }
}

#[cfg(test)]
#[path = "hooks_tests.rs"]
mod tests;
