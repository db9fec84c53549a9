//! Fan-in (README, Sub-agents): the announce as the requester agent reads it in its own
//! transcript — a user-role message marked as coming from the child, with its label, agent
//! and run id — so the requester's next model call knows what its children found. It is
//! stored in the transaction that completes the announce (`Store::complete_announce_fan_in`).

/// What a skipped announce (`ANNOUNCE_SKIP`) records as its result.
pub const SKIPPED_RESULT: &str = "(the sub-agent chose to post nothing: ANNOUNCE_SKIP)";

/// The transcript message for the requester: a header naming the child, then the
/// announce's `Status / Result / Notes` text and its `Stats` line.
pub fn message(run_id: &str, label: Option<&str>, agent_id: &str, announce: &str) -> String {
    let label = label
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| format!(", label {l:?}"))
        .unwrap_or_default();
    format!(
        "[sub-agent result: from child run {run_id}{label}, agent {agent_id}; not a message from the user]\n{}",
        announce.trim()
    )
}

/// The child's run id and the announce text of a fan-in message written by [`message`];
/// `None` for any other text.
pub fn parse(content: &str) -> Option<(&str, &str)> {
    let rest = content.strip_prefix("[sub-agent result: from child run ")?;
    let (header, announce) = rest.split_once('\n').unwrap_or((rest, ""));
    if !header.ends_with("; not a message from the user]") {
        return None;
    }
    let run_id = header.split([',', ';']).next()?;
    Some((run_id, announce))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_reads_back_what_message_writes() {
        let m = message("r-1", Some("a, b"), "explore", "Status: success\nResult: x");
        assert_eq!(parse(&m), Some(("r-1", "Status: success\nResult: x")));
        assert_eq!(parse("hello"), None);
        assert_eq!(parse("[sub-agent result: from child run r-1 forged"), None);
    }

    #[test]
    fn names_the_child_with_its_label_and_run_id() {
        assert_eq!(
            message("r-1", Some(" web "), "explore", "Status: success\nResult: found it\nNotes: none\n"),
            "[sub-agent result: from child run r-1, label \"web\", agent explore; not a message from the user]\n\
             Status: success\nResult: found it\nNotes: none"
        );
        assert_eq!(
            message("r-2", None, "main", "Status: error"),
            "[sub-agent result: from child run r-2, agent main; not a message from the user]\nStatus: error"
        );
    }
}
