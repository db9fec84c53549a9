//! Serde helpers for platform ids in allowlists: written as strings (`"123456789"`,
//! `"@ann"`) or as bare numbers (`123456789`, the form OpenClaw configs use). Both become
//! strings; a fractional or out-of-range number is an error, never a rounded id.

use std::fmt;

use serde::de::{self, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

/// How the JSON Schema (`switchboard config schema`) describes one id.
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // a schema shape only: never built
pub enum IdSchema {
    /// A user or chat id, an `@username`, or `"*"` (anyone).
    Text(String),
    /// A numeric id written without quotes.
    Number(i64),
}

/// One id: a string, or an integer written without quotes.
struct Id(String);

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Id, D::Error> {
        struct IdVisitor;
        impl Visitor<'_> for IdVisitor {
            type Value = Id;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an id (a string or a whole number)")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Id, E> {
                Ok(Id(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Id, E> {
                Ok(Id(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Id, E> {
                Ok(Id(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Id, E> {
                Err(E::custom(format!(
                    "{v} is not a whole number; write large ids as strings, e.g. \"123456789012345678\""
                )))
            }
        }
        d.deserialize_any(IdVisitor)
    }
}

struct IdsVisitor;

impl<'de> Visitor<'de> for IdsVisitor {
    type Value = Vec<String>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of ids (strings or whole numbers)")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<String>, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(Id(id)) = seq.next_element()? {
            out.push(id);
        }
        Ok(out)
    }
}

/// A list of ids.
pub fn list<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    d.deserialize_seq(IdsVisitor)
}

/// An optional list of ids (`null` or missing = unset).
pub fn optional<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    struct OptVisitor;
    impl<'de> Visitor<'de> for OptVisitor {
        type Value = Option<Vec<String>>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a list of ids (strings or whole numbers), or null")
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            list(d).map(Some)
        }
    }
    d.deserialize_option(OptVisitor)
}

/// One id (a chat id of `cron.jobs[].deliver`).
pub fn one<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Id::deserialize(d).map(|Id(id)| id)
}

/// An optional id (`null` or missing = unset).
pub fn option<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Option::<Id>::deserialize(d).map(|id| id.map(|Id(id)| id))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    struct T {
        #[serde(deserialize_with = "super::list")]
        a: Vec<String>,
        #[serde(default, deserialize_with = "super::optional")]
        b: Option<Vec<String>>,
    }

    #[test]
    fn numbers_and_strings_become_strings() {
        let t: T =
            serde_json::from_value(json!({"a": [123456789, "@ann", "-1001", -42], "b": null}))
                .unwrap();
        assert_eq!(t.a, ["123456789", "@ann", "-1001", "-42"]);
        assert_eq!(t.b, None);
        let t: T = serde_json::from_value(json!({"a": [], "b": [987654321012345678u64]})).unwrap();
        assert_eq!(t.b, Some(vec!["987654321012345678".to_string()]));
    }

    #[test]
    fn fractions_and_other_types_are_errors() {
        let e = serde_json::from_value::<T>(json!({"a": [1.5]}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a whole number"), "{e}");
        let e = serde_json::from_value::<T>(json!({"a": [true]}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("an id (a string or a whole number)"), "{e}");
        let e = serde_json::from_value::<T>(json!({"a": "42"}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("a list of ids"), "{e}");
    }
}
