//! The config file's JSON Schema (`switchboard config schema`), derived from the config
//! types, for editor completion and checks. Point an editor at it, e.g. VS Code's
//! `json.schemas` setting.

use serde_json::Value;

use super::Config;

/// The JSON Schema (draft 2020-12) of the config file.
pub fn json_schema() -> Value {
    let mut schema = schemars::schema_for!(Config).to_value();
    if let Some(obj) = schema.as_object_mut() {
        obj.insert("title".into(), Value::String("Switchboard config".into()));
    }
    schema
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::Value;

    use super::json_schema;

    /// The sub-schema for `key` of an object schema (through `$ref`, `anyOf`/`oneOf`,
    /// `additionalProperties`).
    fn child<'a>(root: &'a Value, node: &'a Value, key: Option<&str>) -> Option<&'a Value> {
        let node = resolve(root, node);
        let direct = match key {
            Some(k) => node
                .get("properties")
                .and_then(|p| p.get(k))
                .or_else(|| node.get("additionalProperties").filter(|a| a.is_object())),
            None => node.get("items"),
        };
        direct.or_else(|| {
            ["anyOf", "oneOf", "allOf"]
                .iter()
                .filter_map(|k| node.get(*k).and_then(Value::as_array))
                .flatten()
                .find_map(|alt| child(root, alt, key))
        })
    }

    fn resolve<'a>(root: &'a Value, node: &'a Value) -> &'a Value {
        match node.get("$ref").and_then(Value::as_str) {
            Some(r) => root
                .pointer(r.trim_start_matches('#'))
                .map_or(node, |n| resolve(root, n)),
            None => node,
        }
    }

    fn walk(root: &Value, schema: &Value, value: &Value, path: &str, missing: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (k, v) in map {
                    let here = format!("{path}.{k}");
                    match child(root, schema, Some(k)) {
                        Some(s) => walk(root, s, v, &here, missing),
                        None => missing.push(here),
                    }
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    match child(root, schema, None) {
                        Some(s) => walk(root, s, v, &format!("{path}[{i}]"), missing),
                        None => missing.push(format!("{path}[{i}]")),
                    }
                }
            }
            _ => {}
        }
    }

    /// Catches: a config key the schema does not describe (an editor would flag a valid
    /// file), e.g. a new field whose type lost its schema.
    #[test]
    fn every_key_of_the_example_and_the_defaults_is_in_the_schema() {
        let schema = json_schema();
        assert_eq!(schema["type"], "object");
        assert_eq!(
            schema["additionalProperties"], false,
            "unknown keys are errors"
        );
        let example: Value =
            json5::from_str(include_str!("../../../config.example.json5")).unwrap();
        let defaults = serde_json::to_value(super::Config::default()).unwrap();
        let mut missing = Vec::new();
        walk(&schema, &schema, &example, "", &mut missing);
        walk(&schema, &schema, &defaults, "", &mut missing);
        assert!(missing.is_empty(), "not in the schema: {missing:?}");
        // Ids may be numbers or strings; durations are strings.
        let allow = child(&schema, &schema, Some("channels"))
            .and_then(|c| child(&schema, c, Some("telegram")))
            .and_then(|t| child(&schema, t, Some("allowFrom")))
            .and_then(|a| child(&schema, a, None))
            .map(|s| resolve(&schema, s).to_string())
            .unwrap();
        assert!(
            allow.contains("integer") && allow.contains("string"),
            "{allow}"
        );
    }
}
