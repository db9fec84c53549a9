//! What the exec policy makes of one command line: the gate's checked plan
//! (`gate_check`) held against the configured allowlist, the stored allow-always entries
//! (`allow`) and the workspace (whose programs are asked about every time), with the
//! reasons to ask and what allow-always would store.

use super::gate_check::{self, Place, Program, Run};
use super::{allow, sandbox};
use crate::agent::tools::policy::ExecPolicy;
use crate::agent::tools::{ToolContext, ToolError};

/// Whether the program at `path` lies in `workspace` (or is a link to something there).
fn inside(path: &str, workspace: &std::path::Path) -> bool {
    let path = std::path::Path::new(path);
    if path.starts_with(workspace) {
        return true;
    }
    match (path.canonicalize(), workspace.canonicalize()) {
        (Ok(path), Ok(workspace)) => path.starts_with(workspace),
        _ => false,
    }
}

/// What the gate says about a command line.
pub(super) struct Check {
    pub covered: bool,
    /// What `allow-always` would store: paths of programs that cannot run other code,
    /// exact argument lists (JSON) of those that can.
    pub missing: Vec<String>,
    pub why: String,
    /// The checked line, rendered (when inside the grammar).
    pub run: Option<Run>,
}

pub(super) fn canonical(p: &std::path::Path) -> std::path::PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

pub(super) async fn check(
    ctx: &ToolContext<'_>,
    policy: &ExecPolicy,
    command: &str,
    workdir: &std::path::Path,
    path_var: &str,
    unconfined: Option<&str>,
) -> Result<Check, ToolError> {
    let workspace = canonical(ctx.workspace);
    let workdir = canonical(workdir);
    // The gateway's own state and config, where they lie inside the workspace (the
    // workspace may equally lie inside the state dir: the default).
    let mut protected = vec![canonical(&ctx.rt.home.state_dir)];
    protected.extend(sandbox::Sandbox::config_file().map(canonical));
    protected.retain(|p| p.starts_with(&workspace) && *p != workspace);
    let place = Place {
        workspace: &workspace,
        workdir: &workdir,
        path_var,
        protected: &protected,
    };
    let gated = match gate_check::gate(command, &place) {
        Ok(g) => g,
        Err(outside) => {
            return Ok(Check {
                covered: false,
                missing: Vec::new(),
                why: format!("only plain command lines run unasked, and this one has {outside}"),
                run: None,
            })
        }
    };
    let stored = ctx.rt.store.exec_allowed(ctx.agent_id).await?;
    let mut missing = Vec::new();
    let mut reasons: Vec<String> = Vec::new();
    let mut reason = |why: String| {
        if !reasons.contains(&why) {
            reasons.push(why);
        }
    };
    for c in &gated.commands {
        match &c.program {
            Program::Builtin(_) => {}
            Program::Path(p) if policy.config_allows(p, &c.args) => {}
            // The agent can rewrite what lies in its workspace (the `write` tool keeps a
            // file's mode): remembering it would allow whatever it becomes.
            Program::Path(p) if inside(p, ctx.workspace) => reason(format!(
                "{p} is in the agent's workspace, which the agent can change: it is asked \
                 about every time (allow-always allows it this once)"
            )),
            Program::Path(p) if allow::stored_covers(&stored, p, &c.args) => {}
            Program::Path(p) => {
                let entry = allow::entry(p, &c.args);
                if !missing.contains(&entry) {
                    reason(if allow::runs_code(p) {
                        format!(
                            "{p} can run other code and is not allowed with these arguments \
                             (allow-always allows exactly {entry})"
                        )
                    } else {
                        format!("{p} is not in the allowlist")
                    });
                    missing.push(entry);
                }
            }
            Program::Missing(w) => reason(format!("`{w}` was not found on PATH")),
        }
    }
    if let Some(why) = unconfined {
        reason(why.to_string());
    }
    Ok(Check {
        covered: reasons.is_empty(),
        missing,
        why: reasons.join("; "),
        run: Some(gated.run()),
    })
}
