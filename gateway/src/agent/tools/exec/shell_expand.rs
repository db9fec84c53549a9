//! The expansions of the shell tokenizer (`shell.rs`): double-quoted text, `$…`
//! parameters, `$(…)` / backtick substitutions (whose commands are collected), `${…}` and
//! `$((…))`.

use super::{steers_programs, Parser, Word, MAX_DEPTH};

impl Parser {
    /// Inside `"…"` (the opening quote consumed).
    pub(super) fn double_quoted(&mut self, word: &mut Word, depth: usize) {
        loop {
            match self.peek(0) {
                None => {
                    self.unsure("an unterminated double quote");
                    return;
                }
                Some('"') => {
                    self.pos += 1;
                    return;
                }
                Some('\\') => {
                    self.pos += 1;
                    match self.peek(0) {
                        Some(x @ ('"' | '\\' | '$' | '`')) => {
                            word.text.push(x);
                            self.pos += 1;
                        }
                        Some('\n') => self.pos += 1,
                        _ => word.text.push('\\'),
                    }
                }
                Some('$' | '`') => self.expansion(word, depth),
                Some(x) => {
                    word.text.push(x);
                    self.pos += 1;
                }
            }
        }
    }

    /// At a `$` or a backtick: a substitution (whose commands are collected), a parameter
    /// or arithmetic expansion, or a plain `$`.
    pub(super) fn expansion(&mut self, word: &mut Word, depth: usize) {
        let c = self.peek(0);
        if c == Some('`') {
            self.pos += 1;
            word.expand();
            // The text up to the closing backtick is a command line of its own.
            let start = self.pos;
            while self.peek(0).is_some_and(|x| x != '`') {
                if self.peek(0) == Some('\\') {
                    self.pos += 1;
                }
                self.pos += 1;
            }
            if self.peek(0).is_none() {
                self.unsure("an unterminated backtick");
                return;
            }
            let inner: String = self.chars[start..self.pos].iter().collect();
            self.pos += 1;
            if depth >= MAX_DEPTH {
                self.unsure("substitutions nested too deep");
                return;
            }
            let mut sub = Parser::new(&inner, self.out.changes_dir);
            sub.sequence(depth + 1, None);
            self.out.commands.extend(sub.out.commands);
            self.out.writes |= sub.out.writes;
            self.out.changes_dir |= sub.out.changes_dir;
            if let Some(u) = sub.out.unsure {
                self.unsure(u);
            }
            return;
        }
        // `$`
        match self.peek(1) {
            Some('(') if self.peek(2) == Some('(') => {
                // Arithmetic `$((…))`: an expression, which may hold substitutions.
                word.expand();
                self.pos += 3;
                let start = self.pos;
                self.scan_until(depth, ')', 1);
                // `$((PATH = 1))` assigns.
                let expression: String = self.chars[start..self.pos].iter().collect();
                if let Some(name) = expression
                    .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .find(|name| steers_programs(name))
                {
                    self.unsure(format!("arithmetic on `{name}` may set it"));
                }
                if self.peek(0) == Some(')') {
                    self.pos += 1;
                } else {
                    self.unsure("an unclosed arithmetic expansion");
                }
            }
            Some('(') => {
                word.expand();
                self.pos += 2;
                self.sequence(depth + 1, Some(')'));
            }
            Some('{') => {
                word.expand();
                self.pos += 2;
                let name: String = self.chars[self.pos..]
                    .iter()
                    .take_while(|c| c.is_ascii_alphanumeric() || **c == '_')
                    .collect();
                let rest = &self.chars[self.pos + name.chars().count()..];
                if steers_programs(&name) && matches!(rest, ['=', ..] | [':', '=', ..]) {
                    self.unsure(format!("`${{{name}:=…}}` may set `{name}`"));
                }
                // `${…}` may hold substitutions in its word (`${x:-$(cmd)}`).
                self.scan_until(depth, '}', 0);
            }
            Some(x) if x.is_ascii_alphanumeric() || "_@*#?$!-".contains(x) => {
                word.expand();
                self.pos += 2;
                if x.is_ascii_alphabetic() || x == '_' {
                    while self
                        .peek(0)
                        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                    {
                        self.pos += 1;
                    }
                }
            }
            _ => {
                word.text.push('$');
                self.pos += 1;
            }
        }
    }

    /// Skips an expansion's text up to its closing `close` (past `(` … `)` pairs when
    /// `parens` starts at 1: arithmetic), collecting the commands of substitutions in it.
    fn scan_until(&mut self, depth: usize, close: char, mut parens: usize) {
        if depth > MAX_DEPTH {
            self.unsure("substitutions nested too deep");
            self.pos = self.chars.len();
            return;
        }
        let mut dummy = Word::default();
        loop {
            match self.peek(0) {
                None => {
                    self.unsure("an unclosed expansion");
                    return;
                }
                Some(c) if c == close && parens <= 1 => {
                    self.pos += 1;
                    return;
                }
                Some('(') => {
                    parens += 1;
                    self.pos += 1;
                }
                Some(')') => {
                    parens = parens.saturating_sub(1);
                    self.pos += 1;
                }
                Some('\\') => self.pos += 2,
                Some('\'') => {
                    self.pos += 1;
                    while self.peek(0).is_some_and(|c| c != '\'') {
                        self.pos += 1;
                    }
                    if self.peek(0).is_none() {
                        self.unsure("an unterminated single quote");
                        return;
                    }
                    self.pos += 1;
                }
                Some('"') => {
                    self.pos += 1;
                    self.double_quoted(&mut dummy, depth + 1);
                }
                Some('$' | '`') => self.expansion(&mut dummy, depth + 1),
                Some(_) => self.pos += 1,
            }
        }
    }
}
