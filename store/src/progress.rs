//! A sub-agent's posted progress line (both engines).

use super::decode::Columns;
use super::engine::engine_fns;
use super::Result;

/// A posted progress line: the platform's handle of the message and what it shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgressLine {
    pub child_session_key: String,
    pub channel: String,
    pub chat_id: String,
    pub thread_id: Option<String>,
    pub message_id: String,
    pub text: String,
    /// When it was last posted or edited (ms since the epoch).
    pub updated_at: i64,
}

/// A `progress_lines` row, from either engine.
pub(super) fn decode_progress(r: &impl Columns) -> Result<ProgressLine> {
    Ok(ProgressLine {
        child_session_key: r.string("child_session_key")?,
        channel: r.string("channel")?,
        chat_id: r.string("chat_id")?,
        thread_id: r.opt_string("thread_id")?,
        message_id: r.string("message_id")?,
        text: r.string("text")?,
        updated_at: r.int("updated_at")?,
    })
}

engine_fns! {
    /// The line of a child, if one was posted.
    pub async fn progress_line(&self, child_session_key: &str) -> Result<Option<ProgressLine>>;
    /// Record a child's line as posted (a new message replaces the one before) or edited;
    /// `updated_at` is set to now. Only while the child's session is active: archiving it
    /// deletes its line (`archive_session`), and a last edit that lands after that is not
    /// recorded again, so the table holds the lines of live children only.
    pub async fn save_progress_line(&self, line: &ProgressLine) -> Result<()>;
    /// The children whose run has ended and whose line is still stored (their session not
    /// archived yet): at start, their lines are brought to how they ended, since an end
    /// edit that a stop cut short lived in memory only.
    pub async fn ended_children_with_lines(&self) -> Result<Vec<String>>;
}
