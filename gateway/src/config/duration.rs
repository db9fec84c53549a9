//! Serde helpers for `Duration` fields written as humantime strings (`"90s"`, `"5m"`,
//! `"1h 30m"`, `"250ms"`). Use with `#[serde(with = "duration")]`, or
//! `#[serde(with = "duration::option")]` for `Option<Duration>`.
//!
//! Only strings are accepted: a bare number has no unit, and guessing one is how configs
//! end up with 90-millisecond timeouts. Values serialize back as humantime strings.

use std::fmt;
use std::time::Duration;

use serde::de::{self, Visitor};
use serde::{Deserializer, Serializer};

/// What the error messages say a valid value looks like.
const EXPECTED: &str = r#"a duration like "90s" or "5m""#;

/// Parses a humantime string; the error text is meant for users.
pub fn parse(s: &str) -> Result<Duration, String> {
    humantime::parse_duration(s.trim())
        .map_err(|e| format!("invalid duration {s:?} ({e}); expected {EXPECTED}"))
}

/// Formats a duration the way the config file writes it (`"1m 30s"`).
pub fn format(d: Duration) -> String {
    humantime::format_duration(d).to_string()
}

pub fn serialize<S: Serializer>(d: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&format(*d))
}

pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
    deserializer.deserialize_any(DurationVisitor)
}

struct DurationVisitor;

impl Visitor<'_> for DurationVisitor {
    type Value = Duration;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(EXPECTED)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Duration, E> {
        parse(v).map_err(E::custom)
    }
}

/// `Option<Duration>`: `null` or a missing key is `None`.
pub mod option {
    use std::fmt;
    use std::time::Duration;

    use serde::de::{self, Visitor};
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(
        d: &Option<Duration>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => super::serialize(d, serializer),
            None => serializer.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Duration>, D::Error> {
        deserializer.deserialize_option(OptionVisitor)
    }

    struct OptionVisitor;

    impl<'de> Visitor<'de> for OptionVisitor {
        type Value = Option<Duration>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "{} or null", super::EXPECTED)
        }

        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            super::deserialize(d).map(Some)
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde::{Deserialize, Serialize};
    use serde_json::json;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct T {
        #[serde(with = "super")]
        d: Duration,
        #[serde(default, with = "super::option")]
        o: Option<Duration>,
    }

    #[test]
    fn parses_humantime_strings() {
        for (s, want) in [
            ("90s", Duration::from_secs(90)),
            ("5m", Duration::from_secs(300)),
            ("1h 30m", Duration::from_secs(5400)),
            ("250ms", Duration::from_millis(250)),
            ("0s", Duration::ZERO),
        ] {
            let t: T = serde_json::from_value(json!({ "d": s, "o": s })).unwrap();
            assert_eq!(
                t,
                T {
                    d: want,
                    o: Some(want)
                },
                "{s}"
            );
        }
    }

    #[test]
    fn option_accepts_null_and_missing() {
        let t: T = serde_json::from_value(json!({ "d": "1s", "o": null })).unwrap();
        assert_eq!(t.o, None);
        let t: T = serde_json::from_value(json!({ "d": "1s" })).unwrap();
        assert_eq!(t.o, None);
    }

    #[test]
    fn rejects_numbers_and_garbage() {
        let err = serde_json::from_value::<T>(json!({ "d": 90 }))
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            r#"invalid type: integer `90`, expected a duration like "90s" or "5m""#
        );
        let err = serde_json::from_value::<T>(json!({ "d": "soon" }))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(r#"invalid duration "soon" ("#)
                && err.ends_with(r#"expected a duration like "90s" or "5m""#),
            "{err}"
        );
        let err = serde_json::from_value::<T>(json!({ "d": "1s", "o": 5 }))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(r#"expected a duration like "90s" or "5m""#),
            "{err}"
        );
    }

    #[test]
    fn serializes_as_humantime() {
        let t = T {
            d: Duration::from_secs(90),
            o: None,
        };
        assert_eq!(
            serde_json::to_value(&t).unwrap(),
            json!({ "d": "1m 30s", "o": null })
        );
        let back: T = serde_json::from_value(serde_json::to_value(&t).unwrap()).unwrap();
        assert_eq!(back, t);
    }
}
