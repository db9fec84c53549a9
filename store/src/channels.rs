//! Channel support rows: pairing requests and their bounds (both engines).

use super::decode::Columns;
use super::engine::engine_fns;
use super::Result;

/// What the store knows about a direct-message sender who is not on the allowlist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pairing {
    Approved,
    /// Waiting for approval; `notify` says whether to (re)send the code now.
    Pending {
        code: String,
        notify: bool,
    },
    /// A new sender, but the channel already has [`MAX_PENDING`] requests waiting: no code,
    /// no row (a flood of strangers cannot grow the table).
    Full,
    /// An operator rejected this sender's request within the last [`PAIRING_TTL_MS`]:
    /// ignored, no new code until then.
    Rejected,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PairingRow {
    pub channel: String,
    pub sender_id: String,
    pub sender_name: Option<String>,
    pub code: String,
    pub status: String,
    pub created_at: i64,
    pub approved_at: Option<i64>,
}

/// A `pairings` row, from either engine.
pub(super) fn decode_pairing(r: &impl Columns) -> Result<PairingRow> {
    Ok(PairingRow {
        channel: r.string("channel")?,
        sender_id: r.string("sender_id")?,
        sender_name: r.opt_string("sender_name")?,
        code: r.string("code")?,
        status: r.string("status")?,
        created_at: r.int("created_at")?,
        approved_at: r.opt_int("approved_at")?,
    })
}

/// How long a pairing code is valid; an expired request is deleted, and the sender gets a
/// new code when they write again.
pub const PAIRING_TTL_MS: i64 = 60 * 60 * 1000;

/// Pending requests per channel at most.
pub const MAX_PENDING: i64 = 20;

engine_fns! {
    pub async fn channel_state(&self, channel: &str, key: &str) -> Result<Option<String>>;
    pub async fn set_channel_state(&self, channel: &str, key: &str, value: &str) -> Result<()>;
    /// Record that a platform message was taken; false if it was taken before.
    pub async fn mark_inbound_seen(&self, channel: &str, message_id: &str) -> Result<bool>;
    /// The pairing state of a sender, creating a pending pairing with a fresh code on
    /// first contact (unless the channel has [`MAX_PENDING`] waiting). Requests older than
    /// [`PAIRING_TTL_MS`] expire.
    pub async fn pairing_for(&self, channel: &str, sender_id: &str, sender_name: Option<&str>) -> Result<Pairing>;
    /// Whether `sender_id` was let in on `channel` by pairing (read only: unlike
    /// [`Self::pairing_for`], a stranger gets no code).
    pub async fn pairing_approved(&self, channel: &str, sender_id: &str) -> Result<bool>;
    /// Approve a pending pairing by its code (case-insensitive, dashes ignored).
    pub async fn approve_pairing(&self, channel: &str, code: &str) -> Result<Option<PairingRow>>;
    /// Reject a pending pairing by its code: the sender is ignored, and gets no new code
    /// for [`PAIRING_TTL_MS`] (the rejection's clock is the row's `created_at`).
    pub async fn reject_pairing(&self, channel: &str, code: &str) -> Result<Option<PairingRow>>;
    /// Revoke an approved sender: the row goes, so their next message is a stranger's
    /// again (a new pairing code under dmPolicy "pairing").
    pub async fn revoke_pairing(&self, channel: &str, sender_id: &str) -> Result<Option<PairingRow>>;
    pub async fn list_pairings(&self) -> Result<Vec<PairingRow>>;
    /// [`Store::pairing_for`] at the time `now` (tests: expiry and reminders).
    #[cfg(test)]
    pub(crate) async fn pairing_at(&self, channel: &str, sender_id: &str, sender_name: Option<&str>, now: i64) -> Result<Pairing>;
}

/// How often a pending sender is reminded of their code.
pub(super) const RENOTIFY_MS: i64 = 10 * 60 * 1000;

/// A code as typed by an operator: case and dashes do not matter.
pub(super) fn normalized_code(code: &str) -> String {
    code.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_uppercase()
}

/// Eight characters from an alphabet without look-alikes (no 0/O, 1/I/L).
pub(super) fn new_code() -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";
    let bytes = uuid::Uuid::new_v4().into_bytes();
    bytes
        .iter()
        .take(8)
        .map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char)
        .collect()
}
