//! `ConfigError` (one problem in a config file, with its key path and position) and the
//! key-path type the loader, validator and source scanner share.

use std::fmt;

/// One problem found in a config file. `parse_config` reports all of them, not just the first.
///
/// Displays as `agents.defaults.maxConcurrent (line 12, col 7): must be at least 1`; an
/// empty `path` (a syntax error, an unreadable file) displays as `<root>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// Key path such as `agents.list[1].id`; empty for problems with the file as a whole.
    pub path: String,
    /// One-based line of the key (or array element) in the source, when known.
    pub line: Option<usize>,
    /// One-based column (in characters) of the key, when known.
    pub column: Option<usize>,
    pub message: String,
}

impl ConfigError {
    /// An error about the file as a whole (no key path, no position).
    pub fn whole_file(message: impl Into<String>) -> Self {
        ConfigError {
            path: String::new(),
            line: None,
            column: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() {
            "<root>"
        } else {
            &self.path
        };
        match (self.line, self.column) {
            (Some(line), Some(col)) => write!(f, "{path} (line {line}, col {col}): ")?,
            (Some(line), None) => write!(f, "{path} (line {line}): ")?,
            _ => write!(f, "{path}: ")?,
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConfigError {}

/// One step of a key path: an object key or an array index.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Seg {
    Key(String),
    Index(usize),
}

/// A path into the config document, e.g. `agents.list[1].id`.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct KeyPath(pub(crate) Vec<Seg>);

impl KeyPath {
    /// A path of object keys only, written with dots: `"agents.defaults.maxConcurrent"`.
    pub(crate) fn dotted(s: &str) -> Self {
        KeyPath(
            s.split('.')
                .filter(|k| !k.is_empty())
                .map(|k| Seg::Key(k.to_owned()))
                .collect(),
        )
    }

    pub(crate) fn key(&self, k: &str) -> Self {
        let mut segs = self.0.clone();
        segs.push(Seg::Key(k.to_owned()));
        KeyPath(segs)
    }

    pub(crate) fn index(&self, i: usize) -> Self {
        let mut segs = self.0.clone();
        segs.push(Seg::Index(i));
        KeyPath(segs)
    }
}

/// Keys that can be written after a dot without confusion.
fn is_plain_key(k: &str) -> bool {
    !k.is_empty()
        && k.chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-' || c == '$')
}

impl fmt::Display for KeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, seg) in self.0.iter().enumerate() {
            match seg {
                Seg::Key(k) if is_plain_key(k) => {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    f.write_str(k)?;
                }
                Seg::Key(k) => write!(f, "[{k:?}]")?,
                Seg::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

/// A problem at a key path, before its position in the source is looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Issue {
    pub(crate) path: KeyPath,
    pub(crate) message: String,
}

impl Issue {
    pub(crate) fn new(path: KeyPath, message: impl Into<String>) -> Self {
        Issue {
            path,
            message: message.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_with_and_without_position() {
        let e = ConfigError {
            path: "agents.defaults.maxConcurrent".into(),
            line: Some(12),
            column: Some(7),
            message: "must be at least 1".into(),
        };
        assert_eq!(
            e.to_string(),
            "agents.defaults.maxConcurrent (line 12, col 7): must be at least 1"
        );
        assert_eq!(
            ConfigError::whole_file("cannot read x").to_string(),
            "<root>: cannot read x"
        );
    }

    #[test]
    fn key_path_display() {
        let p = KeyPath::dotted("agents.list").index(1).key("id");
        assert_eq!(p.to_string(), "agents.list[1].id");
        let p = KeyPath::dotted("models.providers")
            .key("my.co")
            .key("baseUrl");
        assert_eq!(p.to_string(), "models.providers[\"my.co\"].baseUrl");
        assert_eq!(KeyPath::default().to_string(), "");
    }
}
