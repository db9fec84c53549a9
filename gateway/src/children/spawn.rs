//! Starting an `exec` command without copying the daemon: `clone(CLONE_VM | CLONE_VFORK)`,
//! the way `posix_spawn` starts a program, plus the two steps `posix_spawn` cannot take —
//! the parent-death signal and the check that the daemon is still the parent (see the
//! module above).
//!
//! Why not `fork`: `std::process::Command` forks as soon as it has a `pre_exec` hook, and
//! a fork copies the daemon's page tables and write-protects all of its memory until the
//! child has exec'd. On a daemon of tens of MB that is the largest part of what a
//! command costs beyond the command itself (the copy, the child's teardown of it at
//! `exec`, the TLB shootdowns, and a copy-on-write fault for each page any thread writes
//! meanwhile, on every worker, not only the one that spawned). Here the child borrows the
//! daemon's memory for the few system calls before `exec`, while the spawning thread
//! waits, and nothing is copied.
//!
//! The child runs on a stack of its own (mapped here, with a guard page) and makes only
//! raw system calls through libc: no allocation, no lock, no Rust runtime. Every signal
//! is blocked in the spawning thread across the `clone`, so no handler of the daemon's
//! runs on the child's side of the shared memory; the child sets every handled signal
//! back to its default before it unblocks them (as `posix_spawn` does), and SIGPIPE too
//! (Rust ignores it in the daemon; a command expects the default, as `Command` gives it).
//!
//! The child is waited for through a pidfd (`CLONE_PIDFD`, Linux 5.4+ for `waitid` on it),
//! readable when it exits: no SIGCHLD handling, and nothing else reaps it.

use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};

use rustix::process::{waitid, WaitId, WaitIdOptions};
use tokio::io::unix::AsyncFd;

/// The child's stack: a few system calls deep.
const STACK: usize = 64 * 1024;
const GUARD: usize = 4096;

/// What a command is started with.
pub struct Launch<'a> {
    /// A path with a `/`, or a bare name looked up in the `PATH` of `env` (the daemon's
    /// own `PATH` when `env` has none).
    pub program: &'a OsStr,
    /// The arguments after the program (its `argv[0]` is `program` as given).
    pub args: &'a [&'a OsStr],
    /// The whole environment: nothing of the daemon's is inherited.
    pub env: &'a [(String, String)],
    pub dir: &'a Path,
    /// Its stdin, stdout and stderr; the child gets copies, the caller keeps these. The
    /// child leads a process group of its own (`setpgid(0, 0)`), so that the whole group
    /// can be killed.
    pub stdio: [BorrowedFd<'a>; 3],
}

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
}

/// A started child, reaped by `wait`.
pub struct Child {
    pid: u32,
    pidfd: AsyncFd<OwnedFd>,
    exit: Option<Exit>,
}

impl Child {
    pub fn id(&self) -> u32 {
        self.pid
    }

