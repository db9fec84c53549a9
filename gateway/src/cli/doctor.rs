//! `switchboard doctor`.
