//! `read`, `write`, `edit` (`group:fs`): text files in the agent's workspace (paths
//! confined by `paths::confine`, then opened beneath the workspace by `beneath`, so the
//! file opened is the file checked). Reads are bounded in lines and bytes and say where
//! they stopped; writes are atomic (a temp file in the same folder, then a rename), so a
//! crash never leaves half a file. The gateway's own files are refused, and a write to a
//! workspace control file is asked about first (`guarded`).

#[path = "guarded.rs"]
pub(super) mod guarded;

use std::io::{BufRead, Read as _, Seek as _};
use std::path::Path;

use async_trait::async_trait;
use serde_json::{json, Value};

use super::approvals::{self, Ask};
use super::args::any_str;
use super::beneath::Target;
use super::paths::{confine, shown};
use super::{opt_arg, str_arg, Tool, ToolContext, ToolError};
use crate::agent::provider::ToolSpec;
use guarded::{Access, Own};

/// Most lines one `read` returns (and its default `limit`).
const MAX_LINES: usize = 2000;
/// Most bytes of text one `read` returns (the run keeps 64 KB of a tool result).
const MAX_READ_BYTES: usize = 48 * 1024;
/// Longer lines are cut to this many bytes.
const MAX_LINE: usize = 2000;
/// Largest file `write` writes and `edit` edits.
const MAX_FILE: usize = 8 * 1024 * 1024;
/// Bytes sniffed for a NUL to tell a binary file.
const SNIFF: usize = 8192;

pub struct Read;
pub struct Write;
pub struct Edit;

fn spec(name: &str, description: &str, parameters: Value) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: description.into(),
        parameters,
    }
}

/// Run blocking file work off the async threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ToolError::Fatal(format!("file task failed: {e}")))?
}

fn io_error(what: &str, shown: &str, e: std::io::Error) -> ToolError {
    ToolError::Model(match e.kind() {
        std::io::ErrorKind::NotFound => format!("{shown}: no such file or folder"),
        std::io::ErrorKind::PermissionDenied => format!("{shown}: permission denied"),
        _ => format!("cannot {what} {shown}: {e}"),
    })
}

#[async_trait]
impl Tool for Read {
    fn spec(&self) -> ToolSpec {
        spec(
            "read",
            "Read a text file of your workspace, as numbered lines. Use offset (1-based line) and limit to page through big files.",
            json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "Relative to the workspace"},
                "offset": {"type": "integer", "minimum": 1},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LINES}
            }, "required": ["path"]}),
        )
    }

    async fn call(&self, ctx: &ToolContext<'_>, args: Value) -> Result<String, ToolError> {
        let path = str_arg(&args, "path")?.to_string();
        let offset = opt_arg(&args, "offset", "a positive integer", Value::as_u64)?
            .unwrap_or(1)
            .max(1);
        let limit = opt_arg(&args, "limit", "a positive integer", Value::as_u64)?
            .unwrap_or(MAX_LINES as u64)
            .clamp(1, MAX_LINES as u64) as usize;
        let Checked {
            ws,
            file,
            name,
            only,
        } = check(ctx, "read", path).await?;
        blocking(move || {
            let target = target(&ws, &file, only, &name)?;
            read_lines(&target, &name, offset, limit)
        })
        .await
    }
}

/// A tool's path, confined and cleared for use.
pub(super) struct Checked {
    pub(super) ws: std::path::PathBuf,
    pub(super) file: std::path::PathBuf,
    /// The path as shown to the model.
    name: String,
    /// `tools.fs.workspaceOnly`.
    pub(super) only: bool,
}

