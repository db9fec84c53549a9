//! What every scenario sets up: the fake model, the daemon pointed at it, an HTTP client for
//! the daemon's API, and readings from `/proc`.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context as _};
use serde_json::{json, Value};
use switchboard_testkit::fake_model::FakeModel;
use switchboard_testkit::harness::{Gateway, GatewayBuilder};
use switchboard_testkit::pg::TestDb;

/// Per-request bound of the bench's HTTP client; a turn against an instant model takes
/// milliseconds, so anything near this is a stall worth an error.
const HTTP_TIMEOUT: Duration = Duration::from_secs(60);
/// How long the daemon waits for a turn (`timeoutSeconds` of the API); shorter than
/// `HTTP_TIMEOUT` so a missed wake-up shows as a `pending` answer, not a client timeout.
const TURN_WAIT_SECONDS: u64 = 30;
/// Warnings whose first this-many characters (after the timestamp) agree count as one kind.
const GROUP_PREFIX: usize = 120;
/// Connections kept open per host: one per concurrent client task, with room to spare.
const POOL_PER_HOST: usize = 512;

/// Settings shared by the scenarios (from the command line).
#[derive(Debug, Clone)]
pub struct Settings {
    pub bin: PathBuf,
    /// Commands of the stdio MCP servers every daemon is configured with (`--mcp-servers`).
    pub mcp_servers: Vec<PathBuf>,
    pub samples: usize,
    pub warmup: usize,
    pub restarts: usize,
    pub idle: Duration,
    pub clients: usize,
    pub duration: Duration,
    pub burst: usize,
    pub burst_parents: usize,
    pub burst_caps: Vec<u32>,
    pub scenario_timeout: Duration,
    /// `RUST_LOG` of the daemons (`warn` unless profiling).
    pub gateway_log: String,
    /// Where to keep each daemon's whole stderr, if anywhere.
    pub log_dir: Option<PathBuf>,
    /// With `--postgres`: the databases made for the daemons, dropped when the run ends.
    pub postgres: Option<Arc<Databases>>,
    /// `--config-merge`: merged into every daemon's config (objects key by key, anything
    /// else replaced), to compare one build under two configs with one bench binary.
    pub config_merge: Option<Value>,
}

/// Fresh PostgreSQL databases, one per daemon (`--postgres`): on the test kit's throwaway
/// cluster, or on the server `SWITCHBOARD_TEST_PG_URL` names. Each is dropped with this.
#[derive(Default)]
pub struct Databases(Mutex<Vec<TestDb>>);

impl std::fmt::Debug for Databases {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Databases")
    }
}

/// The `storage.url` of the next daemon: a fresh database with `--postgres`, else `None`
/// (the embedded SQLite in the daemon's state dir).
pub async fn storage_url(settings: &Settings) -> anyhow::Result<Option<String>> {
    let Some(databases) = &settings.postgres else {
        return Ok(None);
    };
    let db = TestDb::create()
        .await
        .context("creating a PostgreSQL database (is PostgreSQL installed? tests/setup.sh)")?;
    let url = db.url().to_owned();
    databases
        .0
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(db);
    Ok(Some(url))
}

/// What a daemon's config varies in from one scenario to another.
#[derive(Debug, Clone, Copy)]
pub struct DaemonConfig<'a> {
    pub model_url: &'a str,
    /// The web chat's port (0: a free one).
    pub port: u16,
    pub main_cap: u32,
    pub subagent_cap: u32,
    /// `storage.url`; `None`: the embedded SQLite in the daemon's state dir.
    pub storage: Option<&'a str>,
}

/// The daemon's config: a web chat on a free (or given) loopback port, one instant model,
/// the stdio MCP servers of `--mcp-servers` (named `kit1`, `kit2`, …), the database when
/// given (else the embedded SQLite), and `--config-merge` merged in last.
pub fn config(settings: &Settings, daemon: &DaemonConfig<'_>) -> String {
    let servers: serde_json::Map<String, Value> = settings
        .mcp_servers
        .iter()
        .enumerate()
        .map(|(i, command)| (format!("kit{}", i + 1), json!({ "command": command })))
        .collect();
    let mut config = json!({
        "gateway": { "port": daemon.port },
        "models": { "providers": { "fake": {
            "api": "openai-chat",
            "baseUrl": daemon.model_url,
            "apiKey": "k",
            "models": [{ "id": "m", "cost": { "input": 1, "output": 2 } }],
        } } },
        "agents": { "defaults": {
            "model": "fake/m",
            "maxConcurrent": daemon.main_cap,
            "subagents": { "maxConcurrent": daemon.subagent_cap },
        } },
    });
    // Only with servers: the same config then runs builds from before MCP too, for a
    // before-and-after comparison with one bench binary.
    if !servers.is_empty() {
        config["mcp"] = json!({ "servers": servers });
    }
    if let Some(url) = daemon.storage {
        config["storage"] = json!({ "url": url });
    }
    if let Some(extra) = &settings.config_merge {
        merge(&mut config, extra);
    }
    config.to_string()
}

