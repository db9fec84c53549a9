//! The exec gate's grammar: the small part of the shell language a command line must fall
//! entirely inside to run without asking, parsed into a typed plan. Everything else is
//! `Outside(reason)`, and an outside line is asked about (or refused when nobody can be
//! asked): the gate decides by construction, it never hunts for danger.
//!
//! Inside the grammar:
//! - a *word* is a run of plain characters (ASCII letters, digits and `-_./,:=+@%`) and
//!   single-quoted strings *without specials*: no `'`, `\`, `$`, backtick or control
//!   character inside the quotes (so no builtin or program that evaluates its argument
//!   finds code in it); `a'b c'd` is one word;
//! - a *simple command* is words and redirections, at least one word;
//! - a *redirection* is `>`, `>>` or `<` (optionally after the fd `0`, `1` or `2`, as in
//!   `2>`) followed by a word, or `>&1` / `>&2` (`2>&1`);
//! - commands are joined into pipelines by `|`, pipelines into a list by `&&`, `||`, `;`
//!   or a newline (a trailing `;` or newline is fine).
//!
//! Anything else — `$`, backticks, backslashes, double quotes, globs, `~`, comments,
//! parentheses, braces, `!`, `&`, here-documents, `<>`, `>|`, `&>` — is outside. Which
//! programs and folders the plan names is checked afterwards (`gate_check.rs`); the line
//! that runs is rendered from the plan, never the text the model sent.

use std::fmt;

/// Characters a word may hold unquoted.
fn plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-_./,:=+@%".contains(c)
}

/// Characters a single-quoted string may not hold besides its closing quote.
fn special_in_quotes(c: char) -> bool {
    c == '\\' || c == '$' || c == '`' || c.is_control()
}

/// Why a line is outside the grammar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outside(pub String);

impl fmt::Display for Outside {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn outside<T>(why: impl Into<String>) -> Result<T, Outside> {
    Err(Outside(why.into()))
}

/// How a pipeline is joined to the one before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Join {
    /// The first pipeline.
    First,
    /// `;` or a newline.
    Then,
    And,
    Or,
}

/// What a redirection does with its file descriptor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `>` (truncate) or `>>` (append) to a file.
    Write { path: String, append: bool },
    /// `<` from a file.
    Read(String),
    /// `>&1`, `>&2`: a copy of another descriptor.
    Dup(u8),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// 0, 1 or 2.
    pub fd: u8,
    pub target: Target,
}

/// One simple command: its words (the program first) and redirections.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Command {
    pub argv: Vec<String>,
    pub redirects: Vec<Redirect>,
}

/// Commands joined by `|`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pipeline {
    pub join: Join,
    pub commands: Vec<Command>,
}

/// A whole line inside the grammar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub pipelines: Vec<Pipeline>,
}

/// A token of the line.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(String),
    /// A redirection operator with its fd: `>`, `>>`, `<`, `>&`.
    Redirect(u8, &'static str),
    Pipe,
    And,
    Or,
    /// `;` or a newline.
    Then,
}

/// Parse `line` into a plan, or say why it is outside the grammar.
pub fn parse(line: &str) -> Result<Plan, Outside> {
    let tokens = tokens(line)?;
    let mut pipelines = Vec::new();
    let mut join = Join::First;
    let mut commands = Vec::new();
    let mut command = Command::default();
    let mut it = tokens.into_iter().peekable();
    while let Some(t) = it.next() {
        match t {
            Token::Word(w) => command.argv.push(w),
            Token::Redirect(fd, op) => {
                let Some(Token::Word(w)) = it.next() else {
                    return outside("a redirection without a target");
                };
                let target = match op {
                    ">" => Target::Write {
                        path: w,
                        append: false,
                    },
                    ">>" => Target::Write {
                        path: w,
                        append: true,
                    },
                    "<" => Target::Read(w),
                    _ => match w.as_str() {
                        "1" => Target::Dup(1),
                        "2" => Target::Dup(2),
                        _ => return outside(format!("the redirection `>&{w}`")),
                    },
                };
                command.redirects.push(Redirect { fd, target });
            }
            Token::Pipe | Token::And | Token::Or | Token::Then => {
                if command.argv.is_empty() {
                    return outside(if command.redirects.is_empty() {
                        "an empty command"
                    } else {
                        "a redirection without a command"
                    });
                }
                commands.push(std::mem::take(&mut command));
                if t == Token::Pipe {
                    continue;
                }
                pipelines.push(Pipeline {
                    join,
                    commands: std::mem::take(&mut commands),
                });
                join = match t {
                    Token::And => Join::And,
                    Token::Or => Join::Or,
                    _ => Join::Then,
                };
                // A trailing `;` or newline ends the line.
                if join == Join::Then && it.peek().is_none() {
                    return Ok(Plan { pipelines });
                }
            }
        }
    }
    if command.argv.is_empty() {
        return outside(if command.redirects.is_empty() {
            "an empty command"
        } else {
            "a redirection without a command"
        });
    }
    commands.push(command);
    pipelines.push(Pipeline { join, commands });
    Ok(Plan { pipelines })
}

