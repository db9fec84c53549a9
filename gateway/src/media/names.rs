//! File names from outside (a platform's, a sender's) made safe to store: one path
//! component, no leading dots, no control or reordering characters, bounded in length;
//! and a file created under a free name (a clash gets a suffix, never overwrites).

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// Longest stored name, in bytes (file systems allow 255).
pub const MAX_NAME_BYTES: usize = 120;
/// Suffixes tried after a clash (`name-2.ext` … ) before giving up.
const MAX_SUFFIX: u32 = 10_000;

/// `name` as a safe file name: only its last path component (`/` and `\` both split),
/// control, format and bidi characters dropped, leading dots and spaces removed, at most
/// [`MAX_NAME_BYTES`] bytes (the extension kept). Never empty: `fallback` stands in for a
/// name with nothing left.
pub fn sanitize(name: &str, fallback: &str) -> String {
    let last = name.rsplit(['/', '\\']).next().unwrap_or("");
    let cleaned: String = last
        .chars()
        .filter(|c| !c.is_control() && !is_invisible(*c))
        .map(|c| match c {
            // Characters some file systems and shells treat specially.
            ':' | '*' | '?' | '"' | '<' | '>' | '|' => '_',
            c => c,
        })
        .collect();
    let trimmed = cleaned
        .trim_start_matches(['.', ' '])
        .trim_end_matches([' ', '.']);
    let name = if trimmed.is_empty() {
        fallback
    } else {
        trimmed
    };
    bound(name)
}

/// Zero-width, bidi-override and other format characters that make a name read as
/// something it is not.
fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}'
        | '\u{FEFF}' | '\u{FFF9}'..='\u{FFFB}' | '\u{00AD}' | '\u{061C}' | '\u{180E}')
}

/// `name` cut to [`MAX_NAME_BYTES`] on a character boundary, keeping a short extension.
fn bound(name: &str) -> String {
    if name.len() <= MAX_NAME_BYTES {
        return name.to_string();
    }
    let (stem, ext) = split_ext(name);
    let ext = if ext.len() <= 16 { ext } else { "" };
    let room = MAX_NAME_BYTES - ext.len();
    let stem = crate::text::head(stem, room);
    format!("{stem}{ext}")
}

/// `("photo", ".jpg")` for `photo.jpg`; no extension for `.bashrc`-like or dotless names.
fn split_ext(name: &str) -> (&str, &str) {
    match name.rfind('.') {
        Some(i) if i > 0 => (&name[..i], &name[i..]),
        _ => (name, ""),
    }
}

/// Create `dir/name`, or `dir/<stem>-2<ext>`, `-3`, … when taken: never an existing file
/// (`create_new`, so a racing writer or a planted symlink is not followed). Returns the
/// file and its name.
pub fn create_unique(dir: &Path, name: &str) -> io::Result<(File, String)> {
    let (stem, ext) = split_ext(name);
    for n in 1..=MAX_SUFFIX {
        let candidate = if n == 1 {
            name.to_string()
        } else {
            bound(&format!("{stem}-{n}{ext}"))
        };
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(dir.join(&candidate))
        {
            Ok(f) => return Ok((f, candidate)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other(format!(
        "no free name for {name} after {MAX_SUFFIX} tries"
    )))
}

/// The `inbox/` folder of a workspace, created if missing (a symlink there is refused:
/// files are written only inside the workspace).
pub fn inbox_dir(workspace: &Path) -> io::Result<PathBuf> {
    let dir = workspace.join(super::INBOX);
    std::fs::create_dir_all(&dir)?;
    let meta = std::fs::symlink_metadata(&dir)?;
    if !meta.is_dir() {
        return Err(io::Error::other(format!(
            "{} is not a folder",
            dir.display()
        )));
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn names_lose_paths_dots_and_controls() {
        let s = |n: &str| sanitize(n, "file");
        assert_eq!(s("photo.jpg"), "photo.jpg");
        assert_eq!(s("../../etc/passwd"), "passwd");
        assert_eq!(s("..\\..\\boot.ini"), "boot.ini");
        assert_eq!(s(".bashrc"), "bashrc");
        assert_eq!(s("..."), "file");
        assert_eq!(s(""), "file");
        assert_eq!(s("a\u{0}b\nc\u{202E}gpj.exe"), "abcgpj.exe");
        assert_eq!(s("x:y?.txt"), "x_y_.txt");
        let long = format!("{}.pdf", "é".repeat(200));
        let got = s(&long);
        assert!(
            got.len() <= MAX_NAME_BYTES && got.ends_with(".pdf"),
            "{got}"
        );
    }

    #[test]
    fn a_clash_gets_a_suffix_and_never_overwrites() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.path().join("a.jpg"), b"first").unwrap_or_else(|e| panic!("{e}"));
        let (_, name) = create_unique(dir.path(), "a.jpg").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(name, "a-2.jpg");
        let (_, name) = create_unique(dir.path(), "a.jpg").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(name, "a-3.jpg");
        assert_eq!(
            std::fs::read(dir.path().join("a.jpg")).unwrap_or_default(),
            b"first"
        );
    }

    proptest! {
        #![proptest_config(crate::proptest_cases::config())]

        /// Any name becomes one safe path component: no separator, no leading dot, no
        /// control character, not empty, bounded.
        #[test]
        fn sanitized_names_are_one_safe_component(name in any::<String>()) {
            let got = sanitize(&name, "file");
            prop_assert!(!got.is_empty());
            prop_assert!(got.len() <= MAX_NAME_BYTES);
            prop_assert!(!got.contains('/') && !got.contains('\\'));
            prop_assert!(!got.starts_with('.'));
            prop_assert!(!got.chars().any(|c| c.is_control() || is_invisible(c)));
            prop_assert!(got != ".." && got != ".");
        }
    }
}
