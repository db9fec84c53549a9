//! The system prompt: a base text, the agent's own prompt, and the workspace bootstrap
//! files (`AGENTS.md`, `TOOLS.md`, `SOUL.md`, `IDENTITY.md`, `USER.md`; sub-agents get
//! only `AGENTS.md` and `TOOLS.md`).

use std::path::Path;

pub const MAIN_FILES: &[&str] = &["AGENTS.md", "TOOLS.md", "SOUL.md", "IDENTITY.md", "USER.md"];
pub const SUBAGENT_FILES: &[&str] = &["AGENTS.md", "TOOLS.md"];

/// Longest bootstrap file taken into the prompt, in characters; the rest is cut.
const MAX_FILE_CHARS: usize = 20_000;

const BASE: &str = "You are an assistant reached through Switchboard, a chat gateway. \
Answer concisely; your reply is sent to the chat the message came from.";

/// Build the system prompt. Missing files are skipped; unreadable ones are logged.
pub async fn system_prompt(
    workspace: &Path,
    agent_prompt: Option<&str>,
    is_subagent: bool,
) -> String {
    let mut out = String::from(BASE);
    if is_subagent {
        out.push_str(
            "\n\nYou are a sub-agent: complete the task you were given and answer with the result. \
             Your final answer is reported back to the requester.",
        );
    }
    if let Some(p) = agent_prompt.filter(|p| !p.trim().is_empty()) {
        out.push_str("\n\n");
        out.push_str(p.trim());
    }
    let files = if is_subagent {
        SUBAGENT_FILES
    } else {
        MAIN_FILES
    };
    // One hop to the blocking pool for all files, not one per file.
    let dir = workspace.to_path_buf();
    let read = tokio::task::spawn_blocking(move || {
        files
            .iter()
            .map(|name| (*name, std::fs::read_to_string(dir.join(name))))
            .collect::<Vec<_>>()
    })
    .await
    .unwrap_or_default();
    for (name, result) in read {
        match result {
            Ok(text) => {
                let text: String = text.chars().take(MAX_FILE_CHARS).collect();
                out.push_str(&format!("\n\n## {name}\n\n{}", text.trim()));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                let path = workspace.join(name);
                tracing::warn!(path = %path.display(), error = %e, "cannot read bootstrap file")
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn includes_present_files_and_subagents_get_fewer() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("AGENTS.md"), "be kind").expect("write");
        std::fs::write(dir.path().join("SOUL.md"), "a soul").expect("write");
        let main = system_prompt(dir.path(), Some("extra"), false).await;
        assert!(
            main.contains("## AGENTS.md\n\nbe kind")
                && main.contains("a soul")
                && main.contains("extra")
        );
        let sub = system_prompt(dir.path(), None, true).await;
        assert!(sub.contains("be kind") && !sub.contains("a soul"));
    }
}
