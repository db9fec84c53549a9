//! Test support.
pub mod browser;
pub mod fake_model;
pub mod harness;
pub mod fake_telegram;
