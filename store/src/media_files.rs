//! Which outgoing file copies (`media::outgoing`) the outbox still needs (both engines):
//! the sweep (`media::sweep`) removes every other copy.

use super::engine::engine_fns;
use super::Result;

engine_fns! {
    /// The `file` JSON of the outbox rows that still need their copy: pending or being
    /// sent, or sent to `keep_channel` (the web chat, whose copy is its download) at or
    /// after `kept_since` (unix ms).
    pub async fn outbox_files_held(&self, keep_channel: &str, kept_since: i64) -> Result<Vec<String>>;
    /// The channel and `file` JSON of the outbox row `key`, if it has a file (the web
    /// chat's history shows a sent file's download button again).
    pub async fn outbox_file(&self, key: &str) -> Result<Option<(String, String)>>;
}
