use proptest::prelude::*;

use super::*;

#[test]
fn markdown_becomes_mrkdwn() {
    assert_eq!(
        to_mrkdwn("**bold** and *it* and ~~gone~~"),
        "*bold* and _it_ and ~gone~"
    );
    assert_eq!(to_mrkdwn("# Title\nbody"), "*Title*\nbody");
    assert_eq!(
        to_mrkdwn("see [the docs](https://example.com/a?b=1&c=2)"),
        "see <https://example.com/a?b=1&amp;c=2|the docs>"
    );
    assert_eq!(to_mrkdwn("`a < b`"), "`a &lt; b`");
    assert_eq!(
        to_mrkdwn("```rust\nfn main() {}\n```\nafter"),
        "```\nfn main() {}\n```\nafter"
    );
    assert_eq!(to_mrkdwn("- one\n- two"), "- one\n- two");
}

/// Catches: model text that pings a channel or a person, or forges a link.
#[test]
fn mentions_and_raw_links_are_escaped() {
    assert_eq!(
        to_mrkdwn("<!channel> hi <@U123>"),
        "&lt;!channel&gt; hi &lt;@U123&gt;"
    );
    assert_eq!(
        to_mrkdwn("[x](javascript:alert(1)) & <https://evil|ok>"),
        "[x](javascript:alert(1)) &amp; &lt;https://evil|ok&gt;"
    );
    assert_eq!(to_mrkdwn("[a|b](https://x.test)"), "<https://x.test|a/b>");
}

proptest! {
    #![proptest_config(crate::proptest_cases::config())]

    /// Whatever the model writes, every `<` in the output opens one of our links (never a
    /// mention, a channel ping or a forged link), and every `&` starts an entity.
    #[test]
    fn only_our_links_open_angle_brackets(text in "[a-z<>&@!|*_~`#\\[\\]()\n :/.-]{0,80}") {
        let out = to_mrkdwn(&text);
        for (i, _) in out.match_indices('<') {
            let rest = &out[i + 1..];
            prop_assert!(
                rest.starts_with("http://") || rest.starts_with("https://") || rest.starts_with("mailto:"),
                "{text:?} → {out:?}"
            );
            let end = rest.find('>');
            prop_assert!(end.is_some(), "{text:?} → {out:?}");
            let inner = &rest[..end.unwrap_or_default()];
            prop_assert_eq!(inner.matches('|').count(), 1, "{:?} → {:?}", text, out);
        }
        for (i, _) in out.match_indices('&') {
            let rest = &out[i..];
            prop_assert!(
                rest.starts_with("&amp;") || rest.starts_with("&lt;") || rest.starts_with("&gt;"),
                "{text:?} → {out:?}"
            );
        }
    }
}