/// `path` confined to the workspace, then cleared for `tool`: the gateway's own files are
/// refused; a write (`tool` other than `read`) to a workspace control file is asked
/// about, like a command, and refused when nobody allows it.
pub(super) async fn check(
    ctx: &ToolContext<'_>,
    tool: &str,
    path: String,
) -> Result<Checked, ToolError> {
    let ws = ctx.workspace.to_path_buf();
    let only = ctx.cfg.tools.fs.workspace_only;
    let own = Own::of(ctx.cfg, &ctx.rt.home.state_dir);
    let (checked, access) = blocking(move || {
        std::fs::create_dir_all(&ws).map_err(|e| io_error("create", "the workspace", e))?;
        let file = confine(&ws, &path, only)?;
        let name = shown(&ws, &file);
        let access = own.access(&guarded::canonical(&ws), &file);
        Ok((
            Checked {
                ws,
                file,
                name,
                only,
            },
            access,
        ))
    })
    .await?;
    match access {
        Access::Free => Ok(checked),
        Access::Refused(why) => Err(ToolError::Model(format!(
            "{}: refused, {why}; the file tools do not touch the gateway's own files",
            checked.name
        ))),
        Access::AskToWrite(_) if tool == "read" => Ok(checked),
        Access::AskToWrite(why) => {
            let workdir = checked.ws.display().to_string();
            let status = approvals::ask(
                ctx,
                &Ask {
                    workdir: &workdir,
                    command: &format!("{tool} {}", checked.name),
                    executables: &[],
                    why: &format!("{} is a protected file: {why}", checked.name),
                },
            )
            .await?;
            if status.allows() {
                Ok(checked)
            } else {
                Err(ToolError::Model(format!(
                    "{} is a protected file ({why}); the {tool} was not allowed ({}): it was not done, do not retry it unless the user asks you to",
                    checked.name,
                    status.as_str()
                )))
            }
        }
    }
}

/// The file to open for a checked path `file`.
fn target(ws: &Path, file: &Path, confined: bool, name: &str) -> Result<Target, ToolError> {
    Target::new(ws, file, confined).map_err(|e| io_error("open", name, e))
}

/// The regular file `target` opened for reading, with its size.
fn open_file(target: &Target, name: &str) -> Result<(std::fs::File, u64), ToolError> {
    let f = target.open_read().map_err(|e| io_error("read", name, e))?;
    let meta = f.metadata().map_err(|e| io_error("read", name, e))?;
    if meta.is_dir() {
        return Err(ToolError::Model(format!("{name} is a folder, not a file")));
    }
    if !meta.is_file() {
        return Err(ToolError::Model(format!(
            "{name} is not a regular file (a device, socket or pipe); the file tools read files only"
        )));
    }
    Ok((f, meta.len()))
}