    /// Wait until it exits (and reap it). Cancel-safe; after the first answer, the same
    /// answer again.
    pub async fn wait(&mut self) -> io::Result<Exit> {
        if let Some(exit) = self.exit {
            return Ok(exit);
        }
        loop {
            let mut ready = self.pidfd.readable().await?;
            let fd = self.pidfd.get_ref().as_fd();
            match waitid(
                WaitId::PidFd(fd),
                WaitIdOptions::EXITED | WaitIdOptions::NOHANG,
            ) {
                Ok(Some(status)) => {
                    let exit = match status.terminating_signal() {
                        Some(sig) => Exit::Signal(sig),
                        None => Exit::Code(status.exit_status().unwrap_or(0)),
                    };
                    self.exit = Some(exit);
                    return Ok(exit);
                }
                Ok(None) => ready.clear_ready(),
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// Start `launch`. An error when the program cannot be found or run, the folder entered,
/// or the daemon is going away; the child is gone (reaped) by then.
pub fn spawn(launch: &Launch<'_>) -> io::Result<Child> {
    let program = resolve(launch.program, launch.env)?;
    let cstr = |b: &[u8]| {
        CString::new(b).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte"))
    };
    let program_c = cstr(program.as_os_str().as_bytes())?;
    let mut argv_c = vec![cstr(launch.program.as_bytes())?];
    for a in launch.args {
        argv_c.push(cstr(a.as_bytes())?);
    }
    let envp_c = launch
        .env
        .iter()
        .map(|(k, v)| cstr(format!("{k}={v}").as_bytes()))
        .collect::<io::Result<Vec<_>>>()?;
    let dir_c = cstr(launch.dir.as_os_str().as_bytes())?;
    let argv = nul_terminated(&argv_c);
    let envp = nul_terminated(&envp_c);
    let args = raw::ChildArgs {
        program: program_c.as_ptr(),
        argv: argv.as_ptr(),
        envp: envp.as_ptr(),
        dir: dir_c.as_ptr(),
        fds: launch.stdio.map(|fd| fd.as_raw_fd()),
        daemon: rustix::process::getpid().as_raw_nonzero().get(),
        failed: AtomicI32::new(0),
    };
    let (pid, pidfd) = raw::clone_and_exec(&args)?;
    let failed = args.failed.load(Ordering::SeqCst);
    if failed != 0 {
        // It called `_exit` before `exec`: reap it at once.
        let _ = waitid(WaitId::PidFd(pidfd.as_fd()), WaitIdOptions::EXITED);
        return Err(io::Error::from_raw_os_error(failed));
    }
    Ok(Child {
        pid,
        pidfd: raw::register(pidfd)?,
        exit: None,
    })
}

/// An empty stdin for a child (`/dev/null`, close-on-exec in the daemon).
pub fn no_input() -> io::Result<OwnedFd> {
    Ok(rustix::fs::open(
        "/dev/null",
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )?)
}

/// `program` as `exec` will find it: itself when it names a path, else the first
/// executable file of that name in the child's `PATH` (the daemon's when the child has
/// none). Looked up here, where allocating is allowed, not in the child.
fn resolve(program: &OsStr, env: &[(String, String)]) -> io::Result<PathBuf> {
    if program.as_bytes().contains(&b'/') {
        return Ok(PathBuf::from(program));
    }
    let daemon_path = std::env::var_os("PATH");
    let path = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| OsStr::new(v.as_str()))
        .or(daemon_path.as_deref())
        .unwrap_or(OsStr::new("/usr/local/bin:/usr/bin:/bin"));
    std::env::split_paths(path)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(program))
        .find(|candidate| {
            candidate.is_file()
                && rustix::fs::access(candidate, rustix::fs::Access::EXEC_OK).is_ok()
        })
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("{} is not found in PATH", program.to_string_lossy()),
            )
        })
}

fn nul_terminated(strings: &[CString]) -> Vec<*const libc::c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect()
}

/// The one place of this module that is `unsafe`: the `clone` and what the child does
/// before `exec`.
#[allow(unsafe_code)]
mod raw {
    use super::*;
    use libc::{c_char, c_int, c_void};

    /// Everything the child reads, built by the parent before the `clone` and alive until
    /// it returns (the child has exec'd or exited by then: `CLONE_VFORK`).
    pub struct ChildArgs {
        pub program: *const c_char,
        pub argv: *const *const c_char,
        pub envp: *const *const c_char,
        pub dir: *const c_char,
        pub fds: [c_int; 3],
        pub daemon: libc::pid_t,
        /// The errno of the step that failed, written by the child before `_exit`.
        pub failed: AtomicI32,
    }

    /// The child's stack, unmapped on drop.
    struct Stack(*mut c_void);

