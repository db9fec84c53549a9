//! The allowed range of every duration and count in the config, and the checks that hold
//! a loaded config to them. Values past these ranges are refused with the key path and the
//! range, so what reaches timers and arithmetic elsewhere (`Instant + d`, `ms as i64`) is
//! always small enough not to overflow.

use std::time::Duration;

use super::error::{Issue, KeyPath};
use super::{duration, Config};

/// `gateway.reload.debounce`: at most a minute (a longer quiet time is a typo).
pub const MAX_DEBOUNCE: Duration = Duration::from_secs(60);
/// `gateway.shutdownGrace`: at most a day.
pub const MAX_SHUTDOWN_GRACE: Duration = Duration::from_secs(24 * 3600);
/// `gateway.maxBodyBytes`: at most 64 MiB (an API message is at most 32,000 characters).
pub const MAX_BODY_BYTES: u64 = 64 * 1024 * 1024;
/// `gateway.http.maxConcurrent`: requests served at once.
pub const MAX_HTTP_CONCURRENT: u64 = 65_536;
/// `gateway.http.timeout`: from a second to an hour.
pub const MIN_HTTP_TIMEOUT: Duration = Duration::from_secs(1);
pub const MAX_HTTP_TIMEOUT: Duration = Duration::from_secs(3600);
/// `gateway.http.maxConnections`: connections open at once (each a file descriptor).
pub const MAX_HTTP_CONNECTIONS: u64 = 65_536;
/// `gateway.http.idleTimeout`: from a second to ten minutes (a connection held longer
/// without a request is a client that forgot it).
pub const MIN_HTTP_IDLE: Duration = Duration::from_secs(1);
pub const MAX_HTTP_IDLE: Duration = Duration::from_secs(600);
/// Longest run timeout: `agents.defaults.timeout`, `agents.defaults.subagents.runTimeoutSeconds`
/// and the `runTimeoutSeconds` argument of `sessions_spawn` (seven days).
pub const MAX_RUN_TIMEOUT: Duration = Duration::from_secs(7 * 24 * 3600);
/// [`MAX_RUN_TIMEOUT`] in seconds.
pub const MAX_RUN_TIMEOUT_SECS: u64 = MAX_RUN_TIMEOUT.as_secs();
/// `agents.defaults.subagents.archiveAfterMinutes`: at most a year.
pub const MAX_ARCHIVE_AFTER_MINUTES: u64 = 365 * 24 * 60;
/// `agents.defaults.maxSteps`: model calls one run may make.
pub const MAX_STEPS: u32 = 1000;
/// `models.providers.<name>.maxRetries`.
pub const MAX_RETRIES: u32 = 10;
/// `models.providers.<name>.models[].contextWindow`, in tokens.
pub const MAX_CONTEXT_WINDOW: u32 = 100_000_000;
/// `models.providers.<name>.models[].cost.input|output`, in USD per million tokens (the
/// lower bound, 0, and finiteness are checked in `validate.rs`): keeps cost estimates finite.
pub const MAX_COST_PER_MILLION: f64 = 1_000_000.0;

/// `mcp.servers.<name>.timeout`: one tool call (and a server's start handshake), 1s to an hour.
pub const MCP_TIMEOUT: (Duration, Duration) = (Duration::from_secs(1), Duration::from_secs(3600));
/// `storage.leaseTimeout`: 2s (renewals every 667 ms still leave a database round trip
/// room) to 10 minutes (a longer failover is an outage).
pub const LEASE_TIMEOUT: (Duration, Duration) = (Duration::from_secs(2), Duration::from_secs(600));
/// `cron.maxConcurrent`: jobs running at once.
pub const MAX_CRON_CONCURRENT: u32 = 64;
/// `cron.minInterval`: a second to a day.
pub const CRON_MIN_INTERVAL: (Duration, Duration) =
    (Duration::from_secs(1), Duration::from_secs(24 * 3600));