fn tokens(line: &str) -> Result<Vec<Token>, Outside> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            ' ' | '\t' => i += 1,
            '\n' | ';' => {
                if c == ';' && next == Some(';') {
                    return outside("`;;`");
                }
                // Runs of separators are one.
                if out.last() != Some(&Token::Then) {
                    if out.is_empty() {
                        return outside("a line that starts with a separator");
                    }
                    out.push(Token::Then);
                }
                i += 1;
            }
            '|' if next == Some('|') => {
                out.push(Token::Or);
                i += 2;
            }
            '|' if next == Some('&') => return outside("`|&`"),
            '|' => {
                out.push(Token::Pipe);
                i += 1;
            }
            '&' if next == Some('&') => {
                out.push(Token::And);
                i += 2;
            }
            '&' if next == Some('>') => return outside("`&>` (stdout and stderr to a file)"),
            '&' => return outside("`&` (a command in the background)"),
            '>' | '<' => {
                let (op, len) = redirect_op(c, next, chars.get(i + 2).copied())?;
                out.push(Token::Redirect(if c == '<' { 0 } else { 1 }, op));
                i += len;
            }
            _ => {
                let (word, end) = word(&chars, i)?;
                // An fd number written right before the operator belongs to it.
                if matches!(chars.get(end), Some('<' | '>'))
                    && word.chars().all(|d| d.is_ascii_digit())
                    && !chars[i..end].contains(&'\'')
                {
                    let fd = match word.as_str() {
                        "0" => 0,
                        "1" => 1,
                        "2" => 2,
                        _ => return outside(format!("the file descriptor {word}")),
                    };
                    let c = chars[end];
                    let (op, len) =
                        redirect_op(c, chars.get(end + 1).copied(), chars.get(end + 2).copied())?;
                    if (c == '<') != (fd == 0) {
                        return outside(format!("the redirection `{fd}{op}`"));
                    }
                    out.push(Token::Redirect(fd, op));
                    i = end + len;
                } else {
                    out.push(Token::Word(word));
                    i = end;
                }
            }
        }
    }
    Ok(out)
}

/// The redirection operator starting with `c` (`>` or `<`) and its length.
fn redirect_op(
    c: char,
    next: Option<char>,
    after: Option<char>,
) -> Result<(&'static str, usize), Outside> {
    match (c, next) {
        ('>', Some('>')) => {
            if matches!(after, Some('>' | '&' | '|')) {
                return outside("an unknown redirection operator");
            }
            Ok((">>", 2))
        }
        ('>', Some('&')) => Ok((">&", 2)),
        ('>', Some('|')) => outside("`>|`"),
        ('>', Some('(')) => outside("a process substitution"),
        ('>', _) => Ok((">", 1)),
        ('<', Some('<')) => outside("a here-document"),
        ('<', Some('>')) => outside("`<>`"),
        ('<', Some('&')) => outside("`<&`"),
        ('<', Some('(')) => outside("a process substitution"),
        _ => Ok(("<", 1)),
    }
}

/// The word starting at `start`, and where it ends.
fn word(chars: &[char], start: usize) -> Result<(String, usize), Outside> {
    let mut w = String::new();
    let mut i = start;
    while let Some(&c) = chars.get(i) {
        if plain(c) {
            w.push(c);
            i += 1;
        } else if c == '\'' {
            i += 1;
            loop {
                match chars.get(i) {
                    None => return outside("an unterminated single quote"),
                    Some('\'') => break,
                    Some(&q) if special_in_quotes(q) => {
                        return outside(format!("a single-quoted string holding {}", describe(q)))
                    }
                    Some(&q) => w.push(q),
                }
                i += 1;
            }
            i += 1;
        } else if matches!(c, ' ' | '\t' | '\n' | ';' | '|' | '&' | '<' | '>') {
            break;
        } else {
            return outside(describe(c));
        }
    }
    Ok((w, i))
}

/// What a character outside the grammar stands for, for the approval's reason.
fn describe(c: char) -> String {
    match c {
        '$' => "a `$` (an expansion)".into(),
        '`' => "a backtick (a command substitution)".into(),
        '\\' => "a backslash escape".into(),
        '"' => "a double-quoted string".into(),
        '*' | '?' | '[' | ']' => format!("the file name pattern character `{c}`"),
        '~' => "a `~` (a home folder)".into(),
        '#' => "a comment".into(),
        '(' | ')' => "a subshell or function (`(`, `)`)".into(),
        '{' | '}' => "a brace group (`{`, `}`)".into(),
        '!' => "a `!`".into(),
        c if c.is_control() => format!("the control character U+{:04X}", c as u32),
        c => format!("the character `{c}`"),
    }
}

#[cfg(test)]
#[path = "gate_tests.rs"]
mod tests;
