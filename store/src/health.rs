//! What `switchboard doctor` asks of the database, without changing it: where the file is,
//! whether SQLite finds it intact, and who is paired. Opened read-only, never migrated
//! or created, so it is safe next to a running daemon.

use std::path::PathBuf;
use std::str::FromStr;

use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Connection, Row};

use super::Result;

/// The file behind a `sqlite:` URL (`None` for an in-memory database, or a URL of another
/// scheme: sqlx would take a `postgres://` URL for a file name).
pub fn sqlite_file(url: &str) -> Option<PathBuf> {
    if !url.starts_with("sqlite:") {
        return None;
    }
    let opts = SqliteConnectOptions::from_str(url).ok()?;
    let file = opts.get_filename();
    let memory = file.as_os_str().is_empty()
        || file.starts_with(":memory:")
        || file.to_string_lossy().starts_with("file:sqlx-in-memory");
    (!memory).then(|| file.to_path_buf())
}

/// The findings of [`inspect`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbHealth {
    /// `PRAGMA integrity_check`'s answer: `["ok"]` for an intact file.
    pub integrity: Vec<String>,
    /// Approved pairings as (channel, sender id).
    pub approved: Vec<(String, String)>,
}

/// Most problems `integrity_check` lists.
const MAX_PROBLEMS: u32 = 20;

/// Opens the existing database at `url` read-only and checks it.
pub async fn inspect(url: &str) -> Result<DbHealth> {
    let opts = SqliteConnectOptions::from_str(url)?
        .read_only(true)
        .create_if_missing(false);
    let mut conn = opts.connect().await?;
    let integrity = sqlx::query(&format!("PRAGMA integrity_check({MAX_PROBLEMS})"))
        .fetch_all(&mut conn)
        .await?
        .iter()
        .map(|r| r.try_get::<String, _>(0))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    // A database from before pairing existed has no such table: nobody is paired.
    let approved = sqlx::query("SELECT channel, sender_id FROM pairings WHERE status = 'approved'")
        .fetch_all(&mut conn)
        .await
        .map(|rows| {
            rows.iter()
                .filter_map(|r| Some((r.try_get("channel").ok()?, r.try_get("sender_id").ok()?)))
                .collect()
        })
        .unwrap_or_default();
    conn.close().await?;
    Ok(DbHealth {
        integrity,
        approved,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Catches: doctor calling a healthy database damaged, or missing a corrupt one.
    #[tokio::test]
    async fn intact_and_damaged_files() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}/data/x.db", dir.path().display());
        assert_eq!(sqlite_file(&url), Some(dir.path().join("data/x.db")));
        assert_eq!(sqlite_file("sqlite::memory:"), None);
        let store = super::super::Store::open(&url).await.unwrap();
        let super::super::Pairing::Pending { code, .. } =
            store.pairing_for("telegram", "42", None).await.unwrap()
        else {
            panic!("pending")
        };
        store.approve_pairing("telegram", &code).await.unwrap();
        let health = inspect(&url).await.unwrap();
        assert_eq!(health.integrity, ["ok"]);
        assert_eq!(
            health.approved,
            [("telegram".to_string(), "42".to_string())]
        );
        store.close().await;

        // The daemon made what it created private (state dir 0700, database 0600).
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: PathBuf| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(dir.path().join("data")), 0o700);
            assert_eq!(mode(dir.path().join("data/x.db")), 0o600);
            assert_eq!(mode(dir.path().join("data/x.db-wal")), 0o600);
        }

        let junk = dir.path().join("junk.db");
        std::fs::write(&junk, vec![7u8; 8192]).unwrap();
        assert!(inspect(&format!("sqlite://{}", junk.display()))
            .await
            .is_err());
    }
}
