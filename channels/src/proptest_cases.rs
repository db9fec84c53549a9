//! How many cases each property test runs: 10,000 by default (the CI run), more with
//! `SWITCHBOARD_PROPTEST_CASES=N` for a long local run.

/// Cases per property test.
pub(crate) fn cases() -> u32 {
    std::env::var("SWITCHBOARD_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000)
}

/// A proptest config with [`cases`] cases and no failure-persistence files.
pub(crate) fn config() -> proptest::test_runner::Config {
    proptest::test_runner::Config {
        cases: cases(),
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    }
}