/// `extra` merged into `base` (none: `extra` alone), for a scenario that sets config of its
/// own on top of `--config-merge`.
pub fn merged(base: Option<Value>, extra: Value) -> Value {
    let mut base = base.unwrap_or_else(|| json!({}));
    merge(&mut base, &extra);
    base
}

/// `extra` merged into `base`: objects key by key, any other value replaced.
fn merge(base: &mut Value, extra: &Value) {
    match (base, extra) {
        (Value::Object(base), Value::Object(extra)) => {
            for (key, value) in extra {
                merge(base.entry(key.clone()).or_insert(Value::Null), value);
            }
        }
        (base, extra) => *base = extra.clone(),
    }
}

/// Starts the daemon (logging at `settings.gateway_log`) against `model` in a fresh
/// temporary state dir.
pub async fn start_gateway(
    settings: &Settings,
    model: &FakeModel,
    main_cap: u32,
    subagent_cap: u32,
) -> anyhow::Result<Gateway> {
    let storage = storage_url(settings).await?;
    GatewayBuilder::new(&settings.bin)
        .config(config(
            settings,
            &DaemonConfig {
                model_url: &model.base_url(),
                port: 0,
                main_cap,
                subagent_cap,
                storage: storage.as_deref(),
            },
        ))
        .env("RUST_LOG", &settings.gateway_log)
        .start()
        .await
        .context("starting the gateway")
}

/// A daemon in shared mode (`storage.processes: "shared"`) on the PostgreSQL database
/// `url`, which other daemons of the run share.
pub async fn start_gateway_shared(
    settings: &Settings,
    model: &FakeModel,
    main_cap: u32,
    url: &str,
) -> anyhow::Result<Gateway> {
    let base = config(
        settings,
        &DaemonConfig {
            model_url: &model.base_url(),
            port: 0,
            main_cap,
            subagent_cap: 8,
            storage: Some(url),
        },
    );
    let mut config: Value = serde_json::from_str(&base)?;
    config["storage"]["processes"] = json!("shared");
    GatewayBuilder::new(&settings.bin)
        .config(config.to_string())
        .env("RUST_LOG", &settings.gateway_log)
        .start()
        .await
        .context("starting a shared-mode gateway")
}

/// Warm-up samples of the scenarios whose samples are whole spawns: a tenth of `--warmup`,
/// at least 10.
pub fn warmup_samples(settings: &Settings) -> usize {
    (settings.warmup / 10).max(10)
}

/// [`warmup_samples`] warm-up samples, then `--samples` measured ones,
/// taken one after the other by `sample` (given each sample's tag: `w<i>` while warming up,
/// `<i>` after). Returns the fake model's request count when the measured ones began
/// (their requests follow it) and the samples. On an error the daemon's log goes into the
/// report's notes, since a failed run's log is the one worth reading (`--log-dir`).
pub async fn sampled<S>(
    name: &str,
    settings: &Settings,
    gw: &Gateway,
    model: &FakeModel,
    notes: &mut Vec<String>,
    mut sample: impl AsyncFnMut(String) -> anyhow::Result<S>,
) -> anyhow::Result<(usize, Vec<S>)> {
    let warmup = warmup_samples(settings);
    let measured = async {
        eprintln!("  [{name}] warm-up: {warmup} samples");
        for i in 0..warmup {
            sample(format!("w{i}")).await?;
        }
        let recorded_before = model.request_count();
        eprintln!("  [{name}] measuring {} samples", settings.samples);
        let mut samples = Vec::with_capacity(settings.samples);
        for i in 0..settings.samples {
            samples.push(sample(i.to_string()).await?);
            if (i + 1) % 250 == 0 {
                eprintln!("  [{name}] {}/{}", i + 1, settings.samples);
            }
        }
        anyhow::Ok((recorded_before, samples))
    }
    .await;
    if measured.is_err() {
        notes.extend(gateway_notes(gw, settings, name, 10));
    }
    measured
}

