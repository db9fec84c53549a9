//! Serde helpers for platform ids, shared with the channels' own config sections
//! (`switchboard_channels::ids`).

pub(crate) use switchboard_channels::ids::*;
