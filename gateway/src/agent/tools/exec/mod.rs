//! `exec` (`group:runtime`): run a command in the workspace (or `workdir` inside it), in
//! its own process group, with a scrubbed environment (`env`), a timeout, and bounded
//! output (`output`), under bubblewrap where the sandbox applies (`sandbox`). The exec
//! policy (`tools.exec.security`/`ask`/`allowlist`, per agent) decides whether it runs,
//! is refused, or is asked about in the chat (`approvals`): a line runs unasked only when
//! it falls inside the gate's grammar (`gate`), its folders stay in the workspace and
//! every program is allowed (`gate_check`, `allow`) — and then what runs is the checked
//! plan, rendered (an argv, or a `sh -c` line of single-quoted words). A line that was
//! approved, or runs under `security: "full"`, runs as written with `sh -c`. A command
//! still running after `yieldMs`, or started with `background: true`, goes on in the
//! background (`process`).

pub mod allow;
pub mod env;
mod gate;
mod gate_check;
pub mod job;
pub mod output;
pub mod sandbox;
mod verdict;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};

use super::approvals::{self, Ask};
use super::paths::{confine, shown};
use super::policy::{ExecDecision, ExecPolicy};
use super::process::Processes;
use super::{opt_arg, str_arg, Tool, ToolContext, ToolError};
use crate::agent::provider::ToolSpec;
use crate::config::SandboxMode;
use crate::store::ApprovalStatus;
use gate_check::Run;
use job::{Job, Line, Spec};
use verdict::{canonical, check};

/// Default and largest `timeoutSeconds`.
const DEFAULT_TIMEOUT: u64 = 120;
const MAX_TIMEOUT: u64 = 3600;
/// Default `yieldMs`: a foreground command still running then goes on in the background.
const DEFAULT_YIELD_MS: u64 = 10_000;
/// Longest command line accepted.
const MAX_COMMAND: usize = 64 * 1024;

pub struct Exec {
    procs: Arc<Processes>,
    sandboxes: sandbox::Probes,
}

impl Exec {
    pub fn new(procs: Arc<Processes>) -> Self {
        Exec {
            procs,
            sandboxes: sandbox::Probes::default(),
        }
    }

    /// Where this call's command runs: in the sandbox if its agent's `sandbox.mode`
    /// covers its session. An error (the command is not run) when the mode requires
    /// bubblewrap and it does not work here; under `auto` the command then runs outside
    /// it, but is always asked about.
    async fn sandbox(
        &self,
        ctx: &ToolContext<'_>,
        workdir: &std::path::Path,
    ) -> Result<Confinement, ToolError> {
        let settings = ctx
            .cfg
            .agents
            .defaults
            .sandbox
            .for_agent(ctx.agent.and_then(|a| a.sandbox.as_ref()));
        if !settings.applies(ctx.agent_id, ctx.session_key) {
            return Ok(Confinement::Host);
        }
        if let Err(why) = self.sandboxes.check(&settings.bwrap).await {
            if settings.mode == SandboxMode::Auto {
                return Ok(Confinement::Unconfined(format!(
                    "bubblewrap does not work here ({why}), so under sandbox.mode \"auto\" every command is asked about (sandbox.mode \"off\" runs allowlisted commands unasked)"
                )));
            }
            return Err(ToolError::Model(format!(
                "not run: this session's commands must run in the sandbox (sandbox.mode {:?}), and it is unavailable: {why}",
                settings.mode
            )));
        }
        let workspace = canonical(ctx.workspace);
        let state_dir = canonical(&ctx.rt.home.state_dir);
        let database_dir =
            sandbox::database_dir(ctx.cfg, &ctx.rt.home.state_dir).map(|d| canonical(&d));
        let config_file = sandbox::Sandbox::config_file().map(canonical);
        let home = std::env::var_os("HOME").map(|h| canonical(std::path::Path::new(&h)));
        let layout = sandbox::Layout {
            workspace: &workspace,
            workdir: &canonical(workdir),
            state_dir: &state_dir,
            database_dir: database_dir.as_deref(),
            config_file: config_file.as_deref(),
            home: home.as_deref(),
            network: settings.network,
        };
        Ok(Confinement::Sandbox(sandbox::Sandbox::new(
            &settings, &layout,
        )))
    }
}

