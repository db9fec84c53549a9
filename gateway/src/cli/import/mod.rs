//! `switchboard import openclaw [PATH]`: turns an OpenClaw config (default
//! `~/.openclaw/openclaw.json`; `$include` files merged in, `${VAR}` references kept as
//! references) into a Switchboard config, and prints what was carried over, what was
//! adapted (how) and what was not (why) — every key of the input has a row. The result is
//! validated before it is written; an existing file is replaced only with `--force`.

mod agents;
mod channels;
mod convert;
mod discord;
#[cfg(test)]
mod edge_tests;
mod providers;
mod source;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};

use super::exit;
use super::table::Table;
use crate::config::{self, Paths};
use source::{Outcome, Row, SourceError};

#[derive(Debug, Args)]
pub struct ImportArgs {
    #[command(subcommand)]
    pub from: ImportFrom,
}

#[derive(Debug, Subcommand)]
pub enum ImportFrom {
    /// An OpenClaw config (default: $OPENCLAW_CONFIG_PATH, else ~/.openclaw/openclaw.json).
    Openclaw {
        path: Option<PathBuf>,
        /// Where to write the Switchboard config (default: the daemon's config path).
        #[arg(long)]
        output: Option<PathBuf>,
        /// Replace the output file if it exists.
        #[arg(long)]
        force: bool,
        /// Print the config instead of writing it.
        #[arg(long)]
        dry_run: bool,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// What an import produced: the config text and the report rows.
pub struct Imported {
    pub text: String,
    pub rows: Vec<Row>,
}

/// Reads the OpenClaw config at `path` and converts it. `home` writes out `~/` paths.
pub async fn import_openclaw(path: &Path, home: Option<&str>) -> Result<Imported, SourceError> {
    let src = source::read(path).await?;
    let (converted, mut rows) = convert::convert(&src.value, home);
    if !converted.refusals.is_empty() {
        return Err(SourceError::Refused {
            path: path.to_path_buf(),
            reasons: converted.refusals,
        });
    }
    rows.extend(paired_senders(path).await);
    for (at, file) in &src.includes {
        let key = if at.is_empty() {
            "(root)".to_string()
        } else {
            at.clone()
        };
        rows.push(Row {
            key: format!("{key} $include"),
            outcome: Outcome::Adapted {
                to: "-".into(),
                how: format!("{} merged in, written inline", file.display()),
            },
        });
    }
    let text = format!(
        "{}{}",
        header(path, &rows),
        config::edit::render(&converted.config)
    );
    Ok(Imported { text, rows })
}

/// A row for each pairing store OpenClaw keeps next to its config
/// (`credentials/<channel>-allowFrom.json`, `{ "version": 1, "allowFrom": [ids] }`):
/// Switchboard keeps its own pairings, so these senders pair again unless listed.
async fn paired_senders(config: &Path) -> Vec<Row> {
    let dir = config.parent().unwrap_or(Path::new("."));
    let mut rows = Vec::new();
    for channel in ["telegram", "discord"] {
        for name in [
            format!("{channel}-allowFrom.json"),
            format!("{channel}-default-allowFrom.json"),
        ] {
            let Ok(text) = tokio::fs::read_to_string(dir.join("credentials").join(&name)).await
            else {
                continue;
            };
            let ids: Vec<String> = serde_json::from_str::<serde_json::Value>(&text)
                .ok()
                .and_then(|v| v.get("allowFrom").and_then(|a| a.as_array()).cloned())
                .unwrap_or_default()
                .iter()
                .map(|id| id.as_str().map_or_else(|| id.to_string(), str::to_string))
                .collect();
            if ids.is_empty() {
                continue;
            }
            rows.push(Row {
                key: format!("credentials/{name}"),
                outcome: Outcome::NotCarried {
                    why: format!(
                        "approved by pairing in OpenClaw: {}. Switchboard keeps its own pairings: they pair again, or add them to channels.{channel}.allowFrom",
                        ids.join(", ")
                    ),
                },
            });
        }
    }
    rows
}

/// The comment block on top of the written file: where it came from, what changed.
fn header(path: &Path, rows: &[Row]) -> String {
    let line = |s: &str| super::table::scrub(s).replace(['\n', '\t', '\u{2028}', '\u{2029}'], " ");
    let mut out = format!(
        "// Switchboard config imported from {} by `switchboard import openclaw`.\n\
         // Check it with `switchboard config validate`; `switchboard doctor` tries the tokens.\n",
        line(&path.display().to_string())
    );
    for (title, pick) in [("Adapted", true), ("Not carried over", false)] {
        let items: Vec<String> = rows
            .iter()
            .filter_map(|r| match (&r.outcome, pick) {
                (Outcome::Adapted { how, .. }, true) => {
                    Some(format!("//   {}: {}", line(&r.key), line(how)))
                }
                (Outcome::NotCarried { why }, false) => {
                    Some(format!("//   {}: {}", line(&r.key), line(why)))
                }
                _ => None,
            })
            .collect();
        if !items.is_empty() {
            out.push_str(&format!("//\n// {title}:\n"));
            for i in items {
                out.push_str(&i);
                out.push('\n');
            }
        }
    }
    out
}

fn default_source(env: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    let var = |n: &str| env(n).filter(|v| !v.is_empty()).map(PathBuf::from);
    var("OPENCLAW_CONFIG_PATH")
        .or_else(|| var("OPENCLAW_STATE_DIR").map(|d| d.join("openclaw.json")))
        .or_else(|| var("HOME").map(|h| h.join(".openclaw").join("openclaw.json")))
        .unwrap_or_else(|| PathBuf::from(".openclaw/openclaw.json"))
}

pub async fn run(args: ImportArgs, env: &dyn Fn(&str) -> Option<String>) -> ExitCode {
    let ImportFrom::Openclaw {
        path,
        output,
        force,
        dry_run,
        json,
    } = args.from;
    let path = path.unwrap_or_else(|| default_source(env));
    let output = output.unwrap_or_else(|| Paths::resolve(None, env).config);
    if !dry_run && !force && output.exists() {
        eprintln!(
            "{} exists; not replaced (give --force to replace it, or --output for another file)",
            output.display()
        );
        return ExitCode::from(exit::CANTCREAT);
    }
    let home = env("HOME");
    let imported = match import_openclaw(&path, home.as_deref()).await {
        Ok(i) => i,
        Err(e) => {
            eprintln!("cannot import: {e}");
            let code = match e {
                SourceError::Read { .. } => exit::NOINPUT,
                _ => exit::DATAERR,
            };
            return ExitCode::from(code);
        }
    };
    // The result must load; variables are checked where the daemon runs, not here.
    let placeholder = |name: &str| env(name).or_else(|| Some(format!("placeholder-{name}")));
    if let Err(errors) = config::parse_config(&imported.text, &placeholder) {
        eprintln!("the converted config is not valid (nothing written):");
        for e in errors {
            eprintln!("  {e}");
        }
        return ExitCode::from(exit::DATAERR);
    }
    if dry_run {
        // People get the report on stderr and the config on stdout (`> file` keeps it);
        // scripts get both in the JSON.
        match json {
            true => report_json(&imported, &output, false),
            false => {
                eprint!("{}", report_table(&imported.rows));
                print!("{}", imported.text);
            }
        }
        return ExitCode::SUCCESS;
    }
    if let Some(dir) = output.parent().filter(|d| !d.as_os_str().is_empty()) {
        if let Err(e) = crate::store::private_dir(dir) {
            eprintln!("cannot create {}: {e}", dir.display());
            return ExitCode::from(exit::CANTCREAT);
        }
    }
    // `--force` keeps what it replaces next to it.
    let backup = output.exists().then(|| backup_path(&output));
    if let Some(b) = &backup {
        if let Err(e) = tokio::fs::copy(&output, b).await {
            eprintln!(
                "cannot keep a copy of {} as {}: {e} (nothing written)",
                output.display(),
                b.display()
            );
            return ExitCode::from(exit::CANTCREAT);
        }
    }
    if let Err(e) = config::edit::write_atomic(&output, imported.text.as_bytes()).await {
        eprintln!("cannot write {}: {e}", output.display());
        return ExitCode::from(exit::CANTCREAT);
    }
    if json {
        report_json(&imported, &output, true);
        return ExitCode::SUCCESS;
    }
    print!("{}", report_table(&imported.rows));
    println!("\nwrote {}", output.display());
    if let Some(b) = backup {
        println!("the file it replaced is kept as {}", b.display());
    }
    ExitCode::SUCCESS
}

/// `config.json5` → `config.json5.bak`.
fn backup_path(path: &Path) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(".bak");
    path.with_file_name(name)
}

fn report_json(imported: &Imported, output: &Path, written: bool) {
    let mut v = serde_json::json!({"output": output, "written": written, "rows": imported.rows});
    if !written {
        v["config"] = serde_json::Value::String(imported.text.clone());
    }
    println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
}

/// The report for people: one row per OpenClaw key, then the counts.
fn report_table(rows: &[Row]) -> String {
    let mut t = Table::new(&["OPENCLAW KEY", "RESULT", "SWITCHBOARD KEY", "HOW / WHY"]);
    for r in rows {
        let (result, to, note) = match &r.outcome {
            Outcome::Carried { to } => ("carried", to.as_str(), ""),
            Outcome::Adapted { to, how } => ("adapted", to.as_str(), how.as_str()),
            Outcome::NotCarried { why } => ("not carried", "-", why.as_str()),
        };
        t.row(vec![r.key.clone(), result.into(), to.into(), note.into()]);
    }
    let count = |f: fn(&Outcome) -> bool| rows.iter().filter(|r| f(&r.outcome)).count();
    format!(
        "{}\n{} carried over, {} adapted, {} not carried\n",
        t.render(),
        count(|o| matches!(o, Outcome::Carried { .. })),
        count(|o| matches!(o, Outcome::Adapted { .. })),
        count(|o| matches!(o, Outcome::NotCarried { .. })),
    )
}
