//! The line a checked plan runs as (`gate_check.rs`): one program without redirections as
//! an argv, anything else as a `sh -c` line rendered from the plan — programs by absolute
//! path, every word single-quoted, `cd` to the folder that was checked.

use super::super::gate::{Join, Target};
use super::{Gated, Program, Run};

impl Gated {
    /// The line to run: what was checked, rendered.
    pub fn run(&self) -> Run {
        if let [one] = self.commands.as_slice() {
            let redirects = self
                .plan
                .pipelines
                .first()
                .and_then(|p| p.commands.first())
                .is_some_and(|c| !c.redirects.is_empty());
            if let (Program::Path(p), false) = (&one.program, redirects) {
                let mut argv = vec![p.clone()];
                argv.extend(one.args.iter().cloned());
                return Run::Argv(argv);
            }
        }
        Run::Shell(self.render())
    }

    /// The plan as a `sh -c` line: programs by their absolute paths, every word quoted.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let mut commands = self.commands.iter();
        for (p, pipeline) in self.plan.pipelines.iter().enumerate() {
            out.push_str(match pipeline.join {
                Join::First => "",
                Join::Then => "; ",
                Join::And => " && ",
                Join::Or => " || ",
            });
            for (c, command) in pipeline.commands.iter().enumerate() {
                if c > 0 {
                    out.push_str(" | ");
                }
                let Some(checked) = commands.next() else {
                    break;
                };
                let args: Vec<String> = match &checked.program {
                    Program::Builtin("cd") => self
                        .cd_targets
                        .iter()
                        .find(|(at, _)| *at == (p, c))
                        .map(|(_, t)| vec![t.clone()])
                        .unwrap_or_else(|| checked.args.clone()),
                    _ => checked.args.clone(),
                };
                match &checked.program {
                    Program::Builtin(b) => out.push_str(b),
                    Program::Path(path) => out.push_str(&quote(path)),
                    Program::Missing(w) => out.push_str(&quote(w)),
                }
                for a in &args {
                    out.push(' ');
                    out.push_str(&quote(a));
                }
                for r in &command.redirects {
                    out.push(' ');
                    match &r.target {
                        Target::Dup(to) => out.push_str(&format!("{}>&{to}", r.fd)),
                        Target::Write { path, append } => {
                            let op = if *append { ">>" } else { ">" };
                            out.push_str(&format!("{}{op}{}", r.fd, quote(path)));
                        }
                        Target::Read(path) => out.push_str(&format!("{}<{}", r.fd, quote(path))),
                    }
                }
            }
        }
        out
    }
}

/// `s` single-quoted for `sh`.
pub(super) fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}
