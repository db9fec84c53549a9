//! Git-worktree isolation of a sub-agent (`isolation: worktree`, per agent definition or per
//! spawn): after the safety checks (git present, the workspace inside a repository, a clean
//! tree) the child works in a new worktree on a new branch `switchboard/<label>-<short id>`
//! under `<stateDir>/worktrees/`; otherwise it runs in the workspace and the announce's
//! Notes give the reason. At the end a clean worktree is removed (its branch too unless it
//! holds new commits), a dirty one is kept and named. Git runs as a subprocess, each call
//! bounded by [`GIT_TIMEOUT`]. The record is committed before the worktree is made.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use crate::runtime::Runtime;
use crate::store::{StoreError, WorktreeRow, WorktreeState};

/// Longest one git command may take (a `worktree add` of a large checkout included).
const GIT_TIMEOUT: Duration = Duration::from_secs(60);
/// Longest label part of a branch name, in characters.
const MAX_BRANCH_LABEL: usize = 40;

/// Why a child that asked for a worktree runs in the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fallback {
    NoGit,
    NotARepo,
    DirtyTree,
    CreateFailed,
}

impl Fallback {
    pub fn as_str(self) -> &'static str {
        match self {
            Fallback::NoGit => "no_git",
            Fallback::NotARepo => "not_a_repo",
            Fallback::DirtyTree => "dirty_tree",
            Fallback::CreateFailed => "create_failed",
        }
    }
}

/// A git command that did not succeed.
#[derive(Debug, thiserror::Error)]
enum GitError {
    #[error("git could not be started: {0}")]
    Missing(std::io::Error),
    #[error("git {0} failed: {1}")]
    Failed(String, String),
    #[error("git {0} took longer than {GIT_TIMEOUT:?}")]
    TimedOut(String),
}

/// Settings given to every git command the daemon runs, over any the repository has: the
/// repository is the agent's workspace, which its tools can write (`.git/config`,
/// `.git/hooks/` included), and git would otherwise run the programs named there — with
/// the daemon's rights, outside any sandbox, and without an approval. No hooks, no file
/// system monitor, no submodules followed, no transport to another repository.
const NEUTRAL_CONFIG: &[(&str, &str)] = &[
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("submodule.recurse", "false"),
    ("protocol.allow", "never"),
];

/// `git -C dir args…`, its stdout trimmed. No prompts; killed when it overruns. It runs
/// with a built environment (no provider key or token reaches it) and [`NEUTRAL_CONFIG`];
/// the clean/smudge filters the repository's own config defines are emptied too (the
/// operator's global and system config are kept: `git lfs install` puts its filter there).
async fn git(dir: &Path, args: &[&str]) -> Result<String, GitError> {
    let mut config: Vec<(String, String)> = NEUTRAL_CONFIG
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    if args.first() != Some(&"--version") {
        let listed = run_git(
            dir,
            &["config", "--show-scope", "--get-regexp", r"^filter\."],
            &config,
        )
        .await;
        match listed {
            Ok(out) => config.extend(repository_filters(&out)),
            // Exit code 1: no such key.
            Err(GitError::Failed(_, ref stderr)) if stderr.is_empty() => {}
            Err(e) => return Err(e),
        }
    }
    run_git(dir, args, &config).await
}

/// The filter settings to empty: every `filter.<driver>.clean|smudge|process` set outside
/// the operator's global and system config (`--show-scope` lines: scope, tab, key, value).
fn repository_filters(listed: &str) -> Vec<(String, String)> {
    let mut drivers: Vec<&str> = Vec::new();
    for line in listed.lines() {
        let Some((scope, rest)) = line.split_once('\t') else {
            continue;
        };
        if matches!(scope, "global" | "system") {
            continue;
        }
        let key = rest.split_once(' ').map_or(rest, |(key, _)| key);
        let Some(driver) = key
            .strip_prefix("filter.")
            .and_then(|k| k.rsplit_once('.'))
            .map(|(driver, _)| driver)
        else {
            continue;
        };
        if !drivers.contains(&driver) {
            drivers.push(driver);
        }
    }
    drivers
        .into_iter()
        .flat_map(|d| {
            ["clean", "smudge", "process"].map(|k| (format!("filter.{d}.{k}"), String::new()))
        })
        .collect()
}

