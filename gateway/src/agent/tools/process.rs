//! Background commands: the table of commands started with `exec {background: true}` (or
//! still running after `yieldMs`), and the `process` tool that lists, polls, reads, writes
//! to and kills them. Commands are seen only from the session that started them; a
//! finished one is kept (bounded) until its end was read. The commands' driver tasks are
//! owned by the runtime's task tracker and kill their group at shutdown.

use std::sync::Arc;

use parking_lot::Mutex;

use async_trait::async_trait;
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;

use super::exec::job::Job;
use super::exec::output::fit_json;
use super::{opt_arg, str_arg, Tool, ToolContext, ToolError};
use crate::agent::provider::ToolSpec;

/// Most background commands running at once (all sessions).
pub const MAX_RUNNING: usize = 16;
/// Most finished commands kept until read; past that the oldest are dropped.
const MAX_FINISHED: usize = 32;
/// Largest `data` one `process write` sends.
const MAX_WRITE: usize = 64 * 1024;
/// How long one `process write` waits for the command to take its data.
const WRITE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

struct Entry {
    job: Arc<Job>,
}

#[derive(Default)]
pub struct Processes {
    entries: Mutex<Vec<Entry>>,
}

impl Processes {
    /// Whether another background command may start.
    pub fn has_room(&self) -> bool {
        running(&self.entries.lock()) < MAX_RUNNING
    }

    /// Keep `job` as a background command, unless [`MAX_RUNNING`] are running already
    /// (checked and added under one lock: two calls at once cannot both take the last
    /// place). `false`: not added.
    #[must_use]
    pub fn try_add(&self, job: Arc<Job>) -> bool {
        let mut entries = self.entries.lock();
        if running(&entries) >= MAX_RUNNING {
            return false;
        }
        entries.push(Entry { job });
        let finished = entries.iter().filter(|e| e.job.ended().is_some()).count();
        let mut extra = finished.saturating_sub(MAX_FINISHED);
        entries.retain(|e| {
            if extra > 0 && e.job.ended().is_some() {
                extra -= 1;
                return false;
            }
            true
        });
        true
    }

    fn get(&self, session_key: &str, id: &str) -> Option<Arc<Job>> {
        self.entries
            .lock()
            .iter()
            .find(|e| e.job.id == id && e.job.session_key == session_key)
            .map(|e| e.job.clone())
    }

    fn list(&self, session_key: &str) -> Vec<Arc<Job>> {
        self.entries
            .lock()
            .iter()
            .filter(|e| e.job.session_key == session_key)
            .map(|e| e.job.clone())
            .collect()
    }

    /// A finished command whose end was read is dropped.
    fn forget(&self, id: &str) {
        self.entries.lock().retain(|e| e.job.id != id);
    }

    /// Kill every command (shutdown does this through the drivers; tests use it).
    pub fn kill_all(&self) {
        for e in self.entries.lock().iter() {
            e.job.kill("killed");
        }
    }
}

/// How many of `entries` are still running.
fn running(entries: &[Entry]) -> usize {
    entries.iter().filter(|e| e.job.ended().is_none()).count()
}

pub struct ProcessTool {
    procs: Arc<Processes>,
}

impl ProcessTool {
    pub fn new(procs: Arc<Processes>) -> Self {
        ProcessTool { procs }
    }
}

/// A command's state; a finished one with its end (exit code, duration) but no output.
fn status(job: &Job) -> Value {
    let (state, end) = match job.ended() {
        None => ("running", Value::Null),
        Some((end, took)) => ("finished", job.result_parts(&end, took).0),
    };
    json!({
        "sessionId": job.id,
        "status": state,
        "command": job.command,
        "pid": job.pid,
        "runningForMs": job.started.elapsed().as_millis() as u64,
        "end": end,
    })
}

