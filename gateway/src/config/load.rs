//! Loading a config: JSON5 text → `serde_json::Value` → `${VAR}` substitution → strict
//! deserialization into `Config` → semantic validation. Every error is reported, each with
//! its key path and the line/column of that key in the source.

use std::path::Path;

use serde_json::Value;

use super::error::{ConfigError, Issue, KeyPath, Seg};
use super::source_map::SourceMap;
use super::{strict, validate, Config};

/// Largest config file accepted, in bytes (a real one is a few KB). Bounds the memory and
/// time one read and parse may take, on start and on every reload.
pub const MAX_CONFIG_BYTES: usize = 1024 * 1024;

/// Deepest nesting of objects and arrays accepted (the schema itself nests 6 levels). The
/// JSON5 parser recurses once per level: a file nested thousands of levels deep would
/// overflow the stack and abort the process, so nesting is counted before it parses.
pub const MAX_NESTING: usize = 32;

/// Looks a variable up in the process environment. The production `env` argument of
/// [`parse_config`] and [`load_file`]; tests pass their own lookup instead.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Parses and validates a config file's text.
///
/// `env` resolves `${VAR}` references in string values (`$${` writes a literal `${`).
/// A blank file (only whitespace and comments) is all defaults. On failure, every problem
/// found is returned, sorted by position in the file.
pub fn parse_config(
    src: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Config, Vec<ConfigError>> {
    if src.len() > MAX_CONFIG_BYTES {
        return Err(vec![ConfigError::whole_file(too_large())]);
    }
    let map = SourceMap::new(src);
    let mut value = parse_json5(src, &map).map_err(|e| vec![e])?;

    let mut env_issues = Vec::new();
    substitute(&mut value, &mut KeyPath::default(), env, &mut env_issues);

    let (config, mut issues, pruned) = strict::deserialize(value);
    if let Some(config) = &config {
        for issue in validate::validate(config, env) {
            issues.push(Issue::new(pruned.translate(&issue.path), issue.message));
        }
    }
    // A value left as `${VAR}` because VAR is missing is reported once, for that reason.
    issues.retain(|i| !env_issues.iter().any(|e| e.path == i.path));
    issues.splice(0..0, env_issues);

    match config {
        Some(config) if issues.is_empty() => Ok(config),
        _ => {
            let mut errors: Vec<ConfigError> = Vec::new();
            for issue in issues {
                let message = if is_secret(&issue.path) {
                    redacted(&issue.message)
                } else {
                    issue.message
                };
                let e = located(&map, &issue.path, message);
                if !errors.contains(&e) {
                    errors.push(e);
                }
            }
            // Stable: issues on the same line keep the order they were found in.
            errors.sort_by_key(|e| (e.line.is_none(), e.line, e.column));
            Err(errors)
        }
    }
}

/// Reads and parses the config file at `path`. `Ok(None)` when there is no such file (the
/// daemon then runs on defaults); an unreadable file is an error, never silently ignored.
pub async fn load_file(
    path: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<Config>, Vec<ConfigError>> {
    match read_bounded(path).await {
        Ok(src) => parse_config(&src, env).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(vec![ConfigError::whole_file(format!(
            "cannot read {}: {e}",
            path.display()
        ))]),
    }
}

fn too_large() -> String {
    format!(
        "the file is larger than {MAX_CONFIG_BYTES} bytes (1 MiB), the most a config file may be"
    )
}

/// Reads a config file as UTF-8 text, refusing (without reading further) one larger than
/// [`MAX_CONFIG_BYTES`]; the error says so.
pub(crate) async fn read_bounded(path: &Path) -> std::io::Result<String> {
    use tokio::io::AsyncReadExt;
    let file = tokio::fs::File::open(path).await?;
    let mut buf = Vec::new();
    file.take(MAX_CONFIG_BYTES as u64 + 1)
        .read_to_end(&mut buf)
        .await?;
    if buf.len() > MAX_CONFIG_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            too_large(),
        ));
    }
    String::from_utf8(buf).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("the file is not UTF-8 text ({e})"),
        )
    })
}

/// The syntax stage alone: JSON5 text → value (a blank text is `{}`). Text nested deeper
/// than [`MAX_NESTING`] is refused before the parser sees it, with the key path and
/// position of the first bracket too deep.
pub(crate) fn parse_json5(src: &str, map: &SourceMap) -> Result<Value, ConfigError> {
    if map.is_blank() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    if let Some(pos) = map.deeper_than(MAX_NESTING) {
        return Err(ConfigError {
            path: KeyPath(map.path_to(pos)).to_string(),
            line: Some(pos.line),
            column: Some(pos.col),
            message: format!("objects and arrays are nested more than {MAX_NESTING} levels deep"),
        });
    }
    let src = escape_separators_in_strings(src);
    json5::from_str::<Value>(&src).map_err(|e| {
        let json5::Error::Message { msg, location } = e;
        // pest's message is a multi-line drawing; keep its "= expected ..." line.
        let detail = msg
            .lines()
            .rev()
            .find_map(|l| l.trim().strip_prefix("= "))
            .unwrap_or(msg.trim())
            .to_owned();
        ConfigError {
            path: String::new(),
            line: location.as_ref().map(|l| l.line),
            column: location.as_ref().map(|l| l.column),
            message: format!("invalid JSON5: {detail}"),
        }
    })
}