/// Range checks of the durations and counts [`super::validate`] does not already check.
pub(crate) fn check(config: &Config, out: &mut Vec<Issue>) {
    let g = &config.gateway;
    duration_range(
        out,
        "gateway.reload.debounce",
        g.reload.debounce,
        Duration::ZERO,
        MAX_DEBOUNCE,
    );
    duration_range(
        out,
        "gateway.shutdownGrace",
        g.shutdown_grace,
        Duration::ZERO,
        MAX_SHUTDOWN_GRACE,
    );
    // The lower bound of `gateway.maxBodyBytes` is checked in `validate/gateway.rs`.
    if g.max_body_bytes as u64 > MAX_BODY_BYTES {
        out.push(Issue::new(
            KeyPath::dotted("gateway.maxBodyBytes"),
            format!("must be at most {MAX_BODY_BYTES}, got {}", g.max_body_bytes),
        ));
    }
    count_range(
        out,
        KeyPath::dotted("gateway.http.maxConcurrent"),
        g.http.max_concurrent as u64,
        1,
        MAX_HTTP_CONCURRENT,
        " requests",
    );
    duration_range(
        out,
        "gateway.http.timeout",
        g.http.timeout,
        MIN_HTTP_TIMEOUT,
        MAX_HTTP_TIMEOUT,
    );
    count_range(
        out,
        KeyPath::dotted("gateway.http.maxConnections"),
        g.http.max_connections as u64,
        1,
        MAX_HTTP_CONNECTIONS,
        " connections",
    );
    duration_range(
        out,
        "gateway.http.idleTimeout",
        g.http.idle_timeout,
        MIN_HTTP_IDLE,
        MAX_HTTP_IDLE,
    );
    let (min, max) = LEASE_TIMEOUT;
    duration_range(
        out,
        "storage.leaseTimeout",
        config.storage.lease_timeout,
        min,
        max,
    );
    let d = &config.agents.defaults;
    if let Some(timeout) = d.timeout {
        duration_range(
            out,
            "agents.defaults.timeout",
            timeout,
            Duration::from_secs(1),
            MAX_RUN_TIMEOUT,
        );
    }
    count_range(
        out,
        KeyPath::dotted("agents.defaults.maxSteps"),
        u64::from(d.max_steps),
        1,
        u64::from(MAX_STEPS),
        "",
    );
    count_range(
        out,
        KeyPath::dotted("agents.defaults.subagents.archiveAfterMinutes"),
        d.subagents.archive_after_minutes,
        0,
        MAX_ARCHIVE_AFTER_MINUTES,
        " minutes (0 = never archive)",
    );
    count_range(
        out,
        KeyPath::dotted("agents.defaults.subagents.runTimeoutSeconds"),
        d.subagents.run_timeout_seconds,
        0,
        MAX_RUN_TIMEOUT_SECS,
        " seconds (0 = no timeout)",
    );
    for (name, server) in &config.mcp.servers {
        let (min, max) = MCP_TIMEOUT;
        if server.timeout < min || server.timeout > max {
            out.push(Issue::new(
                KeyPath::dotted("mcp.servers").key(name).key("timeout"),
                format!(
                    "must be between {:?} and {:?}, got {:?}",
                    duration::format(min),
                    duration::format(max),
                    duration::format(server.timeout)
                ),
            ));
        }
    }
    count_range(
        out,
        KeyPath::dotted("cron.maxConcurrent"),
        u64::from(config.cron.max_concurrent),
        1,
        u64::from(MAX_CRON_CONCURRENT),
        "",
    );
    duration_range(
        out,
        "cron.minInterval",
        config.cron.min_interval,
        CRON_MIN_INTERVAL.0,
        CRON_MIN_INTERVAL.1,
    );
    for (name, provider) in &config.models.providers {
        let at = KeyPath::dotted("models.providers").key(name);
        count_range(
            out,
            at.key("maxRetries"),
            u64::from(provider.max_retries),
            0,
            u64::from(MAX_RETRIES),
            "",
        );
        for (i, model) in provider.models.iter().enumerate() {
            if let Some(cost) = &model.cost {
                for (key, v) in [("input", cost.input), ("output", cost.output)] {
                    if v > MAX_COST_PER_MILLION {
                        out.push(Issue::new(
                            at.key("models").index(i).key("cost").key(key),
                            format!("must be at most {MAX_COST_PER_MILLION} (USD per million tokens), got {v}"),
                        ));
                    }
                }
            }
            if let Some(window) = model.context_window {
                count_range(
                    out,
                    at.key("models").index(i).key("contextWindow"),
                    u64::from(window),
                    1,
                    u64::from(MAX_CONTEXT_WINDOW),
                    " tokens",
                );
            }
        }
    }
}

