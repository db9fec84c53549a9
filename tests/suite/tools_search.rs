//! `ls`, `glob` and `grep` end to end: called through the scripted model, answered
//! without an approval (even with an exec allowlist that would ask about `ls` or `grep`
//! as commands), confined to the workspace, and honouring `.gitignore`.

use serde_json::json;
use switchboard_testkit::fake_model::FakeModel;

use crate::common::{chat, start, WAIT};
use crate::tools_support::{script, tool_result, workspace};

/// Catches: the search tools not offered or not run, asking for an approval, listing or
/// searching what `.gitignore` ignores, or reaching outside the workspace.
#[tokio::test]
async fn ls_glob_and_grep_look_around_without_approvals() {
    let fake = FakeModel::start().await.unwrap();
    // Only `true` runs unasked: an `ls` or `grep` through exec would be asked about.
    let gw = start(
        &fake,
        json!({"tools": {"exec": {"allowlist": ["/usr/bin/true", "/bin/true"]}}}),
    )
    .await;
    let mut ws = chat(&gw, "main").await;
    let root = workspace(&gw);
    let outside = gw.state_dir().join("outside");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(root.join("target")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(root.join(".gitignore"), "target/\nsecret.txt\n").unwrap();
    std::fs::write(root.join("src/main.rs"), "fn main() {\n    needle();\n}\n").unwrap();
    std::fs::write(root.join("target/gen.rs"), "fn needle() {}\n").unwrap();
    std::fs::write(root.join("secret.txt"), "needle\n").unwrap();
    std::fs::write(outside.join("far.rs"), "fn needle() {}\n").unwrap();
    std::os::unix::fs::symlink(&outside, root.join("far")).unwrap();

    let steps = [
        ("s1", "ls", json!({"path": "src"})),
        ("s2", "glob", json!({"pattern": "**/*.rs"})),
        (
            "s3",
            "grep",
            json!({"pattern": "needle\\(", "ignoreCase": true}),
        ),
        ("s4", "ls", json!({"path": "../outside"})),
        ("s5", "grep", json!({"pattern": "needle(", "path": "src"})),
    ];
    let mut results = Vec::new();
    for (trigger, tool, args) in &steps {
        script(&fake, trigger, tool, &args.to_string());
        ws.send_text(trigger).await.unwrap();
        // The very next message is the answer: no approval request came first.
        assert_eq!(
            ws.next_message(WAIT).await.unwrap(),
            format!("done {trigger}"),
            "{tool} asked for nothing"
        );
        results.push(tool_result(&fake, trigger));
    }
    assert_eq!(results[0], "src:\nmain.rs  28 B");
    assert_eq!(results[1], "src/main.rs");
    assert_eq!(results[2], "src/main.rs:2:     needle();");
    assert!(
        results[3].starts_with("error: `../outside` is outside the agent's workspace"),
        "{}",
        results[3]
    );
    assert!(
        results[4].starts_with("error: bad regular expression:"),
        "{}",
        results[4]
    );
}
