//! `read`, `write`, `edit` (`group:fs`): text files in the agent's workspace (paths
//! confined by `paths::confine`). Reads are bounded in lines and bytes and say where they
//! stopped; writes are atomic (a temp file in the same folder, then a rename), so a crash
//! never leaves half a file.

use std::io::{BufRead, Read as _, Write as _};
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use serde_json::{json, Value};

use super::args::any_str;
use super::paths::{confine, shown};
use super::{opt_arg, str_arg, Tool, ToolContext, ToolError};
use crate::agent::provider::ToolSpec;

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
        let ws = ctx.workspace.to_path_buf();
        let only = ctx.cfg.tools.fs.workspace_only;
        blocking(move || {
            std::fs::create_dir_all(&ws).map_err(|e| io_error("create", "the workspace", e))?;
            let file = confine(&ws, &path, only)?;
            read_lines(&file, &shown(&ws, &file), offset, limit)
        })
        .await
    }
}

fn read_lines(file: &Path, name: &str, offset: u64, limit: usize) -> Result<String, ToolError> {
    let meta = std::fs::metadata(file).map_err(|e| io_error("read", name, e))?;
    if meta.is_dir() {
        return Err(ToolError::Model(format!("{name} is a folder, not a file")));
    }
    let mut f = std::fs::File::open(file).map_err(|e| io_error("read", name, e))?;
    let mut sniff = vec![0u8; SNIFF];
    let n = f.read(&mut sniff).map_err(|e| io_error("read", name, e))?;
    if sniff[..n].contains(&0) {
        return Err(ToolError::Model(format!(
            "{name} is a binary file ({} bytes); read shows text files only",
            meta.len()
        )));
    }
    drop(f);
    let f = std::fs::File::open(file).map_err(|e| io_error("read", name, e))?;
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

/// Write `content` to `file` atomically: a temp file beside it, synced, then renamed over
/// it (an existing file keeps its permissions).
fn write_atomic(file: &Path, content: &[u8], name: &str) -> Result<(), ToolError> {
    let dir = file
        .parent()
        .ok_or_else(|| ToolError::Model(format!("{name} has no parent folder")))?;
    std::fs::create_dir_all(dir).map_err(|e| io_error("create the folder of", name, e))?;
    if file.is_dir() {
        return Err(ToolError::Model(format!("{name} is a folder, not a file")));
    }
    let file_name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp: PathBuf = dir.join(format!(
        ".{file_name}.{}.tmp",
        uuid::Uuid::new_v4().simple()
    ));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(content)?;
        f.sync_all()?;
        if let Ok(meta) = std::fs::metadata(file) {
            std::fs::set_permissions(&tmp, meta.permissions())?;
        }
        std::fs::rename(&tmp, file)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(io_error("write", name, e));
    }
    Ok(())
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
        let ws = ctx.workspace.to_path_buf();
        let only = ctx.cfg.tools.fs.workspace_only;
        blocking(move || {
            std::fs::create_dir_all(&ws).map_err(|e| io_error("create", "the workspace", e))?;
            let file = confine(&ws, &path, only)?;
            let name = shown(&ws, &file);
            write_atomic(&file, content.as_bytes(), &name)?;
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
        let ws = ctx.workspace.to_path_buf();
        let only = ctx.cfg.tools.fs.workspace_only;
        blocking(move || {
            std::fs::create_dir_all(&ws).map_err(|e| io_error("create", "the workspace", e))?;
            let file = confine(&ws, &path, only)?;
            let name = shown(&ws, &file);
            let meta = std::fs::metadata(&file).map_err(|e| io_error("read", &name, e))?;
            if meta.len() as usize > MAX_FILE {
                return Err(too_big(&name, meta.len() as usize));
            }
            let bytes = std::fs::read(&file).map_err(|e| io_error("read", &name, e))?;
            let text = String::from_utf8(bytes)
                .map_err(|_| ToolError::Model(format!("{name} is not UTF-8 text; edit changes text files only")))?;
            let count = text.matches(old.as_str()).count();
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
            let edited = if all {
                text.replace(old.as_str(), &new)
            } else {
                text.replacen(old.as_str(), &new, 1)
            };
            if edited.len() > MAX_FILE {
                return Err(too_big("the edited file", edited.len()));
            }
            write_atomic(&file, edited.as_bytes(), &name)?;
            let n = if all { count } else { 1 };
            Ok(format!("replaced {n} occurrence{} in {name}", if n == 1 { "" } else { "s" }))
        })
        .await
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_numbered_bounded_and_say_where_they_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f.txt");
        let body: String = (1..=5000).map(|i| format!("line {i}\n")).collect();
        std::fs::write(&f, body).unwrap();
        let out = read_lines(&f, "f.txt", 1, MAX_LINES).unwrap();
        assert!(out.starts_with("     1\tline 1\n     2\tline 2\n"), "{out}");
        assert!(
            out.ends_with(
                "[showing lines 1-2000; the file goes on: call read with offset=2001 for more]"
            ),
            "{out}"
        );
        let out = read_lines(&f, "f.txt", 4999, 10).unwrap();
        assert_eq!(
            out,
            "  4999\tline 4999\n  5000\tline 5000\n[end of file: 5000 lines]"
        );
        let long = dir.path().join("long.txt");
        std::fs::write(&long, "x".repeat(10 * 1024 * 1024)).unwrap();
        let out = read_lines(&long, "long.txt", 1, 10).unwrap();
        assert!(
            out.len() < MAX_LINE + 100 && out.contains("…[line cut]"),
            "{}",
            out.len()
        );
        let bin = dir.path().join("b.bin");
        std::fs::write(&bin, [0u8, 1, 2, 255]).unwrap();
        assert!(
            matches!(read_lines(&bin, "b.bin", 1, 10), Err(ToolError::Model(m)) if m.contains("binary file"))
        );
    }

    #[test]
    fn writes_replace_atomically_and_keep_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("sub/x.sh");
        write_atomic(&f, b"one", "x.sh").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
        write_atomic(&f, b"two", "x.sh").unwrap();
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "two");
        assert_eq!(
            std::fs::metadata(&f).unwrap().permissions().mode() & 0o777,
            0o755
        );
        let leftovers = std::fs::read_dir(dir.path().join("sub")).unwrap().count();
        assert_eq!(leftovers, 1, "no temp file left behind");
    }
}
