//! The running daemon's HTTP API from the command line: where it is (`--url`,
//! `$SWITCHBOARD_URL`, else `gateway.bind`/`gateway.port` of the config), the token
//! (`--token`, else the daemon's own rule: `gateway.auth.token`, else
//! `$SWITCHBOARD_TOKEN`, else the token the daemon made in `<state_dir>/gateway.token`),
//! and errors turned into exit codes: 69 when nothing answers, 77 when the token is
//! refused.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use serde_json::Value;

use super::{exit, print_config_errors};
use crate::config::{self, Paths};
use crate::server::token_file;

/// Options every command that talks to the daemon takes.
#[derive(Debug, Clone, Args)]
pub struct ClientArgs {
    /// The daemon's base URL (default: $SWITCHBOARD_URL, else from the config's gateway.bind and gateway.port).
    #[arg(long, global = true)]
    pub url: Option<String>,
    /// API token (default: the config's gateway.auth.token, else $SWITCHBOARD_TOKEN, else the daemon's generated <state dir>/gateway.token).
    #[arg(long, global = true)]
    pub token: Option<String>,
    /// Config file to read the address and token from.
    #[arg(long, global = true)]
    pub config: Option<PathBuf>,
    /// Print JSON instead of tables.
    #[arg(long, global = true)]
    pub json: bool,
}

/// How long to wait for the TCP connection: the daemon is local or near.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one request may take (a `send --wait` says how long it waits itself).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// A failed call, with the exit code it means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientError {
    pub code: u8,
    pub message: String,
}

impl ClientError {
    fn new(code: u8, message: impl Into<String>) -> Self {
        ClientError {
            code,
            message: message.into(),
        }
    }

    /// Prints the message and returns the exit code.
    pub fn report(&self) -> ExitCode {
        eprintln!("{}", self.message);
        ExitCode::from(self.code)
    }
}

pub struct Client {
    http: reqwest::Client,
    base: String,
    token: Option<String>,
}