fn read_lines(target: &Target, name: &str, offset: u64, limit: usize) -> Result<String, ToolError> {
    let (mut f, len) = open_file(target, name)?;
    let mut sniff = vec![0u8; SNIFF];
    let n = f.read(&mut sniff).map_err(|e| io_error("read", name, e))?;
    if sniff[..n].contains(&0) {
        return Err(ToolError::Model(format!(
            "{name} is a binary file ({len} bytes); read shows text files only"
        )));
    }
    f.rewind().map_err(|e| io_error("read", name, e))?;
    let mut reader = std::io::BufReader::new(f);
    let mut out = String::new();
    let mut line_no: u64 = 0;
    let mut shown_lines = 0usize;
    let mut line = Vec::new();
    let more = loop {
        line.clear();
        let (len, cut) =
            read_line(&mut reader, &mut line).map_err(|e| io_error("read", name, e))?;
        if len == 0 {
            break false;
        }
        line_no += 1;
        if line_no < offset {
            continue;
        }
        if shown_lines == limit || out.len() >= MAX_READ_BYTES {
            break true;
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\n', '\r']);
        out.push_str(&format!("{line_no:>6}\t{text}"));
        if cut {
            out.push_str(" …[line cut]");
        }
        out.push('\n');
        shown_lines += 1;
    };
    if shown_lines == 0 {
        return Ok(if line_no == 0 {
            format!("{name} is empty")
        } else {
            format!("{name} has {line_no} lines; offset {offset} is past the end")
        });
    }
    let last = offset + shown_lines as u64 - 1;
    if more {
        out.push_str(&format!(
            "[showing lines {offset}-{last}; the file goes on: call read with offset={} for more]",
            last + 1
        ));
    } else {
        out.push_str(&format!("[end of file: {line_no} lines]"));
    }
    Ok(out)
}

/// One line into `buf`, keeping at most [`MAX_LINE`] bytes of it (the rest is skipped).
/// Returns the bytes consumed and whether the line was cut.
fn read_line(r: &mut impl BufRead, buf: &mut Vec<u8>) -> std::io::Result<(usize, bool)> {
    let mut consumed = 0;
    let mut cut = false;
    loop {
        let chunk = r.fill_buf()?;
        if chunk.is_empty() {
            return Ok((consumed, cut));
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        let room = MAX_LINE.saturating_sub(buf.len());
        if room < take {
            cut = true;
        }
        buf.extend_from_slice(&chunk[..take.min(room)]);
        r.consume(take);
        consumed += take;
        if done {
            return Ok((consumed, cut));
        }
    }
}

fn too_big(what: &str, len: usize) -> ToolError {
    ToolError::Model(format!(
        "{what} is {len} bytes; the file tools handle at most {} MB",
        MAX_FILE / (1024 * 1024)
    ))
}

#[async_trait]
impl Tool for Write {
    fn spec(&self) -> ToolSpec {
        spec(
            "write",
            "Create or replace a file of your workspace with the given content (folders are created).",
            json!({"type": "object", "properties": {
                "path": {"type": "string"}, "content": {"type": "string"}
            }, "required": ["path", "content"]}),
        )
    }

    async fn call(&self, ctx: &ToolContext<'_>, args: Value) -> Result<String, ToolError> {
        let path = str_arg(&args, "path")?.to_string();
        let content = any_str(&args, "content")?.to_string();
        if content.len() > MAX_FILE {
            return Err(too_big("the content", content.len()));
        }
        let Checked {
            ws,
            file,
            name,
            only,
        } = check(ctx, "write", path).await?;
        blocking(move || {
            target(&ws, &file, only, &name)?
                .write_atomic(content.as_bytes())
                .map_err(|e| io_error("write", &name, e))?;
            Ok(format!("wrote {} bytes to {name}", content.len()))
        })
        .await
    }
}

#[async_trait]
impl Tool for Edit {
    fn spec(&self) -> ToolSpec {
        spec(
            "edit",
            "Replace exact text in a file of your workspace. oldText must match exactly once, unless replaceAll is true.",
            json!({"type": "object", "properties": {
                "path": {"type": "string"}, "oldText": {"type": "string"},
                "newText": {"type": "string"}, "replaceAll": {"type": "boolean"}
            }, "required": ["path", "oldText", "newText"]}),
        )
    }

    async fn call(&self, ctx: &ToolContext<'_>, args: Value) -> Result<String, ToolError> {
        let path = str_arg(&args, "path")?.to_string();
        let old = any_str(&args, "oldText")?.to_string();
        let new = any_str(&args, "newText")?.to_string();
        let all = opt_arg(&args, "replaceAll", "a boolean", Value::as_bool)?.unwrap_or(false);
        if old.is_empty() {
            return Err(ToolError::Model("`oldText` must not be empty".into()));
        }
        let Checked {
            ws,
            file,
            name,
            only,
        } = check(ctx, "edit", path).await?;
        blocking(move || {
            let target = target(&ws, &file, only, &name)?;
            let (f, len) = open_file(&target, &name)?;
            if len as usize > MAX_FILE {
                return Err(too_big(&name, len as usize));
            }
            let mut bytes = Vec::new();
            f.take(MAX_FILE as u64 + 1)
                .read_to_end(&mut bytes)
                .map_err(|e| io_error("read", &name, e))?;
            if bytes.len() > MAX_FILE {
                return Err(too_big(&name, bytes.len()));
            }
            let text = String::from_utf8(bytes).map_err(|_| {
                ToolError::Model(format!(
                    "{name} is not UTF-8 text; edit changes text files only"
                ))
            })?;
            let (edited, n) = replace(&text, &old, &new, all, &name)?;
            target
                .write_atomic(edited.as_bytes())
                .map_err(|e| io_error("write", &name, e))?;
            Ok(format!(
                "replaced {n} occurrence{} in {name}",
                if n == 1 { "" } else { "s" }
            ))
        })
        .await
    }
}

/// `text` with `old` replaced by `new` (every occurrence with `all`, else the one), and
/// how many were replaced. The result's size is known before it is built: a small file
/// with many matches must not grow past [`MAX_FILE`] in memory first.
fn replace(
    text: &str,
    old: &str,
    new: &str,
    all: bool,
    name: &str,
) -> Result<(String, usize), ToolError> {
    let count = text.matches(old).count();
    match count {
        0 => {
            return Err(ToolError::Model(format!(
                "oldText was not found in {name}; read the file and copy the text exactly (whitespace included)"
            )))
        }
        n if n > 1 && !all => {
            return Err(ToolError::Model(format!(
                "oldText occurs {n} times in {name}; add surrounding text to make it unique, or set replaceAll: true"
            )))
        }
        _ => {}
    }
    let replaced = if all { count } else { 1 };
    // Matches do not overlap: `replaced * old.len()` is at most `text.len()`.
    let size = (text.len() - replaced * old.len()) as u128 + replaced as u128 * new.len() as u128;
    if size > MAX_FILE as u128 {
        return Err(too_big(
            "the edited file",
            usize::try_from(size).unwrap_or(usize::MAX),
        ));
    }
    let edited = if all {
        text.replace(old, new)
    } else {
        text.replacen(old, new, 1)
    };
    Ok((edited, replaced))
}

/// `path` checked as `read` checks it and opened (no symlink followed), for tools that
/// send a workspace file elsewhere (`message`'s `path`): the open file, its size and its
/// name as shown to the model.
pub(crate) async fn open_checked(
    ctx: &ToolContext<'_>,
    path: String,
) -> Result<(std::fs::File, u64, String), ToolError> {
    let Checked {
        ws,
        file,
        name,
        only,
    } = check(ctx, "read", path).await?;
    blocking(move || {
        let target = target(&ws, &file, only, &name)?;
        let (f, len) = open_file(&target, &name)?;
        Ok((f, len, name))
    })
    .await
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// An 8 MB file of one letter, every letter replaced by 4 KB: refused with the size
    /// the result would have had, without building it. Catches: building the 32 GB result
    /// before the size check (which aborted the process on a failed allocation).
    #[test]
    fn replace_all_refuses_an_oversized_result_before_building_it() {
        let text = "a".repeat(MAX_FILE);
        let new = "b".repeat(4096);
        match replace(&text, "a", &new, true, "f.txt") {
            Err(ToolError::Model(m)) => assert_eq!(
                m,
                format!(
                    "the edited file is {} bytes; the file tools handle at most 8 MB",
                    MAX_FILE * 4096
                )
            ),
            other => panic!("{:?}", other.map(|(_, n)| n)),
        }
        let (edited, n) = replace("a-a-a", "a", "bb", true, "f.txt").unwrap();
        assert_eq!((edited.as_str(), n), ("bb-bb-bb", 3));
    }

    /// A setuid/setgid program rewritten by `write` loses those bits and keeps the rest.
    /// Catches: an agent-written file that runs with its owner's rights.
    #[test]
    fn writes_drop_setuid_and_setgid() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        let f = ws.join("tool");
        std::fs::write(&f, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o6755)).unwrap();
        assert_eq!(
            std::fs::metadata(&f).unwrap().permissions().mode() & 0o7777,
            0o6755
        );
        Target::new(&ws, &f, true)
            .unwrap()
            .write_atomic(b"x")
            .unwrap();
        assert_eq!(
            std::fs::metadata(&f).unwrap().permissions().mode() & 0o7777,
            0o755
        );
    }

    /// The confined target of `file`, in its folder as the workspace.
    fn at(file: &Path) -> Target {
        let file = file
            .parent()
            .unwrap()
            .canonicalize()
            .unwrap()
            .join(file.file_name().unwrap());
        Target::new(file.parent().unwrap(), &file, true).unwrap()
    }

    #[test]
    fn reads_are_numbered_bounded_and_say_where_they_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f.txt");
        let body: String = (1..=5000).map(|i| format!("line {i}\n")).collect();
        std::fs::write(&f, body).unwrap();
        let out = read_lines(&at(&f), "f.txt", 1, MAX_LINES).unwrap();
        assert!(out.starts_with("     1\tline 1\n     2\tline 2\n"), "{out}");
        assert!(
            out.ends_with(
                "[showing lines 1-2000; the file goes on: call read with offset=2001 for more]"
            ),
            "{out}"
        );
        let out = read_lines(&at(&f), "f.txt", 4999, 10).unwrap();
        assert_eq!(
            out,
            "  4999\tline 4999\n  5000\tline 5000\n[end of file: 5000 lines]"
        );
        let long = dir.path().join("long.txt");
        std::fs::write(&long, "x".repeat(10 * 1024 * 1024)).unwrap();
        let out = read_lines(&at(&long), "long.txt", 1, 10).unwrap();
        assert!(
            out.len() < MAX_LINE + 100 && out.contains("…[line cut]"),
            "{}",
            out.len()
        );
        let bin = dir.path().join("b.bin");
        std::fs::write(&bin, [0u8, 1, 2, 255]).unwrap();
        assert!(
            matches!(read_lines(&at(&bin), "b.bin", 1, 10), Err(ToolError::Model(m)) if m.contains("binary file"))
        );
    }

    #[test]
    fn writes_replace_atomically_and_keep_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        let f = ws.join("sub/x.sh");
        let target = Target::new(&ws, &f, true).unwrap();
        target.write_atomic(b"one").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
        target.write_atomic(b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "two");
        assert_eq!(
            std::fs::metadata(&f).unwrap().permissions().mode() & 0o777,
            0o755
        );
        let leftovers = std::fs::read_dir(dir.path().join("sub")).unwrap().count();
        assert_eq!(leftovers, 1, "no temp file left behind");
    }

    /// A folder of a checked path swapped for a symlink out of the workspace before the
    /// open (the target is built as `confine` would have returned it): reading and writing
    /// through it are refused, and nothing outside changes. A FIFO is refused at once
    /// instead of blocking the read. Catches: opening the checked path by name, which
    /// follows whatever the path has become.
    #[test]
    fn a_symlink_swapped_in_after_the_check_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (ws, outside) = (root.join("ws"), root.join("outside"));
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret.txt"), "secret").unwrap();
        std::os::unix::fs::symlink(&outside, ws.join("sub")).unwrap();
        let swapped = Target::new(&ws, &ws.join("sub/secret.txt"), true).unwrap();
        let read = read_lines(&swapped, "sub/secret.txt", 1, 10);
        assert!(
            matches!(&read, Err(ToolError::Model(m)) if m.contains("a symlink appeared")),
            "{read:?}"
        );
        let written = swapped.write_atomic(b"changed");
        assert!(written.is_err(), "{written:?}");
        assert_eq!(
            std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
            "secret"
        );
        let new_file = Target::new(&ws, &ws.join("sub/new.txt"), true).unwrap();
        assert!(new_file.write_atomic(b"x").is_err());
        assert!(!outside.join("new.txt").exists());

        let fifo = ws.join("pipe");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let read = read_lines(&at(&fifo), "pipe", 1, 10);
        assert!(
            matches!(&read, Err(ToolError::Model(m)) if m.contains("not a regular file")),
            "{read:?}"
        );
    }
}
