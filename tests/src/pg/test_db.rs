//! A fresh, uniquely named database for one test, dropped when the test is done with it
//! (also when it panics). On the server named by `SWITCHBOARD_TEST_PG_URL`, else on the test
//! binary's shared throwaway cluster.

use anyhow::{bail, Context as _};
use sqlx::{Connection as _, PgConnection};

use super::{PgCluster, TEST_PG_URL_ENV};

/// A database of one test's own. Its URL is [`TestDb::url`]; dropping it drops the database
/// (with `FORCE`, so connections a failed test left open do not keep it).
pub struct TestDb {
    name: String,
    url: String,
    admin_url: String,
}

impl TestDb {
    /// A fresh database on the server the tests use: `SWITCHBOARD_TEST_PG_URL` when set
    /// (and not empty), else the shared throwaway cluster (started on first use).
    pub async fn create() -> anyhow::Result<TestDb> {
        let from_env = std::env::var(TEST_PG_URL_ENV).ok();
        TestDb::create_with(from_env).await
    }

    /// [`TestDb::create`] with the environment's value given: `Some(url)` (not empty) is
    /// the server to use, `None` the shared cluster.
    pub async fn create_with(server_url: Option<String>) -> anyhow::Result<TestDb> {
        let admin_url = match server_url.filter(|url| !url.trim().is_empty()) {
            Some(url) => url,
            None => tokio::task::spawn_blocking(PgCluster::shared)
                .await
                .context("starting the shared test cluster panicked")??
                .admin_url(),
        };
        TestDb::create_in(&admin_url).await
    }

    /// A fresh database on the server at `admin_url` (a role that may create databases).
    pub async fn create_in(admin_url: &str) -> anyhow::Result<TestDb> {
        let name = format!("sb_test_{}", uuid::Uuid::new_v4().simple());
        let url = with_database(admin_url, &name)?;
        let mut admin = PgConnection::connect(admin_url)
            .await
            .with_context(|| format!("cannot connect to the test server {}", redact(admin_url)))?;
        sqlx::query(&format!("CREATE DATABASE \"{name}\""))
            .execute(&mut admin)
            .await
            .with_context(|| format!("cannot create database {name}"))?;
        let _ = admin.close().await;
        Ok(TestDb {
            name,
            url,
            admin_url: admin_url.to_owned(),
        })
    }

    /// The database's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The database's name (`sb_test_…`).
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        // Drop runs inside a test's runtime, which cannot be blocked on: the database is
        // dropped from a thread with a runtime of its own, and waited for.
        let (name, admin_url) = (self.name.clone(), self.admin_url.clone());
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            runtime.block_on(async {
                let mut admin = PgConnection::connect(&admin_url).await?;
                sqlx::query(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
                    .execute(&mut admin)
                    .await?;
                let _ = admin.close().await;
                anyhow::Ok(())
            })
        })
        .join();
        match dropped {
            Ok(Ok(())) => {}
            Ok(Err(e)) => eprintln!("test database {}: cannot drop it: {e:#}", self.name),
            Err(_) => eprintln!("test database {}: dropping it panicked", self.name),
        }
    }
}

/// `url` with its database (the path) replaced by `db`; user, password, host, port and
/// query parameters are kept.
pub fn with_database(url: &str, db: &str) -> anyhow::Result<String> {
    let Some((scheme, rest)) = url.split_once("://") else {
        bail!("not a URL: {}", redact(url));
    };
    if scheme != "postgres" && scheme != "postgresql" {
        bail!("not a postgres:// URL: {}", redact(url));
    }
    let (before_query, query) = match rest.split_once('?') {
        Some((before, query)) => (before, Some(query)),
        None => (rest, None),
    };
    // The authority ends at the first '/' after the last '@' (a password may hold a '/'
    // only percent-encoded, but be lenient about where the user part ends).
    let authority_start = before_query.rfind('@').map_or(0, |at| at + 1);
    let authority_end = before_query[authority_start..]
        .find('/')
        .map_or(before_query.len(), |slash| authority_start + slash);
    let authority = &before_query[..authority_end];
    let mut out = format!("{scheme}://{authority}/{db}");
    if let Some(query) = query {
        out.push('?');
        out.push_str(query);
    }
    Ok(out)
}

/// `url` with its password replaced by `***`, for error messages.
fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return "<not a URL>".to_owned();
    };
    let Some(at) = rest.rfind('@') else {
        return url.to_owned();
    };
    match rest[..at].split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***{}", &rest[at..]),
        None => url.to_owned(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests fail loudly by design
mod tests {
    use super::{redact, with_database};

    #[test]
    fn the_database_is_replaced_and_everything_else_kept() {
        let cases = [
            ("postgres://u:p@h:5432/postgres", "postgres://u:p@h:5432/t"),
            ("postgres://u:p@h:5432", "postgres://u:p@h:5432/t"),
            (
                "postgresql://h/db?sslmode=require",
                "postgresql://h/t?sslmode=require",
            ),
            ("postgres://u:p%2Fq@h/db", "postgres://u:p%2Fq@h/t"),
            ("postgres://u:a/b@h:1/db", "postgres://u:a/b@h:1/t"),
        ];
        for (url, want) in cases {
            assert_eq!(with_database(url, "t").unwrap(), want, "{url}");
        }
        assert!(with_database("mysql://h/db", "t").is_err());
        assert!(with_database("h/db", "t").is_err());
    }

    #[test]
    fn passwords_are_redacted() {
        assert_eq!(
            redact("postgres://u:secret@h:1/db"),
            "postgres://u:***@h:1/db"
        );
        assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(redact("postgres://h/db"), "postgres://h/db");
    }
}
