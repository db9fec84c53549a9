//! Sub-agents (README, Sub-agents): `sessions_spawn`, the blocking `task` tool and `agents_list`, the announce step
//! and its rendering, durable archive timers, and stopping children. The registry itself
//! lives in the store (`subagent_runs`), updated in the same transaction as each
//! transition.

pub mod announce;
pub mod archive;
pub mod command;
pub mod control;
pub mod fan_in;
pub mod hooks;
pub mod progress;
pub mod progress_text;
pub mod progress_tool;
pub mod render;
pub mod spawn;
pub mod spawn_args;
pub mod task;
pub mod tool;
pub mod worktree;