/// `src` with every raw U+2028 (line separator) and U+2029 (paragraph separator) inside a
/// string literal written as its escape. JSON and JSON5 allow both raw in strings (a JSON
/// tool writes them so), but the JSON5 parser takes them for line ends there and refuses
/// the file; outside strings they stay what they are (white space). Borrowed when there is
/// none, which is every config in practice.
fn escape_separators_in_strings(src: &str) -> std::borrow::Cow<'_, str> {
    if !src.contains(['\u{2028}', '\u{2029}']) {
        return std::borrow::Cow::Borrowed(src);
    }
    let mut out = String::with_capacity(src.len() + 16);
    let mut chars = src.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(_), '\\') => {
                out.push(c);
                if let Some(next) = chars.next() {
                    out.push(next);
                }
            }
            (Some(q), c) if c == q => {
                quote = None;
                out.push(c);
            }
            (Some(_), '\u{2028}') => out.push_str("\\u2028"),
            (Some(_), '\u{2029}') => out.push_str("\\u2029"),
            (None, '"' | '\'') => {
                quote = Some(c);
                out.push(c);
            }
            (None, '/') if chars.peek() == Some(&'/') => {
                // A line comment: copied up to its end.
                out.push(c);
                while let Some(&n) = chars.peek() {
                    if matches!(n, '\n' | '\r' | '\u{2028}' | '\u{2029}') {
                        break;
                    }
                    out.push(n);
                    chars.next();
                }
            }
            (None, '/') if chars.peek() == Some(&'*') => {
                // A block comment: copied up to its close.
                out.push(c);
                if let Some(star) = chars.next() {
                    out.push(star);
                }
                let mut last = '\0';
                for n in chars.by_ref() {
                    out.push(n);
                    if last == '*' && n == '/' {
                        break;
                    }
                    last = n;
                }
            }
            _ => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Whether a key holds a secret (a token, a key): its value must never be quoted in an
/// error, which may end up in a log.
fn is_secret(path: &KeyPath) -> bool {
    let Some(Seg::Key(last)) = path.0.last() else {
        return false;
    };
    is_secret_key(last)
}

/// Whether a key's value is a secret (`token`, `botToken`, `apiKey`, `webhookSecret`, …).
pub(crate) fn is_secret_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    ["token", "secret", "apikey", "password"]
        .iter()
        .any(|s| k.ends_with(s))
}

/// `message` with every quoted value (`` `…` `` and `"…"`) replaced by `<redacted>`.
fn redacted(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut quote: Option<char> = None;
    for c in message.chars() {
        match quote {
            Some(q) if c == q => {
                out.push_str("<redacted>");
                quote = None;
            }
            Some(_) => {}
            None if c == '`' || c == '"' => quote = Some(c),
            None => out.push(c),
        }
    }
    if quote.is_some() {
        out.push_str("<redacted>");
    }
    out
}

fn located(map: &SourceMap, path: &KeyPath, message: String) -> ConfigError {
    let pos = map.locate_nearest(&path.0);
    ConfigError {
        path: path.to_string(),
        line: pos.map(|p| p.line),
        column: pos.map(|p| p.col),
        message,
    }
}

