//! `switchboard cron list|add|rm|run`.