/// Where a command runs.
enum Confinement {
    /// In bubblewrap.
    Sandbox(sandbox::Sandbox),
    /// On the host: the sandbox does not apply to the session (`off`, `non-main`).
    Host,
    /// On the host because bubblewrap does not work here under `auto`: every command is
    /// asked about (why).
    Unconfined(String),
}

impl Confinement {
    fn sandbox(&self) -> Option<&sandbox::Sandbox> {
        match self {
            Confinement::Sandbox(s) => Some(s),
            _ => None,
        }
    }
}

#[async_trait]
impl Tool for Exec {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "exec".into(),
            description: "Run a shell command (sh -c) in your workspace. Returns its exit code and output (stdout and stderr, cut in the middle when long). A command still running after yieldMs (default 10000) continues in the background: manage it with the process tool.".into(),
            parameters: json!({"type": "object", "properties": {
                "command": {"type": "string"},
                "workdir": {"type": "string", "description": "Folder inside the workspace"},
                "timeoutSeconds": {"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT},
                "background": {"type": "boolean"},
                "yieldMs": {"type": "integer", "minimum": 0}
            }, "required": ["command"]}),
        }
    }

    async fn call(&self, ctx: &ToolContext<'_>, args: Value) -> Result<String, ToolError> {
        let command = str_arg(&args, "command")?;
        if command.len() > MAX_COMMAND {
            return Err(ToolError::Model(format!(
                "the command is {} bytes; at most {MAX_COMMAND}",
                command.len()
            )));
        }
        if command.contains('\0') {
            return Err(ToolError::Model("the command contains a NUL byte".into()));
        }
        let background =
            opt_arg(&args, "background", "a boolean", Value::as_bool)?.unwrap_or(false);
        let timeout = opt_arg(&args, "timeoutSeconds", "an integer", Value::as_u64)?.unwrap_or(
            if background {
                MAX_TIMEOUT
            } else {
                DEFAULT_TIMEOUT
            },
        );
        if !(1..=MAX_TIMEOUT).contains(&timeout) {
            return Err(ToolError::Model(format!(
                "timeoutSeconds must be between 1 and {MAX_TIMEOUT}, got {timeout}"
            )));
        }
        let yield_ms =
            opt_arg(&args, "yieldMs", "an integer", Value::as_u64)?.unwrap_or(DEFAULT_YIELD_MS);
        let workdir_arg = opt_arg(&args, "workdir", "a string", |v| {
            v.as_str().map(str::to_string)
        })?;

        let policy = ExecPolicy::resolve(ctx.cfg, ctx.agent);
        if policy.decide(true) == ExecDecision::Refuse {
            return Err(ToolError::Model(
                "exec is disabled here (tools.exec.security is \"deny\")".into(),
            ));
        }
        tokio::fs::create_dir_all(ctx.workspace)
            .await
            .map_err(|e| ToolError::Model(format!("cannot create the workspace: {e}")))?;
        let workdir = confine(
            ctx.workspace,
            workdir_arg.as_deref().unwrap_or("."),
            ctx.cfg.tools.fs.workspace_only,
        )?;
        if !workdir.is_dir() {
            return Err(ToolError::Model(format!(
                "workdir {} is not a folder",
                shown(ctx.workspace, &workdir)
            )));
        }
        let env = env::build(ctx.cfg, &ctx.rt.http.keys, &|k| std::env::var(k).ok());
        let path_var = env
            .iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        let workdir_text = workdir.display().to_string();
        // Refused before anyone is asked to approve a command that could not run.
        let confinement = self.sandbox(ctx, &workdir).await?;
        let unconfined = match &confinement {
            Confinement::Unconfined(why) => Some(why.as_str()),
            _ => None,
        };

        let needs_check = policy.decide(false) != policy.decide(true);
        let checked = if needs_check {
            Some(check(ctx, &policy, command, &workdir, &path_var, unconfined).await?)
        } else {
            None
        };
        // What runs: the checked plan when the gate let it through, else the line as
        // written (approved, or `security: "full"`).
        let mut line = Line::Shell(command);
        let covered = checked.as_ref().is_none_or(|c| c.covered);
        match policy.decide(covered) {
            ExecDecision::Run => {
                if let Some(run) = checked.as_ref().and_then(|c| c.run.as_ref()) {
                    line = match run {
                        Run::Argv(argv) => Line::Argv(argv),
                        Run::Shell(s) => Line::Shell(s),
                    };
                }
            }
            ExecDecision::Refuse => {
                let why = checked.map(|c| c.why).unwrap_or_default();
                return Err(ToolError::Model(format!(
                    "not run: {why} (tools.exec.security \"allowlist\", ask \"off\")"
                )));
            }
            ExecDecision::Ask => {
                let (missing, why) = match &checked {
                    Some(c) if !c.covered => (c.missing.clone(), c.why.clone()),
                    _ => (
                        Vec::new(),
                        "every command is asked about (tools.exec.ask \"always\")".into(),
                    ),
                };
                let status = approvals::ask(
                    ctx,
                    &Ask {
                        workdir: &workdir_text,
                        command,
                        executables: &missing,
                        why: &why,
                    },
                )
                .await?;
                if !status.allows() {
                    return Ok(denied(status, ctx.cfg.tools.exec.approval_timeout));
                }
            }
        }

        let no_room = || {
            ToolError::Model(format!(
                "{} background commands are running already; kill one with the process tool first",
                super::process::MAX_RUNNING
            ))
        };
        if background && !self.procs.has_room() {
            return Err(no_room());
        }
        let spec = Spec {
            command,
            line,
            workdir: &workdir,
            env: &env,
            timeout: Duration::from_secs(timeout),
            stdin: background,
            session_key: ctx.session_key,
            sandbox: confinement.sandbox(),
        };
        let job = Job::start(&spec, &ctx.rt.tasks.tracker, &ctx.rt.tasks.shutdown)
            .map_err(|e| ToolError::Model(format!("cannot start the command: {e}")))?;
        if background {
            if !self.procs.try_add(job.clone()) {
                // Another call took the last place since the check above.
                job.kill("too many background commands");
                return Err(no_room());
            }
            return Ok(running(&job));
        }
        // A foreground command is killed if this call goes away (the run stopped or
        // timed out), unless it moved to the background.
        let mut guard = KillOnDrop(Some(job.clone()));
        // A yield at or past the timeout never happens: the command ends first.
        let yield_after = Duration::from_millis(if yield_ms < timeout * 1000 {
            yield_ms
        } else {
            u64::MAX / 4
        });
        let yielding = tokio::time::sleep(yield_after);
        tokio::pin!(yielding);
        let mut may_yield = true;
        loop {
            tokio::select! {
                (end, took) = job.wait() => {
                    guard.0 = None;
                    return Ok(job.result(&end, took));
                }
                () = &mut yielding, if may_yield => {
                    if self.procs.try_add(job.clone()) {
                        guard.0 = None;
                        return Ok(running(&job));
                    }
                    // No place in the background: it goes on in the foreground until it
                    // ends or times out.
                    may_yield = false;
                }
                () = ctx.cancel.cancelled() => {
                    job.kill("the run was stopped");
                    let (end, took) = job.wait().await;
                    guard.0 = None;
                    return Ok(job.result(&end, took));
                }
            }
        }
    }
}

struct KillOnDrop(Option<Arc<Job>>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(job) = self.0.take() {
            job.kill("the run was stopped");
        }
    }
}

fn running(job: &Job) -> String {
    let so_far = job.output.lock().take_new();
    json!({"status": "running", "sessionId": job.id, "pid": job.pid, "outputSoFar": so_far,
           "note": "still running in the background: use the process tool (poll, log, write, kill) with this sessionId"})
    .to_string()
}

/// The result told to the model when the command was not approved: not an error to retry.
fn denied(status: ApprovalStatus, timeout: Duration) -> String {
    let reason = match status {
        ApprovalStatus::Expired => format!(
            "nobody answered the approval request within {} (tools.exec.approvalTimeout): treated as denied",
            humantime::format_duration(timeout)
        ),
        ApprovalStatus::Cancelled => "the approval request was cancelled".to_string(),
        _ => "denied by the user".to_string(),
    };
    json!({"status": "denied", "reason": reason,
           "note": "the command was not run; do not retry it unless the user asks you to"})
    .to_string()
}