/// One git command with `config` given through `GIT_CONFIG_COUNT`/`KEY_n`/`VALUE_n`
/// (command-line scope: over every file's; a key or value cannot be split like a `-c`).
async fn run_git(
    dir: &Path,
    args: &[&str],
    config: &[(String, String)],
) -> Result<String, GitError> {
    let mut cmd = tokio::process::Command::new("git");
    cmd.arg("-C")
        .arg(dir)
        .args(args)
        .env_clear()
        .envs(crate::agent::tools::exec::env::helper(&|k| {
            std::env::var(k).ok()
        }))
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_CONFIG_COUNT", config.len().to_string());
    for (i, (key, value)) in config.iter().enumerate() {
        cmd.env(format!("GIT_CONFIG_KEY_{i}"), key)
            .env(format!("GIT_CONFIG_VALUE_{i}"), value);
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let what = args.first().copied().unwrap_or_default().to_string();
    let child = cmd.spawn().map_err(GitError::Missing)?;
    let out = match tokio::time::timeout(GIT_TIMEOUT, child.wait_with_output()).await {
        Ok(Ok(out)) => out,
        Ok(Err(e)) => return Err(GitError::Failed(what, e.to_string())),
        Err(_) => return Err(GitError::TimedOut(what)),
    };
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(GitError::Failed(
            what,
            stderr.trim().chars().take(300).collect(),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The branch of a child: `switchboard/<label>-<first 8 of the run id>`, the label cut to
/// what a ref name accepts (lowercase letters, digits and `-`).
pub fn branch_name(label: &str, run_id: &str) -> String {
    let mut slug = String::new();
    for c in label.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_alphanumeric() {
            slug.push(c);
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
        if slug.len() >= MAX_BRANCH_LABEL {
            break;
        }
    }
    let slug = slug.trim_matches('-');
    let slug = if slug.is_empty() { "child" } else { slug };
    let short: String = run_id
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(8)
        .collect();
    format!("switchboard/{slug}-{short}")
}

/// The repository's top level and HEAD for `workspace`, or why no worktree can be made.
async fn safety_checks(workspace: &Path) -> Result<(PathBuf, String), Fallback> {
    if let Err(GitError::Missing(_)) = git(workspace, &["--version"]).await {
        return Err(Fallback::NoGit);
    }
    let top = git(workspace, &["rev-parse", "--show-toplevel"])
        .await
        .map_err(|_| Fallback::NotARepo)?;
    let status = git(
        workspace,
        &["status", "--porcelain", "--ignore-submodules=all"],
    )
    .await
    .map_err(|_| Fallback::NotARepo)?;
    if !status.is_empty() {
        return Err(Fallback::DirtyTree);
    }
    // A repository without a commit has nothing to branch from.
    let head = git(workspace, &["rev-parse", "--verify", "HEAD"])
        .await
        .map_err(|_| Fallback::CreateFailed)?;
    Ok((PathBuf::from(top), head))
}

/// Give the child of `run_id` its worktree, or record why it runs in `workspace`. Called
/// after the child is registered and before its run is scheduled.
pub async fn isolate(
    rt: &Runtime,
    run_id: &str,
    child_session_key: &str,
    label: &str,
    workspace: &Path,
) -> Result<(), StoreError> {
    let mut row = WorktreeRow {
        run_id: run_id.to_string(),
        child_session_key: child_session_key.to_string(),
        state: WorktreeState::Fallback,
        reason: None,
        repo: None,
        path: None,
        workdir: None,
        branch: None,
        base: None,
        note: None,
    };
    let (top, base) = match safety_checks(workspace).await {
        Ok(found) => found,
        Err(why) => {
            tracing::info!(run_id, reason = why.as_str(), "worktree isolation not used");
            row.reason = Some(why.as_str().into());
            return rt.store.record_worktree(&row).await;
        }
    };
    let path = rt.home.state_dir.join("worktrees").join(run_id);
    // The workspace's place in the repository, kept inside the worktree.
    let inside = std::fs::canonicalize(workspace)
        .ok()
        .and_then(|w| w.strip_prefix(&top).ok().map(Path::to_path_buf))
        .unwrap_or_default();
    let branch = branch_name(label, run_id);
    row.state = WorktreeState::Creating;
    row.repo = Some(top.display().to_string());
    row.path = Some(path.display().to_string());
    row.workdir = Some(path.join(inside).display().to_string());
    row.branch = Some(branch.clone());
    row.base = Some(base.clone());
    rt.store.record_worktree(&row).await?;
    let path_text = path.display().to_string();
    let made = match std::fs::create_dir_all(rt.home.state_dir.join("worktrees")) {
        Ok(()) => git(&top, &["worktree", "add", "-b", &branch, &path_text, &base]).await,
        Err(e) => Err(GitError::Failed("worktree".into(), e.to_string())),
    };
    match made {
        Ok(_) => {
            tracing::info!(run_id, branch, path = %path.display(), "child works in its own worktree");
            rt.store
                .set_worktree_state(run_id, WorktreeState::Active, None, None)
                .await
        }
        Err(e) => {
            tracing::warn!(run_id, error = %e, "could not create the child's worktree");
            discard(&row).await;
            rt.store
                .set_worktree_state(
                    run_id,
                    WorktreeState::Fallback,
                    Some(Fallback::CreateFailed.as_str()),
                    None,
                )
                .await
        }
    }
}

/// Remove what a half-made worktree left (its directory, its branch); errors are logged.
async fn discard(row: &WorktreeRow) {
    let (Some(repo), Some(path), Some(branch)) = (&row.repo, &row.path, &row.branch) else {
        return;
    };
    let repo = Path::new(repo);
    if Path::new(path).exists() {
        let _ = git(repo, &["worktree", "remove", "--force", path]).await;
    }
    let _ = git(repo, &["worktree", "prune"]).await;
    let _ = git(repo, &["branch", "-D", branch]).await;
}

/// Finish the child's worktree at its announce: remove it when clean, keep it when dirty.
/// Returns what the announce's Notes say of it (`None`: nothing to say). Idempotent.
pub async fn finish(rt: &Runtime, run_id: &str) -> Result<Option<String>, StoreError> {
    let Some(row) = rt.store.worktree(run_id).await? else {
        return Ok(None);
    };
    match row.state {
        WorktreeState::Fallback => Ok(Some(format!(
            "worktree isolation not used ({}): the child worked in the workspace",
            row.reason.as_deref().unwrap_or("unknown")
        ))),
        WorktreeState::Done => Ok(row.note),
        WorktreeState::Creating => {
            discard(&row).await;
            rt.store
                .set_worktree_state(
                    run_id,
                    WorktreeState::Fallback,
                    Some(Fallback::CreateFailed.as_str()),
                    None,
                )
                .await?;
            Ok(None)
        }
        WorktreeState::Active => {
            let note = close(&row).await;
            rt.store
                .set_worktree_state(run_id, WorktreeState::Done, None, note.as_deref())
                .await?;
            Ok(note)
        }
    }
}

/// Remove a clean worktree (and its branch when it holds no new commit) or keep a dirty
/// one; the note for the announce.
async fn close(row: &WorktreeRow) -> Option<String> {
    let (Some(repo), Some(path), Some(branch)) = (&row.repo, &row.path, &row.branch) else {
        return None;
    };
    let (repo, dir) = (Path::new(repo), Path::new(path));
    let status = match git(dir, &["status", "--porcelain", "--ignore-submodules=all"]).await {
        Ok(s) => s,
        Err(e) => {
            return Some(format!(
                "worktree {path} could not be checked ({e}); left as it is"
            ))
        }
    };
    if !status.is_empty() {
        return Some(format!(
            "worktree kept with uncommitted changes: {path} (branch {branch})"
        ));
    }
    let head = git(dir, &["rev-parse", "HEAD"]).await.ok();
    if let Err(e) = git(repo, &["worktree", "remove", path]).await {
        return Some(format!("worktree {path} could not be removed: {e}"));
    }
    if head.is_some() && head == row.base {
        let _ = git(repo, &["branch", "-D", branch]).await;
        None
    } else {
        Some(format!(
            "worktree removed; its commits are on branch {branch}"
        ))
    }
}

/// At start: finish worktrees left by a crash (being created, or active after their
/// child's announce). Failures are logged; the gateway starts anyway.
pub async fn sweep(rt: &Runtime) {
    let rows = match rt.store.orphan_worktrees().await {
        Ok(rows) => rows,
        Err(e) => {
            tracing::warn!(error = %e, "cannot list leftover worktrees");
            return;
        }
    };
    for row in rows {
        match finish(rt, &row.run_id).await {
            Ok(note) => {
                tracing::info!(run_id = %row.run_id, note = ?note, "leftover worktree swept")
            }
            Err(e) => {
                tracing::warn!(run_id = %row.run_id, error = %e, "cannot sweep a leftover worktree")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repository whose own config names programs at every point git could run one
    /// (a file system monitor, a smudge and a clean filter — one of them from an included
    /// file —, a checkout hook and a ref hook), each leaving a marker: the checks, a
    /// worktree's creation and its removal run none of them.
    /// Catches: the agent writing `.git/config` or `.git/hooks/` with its file tools and
    /// having the daemon's own git run the program outside the sandbox, unapproved, with
    /// the daemon's environment.
    #[tokio::test]
    async fn the_repository_s_own_config_runs_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        let (repo, marks) = (root.join("repo"), root.join("marks"));
        std::fs::create_dir_all(&repo).expect("mkdir");
        std::fs::create_dir_all(&marks).expect("mkdir");
        let sh = |script: &str| {
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(script)
                .current_dir(&repo)
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .output()
                .expect("sh");
            assert!(out.status.success(), "{script}: {out:?}");
        };
        sh(
            "git init -q . && git config user.email a@b && git config user.name a \
            && printf '*.txt filter=evil\\n*.md filter=other\\n' > .gitattributes \
            && echo hi > a.txt && echo hi > b.md && git add . && git commit -qm init",
        );
        let m = marks.display();
        sh(&format!(
            "git config core.fsmonitor 'touch {m}/fsmonitor; echo' \
             && git config filter.evil.smudge 'touch {m}/smudge; cat' \
             && git config filter.evil.clean 'touch {m}/clean; cat' \
             && printf '[filter \"other\"]\\n\\tsmudge = touch {m}/included; cat\\n' > ../extra.cfg \
             && git config include.path ../../extra.cfg \
             && printf '#!/bin/sh\\ntouch {m}/hook\\n' > .git/hooks/post-checkout \
             && cp .git/hooks/post-checkout .git/hooks/reference-transaction \
             && chmod +x .git/hooks/post-checkout .git/hooks/reference-transaction \
             && touch a.txt b.md"
        ));
        let (top, base) = safety_checks(&repo).await.expect("a clean repository");
        let path = root.join("wt").display().to_string();
        git(
            &top,
            &["worktree", "add", "-b", "switchboard/t", &path, &base],
        )
        .await
        .expect("worktree made");
        assert_eq!(
            std::fs::read_to_string(root.join("wt/a.txt")).expect("checked out"),
            "hi\n"
        );
        let row = WorktreeRow {
            run_id: "r".into(),
            child_session_key: "k".into(),
            state: WorktreeState::Active,
            reason: None,
            repo: Some(top.display().to_string()),
            path: Some(path.clone()),
            workdir: None,
            branch: Some("switchboard/t".into()),
            base: Some(base),
            note: None,
        };
        assert_eq!(close(&row).await, None, "a clean worktree is removed");
        let ran: Vec<_> = std::fs::read_dir(&marks)
            .expect("marks")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert!(ran.is_empty(), "git ran the repository's programs: {ran:?}");
    }

    /// Only filters defined outside the operator's own config are emptied.
    #[test]
    fn the_repository_s_filters_are_emptied_the_operator_s_kept() {
        let listed = "global\tfilter.lfs.smudge git-lfs smudge -- %f\n\
                      local\tfilter.evil.smudge touch x; cat\n\
                      local\tfilter.evil.clean cat\n\
                      worktree\tfilter.a.b.process run\n";
        let keys: Vec<String> = repository_filters(listed)
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        assert_eq!(
            keys,
            [
                "filter.evil.clean",
                "filter.evil.smudge",
                "filter.evil.process",
                "filter.a.b.clean",
                "filter.a.b.smudge",
                "filter.a.b.process"
            ]
        );
    }

    /// Catches: a label that makes an invalid or overlong ref name.
    #[test]
    fn branch_names_are_valid_refs() {
        let id = "0f3a9c1e-7777-4444-8888-000000000000";
        assert_eq!(
            branch_name("Fix the Parser!", id),
            "switchboard/fix-the-parser-0f3a9c1e"
        );
        assert_eq!(branch_name("../..", id), "switchboard/child-0f3a9c1e");
        assert_eq!(branch_name("ünï", id), "switchboard/n-0f3a9c1e");
        let long = branch_name(&"a".repeat(500), id);
        assert_eq!(long, format!("switchboard/{}-0f3a9c1e", "a".repeat(40)));
    }
}
