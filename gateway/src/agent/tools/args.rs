//! Reading a tool call's arguments object: typed, bounded getters whose errors tell the
//! model what was wrong (the key, what it must be, what it got), so it can correct itself.
//! The one family of argument readers of every tool: absent and `null` are the same.

use serde_json::Value;

use super::ToolError;

/// How an error message names the type of a JSON value.
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The argument `name`, unless it is absent or `null`.
fn present<'a>(args: &'a Value, name: &str) -> Option<&'a Value> {
    args.get(name).filter(|v| !v.is_null())
}

fn missing_string(name: &str) -> ToolError {
    ToolError::Model(format!("missing required string argument `{name}`"))
}

/// A JSON value for an error message, cut to a readable length.
fn cut_json(v: &Value) -> String {
    let s = v.to_string();
    if s.len() <= 80 {
        return s;
    }
    format!("{}…", crate::text::head(&s, 80))
}

/// A required, non-blank string, as given (not trimmed).
pub(crate) fn str_arg<'a>(args: &'a Value, name: &str) -> Result<&'a str, ToolError> {
    match present(args, name) {
        None => Err(missing_string(name)),
        Some(Value::String(s)) if s.trim().is_empty() => Err(ToolError::Model(format!(
            "argument `{name}` must not be empty"
        ))),
        Some(Value::String(s)) => Ok(s),
        Some(v) => Err(ToolError::Model(format!(
            "argument `{name}` must be a string, got {}",
            cut_json(v)
        ))),
    }
}

/// A required string, as given, which may be empty (a file's content); `null` is not one.
pub(crate) fn any_str<'a>(args: &'a Value, name: &str) -> Result<&'a str, ToolError> {
    match args.get(name) {
        Some(Value::String(s)) => Ok(s),
        Some(v) => Err(ToolError::Model(format!(
            "argument `{name}` must be a string, got {}",
            cut_json(v)
        ))),
        None => Err(missing_string(name)),
    }
}

/// An optional argument of a given JSON type (`get` reads it, `what` names the type for
/// the error, which shows the value given).
pub(crate) fn opt_arg<'a, T>(
    args: &'a Value,
    name: &str,
    what: &str,
    get: impl Fn(&'a Value) -> Option<T>,
) -> Result<Option<T>, ToolError> {
    match present(args, name) {
        None => Ok(None),
        Some(v) => get(v)
            .map(Some)
            .ok_or_else(|| ToolError::Model(format!("argument `{name}` must be {what}, got {v}"))),
    }
}

fn string<'a>(args: &'a Value, name: &str, max_chars: usize) -> Result<Option<&'a str>, ToolError> {
    match present(args, name) {
        None => Ok(None),
        Some(Value::String(s)) => {
            let s = s.trim();
            if s.is_empty() {
                Ok(None)
            } else if s.chars().nth(max_chars).is_some() {
                Err(ToolError::Model(format!(
                    "`{name}` is longer than {max_chars} characters"
                )))
            } else {
                Ok(Some(s))
            }
        }
        Some(other) => Err(ToolError::Model(format!(
            "`{name}` must be a string, got {}",
            kind(other)
        ))),
    }
}

/// A required, non-blank string of at most `max_chars` characters, trimmed.
pub fn req_str<'a>(args: &'a Value, name: &str, max_chars: usize) -> Result<&'a str, ToolError> {
    string(args, name, max_chars)?.ok_or_else(|| missing_string(name))
}

/// An optional string of at most `max_chars` characters, trimmed; blank is unset.
pub fn opt_str<'a>(
    args: &'a Value,
    name: &str,
    max_chars: usize,
) -> Result<Option<&'a str>, ToolError> {
    string(args, name, max_chars)
}

/// An optional whole number in `min..=max` (`30` or `30.0`); `unit` ends the message.
pub fn opt_u64(
    args: &Value,
    name: &str,
    min: u64,
    max: u64,
    unit: &str,
) -> Result<Option<u64>, ToolError> {
    let Some(v) = present(args, name) else {
        return Ok(None);
    };
    let whole = match v {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= max as f64)
                .map(|f| f as u64)
        }),
        _ => None,
    };
    match whole {
        Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
        _ => {
            let got = match v {
                Value::Number(n) => n.to_string(),
                other => kind(other).to_string(),
            };
            Err(ToolError::Model(format!(
                "`{name}` must be a whole number from {min} to {max} {unit}, got {got}"
            )))
        }
    }
}

