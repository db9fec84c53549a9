//! Tests of the source map: key positions, nesting and comment handling.
use super::*;
use crate::config::error::KeyPath;

fn at(map: &SourceMap, path: KeyPath) -> Option<(usize, usize)> {
    map.locate(&path.0).map(|p| (p.line, p.col))
}

const SRC: &str = r#"// leading comment with { braces [ and "quotes"
{
  /* block
     comment: { not: "a key" } */
  gateway: { port: 8080, bind: '127.0.0.1' },
  "agents": {
    'defaults': { maxConcurrent: 0 },
    list: [
      { id: "main", name: "it's // not a comment" },
      {
        id: 'Bad',  // trailing
        "sub\"agents": { allowAgents: ["*", 'x'] },
      },
    ],
  },
  "with.dot": 1,
  nested: [[1, 2], [3, [4, { deep: true }]]],
  dup: 1,
  dup: 2,
  ünï: "∂",  "after": null,
}
"#;

#[test]
fn maps_keys_and_elements() {
    let map = SourceMap::new(SRC);
    assert!(!map.is_blank());
    assert_eq!(at(&map, KeyPath::default()), Some((2, 1)));
    assert_eq!(at(&map, KeyPath::dotted("gateway")), Some((5, 3)));
    assert_eq!(at(&map, KeyPath::dotted("gateway.port")), Some((5, 14)));
    assert_eq!(at(&map, KeyPath::dotted("gateway.bind")), Some((5, 26)));
    assert_eq!(
        at(&map, KeyPath::dotted("agents.defaults.maxConcurrent")),
        Some((7, 19))
    );
    assert_eq!(
        at(&map, KeyPath::dotted("agents.list").index(0)),
        Some((9, 7))
    );
    assert_eq!(
        at(&map, KeyPath::dotted("agents.list").index(0).key("name")),
        Some((9, 21))
    );
    assert_eq!(
        at(&map, KeyPath::dotted("agents.list").index(1)),
        Some((10, 7))
    );
    assert_eq!(
        at(&map, KeyPath::dotted("agents.list").index(1).key("id")),
        Some((11, 9))
    );
    assert_eq!(
        at(
            &map,
            KeyPath::dotted("agents.list")
                .index(1)
                .key("sub\"agents")
                .key("allowAgents")
                .index(1)
        ),
        Some((12, 45))
    );
    assert_eq!(at(&map, KeyPath::default().key("with.dot")), Some((16, 3)));
    assert_eq!(
        at(
            &map,
            KeyPath::dotted("nested")
                .index(1)
                .index(1)
                .index(1)
                .key("deep")
        ),
        Some((17, 30))
    );
    assert_eq!(
        at(&map, KeyPath::dotted("dup")),
        Some((19, 3)),
        "last occurrence wins"
    );
    assert_eq!(at(&map, KeyPath::dotted("ünï")), Some((20, 3)));
    assert_eq!(at(&map, KeyPath::dotted("after")), Some((20, 14)));
}

#[test]
fn missing_paths() {
    let map = SourceMap::new(SRC);
    assert_eq!(at(&map, KeyPath::dotted("gateway.auth")), None);
    assert_eq!(at(&map, KeyPath::dotted("agents.list").index(2)), None);
    assert_eq!(at(&map, KeyPath::dotted("gateway.port.x")), None);
    let nearest = map.locate_nearest(&KeyPath::dotted("gateway.auth.token").0);
    assert_eq!(nearest, Some(Pos { line: 5, col: 3 }));
}

#[test]
fn blank_and_broken_input() {
    assert!(SourceMap::new("  // only a comment\n/* and another */\n").is_blank());
    assert!(SourceMap::new("").is_blank());
    // Unbalanced input maps what it can and does not panic.
    let map = SourceMap::new("{ a: { b: [1, 2, ");
    assert_eq!(at(&map, KeyPath::dotted("a.b").index(1)), Some((1, 15)));
    let _ = SourceMap::new("}}]] : , 'unterminated");
    let _ = SourceMap::new("{ a: /* unterminated comment");
    let deep = "[".repeat(1000);
    let _ = SourceMap::new(&deep);
}

#[test]
fn escapes_in_keys() {
    let map =
        SourceMap::new("{ \"a\\u0062c\": 1, 'd\\'e': 2, f\\u0067: 3, \"\\uD83D\\uDE00\": 4 }");
    assert!(map.locate(&KeyPath::dotted("abc").0).is_some());
    assert!(map.locate(&KeyPath::default().key("d'e").0).is_some());
    assert!(map.locate(&KeyPath::dotted("fg").0).is_some());
    assert!(map.locate(&KeyPath::default().key("😀").0).is_some());
}
