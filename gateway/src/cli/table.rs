//! Aligned text tables for people, and scrubbing of text that came from outside (a
//! sender's name, a model's reply) before it reaches a terminal.

/// A table: a header row and rows of cells, printed with columns padded to line up.
#[derive(Debug, Clone, Default)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

/// Widest a cell is printed; longer text is cut with `…`.
const MAX_CELL: usize = 60;

impl Table {
    pub fn new(header: &[&str]) -> Table {
        Table {
            header: header.iter().map(|h| (*h).to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row; each cell is scrubbed and put on one line, and all but the last are
    /// cut to [`MAX_CELL`] characters (the last needs no padding after it).
    pub fn row(&mut self, cells: Vec<String>) {
        let last = cells.len().saturating_sub(1);
        self.rows.push(
            cells
                .iter()
                .enumerate()
                .map(|(i, c)| cell(c, i < last))
                .collect(),
        );
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table as text, one line per row, columns separated by two spaces, no
    /// trailing spaces.
    pub fn render(&self) -> String {
        let columns = self
            .header
            .len()
            .max(self.rows.iter().map(Vec::len).max().unwrap_or(0));
        let mut widths = vec![0; columns];
        for row in std::iter::once(&self.header).chain(&self.rows) {
            for (i, c) in row.iter().enumerate() {
                widths[i] = widths[i].max(c.chars().count());
            }
        }
        let mut out = String::new();
        for row in std::iter::once(&self.header).chain(&self.rows) {
            let mut line = String::new();
            for (i, c) in row.iter().enumerate() {
                if i > 0 {
                    line.push_str("  ");
                }
                line.push_str(c);
                line.extend(std::iter::repeat_n(' ', widths[i] - c.chars().count()));
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

fn cell(text: &str, cut: bool) -> String {
    let one_line: String = scrub(text).split_whitespace().collect::<Vec<_>>().join(" ");
    if cut && one_line.chars().count() > MAX_CELL {
        let cut: String = one_line.chars().take(MAX_CELL - 1).collect();
        format!("{cut}…")
    } else {
        one_line
    }
}

/// `text` without control characters (escape sequences could rewrite the terminal),
/// newlines and tabs kept.
pub fn scrub(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\n' | '\t' => c,
            c if c.is_control() || matches!(c, '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}') => '�',
            c => c,
        })
        .collect()
}

/// A duration in seconds as people read it: `42s`, `3m 5s`, `2h 10m`, `3d 4h`.
pub fn age(seconds: i64) -> String {
    let s = seconds.max(0);
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m {}s", s / 60, s % 60),
        3600..=86_399 => format!("{}h {}m", s / 3600, s % 3600 / 60),
        _ => format!("{}d {}h", s / 86_400, s % 86_400 / 3600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Catches: columns that do not line up, or a sender's name carrying an escape
    /// sequence into the operator's terminal.
    #[test]
    fn aligned_and_scrubbed() {
        let mut t = Table::new(&["KEY", "STATUS"]);
        t.row(vec!["agent:main:main".into(), "active".into()]);
        t.row(vec!["a\u{1b}[2Jb\nc".into(), "x".into()]);
        assert_eq!(
            t.render(),
            "KEY              STATUS\nagent:main:main  active\na�[2Jb c         x\n"
        );
        assert_eq!(scrub("ok\u{7}\u{202E}txt\n"), "ok��txt\n");
        let long = "x".repeat(100);
        let mut t = Table::new(&["A", "B"]);
        t.row(vec![long.clone(), long]);
        assert_eq!(
            t.render().lines().nth(1).map(|l| l.chars().count()),
            Some(MAX_CELL + 2 + 100),
            "every column but the last is cut"
        );
        assert_eq!(
            [age(5), age(185), age(7800), age(3 * 86_400 + 3600)],
            ["5s", "3m 5s", "2h 10m", "3d 1h"]
        );
    }
}
