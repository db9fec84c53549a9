//! The system prompt: a base text, the agent's own prompt, and the workspace bootstrap
//! files (`AGENTS.md`, `TOOLS.md`, `SOUL.md`, `IDENTITY.md`, `USER.md`; sub-agents get
//! only `AGENTS.md` and `TOOLS.md`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

pub const MAIN_FILES: &[&str] = &["AGENTS.md", "TOOLS.md", "SOUL.md", "IDENTITY.md", "USER.md"];
pub const SUBAGENT_FILES: &[&str] = &["AGENTS.md", "TOOLS.md"];

/// Longest bootstrap file taken into the prompt, in characters; the rest is cut.
const MAX_FILE_CHARS: usize = 20_000;

/// How long the bootstrap files read for one run serve the runs after it: an edit to a
/// workspace file reaches every run that starts this long after it.
pub const FRESH_FOR: Duration = Duration::from_secs(1);

const BASE: &str = "You are an assistant reached through Switchboard, a chat gateway. \
Answer concisely; your reply is sent to the chat the message came from.";

/// The bootstrap files of each workspace as last read (main and sub-agent sets), kept
/// for `fresh_for`. Why: five file opens per turn (most of them of missing files) were
/// a few percent of the daemon's CPU under load.
pub struct Bootstrap {
    fresh_for: Duration,
    /// By (workspace, sub-agent set): when it was read, and the text.
    read: Mutex<HashMap<(PathBuf, bool), Read>>,
}

type Read = (Instant, Arc<str>);

impl Default for Bootstrap {
    fn default() -> Bootstrap {
        Bootstrap::new(FRESH_FOR)
    }
}

impl Bootstrap {
    pub fn new(fresh_for: Duration) -> Bootstrap {
        Bootstrap {
            fresh_for,
            read: Mutex::default(),
        }
    }

    /// The bootstrap section of the prompt for `workspace`: read again if the last read
    /// is older than `fresh_for`. (Workspaces are few: one per configured agent.)
    pub fn files(&self, workspace: &Path, is_subagent: bool) -> Arc<str> {
        let key = (workspace.to_path_buf(), is_subagent);
        if let Some((at, text)) = self.read.lock().get(&key) {
            if at.elapsed() < self.fresh_for {
                return text.clone();
            }
        }
        // Read outside the lock. At most a few small local files (bounded below), in the
        // page cache after the first read: less than a `spawn_blocking` round trip.
        let text: Arc<str> = read_files(workspace, is_subagent).into();
        self.read.lock().insert(key, (Instant::now(), text.clone()));
        text
    }
}

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

/// The bootstrap files of `workspace` as prompt sections. Missing files are skipped;
/// unreadable ones are logged.
fn read_files(workspace: &Path, is_subagent: bool) -> String {
    let files = if is_subagent {
        SUBAGENT_FILES
    } else {
        MAIN_FILES
    };
    let mut out = String::new();
    for name in files {
        let path = workspace.join(name);
        match read_bounded(&path) {
            Ok(text) => {
                let text: String = text.chars().take(MAX_FILE_CHARS).collect();
                out.push_str(&format!("\n\n## {name}\n\n{}", text.trim()));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "cannot read bootstrap file")
            }
        }
    }
    out
}

/// Build the system prompt around `files` (from [`Bootstrap::files`]).
pub fn system_prompt(files: &str, agent_prompt: Option<&str>, is_subagent: bool) -> String {
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
    out.push_str(files);
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
        let files = Bootstrap::new(FRESH_FOR);
        let main = system_prompt(&files.files(dir.path(), false), Some("extra"), false);
        assert!(
            main.contains("## AGENTS.md\n\nbe kind")
                && main.contains("a soul")
                && main.contains("extra")
        );
        let sub = system_prompt(&files.files(dir.path(), true), None, true);
        assert!(sub.contains("be kind") && !sub.contains("a soul"));
    }

    #[test]
    fn files_are_read_again_once_the_last_read_is_stale() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("AGENTS.md"), "first").expect("write");
        let kept = Bootstrap::new(Duration::from_secs(3600));
        let always = Bootstrap::new(Duration::ZERO);
        assert!(kept.files(dir.path(), false).contains("first"));
        assert!(always.files(dir.path(), false).contains("first"));
        std::fs::write(dir.path().join("AGENTS.md"), "second").expect("write");
        assert!(
            kept.files(dir.path(), false).contains("first"),
            "still fresh"
        );
        assert!(always.files(dir.path(), false).contains("second"), "stale");
        // Main and sub-agent sets are kept apart.
        assert!(kept.files(dir.path(), true).contains("second"));
    }
}
