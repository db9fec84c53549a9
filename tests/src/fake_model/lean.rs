//! The body as an unchecked fake model reads it: every field but `tools`, which is skipped
//! without being built. A load tool's requests carry the whole tool set each time; building
//! and checking it would weigh the rig's own work into the daemon's figures.

use std::fmt;

use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value};

/// The body without its `tools`; `None` when the body is not a JSON object.
pub(super) fn without_tools(raw: &[u8]) -> Option<Value> {
    let mut de = serde_json::Deserializer::from_slice(raw);
    let body = de.deserialize_map(SkipTools).ok()?;
    de.end().ok()?;
    Some(Value::Object(body))
}

struct SkipTools;

impl<'de> Visitor<'de> for SkipTools {
    type Value = Map<String, Value>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut body = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if key == "tools" {
                map.next_value::<IgnoredAny>()?;
            } else {
                let value = map.next_value::<Value>()?;
                body.insert(key, value);
            }
        }
        Ok(body)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::without_tools;

    #[test]
    fn keeps_every_field_but_tools() {
        let raw = br#"{"model":"m","tools":[{"type":"function","function":{"name":"x","parameters":{"type":"object"}}}],"stream":true,"messages":[{"role":"user","content":"hi"}]}"#;
        assert_eq!(
            without_tools(raw),
            Some(
                json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "hi"}]})
            )
        );
    }

    #[test]
    fn refuses_what_is_not_one_json_object() {
        assert_eq!(without_tools(b"[1]"), None);
        assert_eq!(without_tools(b"{\"a\":1} trailing"), None);
        assert_eq!(without_tools(b"{\"tools\":"), None);
    }
}
