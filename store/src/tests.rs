//! The store's test suite, one set of test functions run on each engine: the fixtures
//! (a store on SQLite or PostgreSQL, and the rows most tests start from) and the list of
//! which test runs on which engine. The tests themselves are in `tests/` by area; the
//! SQLite engine's own (the group-commit writer, its migrations) in `sqlite/tests`.

use switchboard_channels::{ChatKind, Origin};
use switchboard_testkit::pg::TestDb;

use super::*;

/// A job's definition in the tests: the JSON document as written (the gateway's is its
/// config type).
impl JobSpec for serde_json::Value {
    fn id(&self) -> &str {
        self["id"].as_str().unwrap_or_default()
    }

    fn enabled(&self) -> bool {
        self["enabled"].as_bool().unwrap_or(true)
    }
}

/// The engine a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Db {
    /// A database file in a temp dir (the writer and the readers, as in production).
    Sqlite,
    /// A fresh database in the test kit's throwaway cluster (or `SWITCHBOARD_TEST_PG_URL`).
    Postgres,
}

/// What keeps a test's database alive: its temp dir, or its PostgreSQL database (dropped
/// with it).
pub(super) enum Keep {
    Dir(tempfile::TempDir),
    Db(TestDb),
}

/// An empty store on `db`.
pub(super) async fn file_store(db: Db) -> (Keep, Store) {
    match db {
        Db::Sqlite => {
            let dir = tempfile::tempdir().expect("temp dir");
            let url = format!("sqlite://{}", dir.path().join("t.db").display());
            let store = Store::open(&url).await.expect("open");
            (Keep::Dir(dir), store)
        }
        Db::Postgres => {
            let db = TestDb::create().await.expect("a test database");
            let store = Store::open_postgres(db.url()).await.expect("open");
            (Keep::Db(db), store)
        }
    }
}

/// A file store with the requester session `agent:main:main` that children report to.
/// The store of `keep` opened again (a restart).
pub(super) async fn reopen(keep: &Keep) -> Store {
    match keep {
        Keep::Dir(dir) => {
            let url = format!("sqlite://{}", dir.path().join("t.db").display());
            Store::open(&url).await.expect("open again")
        }
        Keep::Db(db) => Store::open_postgres(db.url()).await.expect("open again"),
    }
}

pub(super) async fn requester_store(db: Db) -> (Keep, Store, Origin) {
    let (dir, store) = file_store(db).await;
    let o = origin();
    store
        .ensure_session("agent:main:main", "main", Some(&o))
        .await
        .unwrap();
    (dir, store, o)
}

/// The session key most tests use (see [`chat_store`]).
pub(super) const KEY: &str = "agent:main:webchat:direct:chat-1";

/// A file store with the session `KEY`, its origin and its row.
pub(super) async fn chat_store(db: Db) -> (Keep, Store, Origin, SessionRow) {
    let (dir, store) = file_store(db).await;
    let o = origin();
    let s = store.ensure_session(KEY, "main", Some(&o)).await.unwrap();
    (dir, store, o, s)
}

/// A message from `ann` for `key`, with platform id `id`.
pub(super) fn inbound<'a>(
    key: &'a str,
    o: &'a Origin,
    text: &'a str,
    id: Option<&'a str>,
) -> NewInbound<'a> {
    NewInbound {
        session_key: key,
        origin: o,
        sender_id: "ann",
        text,
        message_id: id,
    }
}

pub(super) fn origin() -> Origin {
    Origin::webchat("chat-1", ChatKind::Direct)
}

pub(super) fn run<'a>(
    id: &'a str,
    key: &'a str,
    session_id: &'a str,
    origin: &'a Origin,
) -> NewRun<'a> {
    NewRun {
        id,
        session_key: key,
        session_id,
        agent_id: "main",
        lane: "main",
        claim_all: true,
        origin: Some(origin),
        model: None,
        timeout_ms: None,
    }
}

