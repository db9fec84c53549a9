//! `switchboard import openclaw`.
