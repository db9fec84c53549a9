//! The test kit's MCP server (built with `rmcp`, server side), for the e2e suite and the
//! benchmarks: over stdio (the `mcp-test-server` binary) or streamable HTTP (in process,
//! [`serve_http`], or the binary with `--http`).
//!
//! Tools: `echo {text}`; `slow {ms}` (sleeps, or stops early on the client's
//! `notifications/cancelled`, which it records); `fail` (a result with `isError`); `grow`
//! (adds the tool `extra` and sends `notifications/tools/list_changed`); `env` (the
//! server's environment, `K=V` lines); `pid`; `huge {bytes}` (a text that long); `mixed`
//! (a text, an image and a resource link).
//!
//! With `MCP_TEST_LOG=<file>` the server appends one line per event there (`call <tool>`,
//! `cancelled <tool>`), so a test can see what reached it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, Content, Implementation, ListToolsResult,
    PaginatedRequestParams, RawContent, RawResource, ServerCapabilities, ServerInfo, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

/// The server's state, shared by its sessions (a stdio server has one).
#[derive(Clone, Default)]
pub struct TestServer {
    grown: Arc<AtomicBool>,
}

impl TestServer {
    fn tools(&self) -> Vec<Tool> {
        let obj = |v: Value| -> Arc<Map<String, Value>> {
            Arc::new(v.as_object().cloned().unwrap_or_default())
        };
        let none = || obj(json!({"type": "object", "properties": {}}));
        let mut tools = vec![
            Tool::new(
                "echo",
                "Answer with the text it was given.",
                obj(
                    json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
                ),
            ),
            Tool::new(
                "slow",
                "Sleep for ms milliseconds.",
                obj(json!({"type": "object", "properties": {"ms": {"type": "integer"}}})),
            ),
            Tool::new("fail", "Always fails (isError).", none()),
            Tool::new(
                "grow",
                "Add the tool `extra` and say the list changed.",
                none(),
            ),
            Tool::new("env", "The server's environment.", none()),
            Tool::new("pid", "The server's process id.", none()),
            Tool::new(
                "huge",
                "A text of `bytes` bytes.",
                obj(json!({"type": "object", "properties": {"bytes": {"type": "integer"}}})),
            ),
            Tool::new("mixed", "A text, an image and a resource link.", none()),
        ];
        if self.grown.load(Ordering::SeqCst) {
            tools.push(Tool::new("extra", "Appears after `grow`.", none()));
        }
        tools
    }
}

fn log(line: &str) {
    if let Ok(path) = std::env::var("MCP_TEST_LOG") {
        use std::io::Write;
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = writeln!(f, "{line}");
        }
    }
}

fn text(s: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![Content::text(s)])
}

impl ServerHandler for TestServer {
    fn get_info(&self) -> ServerInfo {
        ServerInfo {
            capabilities: ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
            server_info: Implementation {
                name: "switchboard-test".into(),
                version: "1.0.0".into(),
                ..Implementation::default()
            },
            ..ServerInfo::default()
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult {
            tools: self.tools(),
            ..ListToolsResult::default()
        })
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let name = request.name.to_string();
        log(&format!("call {name}"));
        Ok(match name.as_str() {
            "echo" => text(args.get("text").and_then(Value::as_str).unwrap_or("")),
            "slow" => {
                let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(1000);
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(ms)) => text(format!("slept {ms} ms")),
                    _ = context.ct.cancelled() => {
                        log("cancelled slow");
                        text("cancelled")
                    }
                }
            }
            "fail" => CallToolResult::error(vec![Content::text("it failed on purpose")]),
            "grow" => {
                self.grown.store(true, Ordering::SeqCst);
                let _ = context.peer.notify_tool_list_changed().await;
                text("grown")
            }
            "extra" => text("extra here"),
            "env" => {
                let mut vars: Vec<String> =
                    std::env::vars().map(|(k, v)| format!("{k}={v}")).collect();
                vars.sort();
                text(vars.join("\n"))
            }
            "pid" => text(std::process::id().to_string()),
            "huge" => {
                let n = args.get("bytes").and_then(Value::as_u64).unwrap_or(1 << 20);
                text("x".repeat(n as usize))
            }
            "mixed" => CallToolResult::success(vec![
                Content::text("a picture:"),
                Content::image("aGVsbG8=", "image/png"),
                Content::new(
                    RawContent::ResourceLink(RawResource::new("file:///tmp/r.txt", "r.txt")),
                    None,
                ),
            ]),
            other => return Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        })
    }
}