/// A spawn of child `run_id` (session `key`, id `sid`) by `agent:main:main`, announcing to `o`.
pub(super) fn spawn<'a>(
    run_id: &'a str,
    key: &'a str,
    sid: &'a str,
    o: &'a Origin,
) -> NewSubagent<'a> {
    NewSubagent {
        requester_origin: Some(o),
        ..NewSubagent::fixture(run_id, key, sid)
    }
}

/// A spawned child `run_id` of `agent:main:main` (which must exist), announcing to `o`.
pub(super) async fn spawned(store: &Store, run_id: &str, o: &Origin) {
    let (key, sid) = (
        format!("agent:main:subagent:{run_id}"),
        format!("sid-{run_id}"),
    );
    store
        .create_subagent(&spawn(run_id, &key, &sid, o), None)
        .await
        .unwrap();
}

/// The announce message most tests complete with.
pub(super) fn ok_announce() -> AnnounceMessage<'static> {
    AnnounceMessage {
        text: "Status: ok",
        footer: "Stats: runtime 1s",
    }
}

/// A forum topic of a Telegram group.
pub(super) fn topic() -> Origin {
    Origin {
        channel: "telegram".into(),
        account: None,
        chat_id: "-5".into(),
        thread_id: Some("3".into()),
        kind: ChatKind::Group,
        reply_handle: None,
    }
}

/// Each listed test, as a `#[tokio::test]` per engine: `<test>::sqlite` and
/// `<test>::postgres` (`cargo test -p switchboard-store tests -- postgres`).
macro_rules! on_engines {
    ($($module:ident :: $test:ident on [$($engine:ident),+]),* $(,)?) => {
        $(
            mod $test {
                $(
                    #[tokio::test]
                    async fn $engine() {
                        super::super::$module::$test(on_engines!(@db $engine)).await
                    }
                )+
            }
        )*
    };
    (@db sqlite) => { super::super::Db::Sqlite };
    (@db postgres) => { super::super::Db::Postgres };
}

/// Every test of the list that runs on SQLite, one after the other, as one function
/// (`all_on_sqlite`): the workload whose statements `plans` checks.
macro_rules! sqlite_workload {
    ($($module:ident :: $test:ident on [$($engine:ident),+]),* $(,)?) => {
        pub(super) async fn all_on_sqlite() {
            $( sqlite_workload!(@one [$($engine),+] $module::$test); )*
        }
    };
    (@one [sqlite $(, $other:ident)*] $module:ident :: $test:ident) => {
        super::$module::$test(super::Db::Sqlite).await
    };
    (@one [postgres] $module:ident :: $test:ident) => {};
}