/// An optional number, clamped to `min..=max` (the tool's schema says the range); a value
/// of another type is an error.
pub fn opt_clamped(
    args: &Value,
    name: &str,
    default: i64,
    min: i64,
    max: i64,
) -> Result<i64, ToolError> {
    match present(args, name) {
        None => Ok(default.clamp(min, max)),
        Some(Value::Number(n)) => Ok(match n.as_i64() {
            Some(i) => i.clamp(min, max),
            // Past i64 or a fraction: clamp as a float (`as` saturates; NaN cannot occur).
            None => (n.as_f64().unwrap_or(0.0) as i64).clamp(min, max),
        }),
        Some(other) => Err(ToolError::Model(format!(
            "`{name}` must be a number from {min} to {max}, got {}",
            kind(other)
        ))),
    }
}

/// An optional boolean.
pub fn opt_bool(args: &Value, name: &str, default: bool) -> Result<bool, ToolError> {
    match present(args, name) {
        None => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(ToolError::Model(format!(
            "`{name}` must be true or false, got {}",
            kind(other)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn msg<T: std::fmt::Debug>(r: Result<T, ToolError>) -> String {
        match r {
            Err(ToolError::Model(m)) => m,
            other => panic!("expected a tool error, got {other:?}"),
        }
    }

    /// Catches: wrong types read as "missing" or silently replaced by defaults.
    #[test]
    fn wrong_types_are_named() {
        let a = json!({"s": 5, "b": "yes", "n": [1], "big": 1e300, "neg": -7, "f": 2.9});
        assert_eq!(
            msg(req_str(&a, "s", 10)),
            "`s` must be a string, got a number"
        );
        assert_eq!(
            msg(req_str(&a, "missing", 10)),
            "missing required string argument `missing`"
        );
        assert_eq!(
            msg(opt_bool(&a, "b", false)),
            "`b` must be true or false, got a string"
        );
        assert_eq!(
            msg(opt_clamped(&a, "n", 20, 1, 50)),
            "`n` must be a number from 1 to 50, got an array"
        );
        assert_eq!(opt_clamped(&a, "big", 20, 1, 50).ok(), Some(50));
        assert_eq!(opt_clamped(&a, "neg", 20, 1, 50).ok(), Some(1));
        assert_eq!(opt_clamped(&a, "f", 20, 1, 50).ok(), Some(2));
        assert_eq!(opt_clamped(&a, "missing", 20, 1, 50).ok(), Some(20));
        assert_eq!(opt_str(&json!({"s": "  "}), "s", 3).ok(), Some(None));
        assert_eq!(
            opt_str(&json!({"s": " abc "}), "s", 3).ok(),
            Some(Some("abc"))
        );
        assert_eq!(
            msg(opt_str(&json!({"s": "abcd"}), "s", 3)),
            "`s` is longer than 3 characters"
        );
    }

    /// Catches: the untrimmed readers (`str_arg`, `any_str`, `opt_arg`) changing the
    /// messages the model is shown, or reading `null` differently.
    #[test]
    fn untrimmed_readers_keep_their_messages() {
        let a = json!({"blank": " ", "empty": "", "n": 5, "nul": null, "s": " x "});
        assert_eq!(str_arg(&a, "s").ok(), Some(" x "));
        assert_eq!(
            msg(str_arg(&a, "nul")),
            "missing required string argument `nul`"
        );
        assert_eq!(
            msg(str_arg(&a, "blank")),
            "argument `blank` must not be empty"
        );
        assert_eq!(
            msg(str_arg(&a, "n")),
            "argument `n` must be a string, got 5"
        );
        assert_eq!(any_str(&a, "empty").ok(), Some(""));
        assert_eq!(
            msg(any_str(&a, "nul")),
            "argument `nul` must be a string, got null"
        );
        assert_eq!(
            msg(any_str(&a, "missing")),
            "missing required string argument `missing`"
        );
        assert_eq!(
            opt_arg(&a, "nul", "a number", Value::as_u64).ok(),
            Some(None)
        );
        assert_eq!(
            msg(opt_arg(&a, "s", "a number", Value::as_u64)),
            "argument `s` must be a number, got \" x \""
        );
        let long = Value::String("é".repeat(100));
        assert!(cut_json(&long).ends_with('…'));
    }
}
