//! Child processes that never outlive the daemon, even when it is killed with SIGKILL (no
//! shutdown code runs then): each one is spawned with the parent-death signal set
//! (Linux `PR_SET_PDEATHSIG`, SIGKILL), so the kernel kills it when the daemon dies.
//! Used for stdio MCP servers (`mcp/connect.rs`, through `Command` and `die_with_daemon`:
//! a fork, a few times per daemon's life) and `exec` commands (`agent/tools/exec/job.rs`,
//! through `spawn`, which shares the daemon's memory with the child until it execs instead
//! of copying it: every command pays for the spawn).
//!
//! Two caveats of the mechanism, and how they are met:
//! - The signal fires when the *thread* that forked the child exits, not the process.
//!   Children are spawned from async code, on the tokio runtime's worker threads, which
//!   live as long as the runtime (the daemon never calls `block_in_place`, which would
//!   hand a worker's place to a new thread and let the old one retire as an idle blocking
//!   thread). A child spawned inside `spawn_blocking` would die when that thread retires
//!   after ten idle seconds: none is.
//! - A daemon that dies between the fork and the `prctl` never sends the signal, so the
//!   child checks afterwards that its parent is still the daemon and refuses to start
//!   otherwise.
//!
//! The signal reaches the direct child only (the MCP server, the `sh` of a command, or
//! what `sh` exec'd): processes *it* started in its group are not signalled by the kernel;
//! an MCP server's own children see their stdin close with the daemon's pipes.

mod spawn;

pub use spawn::{no_input, spawn, Child, Exit, Launch};

use rustix::process::{getpid, getppid, set_parent_process_death_signal, Signal};

/// Makes `cmd`'s child die with the daemon (see the module doc).
pub fn die_with_daemon(cmd: &mut tokio::process::Command) {
    let daemon = getpid();
    // A daemon already gone: the child must not start (no allocation in the child).
    let gone = || std::io::Error::from(rustix::io::Errno::SRCH);
    let arm = move || -> std::io::Result<()> {
        set_parent_process_death_signal(Some(Signal::KILL))?;
        if getppid() != Some(daemon) {
            return Err(gone());
        }
        Ok(())
    };
    // SAFETY: `pre_exec` runs the closure in the forked child before `exec`, where only
    // async-signal-safe work is allowed. It makes two system calls (`prctl`, `getppid`)
    // through rustix's raw wrappers, takes no lock and allocates nothing (the error is a
    // raw OS error code). One of the crate's two audited `unsafe` (see `lib.rs`).
    #[allow(unsafe_code)]
    unsafe {
        cmd.pre_exec(arm);
    }
}
