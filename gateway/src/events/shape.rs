//! The parts of an event's JSON that a plain derive cannot say: statuses as their stored
//! names, fields written twice or computed (`ok`, a spawn's, announce's and archive's
//! `sessionKey`), and the checkpoint's `run.ended`, which names neither `error` nor
//! `reply`. Each reads back what it writes (the extra keys are ignored when read).

use serde::de::Error as _;
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::RunEnded;
use crate::store::{ApprovalStatus, RunStatus};

/// A [`RunStatus`] read from its stored name (`succeeded`, `interrupted`, …); the
/// `Serialize` of [`RunEnded`] below writes it.
pub fn run_status<'de, D: Deserializer<'de>>(d: D) -> Result<RunStatus, D::Error> {
    let name = <std::borrow::Cow<'de, str>>::deserialize(d)?;
    RunStatus::parse(&name).map_err(|_| D::Error::custom(format!("unknown status `{name}`")))
}

/// An [`ApprovalStatus`] as its stored name (`allow-once`, `expired`, …).
pub mod approval_status {
    use super::*;

    pub fn serialize<S: Serializer>(status: &ApprovalStatus, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(status.as_str())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<ApprovalStatus, D::Error> {
        let name = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        ApprovalStatus::parse(&name)
            .map_err(|_| D::Error::custom(format!("unknown decision `{name}`")))
    }
}

/// A tool call's error (flattened): `error` and `ok` (`true` when there is none).
pub mod tool_outcome {
    use super::*;

    #[derive(Serialize)]
    struct Out<'a> {
        error: Option<&'a str>,
        ok: bool,
    }

    #[derive(Deserialize)]
    struct In {
        #[serde(default)]
        error: Option<String>,
    }

    pub fn serialize<S: Serializer>(error: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
        Out {
            error: error.as_deref(),
            ok: error.is_none(),
        }
        .serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
        In::deserialize(d).map(|i| i.error)
    }
}

/// A spawn's requester (flattened): `requester`, and `sessionKey` (the event is its).
pub mod requester {
    use super::*;

    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Out<'a> {
        requester: &'a str,
        session_key: &'a str,
    }

    #[derive(Deserialize)]
    struct In {
        requester: String,
    }

    pub fn serialize<S: Serializer>(requester: &str, s: S) -> Result<S::Ok, S::Error> {
        Out {
            requester,
            session_key: requester,
        }
        .serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
        In::deserialize(d).map(|i| i.requester)
    }
}

/// A child's session key (flattened): `childSessionKey`, and `sessionKey` (the event is
/// the child's).
pub mod child {
    use super::*;

    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Out<'a> {
        child_session_key: &'a str,
        session_key: &'a str,
    }

    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct In {
        child_session_key: String,
    }

    pub fn serialize<S: Serializer>(child: &str, s: S) -> Result<S::Ok, S::Error> {
        Out {
            child_session_key: child,
            session_key: child,
        }
        .serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
        In::deserialize(d).map(|i| i.child_session_key)
    }
}

/// The one hand-written `Serialize`: the fields `RunEnded` derives `Deserialize` for, but
/// a checkpoint (`interrupted`: the run resumes at the next start) names neither `error`
/// nor `reply`, as docs/events.md promises. The round-trip and golden tests keep the two
/// directions together.
impl Serialize for RunEnded {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let checkpoint = self.status == RunStatus::Interrupted;
        let mut st = s.serialize_struct("RunEnded", if checkpoint { 4 } else { 6 })?;
        st.serialize_field("sessionKey", &self.session_key)?;
        st.serialize_field("runId", &self.run_id)?;
        st.serialize_field("status", self.status.as_str())?;
        if checkpoint {
            st.skip_field("error")?;
            st.skip_field("reply")?;
        } else {
            st.serialize_field("error", &self.error)?;
            st.serialize_field("reply", &self.reply)?;
        }
        st.serialize_field("claimed", &self.claimed)?;
        st.end()
    }
}
