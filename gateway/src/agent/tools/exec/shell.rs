//! Finding the programs a `sh -c` command line would run, for the exec allowlist: a small
//! tokenizer of the POSIX shell language that knows quotes, escapes, comments, the
//! operators (`;` `&&` `||` `|` `&` newlines, subshells), redirections, and command
//! substitution (`$(…)`, backticks, `<(…)`), whose commands it collects too. Whatever it
//! does not follow (here-documents, loops, a computed command name, `eval`, wrappers
//! that run their arguments) makes it *unsure*, and an unsure command is always asked
//! about: the parser may over-ask, never under-ask.
//!
//! Checking the programs is only worth something while the shell finds them where the
//! check looked, so the parser is also unsure of a line that could move them: one that
//! sets `PATH`, a loader variable (`LD_PRELOAD`, …) or a shell start-up file (`ENV`,
//! `BASH_ENV`) — by an assignment, `export`/`readonly`/`local`/`unset`/`read`/…, `${V:=…}`
//! or arithmetic —, a command name that is a glob pattern, and a relative program path
//! after a `cd` (which the check would resolve from the wrong folder).

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

/// Builtins whose arguments name variables they set or unset (and bash's `printf -v`).
const VARIABLE_BUILTINS: &[&str] = &[
    "export", "readonly", "local", "declare", "typeset", "unset", "read", "getopts",
];
/// Builtins that change the working directory of the commands after them.
const DIRECTORY_BUILTINS: &[&str] = &["cd", "pushd", "popd"];

/// Whether setting `name` can change which program a later command runs, or what code
/// it loads: the search path, the dynamic loader's variables (`LD_PRELOAD`, …), glibc's
/// module path, and the files a starting shell reads.
pub fn steers_programs(name: &str) -> bool {
    matches!(name, "PATH" | "ENV" | "BASH_ENV" | "CDPATH" | "GCONV_PATH") || name.starts_with("LD_")
}

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
    /// A `cd` (or `pushd`/`popd`) may run first: programs found through a relative `PATH`
    /// entry may then be found in another folder.
    pub changes_dir: bool,
}

/// Parse `line` as `sh -c` would see it.
pub fn parse(line: &str) -> Parsed {
    let mut p = Parser::new(line, false);
    p.sequence(0, None);
    p.out
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    out: Parsed,
    /// The pending redirection target is written to.
    output_redirect: bool,
    /// What the arguments of the current simple command may set.
    args: Args,
}

/// What the arguments of a simple command may set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Args {
    #[default]
    Nothing,
    /// A builtin that sets or unsets the variables its arguments name.
    Variables,
    /// `printf`, which sets a variable only after `-v` (bash).
    Printf,
}

impl Parser {
    /// A parser of `text`; `changes_dir` when a `cd` may have run before it (the text of
    /// a backtick substitution inherits its line's).
    fn new(text: &str, changes_dir: bool) -> Parser {
        Parser {
            chars: text.chars().collect(),
            pos: 0,
            out: Parsed {
                changes_dir,
                ..Parsed::default()
            },
            output_redirect: false,
            args: Args::Nothing,
        }
    }
}

/// A word being read: its text and whether any part of it was expanded at run time.
#[derive(Default)]
struct Word {
    text: String,
    started: bool,
    expanded: bool,
    /// An unquoted `*`, `?` or `[`: the shell may replace the word with file names.
    pattern: bool,
    /// How much of `text` was written out before the first expansion or pattern
    /// character (all of it when there was none).
    literal: Option<usize>,
}

impl Word {
    /// A part expanded when the line runs begins here.
    pub(super) fn expand(&mut self) {
        self.expanded = true;
        self.literal.get_or_insert(self.text.len());
    }

    /// The text written out before anything the shell computes.
    fn literal_text(&self) -> &str {
        &self.text[..self.literal.unwrap_or(self.text.len())]
    }
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
        let outer_args = std::mem::take(&mut self.args);
        self.commands(depth, close);
        self.args = outer_args;
    }

    fn commands(&mut self, depth: usize, close: Option<char>) {
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
                    self.args = Args::Nothing;
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
                    if matches!(c, '*' | '?' | '[') {
                        word.pattern = true;
                        word.literal.get_or_insert(word.text.len());
                    }
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
            match self.args {
                Args::Nothing => {}
                Args::Variables => self.variable_argument(&w),
                Args::Printf if w.text == "-v" => {
                    self.unsure("`printf -v` sets a variable");
                }
                Args::Printf => {}
            }
            return;
        }
        // An assignment's value may be expanded; its name is written out.
        if let Some(name) = assigned_name(w.literal_text()) {
            if steers_programs(name) {
                self.unsure(format!("setting `{name}` changes which program runs"));
            }
            return;
        }
        if w.expanded {
            self.unsure("the command name is computed when it runs");
            *at_command = false;
            return;
        }
        let text = w.text;
        if LEADING_KEYWORDS.contains(&text.as_str()) {
            return;
        }
        if CLOSING_KEYWORDS.contains(&text.as_str()) {
            *at_command = false;
            return;
        }
        if w.pattern && text != "[" {
            self.unsure("the command name is a file name pattern");
        } else if UNSURE_KEYWORDS.contains(&text.as_str()) {
            self.unsure(format!("`{text}` constructs are not followed"));
        } else if WRAPPERS.contains(&text.as_str()) {
            self.unsure(format!("`{text}` runs other commands"));
        } else if text.is_empty() {
            self.unsure("an empty command name");
        } else if self.out.changes_dir && text.contains('/') && !text.starts_with('/') {
            self.unsure(format!(
                "`{text}` is a relative path after a `cd`, which may run it from another folder"
            ));
        }
        if DIRECTORY_BUILTINS.contains(&text.as_str()) {
            self.out.changes_dir = true;
        }
        self.args = if VARIABLE_BUILTINS.contains(&text.as_str()) {
            Args::Variables
        } else if text == "printf" {
            Args::Printf
        } else {
            Args::Nothing
        };
        self.out.commands.push(text);
        *at_command = false;
    }

    /// An argument of a builtin that sets variables: `NAME`, `NAME=value` or an option.
    fn variable_argument(&mut self, w: &Word) {
        let literal = w.literal_text();
        let name = match literal.split_once('=') {
            Some((name, _)) => name,
            None if !w.expanded && !w.pattern => literal,
            None => {
                self.unsure("a variable a builtin sets is named when it runs");
                return;
            }
        };
        if steers_programs(name) {
            self.unsure(format!("setting `{name}` changes which program runs"));
        }
    }
}

/// The variable a `NAME=value` word assigns.
fn assigned_name(word: &str) -> Option<&str> {
    let (name, _) = word.split_once('=')?;
    is_assignment(word).then_some(name)
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
