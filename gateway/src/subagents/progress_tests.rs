//! The progress worker on tokio's paused clock: the first line is posted at once, later
//! ones coalesce into at most one edit per window, a stored handle is edited instead of
//! posting again, a gone message is posted again once, a rate limit waits.

use std::collections::VecDeque;

use switchboard_channels::ChatKind;

use super::*;

/// What the fake chat saw: (what, message id, text, seconds since the test began).
type Seen = (&'static str, String, String, u64);

#[derive(Default)]
struct FakeLines {
    begin: Mutex<Option<Instant>>,
    seen: Mutex<Vec<Seen>>,
    stored: Mutex<Option<ProgressLine>>,
    /// Failures for the next edits, in order.
    edit_failures: Mutex<VecDeque<LineError>>,
    posts: Mutex<u32>,
}

impl FakeLines {
    fn at(&self) -> u64 {
        let begin = *self.begin.lock().get_or_insert_with(Instant::now);
        (Instant::now() - begin).as_secs()
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().clone()
    }
}

#[async_trait]
impl Lines for FakeLines {
    async fn load(&self, _child: &str) -> Result<Option<ProgressLine>, StoreError> {
        Ok(self.stored.lock().clone())
    }

    async fn save(&self, line: &ProgressLine) -> Result<(), StoreError> {
        *self.stored.lock() = Some(line.clone());
        Ok(())
    }

    async fn post(&self, _target: &Target, text: &str) -> Result<String, LineError> {
        let id = {
            let mut posts = self.posts.lock();
            *posts += 1;
            format!("m{posts}")
        };
        let at = self.at();
        self.seen.lock().push(("post", id.clone(), text.into(), at));
        Ok(id)
    }

    async fn edit(&self, _target: &Target, message_id: &str, text: &str) -> Result<(), LineError> {
        if let Some(e) = self.edit_failures.lock().pop_front() {
            return Err(e);
        }
        let at = self.at();
        self.seen
            .lock()
            .push(("edit", message_id.into(), text.into(), at));
        Ok(())
    }
}

fn target() -> Target {
    Target {
        child: "agent:main:subagent:1".into(),
        origin: Origin {
            channel: "telegram".into(),
            account: None,
            chat_id: "42".into(),
            thread_id: None,
            kind: ChatKind::Direct,
            reply_handle: None,
        },
    }
}

struct Fixture {
    lines: Arc<FakeLines>,
    hub: ProgressHub,
    tasks: TaskTracker,
    cancel: CancellationToken,
}

impl Fixture {
    fn new(lines: FakeLines) -> Fixture {
        let lines = Arc::new(lines);
        lines.at(); // the test's time starts now
        Fixture {
            lines,
            hub: ProgressHub::default(),
            tasks: TaskTracker::new(),
            cancel: CancellationToken::new(),
        }
    }

    fn submit(&self, text: &str) {
        self.hub.submit(
            self.lines.clone(),
            &self.tasks,
            self.cancel.clone(),
            target(),
            text.into(),
        );
    }

    async fn stop(self) {
        self.cancel.cancel();
        self.tasks.close();
        self.tasks.wait().await;
    }
}

fn seen(what: &'static str, id: &str, text: &str, at: u64) -> Seen {
    (what, id.into(), text.into(), at)
}

/// Catches: an edit per call (no rate limit), an older text shown after a newer one, a
/// window that drops the newest text, or a first line that waits for a window.
#[tokio::test(start_paused = true)]
async fn the_first_line_is_posted_at_once_and_later_ones_coalesce_per_window() {
    let f = Fixture::new(FakeLines::default());
    f.submit("1");
    tokio::time::sleep(Duration::from_millis(10)).await;
    for t in ["2", "3", "4"] {
        f.submit(t);
    }
    tokio::time::sleep(Duration::from_secs(5)).await;
    f.submit("5");
    tokio::time::sleep(Duration::from_millis(10)).await;
    f.submit("6");
    f.submit("7");
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert_eq!(
        f.lines.seen(),
        vec![
            seen("post", "m1", "1", 0),
            seen("edit", "m1", "4", 2),
            seen("edit", "m1", "5", 5),
            seen("edit", "m1", "7", 7),
        ]
    );
    assert_eq!(f.hub.active(), 1);
    f.stop().await;
}

/// Catches: a restarted gateway posting a second message instead of editing the stored
/// one, or ignoring the window the stored last edit opened.
#[tokio::test(start_paused = true)]
async fn a_stored_line_is_edited_not_posted_again() {
    let lines = FakeLines::default();
    *lines.stored.lock() = Some(ProgressLine {
        child_session_key: target().child,
        channel: "telegram".into(),
        chat_id: "42".into(),
        thread_id: None,
        message_id: "77".into(),
        text: "before".into(),
        updated_at: now_ms() + 60_000, // "just now", whatever the wall clock does
    });
    let f = Fixture::new(lines);
    f.submit("after");
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(
        f.lines.seen(),
        vec![],
        "the stored edit's window is still open"
    );
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(f.lines.seen(), vec![seen("edit", "77", "after", 2)]);
    // The same text again changes nothing.
    f.submit("after");
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(f.lines.seen().len(), 1);
    f.stop().await;
}

/// Catches: a deleted message never replaced, or replaced by a message per call.
#[tokio::test(start_paused = true)]
async fn a_gone_message_is_posted_again_once_and_its_handle_stored() {
    let lines = FakeLines::default();
    lines
        .edit_failures
        .lock()
        .push_back(LineError::Gone("deleted".into()));
    let f = Fixture::new(lines);
    f.submit("a");
    tokio::time::sleep(Duration::from_secs(3)).await;
    f.submit("b");
    tokio::time::sleep(Duration::from_secs(3)).await;
    f.submit("c");
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        f.lines.seen(),
        vec![
            seen("post", "m1", "a", 0),
            seen("post", "m2", "b", 3),
            seen("edit", "m2", "c", 6),
        ]
    );
    let stored = f.lines.stored.lock().clone().map(|l| l.message_id);
    assert_eq!(stored.as_deref(), Some("m2"));
    f.stop().await;
}

/// Catches: a rate-limited edit dropped or retried at once, or retried with a stale text.
#[tokio::test(start_paused = true)]
async fn a_rate_limited_edit_waits_and_then_shows_the_newest_text() {
    let lines = FakeLines::default();
    lines
        .edit_failures
        .lock()
        .push_back(LineError::Channel(ChannelError::RateLimited(
            Duration::from_secs(7),
        )));
    let f = Fixture::new(lines);
    f.submit("a");
    tokio::time::sleep(Duration::from_secs(3)).await;
    f.submit("b");
    tokio::time::sleep(Duration::from_secs(1)).await;
    f.submit("c");
    tokio::time::sleep(Duration::from_secs(20)).await;
    assert_eq!(
        f.lines.seen(),
        vec![seen("post", "m1", "a", 0), seen("edit", "m1", "c", 10)]
    );
    f.stop().await;
}

/// Catches: a worker that never leaves (one task per child forever), or a line lost
/// because it came as the worker left.
#[tokio::test(start_paused = true)]
async fn an_idle_worker_leaves_and_the_next_line_edits_the_same_message() {
    let f = Fixture::new(FakeLines::default());
    f.submit("a");
    tokio::time::sleep(IDLE_EXIT + Duration::from_secs(5)).await;
    assert_eq!(f.hub.active(), 0);
    f.submit("b");
    tokio::time::sleep(Duration::from_secs(3)).await;
    let seen = f.lines.seen();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!((seen[1].0, seen[1].1.as_str()), ("edit", "m1"));
    f.stop().await;
}
