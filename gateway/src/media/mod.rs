//! Media in and out (docs/media.md): files a chat sends are stored in the agent's
//! `inbox/` (`receive`, with safe names from `names`) and noted in the message (`note`);
//! voice is transcribed (`transcribe`); images reach vision models at request time
//! (`agent::context::inline`, types from `sniff`); a file the agent sends is copied for the outbox
//! (`agent::tools::outgoing`) and removed when no longer needed (`sweep`).
//!
//! Architecture invariant: a file name, type or size from outside is never used as is:
//! names pass `names::sanitize`, types are read from the bytes or `receive::clean_mime`,
//! sizes are counted while reading.

pub mod names;
pub mod note;
pub mod receive;
pub mod sniff;
pub mod sweep;
pub mod transcribe;

/// The workspace folder received files are stored in.
pub const INBOX: &str = "inbox";

/// Where web chat uploads wait for the message that names them.
pub fn upload_dir(state_dir: &std::path::Path) -> std::path::PathBuf {
    state_dir.join("media").join("webchat")
}
