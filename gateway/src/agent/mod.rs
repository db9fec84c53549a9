//! Agent runs: dispatching messages into runs, the run loop, model providers, model
//! resolution, the system prompt, and tools.

pub mod context;
pub mod dispatch;
mod error;
pub mod hooks;
pub mod models;
pub mod outages;
pub mod prompt;
pub mod provider;
pub mod run;
pub mod tools;
mod transcript;
pub mod usage;

pub use error::AgentError;
