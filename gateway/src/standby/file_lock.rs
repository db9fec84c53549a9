//! One process per SQLite database file: an exclusive `flock` on `<database>.lock`, held
//! for the process's life. The kernel drops it when the process ends, however it ends
//! (SIGKILL included), so a second `switchboard run` on the same file stands by — binding
//! nothing, polling nothing — and takes over as soon as the first is gone: the model of the
//! PostgreSQL lease, with the kernel as the clock. The file holds the holder's pid, for
//! the standby's log line. CLI commands never take it: they may run beside the daemon.

use std::fs::{File, OpenOptions};
use std::io::{self, Read as _, Seek as _, Write as _};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rustix::fs::{flock, FlockOperation};
use tokio_util::sync::CancellationToken;

/// How often a standby tries the lock again.
const POLL: Duration = Duration::from_millis(250);

/// The held lock; dropping it (or the process ending) releases it.
#[derive(Debug)]
pub struct FileLock {
    _file: File,
}

/// The lock file of the database file `db`: `<db>.lock` beside it.
pub fn lock_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// Takes the lock at `path` if it is free: `Ok(None)` while another process holds it.
pub fn try_lock(path: &Path) -> io::Result<Option<FileLock>> {
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)?;
    match flock(&file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => {}
        Err(rustix::io::Errno::WOULDBLOCK) => return Ok(None),
        Err(e) => return Err(e.into()),
    }
    file.set_len(0)?;
    file.rewind()?;
    writeln!(file, "{}", std::process::id())?;
    Ok(Some(FileLock { _file: file }))
}

/// The pid the holder wrote, if readable.
fn holder(path: &Path) -> Option<u32> {
    let mut text = String::new();
    File::open(path).ok()?.read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

/// Waits until this process holds the lock of database file `db` (`Some`), standing by
/// while another holds it, or until `shutdown` fires (`None`). A lock file that cannot be
/// used at all (a read-only directory) is reported and the process goes on unguarded:
/// SQLite itself then says whether it can write there.
pub async fn acquire(db: &Path, shutdown: &CancellationToken) -> Option<Option<FileLock>> {
    let path = lock_path(db);
    let mut told = false;
    loop {
        match try_lock(&path) {
            Ok(Some(lock)) => {
                if told {
                    tracing::info!(db = %db.display(), "the other process is gone; taking over");
                }
                return Some(Some(lock));
            }
            Ok(None) => {
                if !told {
                    let pid = holder(&path)
                        .map_or("another process".to_owned(), |p| format!("process {p}"));
                    tracing::info!(db = %db.display(), "standing by: {pid} is active on this database");
                    told = true;
                }
            }
            Err(e) => {
                tracing::warn!(lock = %path.display(), error = %e, "cannot lock the database file; a second process on it would not be held off");
                return Some(None);
            }
        }
        tokio::select! {
            () = tokio::time::sleep(POLL) => {}
            () = shutdown.cancelled() => return None,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// `flock` locks belong to an open file, so two opens in one process contend like two
    /// processes. (Catches: a second holder let in; the lock kept after its holder is gone.)
    #[test]
    fn a_second_holder_waits_until_the_first_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let path = lock_path(&dir.path().join("switchboard.db"));
        assert_eq!(path.file_name().unwrap(), "switchboard.db.lock");
        let first = try_lock(&path).unwrap().expect("free");
        assert!(try_lock(&path).unwrap().is_none(), "held by the first");
        assert_eq!(holder(&path), Some(std::process::id()));
        drop(first);
        assert!(try_lock(&path).unwrap().is_some(), "free again");
    }

    /// Only a SQLite file is locked: a PostgreSQL URL or an in-memory database has no file.
    #[test]
    fn only_a_database_file_has_a_lock() {
        use crate::store::health::sqlite_file;
        assert_eq!(sqlite_file("postgres://u:p@db/sb"), None);
        assert_eq!(sqlite_file("sqlite::memory:"), None);
        assert_eq!(
            sqlite_file("sqlite:///var/lib/sb/data/switchboard.db").map(|f| lock_path(&f)),
            Some(PathBuf::from("/var/lib/sb/data/switchboard.db.lock"))
        );
    }

    #[tokio::test]
    async fn a_standby_stops_at_once_on_shutdown() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("switchboard.db");
        let _held = try_lock(&lock_path(&db)).unwrap().unwrap();
        let shutdown = CancellationToken::new();
        shutdown.cancel();
        assert!(acquire(&db, &shutdown).await.is_none());
    }
}