fn count_range(out: &mut Vec<Issue>, path: KeyPath, v: u64, min: u64, max: u64, unit: &str) {
    if v < min || v > max {
        out.push(Issue::new(
            path,
            format!("must be between {min} and {max}{unit}, got {v}"),
        ));
    }
}

fn duration_range(out: &mut Vec<Issue>, path: &str, v: Duration, min: Duration, max: Duration) {
    if v < min || v > max {
        out.push(Issue::new(
            KeyPath::dotted(path),
            format!(
                "must be between {:?} and {:?}, got {:?}",
                duration::format(min),
                duration::format(max),
                duration::format(v)
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ModelCost, ModelEntry, ProviderApi, ProviderConfig};

    fn check_all(config: &Config) -> Vec<(String, String)> {
        let mut out = Vec::new();
        check(config, &mut out);
        out.into_iter()
            .map(|i| (i.path.to_string(), i.message))
            .collect()
    }

    #[test]
    fn defaults_are_in_range() {
        assert_eq!(check_all(&Config::default()), vec![]);
    }

    /// Catches: a limit check dropped or a bound off by one (every bound itself passes,
    /// one past it fails with the key path and the range).
    #[test]
    fn bounds_are_inclusive_and_one_past_is_refused() {
        let mut c = Config::default();
        c.gateway.reload.debounce = MAX_DEBOUNCE;
        c.gateway.shutdown_grace = MAX_SHUTDOWN_GRACE;
        c.gateway.max_body_bytes = MAX_BODY_BYTES as usize;
        c.gateway.http.max_concurrent = MAX_HTTP_CONCURRENT as usize;
        c.gateway.http.timeout = MAX_HTTP_TIMEOUT;
        c.gateway.http.idle_timeout = MAX_HTTP_IDLE;
        c.gateway.http.max_connections = MAX_HTTP_CONNECTIONS as usize;
        c.agents.defaults.timeout = Some(MAX_RUN_TIMEOUT);
        c.agents.defaults.max_steps = MAX_STEPS;
        c.agents.defaults.subagents.archive_after_minutes = MAX_ARCHIVE_AFTER_MINUTES;
        c.agents.defaults.subagents.run_timeout_seconds = MAX_RUN_TIMEOUT_SECS;
        c.models.providers.insert(
            "p".into(),
            ProviderConfig {
                api: ProviderApi::OpenaiChat,
                base_url: None,
                api_key: None,
                models: vec![ModelEntry {
                    id: "m".into(),
                    cost: Some(ModelCost {
                        input: MAX_COST_PER_MILLION,
                        output: 0.0,
                    }),
                    context_window: Some(MAX_CONTEXT_WINDOW),
                    max_tokens: None,
                    reasoning: None,
                    input: None,
                }],
                max_retries: MAX_RETRIES,
                headers: Default::default(),
            },
        );
        assert_eq!(check_all(&c), vec![]);

        let ms = Duration::from_millis(1);
        c.gateway.reload.debounce = MAX_DEBOUNCE + ms;
        c.gateway.shutdown_grace = MAX_SHUTDOWN_GRACE + ms;
        c.agents.defaults.timeout = Some(MAX_RUN_TIMEOUT + ms);
        c.agents.defaults.max_steps = MAX_STEPS + 1;
        c.agents.defaults.subagents.archive_after_minutes = MAX_ARCHIVE_AFTER_MINUTES + 1;
        c.agents.defaults.subagents.run_timeout_seconds = MAX_RUN_TIMEOUT_SECS + 1;
        if let Some(p) = c.models.providers.get_mut("p") {
            p.max_retries = MAX_RETRIES + 1;
            p.models[0].context_window = Some(MAX_CONTEXT_WINDOW + 1);
            p.models[0].cost = Some(ModelCost {
                input: 2e6,
                output: 0.0,
            });
        }
        assert_eq!(
            check_all(&c),
            vec![
                (
                    "gateway.reload.debounce".into(),
                    "must be between \"0s\" and \"1m\", got \"1m 1ms\"".into()
                ),
                (
                    "gateway.shutdownGrace".into(),
                    "must be between \"0s\" and \"1day\", got \"1day 1ms\"".into()
                ),
                (
                    "agents.defaults.timeout".into(),
                    "must be between \"1s\" and \"7days\", got \"7days 1ms\"".into()
                ),
                (
                    "agents.defaults.maxSteps".into(),
                    "must be between 1 and 1000, got 1001".into()
                ),
                (
                    "agents.defaults.subagents.archiveAfterMinutes".into(),
                    "must be between 0 and 525600 minutes (0 = never archive), got 525601".into()
                ),
                (
                    "agents.defaults.subagents.runTimeoutSeconds".into(),
                    "must be between 0 and 604800 seconds (0 = no timeout), got 604801".into()
                ),
                (
                    "models.providers.p.maxRetries".into(),
                    "must be between 0 and 10, got 11".into()
                ),
                (
                    "models.providers.p.models[0].cost.input".into(),
                    "must be at most 1000000 (USD per million tokens), got 2000000".into()
                ),
                (
                    "models.providers.p.models[0].contextWindow".into(),
                    "must be between 1 and 100000000 tokens, got 100000001".into()
                ),
            ]
        );
        c.agents.defaults.timeout = Some(Duration::ZERO);
        c.agents.defaults.max_steps = 0;
        let got = check_all(&c);
        assert!(got.contains(&(
            "agents.defaults.timeout".into(),
            "must be between \"1s\" and \"7days\", got \"0s\"".into()
        )));
        assert!(got.contains(&(
            "agents.defaults.maxSteps".into(),
            "must be between 1 and 1000, got 0".into()
        )));
    }

    /// Catches: `gateway.http.*` or the body limit taken unchecked (a zero concurrency
    /// limit refuses every request; a zero timeout times every request out).
    #[test]
    fn http_limits_are_ranged() {
        let mut c = Config::default();
        c.gateway.http.max_concurrent = 0;
        c.gateway.http.timeout = MIN_HTTP_TIMEOUT - Duration::from_millis(1);
        c.gateway.http.idle_timeout = MIN_HTTP_IDLE - Duration::from_millis(1);
        c.gateway.http.max_connections = 0;
        c.gateway.max_body_bytes = MAX_BODY_BYTES as usize + 1;
        assert_eq!(
            check_all(&c),
            vec![
                (
                    "gateway.maxBodyBytes".into(),
                    "must be at most 67108864, got 67108865".into()
                ),
                (
                    "gateway.http.maxConcurrent".into(),
                    "must be between 1 and 65536 requests, got 0".into()
                ),
                (
                    "gateway.http.timeout".into(),
                    "must be between \"1s\" and \"1h\", got \"999ms\"".into()
                ),
                (
                    "gateway.http.maxConnections".into(),
                    "must be between 1 and 65536 connections, got 0".into()
                ),
                (
                    "gateway.http.idleTimeout".into(),
                    "must be between \"1s\" and \"10m\", got \"999ms\"".into()
                ),
            ]
        );
        c.gateway.http.max_concurrent = MAX_HTTP_CONCURRENT as usize + 1;
        c.gateway.http.timeout = MAX_HTTP_TIMEOUT + Duration::from_millis(1);
        c.gateway.http.idle_timeout = MAX_HTTP_IDLE + Duration::from_millis(1);
        c.gateway.http.max_connections = MAX_HTTP_CONNECTIONS as usize + 1;
        c.gateway.max_body_bytes = MAX_BODY_BYTES as usize;
        assert_eq!(
            check_all(&c),
            vec![
                (
                    "gateway.http.maxConcurrent".into(),
                    "must be between 1 and 65536 requests, got 65537".into()
                ),
                (
                    "gateway.http.timeout".into(),
                    "must be between \"1s\" and \"1h\", got \"1h 1ms\"".into()
                ),
                (
                    "gateway.http.maxConnections".into(),
                    "must be between 1 and 65536 connections, got 65537".into()
                ),
                (
                    "gateway.http.idleTimeout".into(),
                    "must be between \"1s\" and \"10m\", got \"10m 1ms\"".into()
                ),
            ]
        );
    }
}
