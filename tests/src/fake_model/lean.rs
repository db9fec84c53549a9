//! The body as an unchecked fake model reads it: every field but `tools`. A load tool's
//! requests carry the whole tool set each time; reading it would weigh the rig's own work
//! into the daemon's figures, and more so the more tools the daemon offers. So the
//! top-level `tools` member is found by a byte scan (strings read eight bytes at a time,
//! the structure between them counted bracket by bracket) and cut out before the rest is
//! parsed: a couple of instructions per byte of the tool set instead of a tokenizer's
//! dozen.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value};

/// The body without its `tools`; `None` when the body is not a JSON object.
pub(super) fn without_tools(raw: &[u8]) -> Option<Value> {
    let rest = match tools_member(raw) {
        Some(cut) => {
            let mut rest = Vec::with_capacity(raw.len() - cut.len());
            rest.extend_from_slice(&raw[..cut.start]);
            rest.extend_from_slice(&raw[cut.end..]);
            Cow::Owned(rest)
        }
        None => Cow::Borrowed(raw),
    };
    let mut de = serde_json::Deserializer::from_slice(&rest);
    let body = de.deserialize_map(SkipTools).ok()?;
    de.end().ok()?;
    Some(Value::Object(body))
}

/// The bytes to cut to remove the top-level member `"tools": …` from a JSON object (with
/// the comma that separates it from its neighbour), or `None` when there is none or the
/// text is not an object this scan can follow (the parser then reads it all and says
/// what is wrong).
fn tools_member(raw: &[u8]) -> Option<std::ops::Range<usize>> {
    let mut i = skip_space(raw, 0);
    if raw.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    // Where the member before the current one ended (its value's last byte + 1).
    let mut previous_end = None;
    loop {
        i = skip_space(raw, i);
        if raw.get(i) != Some(&b'"') {
            return None;
        }
        let key_start = i;
        let key_end = skip_string(raw, i)?;
        i = skip_space(raw, key_end);
        if raw.get(i) != Some(&b':') {
            return None;
        }
        i = skip_space(raw, i + 1);
        let value_end = skip_value(raw, i)?;
        let after = skip_space(raw, value_end);
        let is_tools = &raw[key_start..key_end] == b"\"tools\"";
        match (raw.get(after), is_tools, previous_end) {
            // From the comma after the previous member to the end of this one.
            (Some(b',' | b'}'), true, Some(end)) => return Some(end..value_end),
            // The first member: through the comma after it.
            (Some(b','), true, None) => return Some(key_start..after + 1),
            // The only member.
            (Some(b'}'), true, None) => return Some(key_start..value_end),
            (Some(b','), false, _) => {
                previous_end = Some(value_end);
                i = after + 1;
            }
            _ => return None,
        }
    }
}

fn skip_space(raw: &[u8], mut i: usize) -> usize {
    while raw
        .get(i)
        .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
    {
        i += 1;
    }
    i
}

/// The end (one past the closing quote) of the string whose opening quote is at `i`,
/// read eight bytes at a time until one of them is a quote or a backslash.
fn skip_string(raw: &[u8], i: usize) -> Option<usize> {
    let mut i = i + 1;
    loop {
        while let Some(chunk) = raw.get(i..i + 8) {
            let word = u64::from_le_bytes(chunk.try_into().ok()?);
            let found = has_byte(word, b'"') | has_byte(word, b'\\');
            if found != 0 {
                // The lowest flagged byte is exact (only bytes above it may be false).
                i += (found.trailing_zeros() / 8) as usize;
                break;
            }
            i += 8;
        }
        match raw.get(i)? {
            b'"' => return Some(i + 1),
            // An escape: the next byte is taken as it is (`\"` does not close the string).
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
}

/// The high bit of each byte of `word` that equals `byte` (and maybe of bytes above the
/// lowest such one): the classic "has a zero byte" test on `word ^ byte…`.
fn has_byte(word: u64, byte: u8) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let x = word ^ (ONES * u64::from(byte));
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// The end of the value that starts at `i`: a string, an object or array (brackets
/// counted outside strings), or a scalar (up to the next delimiter).
fn skip_value(raw: &[u8], i: usize) -> Option<usize> {
    match raw.get(i)? {
        b'"' => skip_string(raw, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = i;
            loop {
                match raw.get(i)? {
                    b'"' => {
                        i = skip_string(raw, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => {
            let len = raw[i..]
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
                .unwrap_or(raw.len() - i);
            (len > 0).then_some(i + len)
        }
    }
}

/// Reads an object, passing over a `tools` member the scan did not find (a key written
/// with escapes, say) without building it.
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
    use proptest::prelude::*;
    use serde_json::json;

    use super::{tools_member, without_tools};

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
    fn cuts_the_member_wherever_it_is() {
        for (raw, rest) in [
            (r#"{"tools":[1],"a":2}"#, r#"{"a":2}"#),
            (r#"{"a":2,"tools":[1]}"#, r#"{"a":2}"#),
            (
                r#"{"a":2, "tools" : {"x":"]\"}"} ,"b":[3]}"#,
                r#"{"a":2 ,"b":[3]}"#,
            ),
            (r#"{ "tools": null }"#, r#"{  }"#),
        ] {
            let cut = tools_member(raw.as_bytes()).expect(raw);
            let kept = format!("{}{}", &raw[..cut.start], &raw[cut.end..]);
            assert_eq!(kept, rest, "{raw}");
        }
        assert_eq!(tools_member(br#"{"a":"tools","b":1}"#), None);
        assert_eq!(tools_member(br#"{"a":{"tools":1}}"#), None);
    }

    #[test]
    fn refuses_what_is_not_one_json_object() {
        assert_eq!(without_tools(b"[1]"), None);
        assert_eq!(without_tools(b"{\"a\":1} trailing"), None);
        assert_eq!(without_tools(b"{\"tools\":"), None);
        assert_eq!(without_tools(b"{\"tools\":[1,2}"), None);
        assert_eq!(without_tools(b"{\"tools\":\"\\"), None);
    }

    fn json_value() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(json!(null)),
            any::<bool>().prop_map(|b| json!(b)),
            any::<i64>().prop_map(|n| json!(n)),
            ".*".prop_map(|s: String| json!(s)),
            "[\\[\\]{}\",:\\\\ ]{0,8}".prop_map(|s: String| json!(s)),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
                proptest::collection::btree_map("[a-z\"\\\\{}]{0,5}|tools", inner, 0..6)
                    .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Any object, written compactly or pretty: the body read is the object without its
        /// top-level `tools`, whatever the strings hold (brackets, quotes, escapes).
        /// Catches: a scan that ends a string at an escaped quote, counts a bracket inside
        /// a string, or leaves a dangling comma.
        #[test]
        fn reads_any_object_but_its_tools(
            members in proptest::collection::btree_map("[a-z\"]{0,4}|tools", json_value(), 0..6),
            pretty in any::<bool>(),
        ) {
            let object = serde_json::Value::Object(members.into_iter().collect());
            let raw = if pretty {
                serde_json::to_vec_pretty(&object)
            } else {
                serde_json::to_vec(&object)
            }
            .expect("serializes");
            let mut want = object.clone();
            want.as_object_mut().expect("object").remove("tools");
            prop_assert_eq!(without_tools(&raw), Some(want));
        }
    }
}
