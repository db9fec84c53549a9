//! Tests of the bounded HTML → Markdown conversion: hostile nestings that overflowed the
//! stack of a runtime worker (and so ended the daemon) convert, and the tree htmd walks is
//! never deeper than the cap.

use proptest::prelude::*;

use super::*;

const SKIP: &[&str] = &["head", "script", "style"];

/// `open` `n` times, a word, then `close` `n` times.
fn nested(open: &str, close: &str, n: usize) -> String {
    let mut s = open.repeat(n);
    s.push_str("deepest word");
    s.push_str(&close.repeat(n));
    s
}

/// The parsed and cut tree of `html`, as the conversion sees it: its depth.
fn walked_depth(html: &str) -> usize {
    let conv = htmd::HtmlToMarkdown::builder().build();
    let tree = conv.html_to_tree(&cut_tags(html)).expect("parse");
    cut_tree(&tree, MAX_DEPTH, SKIP);
    depth(&tree)
}

/// Every hostile shape: 100,000 levels of each element, an unclosed tag soup, and
/// formatting elements the parser reopens at each paragraph.
fn hostile_pages() -> Vec<(&'static str, String)> {
    const N: usize = 100_000;
    let mut reopened = String::new();
    for k in 0..20_000 {
        reopened.push_str(&format!("<p><b id={k}>w{k}</p>"));
    }
    vec![
        ("div", nested("<div>", "</div>", N)),
        ("span", nested("<span>", "</span>", N)),
        ("table", nested("<table><tr><td>", "</td></tr></table>", N)),
        ("ul", nested("<ul><li>", "</li></ul>", N)),
        ("blockquote", nested("<blockquote>", "</blockquote>", N)),
        ("pre", nested("<pre>", "</pre>", N)),
        ("unclosed span", "<span>".repeat(N) + "deepest word"),
        (
            "tag soup",
            "<div><span><b><i><table><td><ul><li><p>".repeat(N / 10) + "deepest word",
        ),
        ("reopened formatting", reopened + "deepest word"),
    ]
}

/// Catches: a page nested past the cap reaching htmd's recursive walk (which overflowed
/// the stack and aborted the whole process).
#[test]
fn the_tree_walked_is_never_deeper_than_the_cap() {
    for (what, html) in hostile_pages() {
        let d = walked_depth(&html);
        assert!(d <= MAX_DEPTH + 2, "{what}: depth {d}");
    }
}

/// Catches: a hostile page that ends the process or loses its text. Each converts on the
/// conversion's own thread, and the deepest text is still in the Markdown.
#[tokio::test]
async fn hostile_nestings_convert_on_their_own_thread() {
    for (what, html) in hostile_pages() {
        let md = to_markdown(html, SKIP).await.expect(what);
        assert!(
            md.contains("deepest word"),
            "{what}: {}",
            &md[md.len().saturating_sub(200)..]
        );
    }
}

/// Catches: the cut changing ordinary pages: shallow HTML converts as htmd converts it.
#[test]
fn shallow_pages_convert_as_before() {
    let page = "<html><head><title>T</title></head><body><h1>Title</h1>\
<p>Some <b>bold</b> words and a <a href=\"https://example.com/\">link</a>.</p>\
<ul><li>one</li><li>two</li></ul><script>if (a < b) { x = '</div>'; }</script></body></html>";
    let plain = htmd::HtmlToMarkdown::builder()
        .skip_tags(SKIP.to_vec())
        .build()
        .convert(page)
        .expect("convert");
    assert_eq!(convert(page, SKIP), plain);
    assert_eq!(cut_tags(page), page);
}

/// Catches: the tree cut dropping text: what lies below the cap is kept as plain text, in
/// order.
#[test]
fn text_below_the_cap_is_kept_in_order() {
    let conv = htmd::HtmlToMarkdown::builder().build();
    let html = format!(
        "{}<p>first</p><p>second</p><script>hidden</script>{}",
        "<div>".repeat(3),
        "</div>".repeat(3)
    );
    let tree = conv.html_to_tree(&html).expect("parse");
    cut_tree(&tree, 2, &["script"]);
    let md = conv.tree_to_markdown(&tree);
    assert_eq!(md, "first second");
}

fn tag_soup() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("<div>"),
        Just("</div>"),
        Just("<span>"),
        Just("</span>"),
        Just("<b>"),
        Just("</b>"),
        Just("<b id=1>"),
        Just("<i>"),
        Just("</i>"),
        Just("<p>"),
        Just("</p>"),
        Just("<table>"),
        Just("<td>"),
        Just("</table>"),
        Just("<ul><li>"),
        Just("</li>"),
        Just("<pre>"),
        Just("</pre>"),
        Just("<blockquote>"),
        Just("<br>"),
        Just("<script>"),
        Just("</script>"),
        Just("<!--"),
        Just("-->"),
        Just("<a href='>'>"),
        Just("</a>"),
        Just("<"),
        Just(">"),
        Just("text "),
        Just("é"),
        Just("<template>"),
        Just("<svg><g>"),
    ];
    proptest::collection::vec(piece, 0..200).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(crate::proptest_cases::config())]

    /// Any tag soup converts without a panic, and the cut tree stays within the cap even
    /// when the cap is small (so the soups reach it).
    #[test]
    fn any_tag_soup_converts_within_the_cap(html in tag_soup()) {
        let conv = htmd::HtmlToMarkdown::builder().build();
        let tree = conv.html_to_tree(&cut_tags(&html)).expect("parse");
        cut_tree(&tree, 4, SKIP);
        prop_assert!(depth(&tree) <= 5);
        let _ = conv.tree_to_markdown(&tree);
    }
}
