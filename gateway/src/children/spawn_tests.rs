//! `spawn` against the real kernel: what the child gets (argv, environment, folder,
//! descriptors, signal state, process group) and how its end is told.

use std::ffi::OsStr;
use std::os::fd::{AsFd, AsRawFd};
use std::path::Path;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::pipe;

use super::{no_input, spawn, Exit, Launch};

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Runs `sh -c script` in `dir` with `env`, stdin from `stdin` (or empty): its exit and
/// its output (stdout and stderr).
async fn sh(
    script: &str,
    dir: &Path,
    env: &[(String, String)],
    stdin: Option<&[u8]>,
) -> (Exit, String) {
    let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).unwrap();
    let (stdin_child, feed) = match stdin {
        Some(_) => {
            let (r, w) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).unwrap();
            (r, Some(pipe::Sender::from_owned_fd(w).unwrap()))
        }
        None => (no_input().unwrap(), None),
    };
    let args = [OsStr::new("-c"), OsStr::new(script)];
    let mut child = spawn(&Launch {
        program: OsStr::new("sh"),
        args: &args,
        env,
        dir,
        stdio: [stdin_child.as_fd(), write.as_fd(), write.as_fd()],
    })
    .unwrap();
    drop((write, stdin_child));
    if let (Some(mut feed), Some(data)) = (feed, stdin) {
        feed.write_all(data).await.unwrap();
    }
    let mut out = String::new();
    pipe::Receiver::from_owned_fd(read)
        .unwrap()
        .read_to_string(&mut out)
        .await
        .unwrap();
    (child.wait().await.unwrap(), out)
}

/// Catches: a child that inherits the daemon's environment or folder, or loses an argument.
#[tokio::test]
async fn the_child_gets_its_arguments_environment_and_folder() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().canonicalize().unwrap();
    let e = env(&[("PATH", "/usr/bin:/bin"), ("GREETING", "hi there")]);
    let (exit, out) = sh(
        r#"printf '%s|%s|%s' "$GREETING" "$(pwd)" "${HOME-unset}""#,
        &dir,
        &e,
        None,
    )
    .await;
    assert_eq!(exit, Exit::Code(0));
    assert_eq!(out, format!("hi there|{}|unset", dir.display()));
}

/// Catches: exit codes or signals told wrong, or a second `wait` that errs.
#[tokio::test]
async fn exit_codes_and_signals_are_told_apart() {
    let e = env(&[("PATH", "/usr/bin:/bin")]);
    let tmp = std::env::temp_dir();
    assert_eq!(sh("exit 3", &tmp, &e, None).await.0, Exit::Code(3));
    assert_eq!(
        sh("kill -TERM $$", &tmp, &e, None).await.0,
        Exit::Signal(15)
    );
}

/// The daemon ignores SIGPIPE and handles others; a command starts as from a shell: none
/// of the standard signals ignored, none blocked (as `Command` leaves it). Signals 32 and
/// up are the C library's and the real-time ones, as the daemon got them.
/// Catches: `yes | head` hanging or erring in a command because SIGPIPE stayed ignored.
#[tokio::test]
async fn the_child_starts_with_default_signals() {
    let _ = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).unwrap();
    let e = env(&[("PATH", "/usr/bin:/bin")]);
    let (exit, out) = sh(
        "grep -E '^Sig(Ign|Blk)' /proc/self/status",
        &std::env::temp_dir(),
        &e,
        None,
    )
    .await;
    assert_eq!(exit, Exit::Code(0));
    let mask = |name: &str| {
        let line = out.lines().find(|l| l.starts_with(name)).unwrap();
        u64::from_str_radix(line.split('\t').nth(1).unwrap(), 16).unwrap()
    };
    assert_eq!(mask("SigBlk:"), 0, "{out}");
    assert_eq!(mask("SigIgn:") & 0x7fff_ffff, 0, "{out}");
}

/// Catches: stdin not connected, or its pipe kept open in the child twice (no EOF).
#[tokio::test]
async fn stdin_is_the_callers_pipe() {
    let e = env(&[("PATH", "/usr/bin:/bin")]);
    let (exit, out) = sh("cat; echo done", &std::env::temp_dir(), &e, Some(b"fed\n")).await;
    assert_eq!(exit, Exit::Code(0));
    assert_eq!(out, "fed\ndone\n");
}

/// Catches: a child in the daemon's process group (killing the command's group would
/// kill the daemon's other children too), or one that is not the daemon's own child (its
/// parent-death signal would follow another process; `tests/suite/tools_exec.rs` kills a
/// daemon and watches its command die).
#[tokio::test]
async fn the_child_leads_its_own_group_as_the_daemons_child() {
    let e = env(&[("PATH", "/usr/bin:/bin")]);
    let (exit, out) = sh(
        // The shell's own pid, parent and group, from the kernel (no `ps` needed).
        "read -r pid comm state ppid pgrp rest < /proc/self/stat; echo \"$pid $ppid $pgrp\"",
        &std::env::temp_dir(),
        &e,
        None,
    )
    .await;
    assert_eq!(exit, Exit::Code(0));
    let ids: Vec<u32> = out.split_whitespace().map(|n| n.parse().unwrap()).collect();
    let [pid, ppid, pgrp] = ids[..] else {
        panic!("{out}")
    };
    assert_eq!(pgrp, pid, "the command leads a group of its own");
    assert_eq!(ppid, std::process::id());
}

