//! Git-worktree isolation of sub-agents with real git repositories in temporary
//! directories: a child in its own worktree and branch, a dirty one kept and named in the
//! announce, a clean one removed, and the fallbacks with their reasons.

use std::path::Path;
use std::process::Command;

use serde_json::json;
use switchboard_testkit::fake_model::{FakeModel, Step, ToolCall};
use switchboard_testkit::harness::GatewayBuilder;

use crate::common::{answer_and_announces, chat, config_for, BIN};
use crate::subagents::spawn_call;

/// `git -C dir args…`; its stdout.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=Test", "-c", "user.email=test@example.com"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A repository with one commit (README.md).
fn repo(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    std::fs::write(dir.join("README.md"), "the project\n").unwrap();
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "first"]);
}

/// The `Notes:` line of an announce.
fn notes(announce: &str) -> &str {
    announce
        .lines()
        .find_map(|l| l.strip_prefix("Notes: "))
        .unwrap_or_else(|| panic!("no Notes in {announce}"))
}

/// Two children asked for worktrees in a clean repository: the one that writes a file
/// works in its own worktree on `switchboard/writer-…` (the workspace is untouched) and
/// the worktree is kept and named in its announce; the one that only reads has its clean
/// worktree and branch removed. (Catches: the child writing into the shared workspace,
/// a dirty worktree removed with its work, a clean one left behind, or the announce not
/// saying where the work is.)
#[tokio::test]
async fn a_writing_child_keeps_its_worktree_and_a_reading_one_is_cleaned_up() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("project");
    std::fs::create_dir(&ws).unwrap();
    repo(&ws);
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "isolate two",
        Step::ToolCalls(vec![
            spawn_call(
                "writer task",
                json!({"label": "writer", "isolation": "worktree"}),
            ),
            spawn_call(
                "reader task",
                json!({"label": "reader", "isolation": "worktree"}),
            ),
        ]),
    );
    fake.push_for("isolate two", Step::text("both spawned"));
    fake.push_for(
        "writer task",
        Step::ToolCalls(vec![ToolCall::new(
            "write",
            r#"{"path": "new.txt", "content": "from the child"}"#,
        )]),
    );
    fake.push_for("writer task", Step::text("wrote it"));
    fake.push_for(
        "reader task",
        Step::ToolCalls(vec![ToolCall::new("read", r#"{"path": "README.md"}"#)]),
    );
    fake.push_for("reader task", Step::text("read it"));
    let config = config_for(
        &fake,
        json!({"agents": {"defaults": {"workspace": ws.display().to_string()}}}),
    );
    let gw = GatewayBuilder::new(BIN)
        .config(config)
        .start()
        .await
        .unwrap();
    let mut chat = chat(&gw, "main").await;
    chat.send_text("isolate two").await.unwrap();
    let (answer, announces) = answer_and_announces(&mut chat, 2).await;
    assert_eq!(answer, "both spawned");

    let writer = announces
        .iter()
        .find(|a| a.contains("switchboard/writer-"))
        .unwrap_or_else(|| panic!("no announce names the writer's branch: {announces:?}"));
    let note = notes(writer);
    let path = note
        .strip_prefix("worktree kept with uncommitted changes: ")
        .and_then(|rest| rest.split(" (branch ").next())
        .unwrap_or_else(|| panic!("unexpected note {note:?}"));
    let kept = Path::new(path);
    assert_eq!(
        std::fs::read_to_string(kept.join("new.txt")).unwrap(),
        "from the child"
    );
    assert!(
        !ws.join("new.txt").exists(),
        "the child wrote into the workspace"
    );
    assert_eq!(git(&ws, &["status", "--porcelain"]), "");
    let branch = git(kept, &["rev-parse", "--abbrev-ref", "HEAD"]);
    assert!(branch.trim().starts_with("switchboard/writer-"), "{branch}");
    assert!(
        note.ends_with(&format!("(branch {})", branch.trim())),
        "{note}"
    );

    let reader = announces.iter().find(|a| *a != writer).unwrap();
    assert_eq!(notes(reader), "none", "{reader}");
    // Only the writer's worktree and branch are left.
    let worktrees = git(&ws, &["worktree", "list", "--porcelain"]);
    assert_eq!(worktrees.matches("worktree ").count(), 2, "{worktrees}");
    let branches = git(&ws, &["branch", "--list", "switchboard/*"]);
    assert_eq!(branches.lines().count(), 1, "{branches}");
    assert!(branches.contains("switchboard/writer-"), "{branches}");
    // The reader read the project's README from its worktree.
    let read = fake
        .requests()
        .into_iter()
        .filter_map(|r| {
            r.body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["role"] == "tool")
                .filter_map(|m| m["content"].as_str().map(str::to_string))
                .find(|c| c.contains("the project"))
        })
        .next();
    assert!(read.is_some(), "the reader's read did not find README.md");
    fake.assert_no_violations();
}

/// A child that asks for a worktree where none can be made runs in the workspace, and its
/// announce's Notes give the reason: `not_a_repo` for a plain directory, `dirty_tree` for a
/// repository with uncommitted changes. (Catches: a spawn refused or a worktree made from
/// a dirty tree instead of the documented fallback, or the reason not told.)
#[tokio::test]
async fn without_a_clean_repository_the_child_runs_in_the_workspace_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain");
    let dirty = dir.path().join("dirty");
    std::fs::create_dir(&plain).unwrap();
    std::fs::create_dir(&dirty).unwrap();
    repo(&dirty);
    std::fs::write(dirty.join("README.md"), "edited\n").unwrap();
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "try isolation",
        Step::ToolCalls(vec![
            spawn_call(
                "plain task",
                json!({"agentId": "plain", "isolation": "worktree"}),
            ),
            spawn_call(
                "dirty task",
                json!({"agentId": "dirty", "isolation": "worktree"}),
            ),
        ]),
    );
    fake.push_for("try isolation", Step::text("spawned"));
    let config = config_for(
        &fake,
        json!({"agents": {"list": [
            {"id": "main", "subagents": {"allowAgents": ["*"]}},
            {"id": "plain", "workspace": plain.display().to_string()},
            {"id": "dirty", "workspace": dirty.display().to_string()},
        ]}}),
    );
    let gw = GatewayBuilder::new(BIN)
        .config(config)
        .start()
        .await
        .unwrap();
    let mut chat = chat(&gw, "main").await;
    chat.send_text("try isolation").await.unwrap();
    let (_, announces) = answer_and_announces(&mut chat, 2).await;
    let mut got: Vec<&str> = announces.iter().map(|a| notes(a)).collect();
    got.sort_unstable();
    assert_eq!(
        got,
        vec![
            "worktree isolation not used (dirty_tree): the child worked in the workspace",
            "worktree isolation not used (not_a_repo): the child worked in the workspace",
        ]
    );
    assert_eq!(
        git(&dirty, &["worktree", "list", "--porcelain"])
            .matches("worktree ")
            .count(),
        1
    );
    fake.assert_no_violations();
}