/// The daemon's warnings and errors so far, deduplicated by their text after the timestamp,
/// with a count; at most `limit` kinds. With `--log-dir`, its whole stderr is also written to
/// `<dir>/<name>.log`.
pub fn gateway_notes(gw: &Gateway, settings: &Settings, name: &str, limit: usize) -> Vec<String> {
    let lines = gw.stderr_lines();
    let mut out = Vec::new();
    if let Some(dir) = &settings.log_dir {
        let path = dir.join(format!("{name}.log"));
        let written = std::fs::create_dir_all(dir)
            .and_then(|()| std::fs::write(&path, lines.join("\n") + "\n"));
        match written {
            Ok(()) => out.push(format!("daemon log: {}", path.display())),
            Err(error) => out.push(format!("cannot write {}: {error}", path.display())),
        }
    }
    let mut kinds: Vec<(String, String, usize)> = Vec::new();
    for line in &lines {
        if !(line.contains(" WARN ") || line.contains(" ERROR ")) {
            continue;
        }
        // Drop the leading timestamp; lines that start alike (the same warning about a
        // different row or duration) group together under the first one's text.
        let text = line
            .split_once(' ')
            .map_or(line.as_str(), |(_, rest)| rest)
            .trim();
        let key: String = text.chars().take(GROUP_PREFIX).collect();
        match kinds.iter_mut().find(|(k, _, _)| *k == key) {
            Some((_, _, n)) => *n += 1,
            None => kinds.push((key, text.to_owned(), 1)),
        }
    }
    let total = kinds.len();
    out.extend(
        kinds
            .into_iter()
            .take(limit)
            .map(|(_, text, n)| format!("daemon log ({n}x): {}", truncate(&text, 300))),
    );
    if total > limit {
        out.push(format!(
            "… and {} more kinds of daemon warnings",
            total - limit
        ));
    }
    out
}

pub fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max).collect();
    format!("{cut}…")
}

/// A client of the daemon's HTTP API (keep-alive, no proxy).
#[derive(Clone)]
pub struct Api {
    http: reqwest::Client,
    base: String,
}

impl Api {
    /// A client of the daemon at `base_url`, sending `token` as its bearer token when the
    /// daemon has one (the token it generated in its state dir; a build from before tokens
    /// were always on has none).
    pub fn new(base_url: &str, token: Option<&str>) -> anyhow::Result<Api> {
        Ok(Api {
            http: client_with(token)?,
            base: base_url.trim_end_matches('/').to_owned(),
        })
    }

    /// A client of a harness-started daemon, with the token it uses.
    pub fn of(gw: &switchboard_testkit::harness::Gateway) -> anyhow::Result<Api> {
        Api::new(&gw.base_url(), gw.token().as_deref())
    }

    /// One turn: posts `text` to session `key` with `wait: true` and returns the answer once
    /// the run ended; an error unless the run succeeded.
    pub async fn turn(&self, key: &str, text: &str) -> anyhow::Result<Value> {
        let answer = self.post(key, text, true).await?;
        if answer["status"] != "succeeded" {
            bail!("turn on {key} did not succeed: {answer}");
        }
        Ok(answer)
    }

    /// Posts `text` to session `key`; with `wait`, the answer comes when the run ended.
    pub async fn post(&self, key: &str, text: &str, wait: bool) -> anyhow::Result<Value> {
        let url = format!("{}/api/sessions/{key}/messages", self.base);
        let mut body = json!({ "text": text, "wait": wait });
        if wait {
            body["timeoutSeconds"] = json!(TURN_WAIT_SECONDS);
        }
        let response = self
            .http
            .post(&url)
            .json(&body)
            .send()
            .await
            .with_context(|| format!("POST {url}"))?;
        let status = response.status();
        let answer: Value = response
            .json()
            .await
            .with_context(|| format!("reading the answer of POST {url}"))?;
        if !status.is_success() {
            bail!("POST {url}: {status} {answer}");
        }
        Ok(answer)
    }

    /// `GET path` as text; an error unless 200.
    pub async fn get_text(&self, path: &str) -> anyhow::Result<String> {
        let url = format!("{}{path}", self.base);
        let response = self
            .http
            .get(&url)
            .send()
            .await
            .with_context(|| format!("GET {url}"))?;
        let status = response.status();
        let text = response
            .text()
            .await
            .with_context(|| format!("reading GET {url}"))?;
        if !status.is_success() {
            bail!("GET {url}: {status} {}", truncate(&text, 300));
        }
        Ok(text)
    }

