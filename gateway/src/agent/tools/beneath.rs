//! Opening the file `paths::confine` checked, and nothing else: the check resolves the
//! path's symlinks, but the agent may run commands that swap a folder of that path for a
//! symlink between the check and the open. So a confined path is opened from a handle on
//! the workspace with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`, one folder at a
//! time for writes: a symlink found on the way (the resolved path has none) is refused,
//! and nothing outside the workspace is reached. A kernel without `openat2` (before 5.6,
//! or a seccomp profile that refuses it) gets the paths opened as they are, with a
//! warning once.

use std::fs::File;
use std::io::{self, Write as _};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{Mode, OFlags, ResolveFlags};

/// A file of the file tools: beneath the workspace, or (`tools.fs.workspaceOnly` off) a
/// path taken as it is.
pub enum Target {
    Beneath {
        /// The workspace, opened as a folder.
        root: OwnedFd,
        /// The checked path, relative to the workspace, without symlinks.
        rel: PathBuf,
        /// The same path, for the fallback.
        path: PathBuf,
    },
    Path(PathBuf),
}

/// Permission bits a written file keeps from the file it replaces: setuid and setgid are
/// dropped (a file the agent wrote must not run with its owner's or group's rights).
const KEPT_MODE: u32 = 0o1777;

/// Whether the fallback's warning was logged.
static WARNED: AtomicBool = AtomicBool::new(false);

fn resolve() -> ResolveFlags {
    ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS
}

/// `openat2` is missing or refused here: the caller falls back to the path.
fn unsupported(e: &rustix::io::Errno) -> bool {
    let missing = *e == rustix::io::Errno::NOSYS || *e == rustix::io::Errno::PERM;
    if missing && !WARNED.swap(true, Ordering::Relaxed) {
        tracing::warn!(
            "openat2 is not available: the file tools open checked paths by name (a symlink swapped in meanwhile could lead outside the workspace)"
        );
    }
    missing
}

/// A symlink met on the way, or a path leading outside: said plainly.
fn moved(e: rustix::io::Errno) -> io::Error {
    if e == rustix::io::Errno::LOOP || e == rustix::io::Errno::XDEV {
        io::Error::other("the path changed while it was opened (a symlink appeared on it); refused")
    } else {
        e.into()
    }
}

impl Target {
    /// The target for `resolved` (what `confine` returned) in `workspace`.
    pub fn new(workspace: &Path, resolved: &Path, confined: bool) -> io::Result<Target> {
        if !confined {
            return Ok(Target::Path(resolved.to_path_buf()));
        }
        let ws = workspace.canonicalize()?;
        let rel = resolved
            .strip_prefix(&ws)
            .map_err(|_| io::Error::other("the path is outside the workspace"))?
            .to_path_buf();
        let root = rustix::fs::open(
            &ws,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(Target::Beneath {
            root,
            rel,
            path: resolved.to_path_buf(),
        })
    }

    /// The file, opened for reading (never blocking on a FIFO: the caller refuses what is
    /// not a regular file).
    pub fn open_read(&self) -> io::Result<File> {
        let flags = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK;
        match self {
            Target::Beneath { root, rel, path } => {
                let rel: &Path = if rel.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    rel
                };
                match rustix::fs::openat2(root, rel, flags, Mode::empty(), resolve()) {
                    Ok(fd) => Ok(File::from(fd)),
                    Err(e) if unsupported(&e) => open_path(path, flags),
                    Err(e) => Err(moved(e)),
                }
            }
            Target::Path(path) => open_path(path, flags),
        }
    }

    /// Replace the file's content atomically: a temp file beside it, synced, renamed over
    /// it (an existing file keeps its permissions, less setuid and setgid), the folder synced. Missing folders on
    /// the way are created.
    pub fn write_atomic(&self, content: &[u8]) -> io::Result<()> {
        match self {
            Target::Beneath { root, rel, path } => match folder_beneath(root, rel) {
                Ok(dir) => write_in(&dir, file_name(rel)?, content),
                Err(Folder::Unsupported) => write_by_path(path, content),
                Err(Folder::Failed(e)) => Err(e),
            },
            Target::Path(path) => write_by_path(path, content),
        }
    }
}

fn open_path(path: &Path, flags: OFlags) -> io::Result<File> {
    Ok(File::from(rustix::fs::open(path, flags, Mode::empty())?))
}

fn file_name(path: &Path) -> io::Result<&std::ffi::OsStr> {
    path.file_name()
        .ok_or_else(|| io::Error::other("the path names no file"))
}

fn write_by_path(path: &Path, content: &[u8]) -> io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| io::Error::other("the path has no folder"))?;
    std::fs::create_dir_all(dir)?;
    let dir = rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    write_in(&dir, file_name(path)?, content)
}

/// Why no folder handle was made.
enum Folder {
    /// `openat2` is not available here.
    Unsupported,
    Failed(io::Error),
}

/// The folder of `rel` beneath `root`, created folder by folder as needed, each opened
/// without following a symlink.
fn folder_beneath(root: &OwnedFd, rel: &Path) -> Result<OwnedFd, Folder> {
    let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let mut dir =
        rustix::fs::openat2(root, ".", dir_flags, Mode::empty(), resolve()).map_err(|e| {
            if unsupported(&e) {
                Folder::Unsupported
            } else {
                Folder::Failed(moved(e))
            }
        })?;
    for part in rel.parent().unwrap_or(Path::new("")).components() {
        let Component::Normal(name) = part else {
            return Err(Folder::Failed(io::Error::other(
                "the path has a part that is not a name",
            )));
        };
        match rustix::fs::mkdirat(&dir, name, Mode::from_raw_mode(0o777)) {
            Ok(()) | Err(rustix::io::Errno::EXIST) => {}
            Err(e) => return Err(Folder::Failed(e.into())),
        }
        dir = rustix::fs::openat2(&dir, name, dir_flags, Mode::empty(), resolve())
            .map_err(|e| Folder::Failed(moved(e)))?;
    }
    Ok(dir)
}

/// The temp file, written and synced, renamed over `name` in `dir`; `dir` synced.
fn write_in(dir: &OwnedFd, name: &std::ffi::OsStr, content: &[u8]) -> io::Result<()> {
    let existing = match rustix::fs::statat(dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => Some(st),
        Err(rustix::io::Errno::NOENT) => None,
        Err(e) => return Err(e.into()),
    };
    if let Some(st) = &existing {
        if rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Directory {
            return Err(io::Error::other("it is a folder, not a file"));
        }
    }
    let tmp = format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        uuid::Uuid::new_v4().simple()
    );
    let result = (|| {
        let fd = rustix::fs::openat(
            dir,
            tmp.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC | OFlags::NOFOLLOW,
            Mode::from_raw_mode(0o666),
        )?;
        if let Some(st) = &existing {
            rustix::fs::fchmod(&fd, Mode::from_raw_mode(st.st_mode & KEPT_MODE))?;
        }
        let mut f = File::from(fd);
        f.write_all(content)?;
        f.sync_all()?;
        rustix::fs::renameat(dir, tmp.as_str(), dir, name)?;
        rustix::fs::fsync(dir.as_fd())?;
        io::Result::Ok(())
    })();
    if result.is_err() {
        let _ = rustix::fs::unlinkat(dir, tmp.as_str(), rustix::fs::AtFlags::empty());
    }
    result
}
