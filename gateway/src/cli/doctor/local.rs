//! Doctor's local checks: the config file (every error; its permissions when it holds a
//! secret), the state directory's permissions, the database's permissions and integrity.

use std::path::Path;

use super::{Report, Status};
use crate::config::{self, Config};
use crate::store::health;

/// Loads and validates the config; every error is a failed check. `None` when invalid.
pub async fn config(
    path: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    r: &mut Report,
) -> Option<Config> {
    match config::load_file(path, env).await {
        Ok(Some(cfg)) => {
            r.add("config", Status::Ok, format!("{} is valid", path.display()));
            Some(cfg)
        }
        Ok(None) => {
            r.add(
                "config",
                Status::Ok,
                format!("no file at {}: built-in defaults", path.display()),
            );
            Some(Config::default())
        }
        Err(errors) => {
            for e in errors {
                r.add("config", Status::Fail, e.to_string());
            }
            None
        }
    }
}

/// Checks that `path` grants nothing to group or others (`want`, e.g. 0o700); with `fix`,
/// tightens it when this user owns it.
#[cfg(unix)]
fn private(check: &str, path: &Path, want: u32, fix: bool, r: &mut Report) {
    use std::os::unix::fs::PermissionsExt;
    let Ok(meta) = std::fs::metadata(path) else {
        return;
    };
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o077 == 0 {
        r.add(
            check,
            Status::Ok,
            format!("{} is {mode:04o}", path.display()),
        );
        return;
    }
    let problem = format!(
        "{} is {mode:04o}: others can read it; should be {want:04o}",
        path.display()
    );
    if !fix {
        r.add(
            check,
            Status::Fail,
            format!("{problem} (`switchboard doctor --fix` tightens it)"),
        );
        return;
    }
    match std::fs::set_permissions(path, std::fs::Permissions::from_mode(want)) {
        Ok(()) => r.add(
            check,
            Status::Fixed,
            format!("{} was {mode:04o}, now {want:04o}", path.display()),
        ),
        Err(e) => r.add(
            check,
            Status::Fail,
            format!("{problem}; cannot change it: {e}"),
        ),
    }
}

#[cfg(not(unix))]
fn private(_: &str, _: &Path, _: u32, _: bool, _: &mut Report) {}

pub fn state_dir(dir: &Path, fix: bool, r: &mut Report) {
    if !dir.exists() {
        r.add(
            "state dir",
            Status::Ok,
            format!(
                "{} does not exist yet (created at the first run)",
                dir.display()
            ),
        );
        return;
    }
    private("state dir", dir, 0o700, fix, r);
}

/// A config file holding a secret written out (not a `${VAR}`) must not be readable by others.
pub async fn config_file(path: &Path, fix: bool, r: &mut Report) {
    let Ok(src) = config::load::read_bounded(path).await else {
        return;
    };
    let Ok(doc) = config::load::parse_json5(&src, &config::source_map::SourceMap::new(&src)) else {
        return;
    };
    if holds_secret(&doc) {
        private("config file", path, 0o600, fix, r);
    }
}

/// Whether a secret key has a literal value (not only `${VAR}` references).
fn holds_secret(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Object(map) => map.iter().any(|(k, v)| {
            let literal = v
                .as_str()
                .is_some_and(|s| !(s.starts_with("${") && s.ends_with('}')));
            (config::load::is_secret_key(k) && literal) || holds_secret(v)
        }),
        serde_json::Value::Array(items) => items.iter().any(holds_secret),
        _ => false,
    }
}

/// Permissions and integrity of the database; returns the approved pairings (for the
/// shared-session warning).
pub async fn database(url: &str, fix: bool, r: &mut Report) -> Vec<(String, String)> {
    if crate::config::is_postgres_url(url) {
        return postgres(url, r).await;
    }
    let Some(file) = health::sqlite_file(url) else {
        r.add("database", Status::Skip, "in-memory database");
        return Vec::new();
    };
    if !file.exists() {
        r.add(
            "database",
            Status::Ok,
            format!(
                "{} does not exist yet (created at the first run)",
                file.display()
            ),
        );
        return Vec::new();
    }
    if let Some(dir) = file.parent() {
        private("database dir", dir, 0o700, fix, r);
    }
    for suffix in ["", "-wal", "-shm"] {
        let mut p = file.as_os_str().to_owned();
        p.push(suffix);
        private("database file", Path::new(&p), 0o600, fix, r);
    }
    match health::inspect(url).await {
        Ok(h) if h.integrity == ["ok"] => {
            r.add("database", Status::Ok, "integrity check passed");
            h.approved
        }
        Ok(h) => {
            r.add(
                "database",
                Status::Fail,
                format!("integrity check: {}", h.integrity.join("; ")),
            );
            h.approved
        }
        Err(e) => {
            r.add(
                "database",
                Status::Fail,
                format!("cannot open {}: {e}", file.display()),
            );
            Vec::new()
        }
    }
}

/// A PostgreSQL database: reachable, its schema against this binary's migrations, and
/// who holds its leases (read in a read-only session; nothing is created or migrated).
async fn postgres(url: &str, r: &mut Report) -> Vec<(String, String)> {
    let shown = crate::config::redact_url(url);
    let h = match crate::store::pg::health::inspect(url).await {
        Ok(h) => h,
        Err(e) => {
            r.add("database", Status::Fail, format!("{shown}: {e}"));
            return Vec::new();
        }
    };
    let server = format!("PostgreSQL {} at {shown}", h.server_version);
    let list = |v: &[i64]| v.iter().map(i64::to_string).collect::<Vec<_>>().join(", ");
    if !h.failed.is_empty() {
        r.add(
            "database",
            Status::Fail,
            format!(
                "{server}: migration {} failed part-way; the gateway will not start until it \
                 is mended by hand (docs/postgres.md)",
                list(&h.failed)
            ),
        );
    } else if !h.unknown.is_empty() {
        r.add(
            "database",
            Status::Fail,
            format!(
                "{server}: migrated by a newer Switchboard (version {} unknown to this one), \
                 which will not start on it",
                list(&h.unknown)
            ),
        );
    } else if h.applied.is_empty() {
        r.add(
            "database",
            Status::Ok,
            format!("{server}: no schema yet (created at the first run)"),
        );
    } else if !h.pending.is_empty() {
        r.add(
            "database",
            Status::Ok,
            format!(
                "{server}: migration {} applied at the next start",
                list(&h.pending)
            ),
        );
    } else {
        r.add(
            "database",
            Status::Ok,
            format!("{server}: schema current ({} migrations)", h.applied.len()),
        );
    }
    let held: Vec<String> = h
        .held()
        .map(|l| {
            format!(
                "{} held by {} (fence {}, {} s left)",
                l.name,
                l.owner,
                l.fence,
                (l.expires_at - h.now_ms).max(0) / 1000
            )
        })
        .collect();
    r.add(
        "leases",
        Status::Ok,
        if held.is_empty() {
            "none held: no gateway is active on this database".to_string()
        } else {
            held.join("; ")
        },
    );
    h.approved
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn secrets_written_out_or_referenced() {
        assert!(super::holds_secret(
            &json!({"gateway": {"auth": {"token": "abc"}}})
        ));
        assert!(!super::holds_secret(
            &json!({"gateway": {"auth": {"token": "${T}"}}})
        ));
        assert!(!super::holds_secret(
            &json!({"gateway": {"auth": {"token": null}}})
        ));
        assert!(super::holds_secret(
            &json!({"models": {"providers": {"p": {"apiKey": "sk"}}}})
        ));
    }
}
