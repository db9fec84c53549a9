//! Finding the programs a `sh -c` command line would run, for the exec allowlist: a small
//! tokenizer of the POSIX shell language that knows quotes, escapes, comments, the
//! operators (`;` `&&` `||` `|` `&` newlines, subshells), redirections, and command
//! substitution (`$(…)`, backticks, `<(…)`), whose commands it collects too. Whatever it
//! does not follow (here-documents, loops, a computed command name, `eval`, wrappers
//! that run their arguments) makes it *unsure*, and an unsure command is always asked
//! about: the parser may over-ask, never under-ask.

/// Deepest nesting of substitutions followed before giving up (unsure).
const MAX_DEPTH: usize = 8;

/// Reserved words after which a command follows.
const LEADING_KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "do", "while", "until", "!", "{", "time",
];
/// Reserved words that close a construct (no command of their own).
const CLOSING_KEYWORDS: &[&str] = &["fi", "done", "esac", "}"];
/// Constructs whose words are not all commands: not followed.
const UNSURE_KEYWORDS: &[&str] = &["for", "case", "select", "function", "coproc", "[["];
/// Programs and builtins that run another command given as their arguments (or text).
pub const WRAPPERS: &[&str] = &[
    "eval", "exec", "source", ".", "command", "builtin", "trap", "env", "sudo", "doas", "su",
    "xargs", "nohup", "timeout", "nice", "ionice", "stdbuf", "chroot", "setsid", "strace",
    "ltrace", "watch", "flock", "unbuffer", "busybox",
];

/// What a command line runs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Parsed {
    /// The command words (program names as written, quotes removed), in order.
    pub commands: Vec<String>,
    /// Why the parser cannot vouch for `commands` being all of them (then: ask).
    pub unsure: Option<String>,
    /// An output redirection writes a file (`> f`, `>> f`, `&> f`; not `2>&1` or
    /// `> /dev/null`): then even shell builtins write somewhere.
    pub writes: bool,
}

/// Parse `line` as `sh -c` would see it.
pub fn parse(line: &str) -> Parsed {
    let mut p = Parser {
        chars: line.chars().collect(),
        pos: 0,
        out: Parsed::default(),
        output_redirect: false,
    };
    p.sequence(0, None);
    p.out
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    out: Parsed,
    /// The pending redirection target is written to.
    output_redirect: bool,
}

/// A word being read: its text and whether any part of it was expanded at run time.
#[derive(Default)]
struct Word {
    text: String,
    started: bool,
    expanded: bool,
}

