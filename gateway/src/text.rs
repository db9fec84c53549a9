//! Cutting text by bytes without splitting a character: the one rule every bound on a
//! string from outside (tool results, tool output, MCP descriptions and results, error
//! excerpts) uses; and the small cuts answers share (a command's rest, a name, an id).

/// The largest character boundary of `s` at or below `i` (`s.len()` when `i` is past it).
pub fn floor_boundary(s: &str, i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    let mut i = i;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The smallest character boundary of `s` at or above `i` (`s.len()` when `i` is past it).
pub fn ceil_boundary(s: &str, i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    let mut i = i;
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
pub fn head(s: &str, max: usize) -> &str {
    &s[..floor_boundary(s, max)]
}

/// `s` after its first `n` whitespace-separated words (and the whitespace after them).
pub fn after_words(s: &str, n: usize) -> &str {
    let mut rest = s.trim_start();
    for _ in 0..n {
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        rest = rest[end..].trim_start();
    }
    rest
}

/// A command or action name as echoed in an answer: at most 32 characters.
pub fn cut_name(name: &str) -> String {
    const MAX: usize = 32;
    match name.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &name[..i]),
        None => name.to_string(),
    }
}

/// First 8 characters of an id.
pub fn short(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn multibyte_characters_are_never_split() {
        let s = "aé€😀";
        assert_eq!(head(s, 0), "");
        assert_eq!(head(s, 2), "a");
        assert_eq!(head(s, 3), "aé");
        assert_eq!(head(s, 5), "aé");
        assert_eq!(head(s, 100), s);
        assert_eq!(ceil_boundary(s, 2), 3);
        assert_eq!(floor_boundary(s, 7), 6);
    }

    proptest! {
        #![proptest_config(crate::proptest_cases::config())]
        /// Catches: a cut inside a character (a panic on slicing) or a prefix over the bound.
        #[test]
        fn a_head_is_a_prefix_within_the_bound(s in ".{0,64}", max in 0usize..300) {
            let h = head(&s, max);
            prop_assert!(h.len() <= max);
            prop_assert!(s.starts_with(h));
            prop_assert!(s.len() <= max || s[h.len()..].chars().next().is_some_and(|c| h.len() + c.len_utf8() > max));
            let c = ceil_boundary(&s, max);
            prop_assert!(c >= max.min(s.len()) && s.is_char_boundary(c));
        }
    }
}
