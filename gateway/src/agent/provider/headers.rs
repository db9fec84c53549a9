//! What every request to a provider carries beyond its body: the configured `headers`
//! (Azure OpenAI's `api-key`, a gateway's own headers) and the endpoint URL built from a
//! base URL that may hold a query (Azure's `?api-version=…`).

use std::collections::BTreeMap;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

/// The configured headers as a header map. Validation refuses a bad name or a value with
/// a control character; one that still does not convert is left out with a warning that
/// names the header, never its value (it may be a secret). Values are marked sensitive,
/// so the HTTP client never prints them.
pub fn header_map(headers: &BTreeMap<String, String>) -> HeaderMap {
    let mut map = HeaderMap::with_capacity(headers.len());
    for (name, value) in headers {
        let parsed = HeaderName::from_bytes(name.as_bytes())
            .ok()
            .zip(HeaderValue::from_str(value).ok());
        match parsed {
            Some((name, mut value)) => {
                value.set_sensitive(true);
                map.insert(name, value);
            }
            None => tracing::warn!(header = %name, "provider header left out: not a valid header"),
        }
    }
    map
}

/// `base` + `path`, with `base`'s query (if any) after the path:
/// `https://x.openai.azure.com/openai/deployments/d?api-version=2024-10-21` and
/// `/chat/completions` give `…/deployments/d/chat/completions?api-version=2024-10-21`.
pub fn endpoint(base: &str, path: &str) -> String {
    let (base, query) = match base.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (base, None),
    };
    let mut url = format!("{}{path}", base.trim_end_matches('/'));
    if let Some(q) = query.filter(|q| !q.is_empty()) {
        url.push('?');
        url.push_str(q);
    }
    url
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Catches: a base URL's query put before the path (Azure answers 404), or a
    /// trailing slash doubled.
    #[test]
    fn endpoints_keep_the_query_after_the_path() {
        let cases = [
            ("https://api.openai.com/v1", "https://api.openai.com/v1/chat/completions"),
            ("https://api.openai.com/v1/", "https://api.openai.com/v1/chat/completions"),
            (
                "https://x.openai.azure.com/openai/deployments/d?api-version=2024-10-21",
                "https://x.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21",
            ),
            ("http://h/v1/?", "http://h/v1/chat/completions"),
        ];
        for (base, want) in cases {
            assert_eq!(endpoint(base, "/chat/completions"), want, "{base}");
        }
    }

    /// Catches: a header that could split the request (CR/LF) reaching the wire, or a
    /// secret value left printable.
    #[test]
    fn headers_convert_and_refuse_line_breaks() {
        let mut given = BTreeMap::new();
        given.insert("api-key".to_string(), "s3cret".to_string());
        given.insert("X-Evil".to_string(), "a\r\nHost: evil".to_string());
        given.insert("bad name".to_string(), "v".to_string());
        let map = header_map(&given);
        assert_eq!(map.len(), 1);
        let v = map.get("api-key").expect("kept");
        assert_eq!((v.to_str().ok(), v.is_sensitive()), (Some("s3cret"), true));
        assert!(!format!("{map:?}").contains("s3cret"));
    }
}
