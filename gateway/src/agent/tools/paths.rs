//! Confining a tool's path to the agent's workspace (`tools.fs.workspaceOnly`, default
//! true): relative paths are taken from the workspace; `..`, absolute paths and symlinks
//! are allowed only when what they resolve to is inside it. The path returned is the
//! resolved one, so the file opened is the file checked.

use std::path::{Path, PathBuf};

use super::ToolError;
use crate::config::lexical;

/// The resolved path of `path` for a tool (`workspace` must exist).
pub fn confine(workspace: &Path, path: &str, workspace_only: bool) -> Result<PathBuf, ToolError> {
    if path.contains('\0') {
        return Err(ToolError::Model("the path contains a NUL byte".into()));
    }
    if path.trim().is_empty() {
        return Err(ToolError::Model("the path is empty".into()));
    }
    let ws = workspace.canonicalize().map_err(|e| {
        ToolError::Model(format!(
            "the workspace {} is not accessible: {e}",
            workspace.display()
        ))
    })?;
    let joined = ws.join(path);
    let lexical = lexical(&joined);
    let outside = || {
        ToolError::Model(format!(
            "`{path}` is outside the agent's workspace (tools.fs.workspaceOnly); use a path inside it"
        ))
    };
    if workspace_only && !lexical.starts_with(&ws) {
        return Err(outside());
    }
    // Resolve symlinks in the longest part that exists; the rest does not exist yet.
    let mut existing = lexical.as_path();
    let resolved = loop {
        if std::fs::symlink_metadata(existing).is_ok() {
            let canon = existing.canonicalize().map_err(|e| {
                ToolError::Model(format!(
                    "`{path}` cannot be resolved: {e} (a broken symlink?)"
                ))
            })?;
            // (`join("")` would add a trailing `/`, making a file look like a folder.)
            match lexical.strip_prefix(existing) {
                Ok(rest) if !rest.as_os_str().is_empty() => break canon.join(rest),
                _ => break canon,
            }
        }
        match existing.parent() {
            Some(p) => existing = p,
            None => break lexical.clone(),
        }
    };
    if workspace_only && !resolved.starts_with(&ws) {
        return Err(ToolError::Model(format!(
            "`{path}` resolves outside the agent's workspace through a symlink (tools.fs.workspaceOnly)"
        )));
    }
    Ok(resolved)
}

/// `path` as shown to the model: relative to the workspace when inside it.
pub fn shown(workspace: &Path, path: &Path) -> String {
    let ws = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    match path.strip_prefix(&ws) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".into(),
        Ok(rel) => rel.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    struct Fixture {
        _dir: tempfile::TempDir,
        ws: PathBuf,
    }

    /// A workspace with a file, a folder, a symlink out of it and one inside it.
    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let ws = root.join("ws");
        std::fs::create_dir_all(ws.join("a/b")).unwrap();
        std::fs::create_dir_all(root.join("outside")).unwrap();
        std::fs::write(ws.join("a/f.txt"), "x").unwrap();
        std::fs::write(root.join("outside/secret"), "s").unwrap();
        std::os::unix::fs::symlink(root.join("outside"), ws.join("out")).unwrap();
        std::os::unix::fs::symlink(ws.join("a"), ws.join("in")).unwrap();
        std::os::unix::fs::symlink(root.join("outside/nothing"), ws.join("dangling")).unwrap();
        Fixture { _dir: dir, ws }
    }

    #[test]
    fn inside_paths_resolve_and_escapes_are_refused() {
        let f = fixture();
        let ok = |p: &str| confine(&f.ws, p, true).unwrap();
        assert_eq!(ok("a/f.txt"), f.ws.join("a/f.txt"));
        // Compared as text: a trailing `/` (which `PathBuf`'s `==` ignores) makes the
        // file unreadable. Catches: `join("")` on a path that exists whole.
        assert_eq!(ok("a/f.txt").to_str(), f.ws.join("a/f.txt").to_str());
        assert_eq!(ok("./a/b/../f.txt"), f.ws.join("a/f.txt"));
        assert_eq!(ok("in/f.txt"), f.ws.join("a/f.txt"));
        assert_eq!(ok("new/dir/file"), f.ws.join("new/dir/file"));
        assert_eq!(ok(&f.ws.join("a").display().to_string()), f.ws.join("a"));
        for bad in [
            "../x",
            "a/../../x",
            "/etc/passwd",
            "out/secret",
            "out",
            "dangling",
            "a\0b",
            "",
        ] {
            assert!(
                confine(&f.ws, bad, true).is_err(),
                "{bad:?} should be refused"
            );
        }
        assert!(
            confine(&f.ws, "out/secret", false).is_ok(),
            "workspaceOnly: false"
        );
    }

    fn component() -> impl Strategy<Value = String> {
        prop_oneof![
            proptest::sample::select(vec![
                "..", ".", "a", "b", "f.txt", "out", "in", "dangling", "", "/"
            ])
            .prop_map(str::to_string),
            ".{0,6}",
            any::<char>().prop_map(|c| c.to_string()),
        ]
    }

    /// Whatever the path, an accepted one resolves inside the workspace, and so does
    /// the file it names. Catches: `..` or symlink escapes of the file tools.
    /// (A `TestRunner` with the crate's proptest config rather than `proptest!`: the
    /// workspace fixture is built once, not per case.)
    #[test]
    fn accepted_paths_stay_inside() {
        let f = fixture();
        let mut runner = proptest::test_runner::TestRunner::new(crate::proptest_cases::config());
        let strategy = (proptest::collection::vec(component(), 0..8), any::<bool>());
        let result = runner.run(&strategy, |(parts, absolute)| {
            let mut path = parts.join("/");
            if absolute {
                path = format!("/{path}");
            }
            if let Ok(p) = confine(&f.ws, &path, true) {
                prop_assert!(p.starts_with(&f.ws), "{path:?} → {p:?}");
                if let Ok(real) = p.canonicalize() {
                    prop_assert!(real.starts_with(&f.ws), "{path:?} → {real:?}");
                }
            }
            Ok(())
        });
        if let Err(e) = result {
            panic!("{e}");
        }
    }
}