impl Client {
    /// Resolves address and token; reads the config only when a flag or variable does not
    /// say them already.
    pub async fn new(
        args: &ClientArgs,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Client, ClientError> {
        let url = args
            .url
            .clone()
            .or_else(|| env("SWITCHBOARD_URL").filter(|u| !u.trim().is_empty()));
        let paths = Paths::resolve(args.config.clone(), env);
        let gateway = if url.is_some() && args.token.is_some() {
            None
        } else {
            let path = &paths.config;
            Some(read_gateway(path, env).await.map_err(|errors| {
                print_config_errors(path, &errors);
                ClientError::new(exit::USAGE, "fix the config, or give --url and --token")
            })?)
        };
        let base = match url {
            Some(u) => u.trim_end_matches('/').to_string(),
            None => {
                let g = gateway.clone().unwrap_or_default();
                format!("http://{}:{}", connect_host(&g.bind), g.port)
            }
        };
        let token = match (&args.token, &gateway) {
            (Some(t), _) => Some(t.clone()),
            (None, Some(g)) => token_file::for_client(&g.auth, env, &paths.state_dir)
                .map_err(|e| ClientError::new(exit::NOPERM, e.to_string()))?,
            (None, None) => None,
        };
        let http = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .no_proxy()
            .build()
            .map_err(|e| ClientError::new(1, format!("cannot build an HTTP client: {e}")))?;
        Ok(Client { http, base, token })
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    /// The web chat's address with the token this client uses (`?token=`, which the page
    /// keeps and drops from the address bar), for the operator who holds that token.
    pub fn page_link(&self) -> String {
        match &self.token {
            Some(t) => format!("{}/?token={}", self.base, segment(t)),
            None => format!("{}/", self.base),
        }
    }

    fn request(
        &self,
        method: reqwest::Method,
        path: &str,
        timeout: Duration,
    ) -> reqwest::RequestBuilder {
        let mut rb = self
            .http
            .request(method, format!("{}{path}", self.base))
            .timeout(timeout);
        if let Some(t) = &self.token {
            rb = rb.bearer_auth(t);
        }
        rb
    }

    async fn send(&self, rb: reqwest::RequestBuilder) -> Result<reqwest::Response, ClientError> {
        let resp = rb.send().await.map_err(|e| {
            if e.is_connect() {
                ClientError::new(
                    exit::UNAVAILABLE,
                    format!("the daemon is not running: nothing answers at {} (start it with `switchboard run`, or give --url)", self.base),
                )
            } else if e.is_timeout() {
                ClientError::new(exit::UNAVAILABLE, format!("the daemon at {} did not answer in time", self.base))
            } else {
                ClientError::new(exit::UNAVAILABLE, format!("cannot reach the daemon at {}: {}", self.base, e.without_url()))
            }
        })?;
        let status = resp.status();
        if status.is_success() {
            return Ok(resp);
        }
        let body = resp.text().await.unwrap_or_default();
        let detail = serde_json::from_str::<Value>(&body)
            .ok()
            .and_then(|v| v["error"].as_str().map(str::to_string))
            .unwrap_or(body);
        let detail = super::table::scrub(detail.trim());
        Err(match status.as_u16() {
            401 => ClientError::new(
                exit::NOPERM,
                format!("the daemon refused the token ({detail}); give --token, or set gateway.auth.token or SWITCHBOARD_TOKEN (without them, the token is the daemon's <state dir>/gateway.token: run this as the daemon's user, with its SWITCHBOARD_STATE_DIR)"),
            ),
            403 => ClientError::new(exit::NOPERM, format!("the daemon refused the request: {detail}")),
            code => ClientError::new(1, format!("{detail} (HTTP {code})")),
        })
    }

    pub async fn get_json(&self, path: &str) -> Result<Value, ClientError> {
        let resp = self
            .send(self.request(reqwest::Method::GET, path, REQUEST_TIMEOUT))
            .await?;
        resp.json().await.map_err(|e| {
            ClientError::new(
                1,
                format!("the daemon's answer is not JSON: {}", e.without_url()),
            )
        })
    }

    pub async fn get_text(&self, path: &str) -> Result<String, ClientError> {
        let resp = self
            .send(self.request(reqwest::Method::GET, path, REQUEST_TIMEOUT))
            .await?;
        resp.text().await.map_err(|e| {
            ClientError::new(
                1,
                format!("cannot read the daemon's answer: {}", e.without_url()),
            )
        })
    }

    pub async fn post_json(
        &self,
        path: &str,
        body: &Value,
        timeout: Duration,
    ) -> Result<Value, ClientError> {
        let resp = self
            .send(
                self.request(reqwest::Method::POST, path, timeout)
                    .json(body),
            )
            .await?;
        resp.json().await.map_err(|e| {
            ClientError::new(
                1,
                format!("the daemon's answer is not JSON: {}", e.without_url()),
            )
        })
    }
}

/// The config's `gateway` section alone: a client needs the address and the token, and
/// must not fail because a variable another section uses (a model key) is not set in the
/// operator's shell. A token naming an unset variable counts as no token.
async fn read_gateway(
    path: &std::path::Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<config::GatewayConfig, Vec<config::ConfigError>> {
    let src = match config::load::read_bounded(path).await {
        Ok(src) => src,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(config::GatewayConfig::default())
        }
        Err(e) => {
            return Err(vec![config::ConfigError::whole_file(format!(
                "cannot read {}: {e}",
                path.display()
            ))])
        }
    };
    let doc = config::load::parse_json5(&src, &config::source_map::SourceMap::new(&src))
        .map_err(|e| vec![e])?;
    let section = doc
        .get("gateway")
        .cloned()
        .unwrap_or(Value::Object(Default::default()));
    let mut gateway: config::GatewayConfig = serde_json::from_value(section)
        .map_err(|e| vec![config::ConfigError::whole_file(format!("gateway: {e}"))])?;
    gateway.auth.token = gateway
        .auth
        .token
        .and_then(|t| config::load::expand(&t, env).ok());
    Ok(gateway)
}

/// The host to connect to for a bind address: a wildcard means this machine.
fn connect_host(bind: &str) -> String {
    match bind {
        "0.0.0.0" | "" => "127.0.0.1".into(),
        "::" | "[::]" => "[::1]".into(),
        b if b.contains(':') && !b.starts_with('[') => format!("[{b}]"),
        b => b.to_string(),
    }
}

/// A path segment percent-encoded (session keys hold `:`, and may hold anything).
pub fn segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~:@".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_and_segments() {
        assert_eq!(connect_host("0.0.0.0"), "127.0.0.1");
        assert_eq!(connect_host("::"), "[::1]");
        assert_eq!(connect_host("::1"), "[::1]");
        assert_eq!(connect_host("127.0.0.1"), "127.0.0.1");
        assert_eq!(segment("agent:main:dm:42"), "agent:main:dm:42");
        assert_eq!(segment("a/b c?#%é"), "a%2Fb%20c%3F%23%25%C3%A9");
    }
}