/// Which test runs on which engine. A test runs on PostgreSQL once every store method it
/// uses is ported (`pg/unported.rs` lists those that are not); until then it runs on
/// SQLite only, and is listed here with `on [sqlite]`. Given to `on_engines` (the
/// tests) and to `sqlite_workload`.
macro_rules! engine_list {
    ($m:ident) => {
        $m! {
            delivery::script_rows_name_their_chat_and_footer on [sqlite, postgres],
            fan_in::the_announce_is_recorded_once_in_the_requesters_transcript on [sqlite, postgres],
            approvals::requests_are_idempotent_per_call_and_answered_only_from_their_chat on [sqlite, postgres],
            channels::pairing_flow_and_dedupe on [sqlite, postgres],
            channels::pairing_requests_expire_and_are_capped_per_channel on [sqlite, postgres],
            channels::rejected_senders_wait_and_revoked_senders_start_over on [sqlite, postgres],
            leases::a_lease_is_held_renewed_released_and_blocks_other_owners on [sqlite, postgres],
            leases::an_expired_lease_goes_to_the_next_owner_with_a_higher_fence on [sqlite, postgres],
            leases::two_processes_acquiring_at_once_never_both_win on [postgres],
            leases::a_fenced_offset_moves_only_while_the_fence_holds on [sqlite, postgres],
            leases::a_process_lease_renews_and_releases_everything_its_owner_holds on [sqlite, postgres],
            ledger::the_inbound_ledger_counts_attempts_and_records_poisoned_updates on [sqlite, postgres],
            lifecycle::a_reply_goes_to_the_chat_of_the_newest_message_the_run_claimed on [sqlite, postgres],
            lifecycle::a_resumed_run_keeps_its_first_start_and_a_checkpoint_keeps_it_running on [sqlite, postgres],
            lifecycle::a_run_ended_with_drop_inbox_takes_the_waiting_messages_with_it on [sqlite, postgres],
            lifecycle::archiving_a_child_drops_its_progress_line_for_good on [sqlite, postgres],
            lifecycle::drop_waiting_cancels_the_runs_and_deletes_the_messages on [sqlite, postgres],
            lifecycle::only_ended_childrens_lines_are_listed on [sqlite, postgres],
            outbox::a_chat_waits_for_its_earlier_pending_row on [sqlite, postgres],
            outbox::parts_sent_survive_and_copied_origins_get_their_chat on [sqlite, postgres],
            outbox::the_next_due_time_is_the_held_back_chats_head on [sqlite, postgres],
            turns::a_child_run_s_end_is_recorded_and_its_archive_timer_armed_once on [sqlite, postgres],
            turns::an_announce_under_a_live_lease_is_not_orphaned on [sqlite, postgres],
            turns::a_spawn_commits_all_of_its_rows_or_none on [sqlite, postgres],
            turns::a_start_reads_what_was_added_since_the_cached_transcript on [sqlite, postgres],
            turns::accept_and_start_commits_message_run_and_start_together_once on [sqlite, postgres],
            turns::accept_message_queues_the_message_and_its_run_once_per_platform_id on [sqlite, postgres],
            turns::an_announce_completes_once on [sqlite, postgres],
            turns::ensure_session_creates_updates_the_origin_and_follows_an_archive on [sqlite, postgres],
            turns::finish_run_stores_the_answer_queues_the_reply_and_counts_what_waits on [sqlite, postgres],
            turns::start_run_claims_and_reads_the_transcript_only_for_a_run_still_waiting on [sqlite, postgres],
            opens::open_and_start_ensures_the_session_and_starts_the_run_once on [sqlite, postgres],
            opens::two_turns_opening_one_session_at_once_share_it on [sqlite, postgres],
            races::one_platform_id_accepted_by_two_stores_at_once_is_stored_once on [sqlite, postgres],
            races::a_runs_end_racing_its_start_leaves_one_or_the_other_first on [sqlite, postgres],
            races::one_due_time_fired_by_two_stores_at_once_fires_once on [sqlite, postgres],
            rows::rows_read_back_whole_on_every_engine on [sqlite, postgres],
            worktrees::worktrees_are_found_while_active_and_swept_when_left_over on [sqlite, postgres],
            compactions::a_compaction_is_read_by_the_furthest_and_keeps_the_messages on [sqlite, postgres],
            choices::session_choices_outlive_a_reopen_and_end_with_the_session on [sqlite, postgres],
            usage::usage_is_summed_per_session_agent_and_day on [sqlite, postgres],
            usage::a_runs_cost_counts_while_it_runs_and_is_split_by_serving_model on [sqlite, postgres],
            usage::a_runs_end_stores_its_last_calls_context_tokens on [sqlite, postgres],
            usage::a_call_answer_is_stored_with_its_usage on [sqlite, postgres],
            media_files::copies_are_held_while_pending_and_web_chat_ones_while_recent on [sqlite, postgres],
        }
    };
}

mod engines {
    engine_list!(on_engines);
    engine_list!(sqlite_workload);
}

mod approvals;
mod channels;
mod choices;
mod compactions;
mod delivery;
mod fan_in;
mod leases;
mod ledger;
mod lifecycle;
mod media_files;
mod opens;
mod outbox;
mod plans;
mod races;
mod rows;
mod seam;
mod turns;
mod usage;
mod worktrees;
