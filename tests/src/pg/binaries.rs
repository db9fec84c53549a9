//! Where the PostgreSQL server binaries are, and which user runs them: `initdb` refuses to
//! run as root, so a test process running as root runs them as the `postgres` user that
//! Debian's package creates.

use std::ffi::OsString;
use std::os::unix::fs::chown;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context as _};

/// Where Debian installs each major version's server binaries: `<root>/<version>/bin`.
const DEBIAN_ROOT: &str = "/usr/lib/postgresql";
/// The system user Debian's `postgresql` package creates.
const SERVER_USER: &str = "postgres";

/// The server binaries of the newest installed PostgreSQL.
pub(super) struct Binaries {
    pub(super) initdb: PathBuf,
    pub(super) pg_ctl: PathBuf,
}

impl Binaries {
    /// The newest `/usr/lib/postgresql/<version>/bin`, else `initdb` and `pg_ctl` on `PATH`.
    pub(super) fn find() -> anyhow::Result<Binaries> {
        Binaries::find_in(Path::new(DEBIAN_ROOT), std::env::var_os("PATH"))
    }

    /// [`Binaries::find`] with Debian's root and `PATH` given.
    fn find_in(debian_root: &Path, path: Option<OsString>) -> anyhow::Result<Binaries> {
        let newest = std::fs::read_dir(debian_root)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|entry| {
                let version: u32 = entry.file_name().to_str()?.parse().ok()?;
                let bin = entry.path().join("bin");
                bin.join("initdb").is_file().then_some((version, bin))
            })
            .max_by_key(|(version, _)| *version);
        if let Some((_, bin)) = newest {
            return Ok(Binaries {
                initdb: bin.join("initdb"),
                pg_ctl: bin.join("pg_ctl"),
            });
        }
        match (on_path(&path, "initdb"), on_path(&path, "pg_ctl")) {
            (Some(initdb), Some(pg_ctl)) => Ok(Binaries { initdb, pg_ctl }),
            _ => bail!(
                "PostgreSQL is not installed: no {}/<version>/bin/initdb and no initdb and \
                 pg_ctl on PATH. Run tests/setup.sh (it installs Debian's postgresql), or \
                 point {} at a server of your own",
                debian_root.display(),
                super::TEST_PG_URL_ENV
            ),
        }
    }
}

/// `name` in one of the dirs of `path` (a `PATH` value).
fn on_path(path: &Option<OsString>, name: &str) -> Option<PathBuf> {
    std::env::split_paths(path.as_ref()?)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// Who runs the server binaries.
pub(super) enum RunAs {
    /// This process's own user (not root).
    Me,
    /// This process is root: `runuser` to the unprivileged server user.
    User { name: String, uid: u32, gid: u32 },
}

impl RunAs {
    pub(super) fn for_this_process() -> anyhow::Result<RunAs> {
        if !rustix::process::geteuid().is_root() {
            return Ok(RunAs::Me);
        }
        let (Some(uid), Some(gid)) = (id_of("-u")?, id_of("-g")?) else {
            bail!(
                "the tests run as root and initdb refuses root, but there is no '{SERVER_USER}' \
                 user to run the server as: run tests/setup.sh (Debian's postgresql package \
                 creates it), or point {} at a server of your own",
                super::TEST_PG_URL_ENV
            );
        };
        Ok(RunAs::User {
            name: SERVER_USER.to_owned(),
            uid,
            gid,
        })
    }

    /// A command that runs `program` as this user.
    pub(super) fn command(&self, program: &Path) -> Command {
        match self {
            RunAs::Me => Command::new(program),
            RunAs::User { name, .. } => {
                let mut command = Command::new("runuser");
                command.args(["-u", name, "--"]).arg(program);
                command
            }
        }
    }

    /// Hand `path` to this user (nothing to do when it is this process's own).
    pub(super) fn chown(&self, path: &Path) -> anyhow::Result<()> {
        match self {
            RunAs::Me => Ok(()),
            RunAs::User { uid, gid, name } => chown(path, Some(*uid), Some(*gid))
                .with_context(|| format!("cannot hand {} to user {name}", path.display())),
        }
    }
}

/// `id <flag> postgres`: the server user's uid or gid, `None` when there is no such user.
fn id_of(flag: &str) -> anyhow::Result<Option<u32>> {
    let out = Command::new("id")
        .args([flag, SERVER_USER])
        .output()
        .context("cannot run id")?;
    if !out.status.success() {
        return Ok(None);
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let id = text
        .trim()
        .parse()
        .with_context(|| format!("id {flag} {SERVER_USER} printed {text:?}"))?;
    Ok(Some(id))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests fail loudly by design
mod tests {
    use super::Binaries;

    /// Catches: a missing PostgreSQL reported as something else (a failed spawn of
    /// `initdb`), or an error that does not say how to install it.
    #[test]
    fn without_postgresql_the_error_names_setup_sh() {
        let empty = tempfile::tempdir().unwrap();
        let Err(e) = Binaries::find_in(empty.path(), Some(empty.path().into())) else {
            panic!("found PostgreSQL in an empty dir");
        };
        let e = e.to_string();
        assert!(e.starts_with("PostgreSQL is not installed"), "{e}");
        assert!(e.contains("Run tests/setup.sh"), "{e}");
        assert!(e.contains("SWITCHBOARD_TEST_PG_URL"), "{e}");
    }

    /// Catches: an older major version picked over a newer one beside it.
    #[test]
    fn the_newest_debian_version_is_taken() {
        let root = tempfile::tempdir().unwrap();
        for version in ["9", "15", "13", "not-a-version"] {
            let bin = root.path().join(version).join("bin");
            std::fs::create_dir_all(&bin).unwrap();
            std::fs::write(bin.join("initdb"), "").unwrap();
        }
        let found = Binaries::find_in(root.path(), None).unwrap();
        assert_eq!(found.initdb, root.path().join("15/bin/initdb"));
        assert_eq!(found.pg_ctl, root.path().join("15/bin/pg_ctl"));
    }
}