    /// `/metrics`, parsed into `(series with labels, value)` pairs.
    pub async fn metrics(&self) -> anyhow::Result<Metrics> {
        let text = self.get_text("/metrics").await?;
        let series = text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let (name, value) = l.rsplit_once(' ')?;
                Some((name.to_owned(), value.parse().ok()?))
            })
            .collect();
        Ok(Metrics { series })
    }

    /// The sub-agent registry rows of one requester session.
    pub async fn subagents_of(&self, requester: &str, limit: usize) -> anyhow::Result<Vec<Value>> {
        let text = self
            .get_text(&format!(
                "/api/subagents?requester={requester}&limit={limit}"
            ))
            .await?;
        let mut body: Value = serde_json::from_str(&text).context("parsing /api/subagents")?;
        match body["subagents"].take() {
            Value::Array(rows) => Ok(rows),
            other => Err(anyhow!("/api/subagents without a list: {other}")),
        }
    }
}

/// Prometheus series of one `/metrics` read.
pub struct Metrics {
    series: Vec<(String, f64)>,
}

impl Metrics {
    /// The value of a series written exactly as in the exposition, e.g.
    /// `switchboard_lane_active{lane="subagent"}`; 0 when absent.
    pub fn get(&self, series: &str) -> f64 {
        self.series
            .iter()
            .find(|(s, _)| s == series)
            .map_or(0.0, |(_, v)| *v)
    }
}

/// The bench's HTTP client: keep-alive pool, no proxy, Nagle off.
pub fn client() -> anyhow::Result<reqwest::Client> {
    client_with(None)
}

/// [`client`], sending `token` as `Authorization: Bearer` on every request when given.
fn client_with(token: Option<&str>) -> anyhow::Result<reqwest::Client> {
    let mut headers = reqwest::header::HeaderMap::new();
    if let Some(token) = token {
        let mut value = reqwest::header::HeaderValue::from_str(&format!("Bearer {token}"))
            .context("the daemon's token is not a valid header value")?;
        value.set_sensitive(true);
        headers.insert(reqwest::header::AUTHORIZATION, value);
    }
    reqwest::Client::builder()
        .default_headers(headers)
        .no_proxy()
        .tcp_nodelay(true)
        .pool_max_idle_per_host(POOL_PER_HOST)
        .timeout(HTTP_TIMEOUT)
        .build()
        .context("building the HTTP client")
}

/// Model time: replays request bodies the daemon sent to the fake model, exactly as recorded,
/// straight from the bench (same kind of keep-alive client), `samples` times round-robin, and
/// times each request until its whole SSE answer has arrived.
pub async fn model_time(
    model: &FakeModel,
    bodies: &[Value],
    samples: usize,
) -> anyhow::Result<Vec<Duration>> {
    if bodies.is_empty() {
        bail!("no recorded model requests to replay");
    }
    // Serialized up front: the daemon's own serialization is part of its overhead, not of
    // the model's time.
    let bodies: Vec<Vec<u8>> = bodies
        .iter()
        .map(serde_json::to_vec)
        .collect::<Result<_, _>>()
        .context("serializing recorded requests")?;
    let http = client()?;
    let url = format!("{}/chat/completions", model.base_url());
    let mut times = Vec::with_capacity(samples);
    for i in 0..samples {
        let body = bodies[i % bodies.len()].clone();
        let started = Instant::now();
        let response = http
            .post(&url)
            .bearer_auth("k")
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .context("replaying a model request")?;
        if !response.status().is_success() {
            bail!("the fake model answered {}", response.status());
        }
        response
            .bytes()
            .await
            .context("reading the fake model's answer")?;
        times.push(started.elapsed());
    }
    Ok(times)
}