/// Replaces `${VAR}` in every string value (not in keys), in place. A string with a
/// problem is left as written and the problem is recorded.
fn substitute(
    value: &mut Value,
    path: &mut KeyPath,
    env: &dyn Fn(&str) -> Option<String>,
    issues: &mut Vec<Issue>,
) {
    match value {
        Value::String(s) => match expand(s, env) {
            Ok(expanded) => *s = expanded,
            Err(problems) => {
                issues.extend(problems.into_iter().map(|m| Issue::new(path.clone(), m)))
            }
        },
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                path.0.push(Seg::Index(i));
                substitute(item, path, env, issues);
                path.0.pop();
            }
        }
        Value::Object(map) => {
            for (k, item) in map.iter_mut() {
                path.0.push(Seg::Key(k.clone()));
                substitute(item, path, env, issues);
                path.0.pop();
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// Whether `e` says only that a `${VAR}` names a variable this environment does not have
/// (the daemon's environment may have it: `config set` warns rather than refuses).
pub(crate) fn is_unset_variable(e: &ConfigError) -> bool {
    e.message.starts_with("environment variable ")
        && e.message.contains(" is not set (referenced as ")
}

/// Expands `${VAR}` references in one string; `$${` is a literal `${`.
pub(crate) fn expand(s: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, Vec<String>> {
    let mut out = String::with_capacity(s.len());
    let mut problems = Vec::new();
    let mut rest = s;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        if let Some(after) = rest.strip_prefix("$${") {
            out.push_str("${");
            rest = after;
        } else if let Some(after) = rest.strip_prefix("${") {
            let Some(end) = after.find('}') else {
                problems.push(format!(
                    "unterminated \"${{\" in {s:?} (write \"$${{\" for a literal \"${{\")"
                ));
                break;
            };
            let name = &after[..end];
            if !super::validate::valid_env_name(name) {
                problems.push(format!(
                    "invalid environment variable name {name:?} in \"${{{name}}}\""
                ));
            } else if let Some(v) = env(name) {
                out.push_str(&v);
            } else {
                problems.push(format!(
                    "environment variable {name} is not set (referenced as \"${{{name}}}\")"
                ));
            }
            rest = &after[end + 1..];
        } else {
            out.push('$');
            rest = &rest[1..];
        }
    }
    out.push_str(rest);
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line or paragraph separator written raw in a string is read as that character
    /// (JSON writes them so); outside strings and in comments it stays white space.
    /// Catches: a valid file refused with "expected char_literal".
    #[test]
    fn raw_separators_in_strings_are_read() {
        let src = "{\u{2028}// a comment\n a: \"x\u{2028}y\", b: 'p\u{2029}q', /* \u{2028} */ c: \"\\\"\u{2028}\"}";
        let v = parse_json5(src, &SourceMap::new(src)).expect("parses");
        assert_eq!(v["a"], "x\u{2028}y");
        assert_eq!(v["b"], "p\u{2029}q");
        assert_eq!(v["c"], "\"\u{2028}");
        assert!(matches!(
            escape_separators_in_strings("{a: 1}"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    fn env(name: &str) -> Option<String> {
        match name {
            "HOME" => Some("/home/me".into()),
            "EMPTY" => Some(String::new()),
            "NESTED" => Some("${HOME}".into()),
            _ => None,
        }
    }

    #[test]
    fn expands_variables() {
        assert_eq!(expand("${HOME}/x", &env), Ok("/home/me/x".into()));
        assert_eq!(expand("a${EMPTY}b", &env), Ok("ab".into()));
        assert_eq!(
            expand("$${HOME} costs $5", &env),
            Ok("${HOME} costs $5".into())
        );
        assert_eq!(
            expand("${NESTED}", &env),
            Ok("${HOME}".into()),
            "no re-expansion"
        );
        assert_eq!(expand("$$$", &env), Ok("$$$".into()));
        assert_eq!(
            expand("${A} and ${B}", &env),
            Err(vec![
                "environment variable A is not set (referenced as \"${A}\")".into(),
                "environment variable B is not set (referenced as \"${B}\")".into(),
            ])
        );
        assert_eq!(
            expand("${1X}", &env),
            Err(vec![
                "invalid environment variable name \"1X\" in \"${1X}\"".into()
            ])
        );
        assert_eq!(
            expand("${HOME", &env),
            Err(vec![
                "unterminated \"${\" in \"${HOME\" (write \"$${\" for a literal \"${\")".into()
            ])
        );
    }

    #[test]
    fn syntax_error_has_position() {
        let errs = parse_config("{\n  gateway: { port: 1,, }\n}", &env).expect_err("syntax error");
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(
            (errs[0].path.as_str(), errs[0].line, errs[0].column),
            ("", Some(2), Some(22))
        );
        assert!(
            errs[0].message.starts_with("invalid JSON5: expected"),
            "{}",
            errs[0].message
        );
    }

    #[test]
    fn blank_file_is_defaults() {
        assert_eq!(parse_config("", &env), Ok(Config::default()));
        assert_eq!(
            parse_config(" // nothing yet\n", &env),
            Ok(Config::default())
        );
        assert_eq!(parse_config("{}", &env), Ok(Config::default()));
    }

    #[tokio::test]
    async fn load_file_missing_and_present() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("config.json5");
        assert_eq!(load_file(&path, &env).await, Ok(None));
        std::fs::write(&path, "{ gateway: { port: 0 } }").expect("write");
        let config = load_file(&path, &env)
            .await
            .expect("valid")
            .expect("present");
        assert_eq!(config.gateway.port, 0);
        let errs = load_file(dir.path(), &env)
            .await
            .expect_err("a directory is unreadable");
        assert!(errs[0].message.starts_with("cannot read "), "{errs:?}");
    }
}