    impl Stack {
        fn map() -> io::Result<Stack> {
            // SAFETY: a fresh anonymous private mapping, nothing else refers to it.
            let base = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    GUARD + STACK,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                    -1,
                    0,
                )
            };
            if base == libc::MAP_FAILED {
                return Err(io::Error::last_os_error());
            }
            let stack = Stack(base);
            // SAFETY: the lowest page of the mapping just made: an overflow faults.
            if unsafe { libc::mprotect(base, GUARD, libc::PROT_NONE) } != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(stack)
        }

        fn top(&self) -> *mut c_void {
            // Page-aligned, so 16-byte aligned as the ABI wants.
            self.0.wrapping_byte_add(GUARD + STACK)
        }
    }

    impl Drop for Stack {
        fn drop(&mut self) {
            // SAFETY: the mapping made in `map`, no longer used (the child has exec'd or
            // exited when `clone` returns).
            unsafe { libc::munmap(self.0, GUARD + STACK) };
        }
    }

    /// Clone a child that runs `child_main(args)` on its own stack, sharing the daemon's
    /// memory until it execs; returns its pid and pidfd once it has exec'd or exited.
    pub fn clone_and_exec(args: &ChildArgs) -> io::Result<(u32, OwnedFd)> {
        let stack = Stack::map()?;
        let mut pidfd: c_int = -1;
        // SAFETY: `all` and `old` are plain signal sets filled by libc; the mask is put
        // back before returning. `clone` runs `child_main` with a pointer to `args`,
        // which outlives the call (the parent is suspended until the child execs or
        // exits), on the stack mapped above; `pidfd` receives the child's pidfd
        // (`CLONE_PIDFD` writes it through the parent-tid pointer).
        let (pid, err) = unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old);
            let pid = libc::clone(
                child_main,
                stack.top(),
                libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_PIDFD | libc::SIGCHLD,
                args as *const ChildArgs as *mut c_void,
                &mut pidfd as *mut c_int,
            );
            let err = io::Error::last_os_error();
            libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
            (pid, err)
        };
        drop(stack);
        if pid < 0 {
            return Err(match err.raw_os_error() {
                // The flags are fixed: only a kernel that does not know them refuses them.
                Some(libc::EINVAL) => io::Error::new(
                    io::ErrorKind::Unsupported,
                    "this kernel cannot start commands with a pidfd (Linux 5.4 or later is needed)",
                ),
                _ => err,
            });
        }
        // SAFETY: the kernel made this descriptor for us (close-on-exec), owned from here.
        let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd) };
        Ok((pid as u32, pidfd))
    }

    /// `pidfd` in the runtime's reactor, for readability (the child's exit).
    pub fn register(pidfd: OwnedFd) -> io::Result<AsyncFd<OwnedFd>> {
        // SAFETY: an `OwnedFd` is open and stays the same descriptor until it is dropped,
        // which the `AsyncFd` owning it does last.
        let fd = unsafe { AsyncFd::register_with_interest(pidfd, tokio::io::Interest::READABLE) };
        Ok(fd?)
    }

    fn errno() -> c_int {
        // SAFETY: the calling thread's errno slot (in the child: the spawning thread's,
        // which is suspended until the child execs or exits).
        unsafe { *libc::__errno_location() }
    }

    /// The child, between `clone` and `exec`: system calls only.
    extern "C" fn child_main(arg: *mut c_void) -> c_int {
        // SAFETY: `arg` is the `&ChildArgs` given to `clone`, alive while the parent waits.
        let a = unsafe { &*(arg as *const ChildArgs) };
        let fail = |code: c_int| -> ! {
            a.failed.store(code.max(1), Ordering::SeqCst);
            // SAFETY: ends the child without running anything of the daemon's.
            unsafe { libc::_exit(127) }
        };
        // SAFETY: each call is a system call on values built by the parent; see the
        // module doc for why the order is this one.
        unsafe {
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) != 0
            {
                fail(errno());
            }
            // A daemon gone between the clone and the prctl never sends the signal.
            if libc::getppid() != a.daemon {
                fail(libc::ESRCH);
            }
            let mut dfl: libc::sigaction = std::mem::zeroed();
            dfl.sa_sigaction = libc::SIG_DFL;
            for sig in 1..65 {
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, std::ptr::null(), &mut old) != 0 {
                    continue;
                }
                let handled =
                    old.sa_sigaction != libc::SIG_DFL && old.sa_sigaction != libc::SIG_IGN;
                if handled || sig == libc::SIGPIPE {
                    libc::sigaction(sig, &dfl, std::ptr::null_mut());
                }
            }
            if libc::setpgid(0, 0) != 0 {
                fail(errno());
            }
            // Sources among 0..=2 move out of the way first, so that no `dup2` below
            // overwrites a source still to be copied.
            let mut fds = a.fds;
            for fd in fds.iter_mut() {
                if *fd <= 2 {
                    let moved = libc::fcntl(*fd, libc::F_DUPFD_CLOEXEC, 3);
                    if moved < 0 {
                        fail(errno());
                    }
                    *fd = moved;
                }
            }
            for (target, fd) in fds.into_iter().enumerate() {
                if libc::dup2(fd, target as c_int) < 0 {
                    fail(errno());
                }
            }
            if libc::chdir(a.dir) != 0 {
                fail(errno());
            }
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut none);
            libc::pthread_sigmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
            libc::execve(a.program, a.argv, a.envp);
            fail(errno())
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
#[path = "spawn_tests.rs"]
mod tests;
