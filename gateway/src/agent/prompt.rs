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

/// The first `MAX_FILE_CHARS` characters' worth of bytes of a file, as text (invalid
/// UTF-8 replaced).
fn read_bounded(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_FILE_CHARS as u64 * 4)
        .read_to_end(&mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Build the system prompt. Missing files are skipped; unreadable ones are logged.
pub fn system_prompt(workspace: &Path, agent_prompt: Option<&str>, is_subagent: bool) -> String {
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
    // Read here rather than on the blocking pool: at most a few small local files
    // (bounded below), in the page cache after the first turn, cost microseconds, less
    // than the two thread hand-offs of `spawn_blocking` on every turn.
    let read = files
        .iter()
        .map(|name| (*name, read_bounded(&workspace.join(name))));
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

    #[test]
    fn includes_present_files_and_subagents_get_fewer() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("AGENTS.md"), "be kind").expect("write");
        std::fs::write(dir.path().join("SOUL.md"), "a soul").expect("write");
        let main = system_prompt(dir.path(), Some("extra"), false);
        assert!(
            main.contains("## AGENTS.md\n\nbe kind")
                && main.contains("a soul")
                && main.contains("extra")
        );
        let sub = system_prompt(dir.path(), None, true);
        assert!(sub.contains("be kind") && !sub.contains("a soul"));
    }
}
