//! Key paths as the CLI takes them: `agents.defaults.subagents.maxConcurrent`,
//! `channels.telegram.allowFrom[0]`, `models.providers["my.co"].baseUrl` (or
//! `models.providers."my.co".baseUrl`). A plain segment is anything up to the next `.`
//! or `[`, so numeric keys such as `groups.-1001234567890` need no quotes.

use super::super::error::Seg;

/// Why a key path could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid key path {path:?}: {reason}")]
pub struct PathError {
    pub path: String,
    pub reason: String,
}

/// Longest key path accepted, in bytes.
const MAX_PATH: usize = 4096;

/// Parses a key path into its segments. The empty path is an error: the whole file is not
/// a key.
pub(crate) fn parse(path: &str) -> Result<Vec<Seg>, PathError> {
    let err = |reason: &str| PathError {
        path: path.to_string(),
        reason: reason.to_string(),
    };
    if path.len() > MAX_PATH {
        return Err(err("too long"));
    }
    let mut segs = Vec::new();
    let mut chars = path.chars().peekable();
    // Whether the next segment needs a `.` (or `[`) before it.
    let mut need_sep = false;
    while let Some(&c) = chars.peek() {
        match c {
            '.' if need_sep => {
                chars.next();
                need_sep = false;
                if matches!(chars.peek(), None | Some('.' | '[')) {
                    return Err(err("empty key after `.`"));
                }
            }
            '[' => {
                chars.next();
                match chars.peek() {
                    Some('"' | '\'') => {
                        let q = chars.next().unwrap_or('"');
                        segs.push(Seg::Key(
                            quoted(&mut chars, q).ok_or_else(|| err("unterminated quoted key"))?,
                        ));
                    }
                    _ => {
                        let mut digits = String::new();
                        while let Some(&d) = chars.peek() {
                            if d == ']' {
                                break;
                            }
                            digits.push(d);
                            chars.next();
                        }
                        let i = digits.trim().parse::<usize>().map_err(|_| {
                            err("expected an index such as [0] or a quoted key such as [\"a.b\"]")
                        })?;
                        segs.push(Seg::Index(i));
                    }
                }
                if chars.next() != Some(']') {
                    return Err(err("missing `]`"));
                }
                need_sep = true;
            }
            _ if need_sep => return Err(err("expected `.` or `[` between keys")),
            '"' | '\'' => {
                chars.next();
                segs.push(Seg::Key(
                    quoted(&mut chars, c).ok_or_else(|| err("unterminated quoted key"))?,
                ));
                need_sep = true;
            }
            '.' => return Err(err("empty key before `.`")),
            _ => {
                let mut key = String::new();
                while let Some(&k) = chars.peek() {
                    if k == '.' || k == '[' {
                        break;
                    }
                    if k == '"' || k == '\'' {
                        return Err(err(
                            "a quote inside a key: quote the whole key, e.g. \"a.b\"",
                        ));
                    }
                    key.push(k);
                    chars.next();
                }
                segs.push(Seg::Key(key));
                need_sep = true;
            }
        }
    }
    if segs.is_empty() {
        return Err(err("empty"));
    }
    Ok(segs)
}

/// The rest of a quoted key (the opening quote taken): `\` escapes the next character.
fn quoted(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, q: char) -> Option<String> {
    let mut out = String::new();
    loop {
        match chars.next()? {
            '\\' => out.push(chars.next()?),
            c if c == q => return Some(out),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(path: &str) -> Vec<Seg> {
        parse(path).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn dotted_indexed_and_quoted() {
        assert_eq!(
            keys("agents.defaults.subagents.maxConcurrent"),
            ["agents", "defaults", "subagents", "maxConcurrent"]
                .map(|k| Seg::Key(k.into()))
                .to_vec()
        );
        assert_eq!(
            keys("channels.telegram.allowFrom[0]"),
            vec![
                Seg::Key("channels".into()),
                Seg::Key("telegram".into()),
                Seg::Key("allowFrom".into()),
                Seg::Index(0)
            ]
        );
        assert_eq!(
            keys("models.providers[\"my.co\"].baseUrl"),
            keys("models.providers.\"my.co\".baseUrl")
        );
        assert_eq!(
            keys("a.'b\\'c'"),
            vec![Seg::Key("a".into()), Seg::Key("b'c".into())]
        );
        assert_eq!(
            keys("channels.telegram.groups.-1001234567890.requireMention")[3],
            Seg::Key("-1001234567890".into())
        );
        assert_eq!(keys("list[1][2]")[2], Seg::Index(2));
        assert_eq!(keys("groups.*")[1], Seg::Key("*".into()));
    }

    #[test]
    fn malformed_paths_are_errors() {
        for bad in [
            "", ".a", "a.", "a..b", "a[", "a[x]", "a[0", "a\"b\"", "a.\"b", "a[0]b", "[-1]",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} should be refused");
        }
    }
}