/// Catches: a failure before `exec` reported as a started command.
#[tokio::test]
async fn a_command_that_cannot_start_is_an_error() {
    let e = env(&[("PATH", "/usr/bin:/bin")]);
    let null = no_input().unwrap();
    let launch = |program: &'static str, dir: &'static str| Launch {
        program: OsStr::new(program),
        args: &[],
        env: &e,
        dir: Path::new(dir),
        stdio: [null.as_fd(), null.as_fd(), null.as_fd()],
    };
    let missing = spawn(&launch("no-such-program-here", "/")).err().unwrap();
    assert_eq!(missing.kind(), std::io::ErrorKind::NotFound, "{missing}");
    let not_exec = spawn(&launch("/dev/null", "/")).err().unwrap();
    assert_eq!(not_exec.raw_os_error(), Some(libc::EACCES), "{not_exec}");
    let no_dir = spawn(&launch("/bin/true", "/no/such/folder"))
        .err()
        .unwrap();
    assert_eq!(no_dir.raw_os_error(), Some(libc::ENOENT), "{no_dir}");
}

/// Many spawns at once from every worker: each child reads its own arguments (the
/// shared-memory window of one spawn never mixes with another's).
/// Catches: a child reading another spawn's arguments, or a spawn that never returns.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_spawns_each_run_their_own_command() {
    let e = env(&[("PATH", "/usr/bin:/bin")]);
    let runs = (0..64).map(|i| {
        let e = e.clone();
        tokio::spawn(async move {
            let (exit, out) = sh(&format!("echo {i}"), &std::env::temp_dir(), &e, None).await;
            assert_eq!(exit, Exit::Code(0));
            assert_eq!(out, format!("{i}\n"));
        })
    });
    for run in runs.collect::<Vec<_>>() {
        run.await.unwrap();
    }
}

/// The attack: a command that looks for the daemon's open files (its database, its
/// sockets, the pidfds of other commands) to read or write them. It has its stdin, stdout
/// and stderr, and nothing the daemon opened close-on-exec (as the daemon opens all of
/// its files); only a descriptor the daemon itself inherited without that flag passes on.
/// Catches: a descriptor the spawn opened or moved (a pidfd, a source moved out of
/// 0..=2) left open across `exec`.
#[tokio::test]
async fn the_child_sees_none_of_the_daemons_descriptors() {
    let e = env(&[("PATH", "/usr/bin:/bin")]);
    let secret = tempfile::tempfile().unwrap();
    let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).unwrap();
    let null = no_input().unwrap();
    // One command running (its pidfd open in the daemon) while the next one starts.
    let spawn_cat = || {
        spawn(&Launch {
            program: OsStr::new("cat"),
            args: &[],
            env: &e,
            dir: Path::new("/"),
            stdio: [read.as_fd(), null.as_fd(), null.as_fd()],
        })
        .unwrap()
    };
    let mut first = spawn_cat();
    let mut second = spawn_cat();
    // `cat` waits on its stdin: what it holds is what it got. The kernel lets the spawn
    // return as soon as the child has its new memory, a moment before it closes the
    // close-on-exec descriptors (still before the program runs), so look until that is
    // done; a descriptor that stays is the leak.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let held = loop {
        let held: Vec<i32> = std::fs::read_dir(format!("/proc/{}/fd", second.id()))
            .unwrap()
            .map(|f| f.unwrap().file_name().to_string_lossy().parse().unwrap())
            .collect();
        // The daemon's own `fd` must lack close-on-exec (`flags:` in its fdinfo, octal).
        let leaked = held.iter().copied().filter(|fd| *fd > 2).find(|fd| {
            let info =
                std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}")).unwrap_or_default();
            let flags = info
                .lines()
                .find_map(|l| l.strip_prefix("flags:"))
                .and_then(|f| u32::from_str_radix(f.trim(), 8).ok());
            flags.is_none_or(|f| f & libc::O_CLOEXEC as u32 != 0)
        });
        match leaked {
            None => break held,
            Some(fd) => assert!(
                std::time::Instant::now() < deadline,
                "the command holds {fd}, which the daemon has close-on-exec or not at all: {held:?}"
            ),
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    };
    assert!(!held.contains(&secret.as_raw_fd()), "{held:?}");
    assert!(
        !held.contains(&first.pidfd.get_ref().as_raw_fd()),
        "{held:?}"
    );
    // Their stdin's last write end closes: both see EOF and end.
    drop((read, write, secret, null));
    assert_eq!(first.wait().await.unwrap(), Exit::Code(0));
    assert_eq!(second.wait().await.unwrap(), Exit::Code(0));
}