/// Serve MCP over stdin/stdout until the client goes away.
pub async fn serve_stdio() -> anyhow::Result<()> {
    use rmcp::ServiceExt;
    let service = TestServer::default()
        .serve((tokio::io::stdin(), tokio::io::stdout()))
        .await?;
    service.waiting().await?;
    Ok(())
}

/// Serve MCP over streamable HTTP at `/mcp` on `listener` until `cancel` fires.
pub async fn serve_http(
    listener: tokio::net::TcpListener,
    cancel: CancellationToken,
) -> anyhow::Result<()> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let server = TestServer::default();
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig {
            sse_keep_alive: None,
            cancellation_token: cancel.child_token(),
            ..StreamableHttpServerConfig::default()
        },
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    axum::serve(listener, router)
        .with_graceful_shutdown(async move { cancel.cancelled_owned().await })
        .await?;
    Ok(())
}

/// An MCP server on 127.0.0.1 over streamable HTTP, in this process; stops when dropped.
pub struct HttpServer {
    pub url: String,
    cancel: CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl HttpServer {
    pub async fn start() -> anyhow::Result<HttpServer> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}/mcp", listener.local_addr()?);
        let cancel = CancellationToken::new();
        let task = tokio::spawn({
            let cancel = cancel.clone();
            async move {
                let _ = serve_http(listener, cancel).await;
            }
        });
        Ok(HttpServer {
            url,
            cancel,
            task: Some(task),
        })
    }

    /// Stop serving (open sessions end) and wait for the server task.
    pub async fn stop(mut self) {
        self.cancel.cancel();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

/// The `mcp-test-server` binary of the target directory this test binary was built in,
/// built first (`cargo build`, a no-op when it is fresh) once per process.
pub fn binary() -> anyhow::Result<std::path::PathBuf> {
    static BUILT: std::sync::OnceLock<Result<std::path::PathBuf, String>> =
        std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| build().map_err(|e| format!("{e:#}")))
        .clone()
        .map_err(|e| anyhow::anyhow!(e))
}

fn build() -> anyhow::Result<std::path::PathBuf> {
    // target/<profile>/deps/<test binary> → target/<profile>
    let exe = std::env::current_exe()?;
    let profile_dir = exe
        .parent()
        .and_then(|d| {
            if d.ends_with("deps") {
                d.parent()
            } else {
                Some(d)
            }
        })
        .ok_or_else(|| anyhow::anyhow!("no target directory above {}", exe.display()))?;
    let target = profile_dir
        .parent()
        .ok_or_else(|| anyhow::anyhow!("no target directory above {}", exe.display()))?;
    let release = profile_dir.ends_with("release");
    let mut cmd = std::process::Command::new(env!("CARGO"));
    cmd.args([
        "build",
        "--quiet",
        "-p",
        "switchboard-testkit",
        "--bin",
        "mcp-test-server",
    ])
    .arg("--target-dir")
    .arg(target);
    if release {
        cmd.arg("--release");
    }
    let status = cmd.status()?;
    anyhow::ensure!(status.success(), "building mcp-test-server failed");
    let bin = profile_dir.join("mcp-test-server");
    anyhow::ensure!(bin.exists(), "{} was not built", bin.display());
    Ok(bin)
}
