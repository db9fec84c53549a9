//! `grep`: ripgrep's regex engine (`grep-regex`, Rust regex syntax, one line at a time)
//! and searcher (`grep-searcher`: binary files skipped at their first NUL byte, invalid
//! UTF-8 shown lossily) over the files of the walk, each opened beneath the workspace
//! like `read`'s. Matches are bounded in number and line length; a bad pattern is a
//! tool error the model can correct.

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::sinks::Lossy;
use grep_searcher::{BinaryDetection, SearcherBuilder};

use super::walk::{each_file, Lines, NameMatcher};
use super::{Scope, MAX_LINE_CHARS, MAX_MATCHES};
use crate::agent::tools::beneath::Target;
use crate::agent::tools::ToolError;

/// Largest compiled regex (and its lazy DFA) a pattern may make, in bytes.
const REGEX_SIZE: usize = 4 * 1024 * 1024;
/// Files larger than this are skipped (and counted): a search of one file cannot be cut
/// short, so its size bounds the time past the deadline.
const MAX_GREP_FILE: u64 = 16 * 1024 * 1024;

/// A compiled pattern.
pub struct Regex(RegexMatcher);

impl Regex {
    pub fn new(pattern: &str, ignore_case: bool) -> Result<Regex, ToolError> {
        RegexMatcherBuilder::new()
            .case_insensitive(ignore_case)
            .line_terminator(Some(b'\n'))
            .size_limit(REGEX_SIZE)
            .dfa_size_limit(REGEX_SIZE)
            .build(pattern)
            .map(Regex)
            .map_err(|e| {
                ToolError::Model(format!(
                    "bad regular expression: {e} (grep takes Rust regex syntax, matched one line at a time)"
                ))
            })
    }
}

/// `line` without its line break, cut to [`MAX_LINE_CHARS`].
fn cut_line(line: &str) -> String {
    let line = line.trim_end_matches(['\n', '\r']);
    match line.char_indices().nth(MAX_LINE_CHARS) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_string(),
    }
}

/// The matching lines under the scope, as `path:line: text`.
pub fn grep(
    scope: &Scope,
    regex: &Regex,
    files: Option<&NameMatcher>,
) -> Result<String, ToolError> {
    let mut lines = Lines::new(MAX_MATCHES);
    let mut searcher = SearcherBuilder::new()
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .line_number(true)
        .build();
    let mut large = 0usize;
    let stop = each_file(scope, |entry| {
        let rel = entry
            .path()
            .strip_prefix(&scope.root)
            .unwrap_or(entry.path());
        if entry.depth() > 0 && files.is_some_and(|m| !m.matches(rel)) {
            return true;
        }
        let Ok(file) = Target::new(&scope.ws, entry.path(), scope.only).and_then(|t| t.open_read())
        else {
            // Gone or unreadable since the walk saw it: nothing to search.
            return true;
        };
        if file.metadata().map(|m| m.len()).unwrap_or(0) > MAX_GREP_FILE {
            large += 1;
            return true;
        }
        let shown = scope.shown(entry.path());
        let sink = Lossy(|number, line: &str| {
            lines.push(&format!("{shown}:{number}: {}", cut_line(line)));
            Ok(scope.stop().is_none())
        });
        if let Err(e) = searcher.search_file(&regex.0, &file, sink) {
            tracing::debug!(file = %shown, error = %e, "grep: a file could not be searched");
        }
        true
    });
    let mut out = lines.finish("no matches", "matches", stop);
    if large > 0 {
        out.push_str(&format!(
            "\n[{large} files over {} MB were not searched]",
            MAX_GREP_FILE / (1024 * 1024)
        ));
    }
    Ok(out)
}