/// The text of the last user message of an OpenAI chat request.
pub fn last_user_text(body: &Value) -> String {
    let Some(messages) = body["messages"].as_array() else {
        return String::new();
    };
    let Some(message) = messages.iter().rev().find(|m| m["role"] == "user") else {
        return String::new();
    };
    match &message["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// Readings from `/proc`.
pub mod procfs {
    use anyhow::{anyhow, Context as _};

    /// Clock ticks per second of `/proc/<pid>/stat` times (`getconf CLK_TCK`, 100 on Linux).
    const TICKS_PER_SECOND: f64 = 100.0;

    /// A `kB` field of `/proc/<pid>/status` (e.g. `VmRSS`, `VmHWM`), in bytes.
    pub fn status_kb(pid: u32, field: &str) -> anyhow::Result<u64> {
        let path = format!("/proc/{pid}/status");
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))?;
        let line = text
            .lines()
            .find_map(|l| {
                l.strip_prefix(field)
                    .and_then(|rest| rest.strip_prefix(':'))
            })
            .ok_or_else(|| anyhow!("{path} has no {field}"))?;
        let kb: u64 = line
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .with_context(|| format!("parsing {field} in {path}"))?;
        Ok(kb * 1024)
    }

    /// Resident memory now, in bytes.
    pub fn rss(pid: u32) -> anyhow::Result<u64> {
        status_kb(pid, "VmRSS")
    }

    /// The process's own peak resident memory, in bytes.
    pub fn hwm(pid: u32) -> anyhow::Result<u64> {
        status_kb(pid, "VmHWM")
    }

    /// Threads of the process.
    pub fn threads(pid: u32) -> anyhow::Result<u64> {
        let path = format!("/proc/{pid}/status");
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))?;
        text.lines()
            .find_map(|l| l.strip_prefix("Threads:"))
            .ok_or_else(|| anyhow!("{path} has no Threads"))?
            .trim()
            .parse()
            .context("parsing Threads")
    }

    /// What `/proc/<pid>/stat` counts of a process so far.
    #[derive(Debug, Clone, Copy, Default)]
    pub struct Stat {
        /// CPU seconds in user space.
        pub user: f64,
        /// CPU seconds in the kernel on the process's behalf.
        pub system: f64,
        /// Page faults served without IO (fresh or reclaimed pages).
        pub minor_faults: u64,
    }

    impl std::ops::Sub for Stat {
        type Output = Stat;

        fn sub(self, before: Stat) -> Stat {
            Stat {
                user: self.user - before.user,
                system: self.system - before.system,
                minor_faults: self.minor_faults.saturating_sub(before.minor_faults),
            }
        }
    }

    impl std::ops::Add for Stat {
        type Output = Stat;

        fn add(self, other: Stat) -> Stat {
            Stat {
                user: self.user + other.user,
                system: self.system + other.system,
                minor_faults: self.minor_faults + other.minor_faults,
            }
        }
    }

    /// `/proc/<pid>/stat` of a process; `pid` `None` = this process.
    pub fn stat(pid: Option<u32>) -> anyhow::Result<Stat> {
        let path = match pid {
            Some(pid) => format!("/proc/{pid}/stat"),
            None => "/proc/self/stat".to_owned(),
        };
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))?;
        // The command name may hold spaces; the fields after it are space-separated.
        let after = text
            .rsplit_once(')')
            .map(|(_, rest)| rest)
            .ok_or_else(|| anyhow!("{path} is not a stat line"))?;
        let fields: Vec<&str> = after.split_whitespace().collect();
        // After the name: state is field 3 of the line, minflt 10, utime 14 and stime 15.
        let field = |i: usize| -> anyhow::Result<u64> {
            fields
                .get(i)
                .ok_or_else(|| anyhow!("{path} is short"))?
                .parse()
                .with_context(|| format!("parsing {path}"))
        };
        Ok(Stat {
            user: field(11)? as f64 / TICKS_PER_SECOND,
            system: field(12)? as f64 / TICKS_PER_SECOND,
            minor_faults: field(7)?,
        })
    }

    /// CPU time (user + system) of a process so far, in seconds; `pid` `None` = this process.
    pub fn cpu_seconds(pid: Option<u32>) -> anyhow::Result<f64> {
        let stat = stat(pid)?;
        Ok(stat.user + stat.system)
    }

    /// Context switches (voluntary + involuntary) of every live thread of the process.
    pub fn context_switches(pid: u32) -> anyhow::Result<u64> {
        let dir = format!("/proc/{pid}/task");
        let mut total = 0;
        for task in std::fs::read_dir(&dir).with_context(|| format!("reading {dir}"))? {
            let Ok(text) = std::fs::read_to_string(task?.path().join("status")) else {
                continue; // the thread ended meanwhile
            };
            total += text
                .lines()
                .filter_map(|l| {
                    l.strip_prefix("voluntary_ctxt_switches:")
                        .or_else(|| l.strip_prefix("nonvoluntary_ctxt_switches:"))
                })
                .filter_map(|v| v.trim().parse::<u64>().ok())
                .sum::<u64>();
        }
        Ok(total)
    }

    /// `/proc/loadavg`'s three load averages.
    pub fn loadavg() -> String {
        std::fs::read_to_string("/proc/loadavg")
            .ok()
            .map(|t| t.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
            .unwrap_or_else(|| "?".to_owned())
    }

    pub fn megabytes(bytes: u64) -> f64 {
        bytes as f64 / 1e6
    }
}