#[async_trait]
impl Tool for ProcessTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "process".into(),
            description: "Manage background commands started by exec: list them; poll one (status and new output); log (all kept output); write data to its stdin; kill it.".into(),
            parameters: json!({"type": "object", "properties": {
                "action": {"type": "string", "enum": ["list", "poll", "log", "write", "kill"]},
                "sessionId": {"type": "string"},
                "data": {"type": "string"}
            }, "required": ["action"]}),
        }
    }

    async fn call(&self, ctx: &ToolContext<'_>, args: Value) -> Result<String, ToolError> {
        let action = str_arg(&args, "action")?;
        if action == "list" {
            let list: Vec<Value> = self
                .procs
                .list(ctx.session_key)
                .iter()
                .map(|j| {
                    json!({"sessionId": j.id, "command": j.command, "pid": j.pid,
                           "status": if j.ended().is_some() { "finished" } else { "running" }})
                })
                .collect();
            return Ok(json!({"processes": list}).to_string());
        }
        if !matches!(action, "poll" | "log" | "write" | "kill") {
            return Err(ToolError::Model(format!(
                "unknown action `{action}`; use list, poll, log, write or kill"
            )));
        }
        let id = str_arg(&args, "sessionId")?;
        let Some(job) = self.procs.get(ctx.session_key, id) else {
            return Err(ToolError::Model(format!(
                "no background command `{id}` in this session (process list shows them; a finished one is dropped once its end was read)"
            )));
        };
        match action {
            "poll" => {
                // The state first: output read after it holds everything up to that end.
                let out = status(&job);
                let new = job.output.lock().take_new();
                if out["status"] == "finished" {
                    self.procs.forget(&job.id);
                }
                Ok(fit_json(out, "newOutput", new))
            }
            "log" => {
                let out = status(&job);
                if out["status"] == "finished" {
                    self.procs.forget(&job.id);
                }
                let log = job.output.lock().render();
                Ok(fit_json(out, "output", log))
            }
            "write" => {
                let data = opt_arg(&args, "data", "a string", |v| {
                    v.as_str().map(str::to_string)
                })?
                .ok_or_else(|| ToolError::Model("`write` needs `data`".into()))?;
                if data.len() > MAX_WRITE {
                    return Err(ToolError::Model(format!(
                        "`data` is {} bytes; at most {MAX_WRITE}",
                        data.len()
                    )));
                }
                let mut stdin = job.stdin.lock().await;
                let Some(pipe) = stdin.as_mut() else {
                    return Err(ToolError::Model(
                        "this command has no stdin to write to (start it with exec background: true)".into(),
                    ));
                };
                // A command that does not read its input fills the pipe: the write gives
                // up rather than hold the call (and this command's stdin) until the run
                // times out.
                match tokio::time::timeout(WRITE_TIMEOUT, pipe.write_all(data.as_bytes())).await {
                    Ok(written) => written.map_err(|e| {
                        ToolError::Model(format!("cannot write to the command: {e}"))
                    })?,
                    Err(_) => {
                        return Err(ToolError::Model(format!(
                        "the command did not read its input within {} s (its input pipe is full); \
                             part of `data` may have been written",
                        WRITE_TIMEOUT.as_secs()
                    )))
                    }
                }
                let _ = pipe.flush().await;
                Ok(json!({"sessionId": job.id, "written": data.len()}).to_string())
            }
            "kill" => {
                job.kill("killed by the process tool");
                let (end, took) = job.wait().await;
                self.procs.forget(&job.id);
                Ok(job.result(&end, took))
            }
            other => Err(ToolError::Model(format!(
                "unknown action `{other}`; use list, poll, log, write or kill"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio_util::sync::CancellationToken;
    use tokio_util::task::TaskTracker;

    use super::*;
    use crate::agent::tools::exec::job::Spec;

    fn start(command: &str, tasks: &TaskTracker, shutdown: &CancellationToken) -> Arc<Job> {
        let dir = std::env::temp_dir();
        let env = vec![("PATH".to_string(), "/usr/bin:/bin".to_string())];
        let spec = Spec {
            command,
            line: crate::agent::tools::exec::job::Line::Shell(command),
            workdir: &dir,
            env: &env,
            timeout: Duration::from_secs(60),
            stdin: false,
            session_key: "s",
            sandbox: None,
        };
        Job::start(&spec, tasks, shutdown).expect("starts")
    }

    /// At most [`MAX_RUNNING`] commands run in the background, and a full table refuses
    /// the next one (a command yielding to the background included); finished ones are
    /// kept up to [`MAX_FINISHED`], the oldest dropped first.
    /// Catches: a table that grows without bound, or a yielded command that skips the
    /// running limit.
    #[tokio::test]
    async fn the_table_is_bounded() {
        let (tasks, shutdown) = (TaskTracker::new(), CancellationToken::new());
        let procs = Processes::default();
        let running: Vec<_> = (0..MAX_RUNNING)
            .map(|_| start("sleep 30", &tasks, &shutdown))
            .collect();
        for job in &running {
            assert!(procs.try_add(job.clone()));
        }
        assert!(!procs.has_room());
        let one_more = start("sleep 30", &tasks, &shutdown);
        assert!(!procs.try_add(one_more.clone()), "past the running limit");
        one_more.kill("test");
        procs.kill_all();
        for job in &running {
            job.wait().await;
        }
        assert!(procs.has_room());

        let mut finished = Vec::new();
        for _ in 0..MAX_FINISHED + 8 {
            let job = start("true", &tasks, &shutdown);
            job.wait().await;
            assert!(
                procs.try_add(job.clone()),
                "finished commands never fill the table"
            );
            finished.push(job);
        }
        let kept: Vec<String> = procs.list("s").iter().map(|j| j.id.clone()).collect();
        assert_eq!(kept.len(), MAX_FINISHED);
        let newest: Vec<String> = finished[8..].iter().map(|j| j.id.clone()).collect();
        assert_eq!(kept, newest, "the oldest finished commands are dropped");
        shutdown.cancel();
        tasks.close();
        tasks.wait().await;
    }
}