impl Parser {
    fn unsure(&mut self, why: impl Into<String>) {
        if self.out.unsure.is_none() {
            self.out.unsure = Some(why.into());
        }
    }

    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    /// Reads commands until the end, or until `close` (unquoted) at this level.
    fn sequence(&mut self, depth: usize, close: Option<char>) {
        if depth > MAX_DEPTH {
            self.unsure("substitutions nested too deep");
            self.pos = self.chars.len();
            return;
        }
        let mut at_command = true;
        // The next word is a redirection target, not a command or argument.
        let mut redirect_target = false;
        let mut word = Word::default();
        loop {
            let Some(c) = self.peek(0) else {
                self.finish(&mut word, &mut at_command, &mut redirect_target);
                if redirect_target {
                    self.unsure("a redirection without a target");
                }
                if close.is_some() {
                    self.unsure("an unclosed substitution or subshell");
                }
                return;
            };
            if Some(c) == close {
                self.finish(&mut word, &mut at_command, &mut redirect_target);
                self.pos += 1;
                return;
            }
            match c {
                ' ' | '\t' => {
                    self.finish(&mut word, &mut at_command, &mut redirect_target);
                    self.pos += 1;
                }
                '(' => {
                    // A subshell: its commands are commands too.
                    self.finish(&mut word, &mut at_command, &mut redirect_target);
                    self.pos += 1;
                    self.sequence(depth + 1, Some(')'));
                    at_command = false;
                }
                '\n' | ';' | '|' | '&' | ')' => {
                    if c == '&' && self.peek(1) == Some('>') {
                        // `&>file`: stdout and stderr to a file.
                        self.finish(&mut word, &mut at_command, &mut redirect_target);
                        self.pos += 2;
                        if self.peek(0) == Some('>') {
                            self.pos += 1;
                        }
                        redirect_target = true;
                        self.output_redirect = true;
                        continue;
                    }
                    self.finish(&mut word, &mut at_command, &mut redirect_target);
                    if redirect_target {
                        self.unsure("a redirection without a target");
                        redirect_target = false;
                    }
                    if c == ')' {
                        self.unsure("an unbalanced `)`");
                    }
                    self.pos += 1;
                    at_command = true;
                }
                '<' | '>' => {
                    // A file-descriptor number just before (`2>`) is part of the operator.
                    if word.started
                        && !word.expanded
                        && word.text.chars().all(|d| d.is_ascii_digit())
                    {
                        word = Word::default();
                    } else {
                        self.finish(&mut word, &mut at_command, &mut redirect_target);
                    }
                    if redirect_target {
                        self.unsure("a redirection without a target");
                    }
                    if self.peek(1) == Some('(') {
                        // Process substitution `<(…)` / `>(…)`: its commands run too.
                        self.pos += 2;
                        self.sequence(depth + 1, Some(')'));
                        continue;
                    }
                    if c == '<' && self.peek(1) == Some('<') && self.peek(2) != Some('<') {
                        self.unsure("a here-document");
                    }
                    let start = self.pos;
                    self.pos += 1;
                    while matches!(self.peek(0), Some('<' | '>' | '&' | '|')) {
                        self.pos += 1;
                    }
                    redirect_target = true;
                    self.output_redirect = self.chars[start..self.pos].contains(&'>');
                }
                '#' if !word.started => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                '\\' => {
                    self.pos += 1;
                    match self.peek(0) {
                        Some('\n') => self.pos += 1,
                        Some(x) => {
                            word.text.push(x);
                            word.started = true;
                            self.pos += 1;
                        }
                        None => word.started = true,
                    }
                }
                '\'' => {
                    word.started = true;
                    self.pos += 1;
                    loop {
                        match self.peek(0) {
                            None => {
                                self.unsure("an unterminated single quote");
                                break;
                            }
                            Some('\'') => {
                                self.pos += 1;
                                break;
                            }
                            Some(x) => {
                                word.text.push(x);
                                self.pos += 1;
                            }
                        }
                    }
                }
                '"' => {
                    word.started = true;
                    self.pos += 1;
                    self.double_quoted(&mut word, depth);
                }
                '$' | '`' => {
                    word.started = true;
                    self.expansion(&mut word, depth);
                }
                _ => {
                    word.text.push(c);
                    word.started = true;
                    self.pos += 1;
                }
            }
        }
    }

    /// A word ended: record it if it is a command word.
    fn finish(&mut self, word: &mut Word, at_command: &mut bool, redirect_target: &mut bool) {
        let w = std::mem::take(word);
        if !w.started {
            return;
        }
        if *redirect_target {
            *redirect_target = false;
            let harmless = !w.expanded
                && (w.text == "/dev/null"
                    || w.text == "-"
                    || w.text.chars().all(|c| c.is_ascii_digit()));
            if self.output_redirect && !harmless {
                self.out.writes = true;
            }
            return;
        }
        if !*at_command {
            return;
        }
        if w.expanded {
            self.unsure("the command name is computed when it runs");
            *at_command = false;
            return;
        }
        let text = w.text;
        if is_assignment(&text) {
            return;
        }
        if LEADING_KEYWORDS.contains(&text.as_str()) {
            return;
        }
        if CLOSING_KEYWORDS.contains(&text.as_str()) {
            *at_command = false;
            return;
        }
        if UNSURE_KEYWORDS.contains(&text.as_str()) {
            self.unsure(format!("`{text}` constructs are not followed"));
        } else if WRAPPERS.contains(&text.as_str()) {
            self.unsure(format!("`{text}` runs other commands"));
        } else if text.is_empty() {
            self.unsure("an empty command name");
        }
        self.out.commands.push(text);
        *at_command = false;
    }
}

/// `NAME=value` (a variable assignment before a command).
fn is_assignment(word: &str) -> bool {
    let Some((name, _)) = word.split_once('=') else {
        return false;
    };
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[path = "shell_expand.rs"]
mod expand;

#[cfg(test)]
#[path = "shell_tests.rs"]
mod tests;
