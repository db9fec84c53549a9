//! Tests of the harness itself, against a stand-in shell script (the real binary is tested by
//! the gateway's e2e suite) and a tiny axum WebSocket server.
#![allow(clippy::unwrap_used)] // tests fail loudly by design

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use axum::extract::ws::{Message as AxMessage, WebSocket, WebSocketUpgrade};
use axum::http::HeaderMap;
use axum::response::Response;
use axum::routing::get;
use serde_json::{json, Value};

use tokio::process::Command;

use super::*;

const WAIT: Duration = Duration::from_secs(10);

/// Prints the ready line like the daemon, logs its arguments and environment to stderr,
/// counts its starts in the state dir and exits with 3 on SIGTERM.
const STAND_IN: &str = r#"#!/bin/sh
n=$(cat "$SWITCHBOARD_STATE_DIR/starts" 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > "$SWITCHBOARD_STATE_DIR/starts"
echo "start #$n args: $*" >&2
echo "env: state=$SWITCHBOARD_STATE_DIR rust_log=$RUST_LOG no_color=$NO_COLOR extra=${EXTRA:-unset} home=$HOME" >&2
echo "cwd: $(pwd)" >&2
printf '\033[32mINFO\033[0m coloured line\n' >&2
trap 'echo "got SIGTERM, draining" >&2; exit 3' TERM
echo "some other stdout line"
echo "switchboard listening on http://127.0.0.1:4242"
while :; do sleep 0.1; done
"#;

/// Writes an executable script into `dir`.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[tokio::test]
async fn start_waits_for_the_ready_line_and_collects_stderr() {
    let bin_dir = tempfile::tempdir().unwrap();
    let bin = script(bin_dir.path(), "switchboard", STAND_IN);
    let gw = GatewayBuilder::new(&bin)
        .config("{ gateway: { port: 0 }, // comment\n}")
        .env("EXTRA", "yes")
        .start()
        .await
        .unwrap();

    assert_eq!(gw.base_url(), "http://127.0.0.1:4242");
    assert_eq!(gw.ws_url("main"), "ws://127.0.0.1:4242/ws?chat=main");
    assert_eq!(gw.ws_url("a b/c"), "ws://127.0.0.1:4242/ws?chat=a%20b%2Fc");
    assert_eq!(gw.config_path(), gw.state_dir().join("config.json5"));
    assert_eq!(
        std::fs::read_to_string(gw.config_path()).unwrap(),
        "{ gateway: { port: 0 }, // comment\n}"
    );
    assert!(gw.pid().is_some());

    let state = gw.state_dir().display().to_string();
    gw.wait_for_log("coloured line", WAIT).await.unwrap();
    let lines = gw.stderr_lines();
    assert_eq!(
        lines,
        vec![
            format!("start #1 args: run --config {state}/config.json5"),
            format!(
                "env: state={state} rust_log=info,switchboard=debug no_color=1 extra=yes home={state}/home"
            ),
            format!("cwd: {state}"),
            "INFO coloured line".to_owned(),
        ]
    );

    let err = gw
        .wait_for_log("never logged", Duration::from_millis(200))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("never logged") && err.contains("INFO coloured line"),
        "{err}"
    );
}

#[tokio::test]
async fn env_overrides_the_defaults() {
    let bin_dir = tempfile::tempdir().unwrap();
    let bin = script(bin_dir.path(), "switchboard", STAND_IN);
    let gw = GatewayBuilder::new(&bin)
        .env("RUST_LOG", "trace")
        .start()
        .await
        .unwrap();
    gw.wait_for_log("rust_log=trace ", WAIT).await.unwrap();
    assert_eq!(
        std::fs::read_to_string(gw.config_path()).unwrap(),
        DEFAULT_CONFIG
    );
}

#[tokio::test]
async fn terminate_kill_and_restart() {
    let bin_dir = tempfile::tempdir().unwrap();
    let bin = script(bin_dir.path(), "switchboard", STAND_IN);
    let mut gw = GatewayBuilder::new(&bin).start().await.unwrap();
    gw.wait_for_log("start #1", WAIT).await.unwrap();
    let first_pid = gw.pid();

    assert!(
        gw.restart().await.is_err(),
        "restart while running must fail"
    );

    let status = gw.terminate().await.unwrap();
    assert_eq!(status.code(), Some(3));
    assert!(gw
        .stderr_lines()
        .iter()
        .any(|l| l == "got SIGTERM, draining"));
    assert_eq!(gw.pid(), None);
    assert!(gw.terminate().await.is_err());

    let mark = gw.log_mark();
    gw.restart().await.unwrap();
    assert_ne!(gw.pid(), first_pid);
    let line = gw.wait_for_log_since(mark, "start #", WAIT).await.unwrap();
    assert_eq!(
        line,
        format!("start #2 args: run --config {}", gw.config_path().display())
    );
    assert!(gw
        .stderr_lines()
        .contains(&"--- harness: restarting the gateway ---".to_owned()));

    let mark = gw.log_mark();
    gw.kill().await.unwrap();
    assert!(gw.kill().await.is_err());
    gw.restart().await.unwrap();
    gw.wait_for_log_since(mark, "start #3", WAIT).await.unwrap();
    assert_eq!(
        std::fs::read_to_string(gw.state_dir().join("starts"))
            .unwrap()
            .trim(),
        "3"
    );
    // SIGKILL: no trap ran.
    assert_eq!(
        gw.stderr_lines()
            .iter()
            .filter(|l| l.contains("got SIGTERM"))
            .count(),
        1
    );
}

#[tokio::test]
async fn early_exit_reports_status_and_stderr() {
    let bin_dir = tempfile::tempdir().unwrap();
    let bin = script(
        bin_dir.path(),
        "switchboard",
        "#!/bin/sh\necho 'config error at gateway.port: expected a number' >&2\nexit 64\n",
    );
    let err = match GatewayBuilder::new(&bin).start().await {
        Ok(_) => panic!("the stand-in should not get ready"),
        Err(err) => err,
    };
    let exit = err.downcast_ref::<EarlyExit>().unwrap();
    assert_eq!(exit.status.and_then(|s| s.code()), Some(64));
    assert_eq!(
        exit.stderr,
        vec!["config error at gateway.port: expected a number".to_owned()]
    );
    let text = err.to_string();
    assert!(
        text.contains("exit status: 64") && text.contains("gateway.port"),
        "{text}"
    );
}

#[tokio::test]
async fn ready_timeout_kills_a_silent_daemon() {
    let bin_dir = tempfile::tempdir().unwrap();
    let bin = script(
        bin_dir.path(),
        "switchboard",
        "#!/bin/sh\necho 'stuck migrating' >&2\nexec sleep 30\n",
    );
    let err = match GatewayBuilder::new(&bin)
        .ready_timeout(Duration::from_millis(500))
        .start()
        .await
    {
        Ok(_) => panic!("the stand-in should not get ready"),
        Err(err) => err,
    };
    let exit = err.downcast_ref::<EarlyExit>().unwrap();
    assert!(exit.status.is_none());
    assert_eq!(exit.stderr, vec!["stuck migrating".to_owned()]);
}

/// Stands by until the file `go` appears in its state dir, then prints the ready line;
/// exits 0 on SIGTERM.
const STANDBY: &str = r#"#!/bin/sh
trap 'echo "stopped while standing by" >&2; exit 0' TERM
echo "standing by: another process is active" >&2
while [ ! -f "$SWITCHBOARD_STATE_DIR/go" ]; do sleep 0.05; done
echo "switchboard listening on http://127.0.0.1:4343"
while :; do sleep 0.1; done
"#;

#[tokio::test]
async fn launch_returns_before_the_ready_line_and_wait_ready_waits_for_it() {
    let bin_dir = tempfile::tempdir().unwrap();
    let bin = script(bin_dir.path(), "switchboard", STANDBY);
    let mut gw = GatewayBuilder::new(&bin).launch().await.unwrap();
    gw.wait_for_log("standing by", WAIT).await.unwrap();
    assert!(!gw.is_ready());
    assert!(gw.pid().is_some(), "launched: it runs");
    std::fs::write(gw.state_dir().join("go"), "").unwrap();
    gw.wait_ready().await.unwrap();
    assert!(gw.is_ready());
    assert_eq!(gw.base_url(), "http://127.0.0.1:4343");
    gw.wait_ready().await.unwrap();

    // A launched process that never got ready can still be stopped.
    let mut standby = GatewayBuilder::new(&bin).launch().await.unwrap();
    standby.wait_for_log("standing by", WAIT).await.unwrap();
    assert_eq!(standby.terminate().await.unwrap().code(), Some(0));
    assert!(standby
        .stderr_lines()
        .contains(&"stopped while standing by".to_owned()));
}

#[tokio::test]
async fn given_state_dir_is_used_and_config_writes_are_atomic() {
    let bin_dir = tempfile::tempdir().unwrap();
    let bin = script(bin_dir.path(), "switchboard", STAND_IN);
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().join("nested");
    let gw = GatewayBuilder::new(&bin)
        .state_dir(&dir)
        .file(
            ".switchboard/agents/reviewer.md",
            "---\nname: reviewer\n---\n",
        )
        .start()
        .await
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.join(".switchboard/agents/reviewer.md")).unwrap(),
        "---\nname: reviewer\n---\n"
    );
    assert_eq!(gw.home_dir(), dir.join("home"));
    assert_eq!(gw.state_dir(), dir);

    gw.write_config("{ gateway: { port: 1234 } }")
        .await
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.join("config.json5")).unwrap(),
        "{ gateway: { port: 1234 } }"
    );
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, [".switchboard", "config.json5", "home", "starts"]);
}

/// Catches: the daemon or a CLI call inheriting the host's proxy variables (reqwest sends
/// even 127.0.0.1 through `HTTP_PROXY`), its keys or its `HOME`: every command the harness
/// builds removes each scrubbed variable, and the gateway's CLI command gets the daemon's
/// state dir, `HOME` and the builder's overrides.
#[tokio::test]
async fn every_spawned_binary_gets_the_scrubbed_environment_and_home() {
    for key in [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "NO_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "no_proxy",
        "OPENAI_API_KEY",
    ] {
        assert!(SCRUBBED_ENV.contains(&key), "{key} is not scrubbed");
    }
    let envs = |cmd: &Command| -> Vec<(String, Option<String>)> {
        cmd.as_std()
            .get_envs()
            .map(|(k, v)| {
                (
                    k.to_string_lossy().into_owned(),
                    v.map(|v| v.to_string_lossy().into_owned()),
                )
            })
            .collect()
    };
    let state = tempfile::tempdir().unwrap();
    let cli = command("switchboard", state.path());
    let set = envs(&cli);
    for key in SCRUBBED_ENV {
        if *key != "SWITCHBOARD_STATE_DIR" {
            assert!(
                set.contains(&(key.to_string(), None)),
                "{key} kept: {set:?}"
            );
        }
    }
    let home = state.path().join("home");
    assert!(home.is_dir());
    let dir = state.path().display().to_string();
    assert!(set.contains(&("HOME".into(), Some(home.display().to_string()))));
    assert!(set.contains(&("SWITCHBOARD_STATE_DIR".into(), Some(dir.clone()))));

    // The daemon itself runs with exactly that environment, and so do the CLI calls of a
    // running gateway, with the builder's overrides.
    let bin_dir = tempfile::tempdir().unwrap();
    let bin = script(bin_dir.path(), "switchboard", STAND_IN);
    let gw = GatewayBuilder::new(&bin)
        .env("EXTRA", "yes")
        .start()
        .await
        .unwrap();
    let cli = gw.command();
    let set = envs(&cli);
    assert!(
        set.contains(&("EXTRA".into(), Some("yes".into()))),
        "{set:?}"
    );
    assert!(set.contains(&("HTTPS_PROXY".into(), None)), "{set:?}");
    assert_eq!(
        cli.as_std().get_current_dir(),
        Some(gw.state_dir()),
        "run in the state dir"
    );
    let mut cli = gw.command();
    cli.arg("pairing");
    let out = output_within(&mut cli, Duration::from_millis(300)).await;
    // The stand-in never exits on its own: the bound ends it.
    let err = out.unwrap_err().to_string();
    assert!(err.contains("did not exit within"), "{err}");
}

#[test]
fn ansi_and_query_escaping() {
    assert_eq!(
        log::strip_ansi("\u{1b}[2m2024\u{1b}[0m \u{1b}[32m INFO\u{1b}[0m hi"),
        "2024  INFO hi"
    );
    assert_eq!(query_escape("main"), "main");
    assert_eq!(query_escape("tg:-100/7 x"), "tg%3A-100%2F7%20x");
}

/// A miniature `/ws` endpoint speaking the web chat protocol.
async fn fake_ws_server() -> String {
    async fn upgrade(ws: WebSocketUpgrade, headers: HeaderMap) -> Response {
        let auth = headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        ws.on_upgrade(move |socket| chat(socket, auth))
    }
    async fn chat(mut socket: WebSocket, auth: String) {
        let send = |v: Value| AxMessage::Text(v.to_string().into());
        let hello = json!({ "type": "hello", "chatId": "main", "auth": auth });
        if socket.send(send(hello)).await.is_err() {
            return;
        }
        while let Some(Ok(AxMessage::Text(raw))) = socket.recv().await {
            let frame: Value = serde_json::from_str(raw.as_str()).unwrap_or(Value::Null);
            let replies = match frame["type"].as_str() {
                Some("ping") => vec![json!({ "type": "pong" })],
                Some("message") if frame["text"] == "boom" => {
                    vec![json!({ "type": "error", "error": "model exploded" })]
                }
                Some("message") => vec![
                    json!({ "type": "typing", "active": true }),
                    json!({ "type": "event", "event": { "kind": "run_started" } }),
                    json!({ "type": "message", "text": format!("echo: {}", frame["text"].as_str().unwrap_or("")), "key": "k1" }),
                    json!({ "type": "typing", "active": false }),
                ],
                _ => vec![json!({ "type": "error", "error": format!("bad frame: {raw}") })],
            };
            for reply in replies {
                if socket.send(send(reply)).await.is_err() {
                    return;
                }
            }
        }
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = axum::Router::new().route("/ws", get(upgrade));
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("ws://{addr}/ws?chat=main")
}

#[tokio::test]
async fn ws_client_speaks_the_web_chat_protocol() {
    let url = fake_ws_server().await;
    let mut ws = WsClient::connect(&url).await.unwrap();
    assert_eq!(
        ws.next_frame(WAIT).await.unwrap(),
        json!({ "type": "hello", "chatId": "main", "auth": "" })
    );

    ws.send_text("hi there").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "echo: hi there");
    assert_eq!(
        ws.next_of_type("typing", WAIT).await.unwrap(),
        json!({ "type": "typing", "active": false })
    );

    ws.send_raw(r#"{"type":"ping"}"#).await.unwrap();
    assert_eq!(
        ws.next_frame(WAIT).await.unwrap(),
        json!({ "type": "pong" })
    );

    ws.send_text("boom").await.unwrap();
    let err = ws.next_message(WAIT).await.unwrap_err().to_string();
    assert_eq!(err, "the gateway sent an error frame: model exploded");

    ws.send_raw("not json").await.unwrap();
    let frame = ws.next_of_type("error", WAIT).await.unwrap();
    assert_eq!(frame["error"], "bad frame: not json");

    let err = ws
        .next_frame(Duration::from_millis(100))
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(err, "no ws frame within 100ms");
    ws.close().await.unwrap();

    let mut ws = WsClient::connect_with_bearer(&url, "s3cret").await.unwrap();
    let hello = ws.next_of_type("hello", WAIT).await.unwrap();
    assert_eq!(hello["auth"], "Bearer s3cret");
}

/// Prints the `web chat:` line of a daemon that made its token, or that reuses the one in
/// the file it names, then the ready line.
const STAND_IN_WITH_TOKEN: &str = r#"#!/bin/sh
if [ -f "$SWITCHBOARD_STATE_DIR/elsewhere/gateway.token" ]; then
  echo "web chat: http://127.0.0.1:4242/ (token in $SWITCHBOARD_STATE_DIR/elsewhere/gateway.token; \`switchboard status\` prints the link)"
else
  mkdir -p "$SWITCHBOARD_STATE_DIR/elsewhere"
  echo "tok-from-file" > "$SWITCHBOARD_STATE_DIR/elsewhere/gateway.token"
  echo "web chat: http://127.0.0.1:4242/?token=tok-made-now"
fi
echo "switchboard listening on http://127.0.0.1:4242"
trap 'exit 0' TERM
while :; do sleep 0.1; done
"#;

/// Catches: the harness not sending the daemon's generated token (every e2e request
/// would get 401), or looking for it anywhere but where the daemon said it is.
#[tokio::test]
async fn the_generated_token_is_taken_from_the_web_chat_line() {
    let bin_dir = tempfile::tempdir().unwrap();
    let bin = script(bin_dir.path(), "switchboard", STAND_IN_WITH_TOKEN);
    let mut gw = GatewayBuilder::new(&bin).start().await.unwrap();
    assert_eq!(gw.token().as_deref(), Some("tok-made-now"));
    assert_eq!(
        gw.ws_url("a b"),
        "ws://127.0.0.1:4242/ws?chat=a%20b&token=tok-made-now"
    );
    assert_eq!(
        gw.events_url(),
        "ws://127.0.0.1:4242/api/events?token=tok-made-now"
    );
    assert_eq!(
        gw.page_url("/"),
        "http://127.0.0.1:4242/?token=tok-made-now"
    );
    gw.terminate().await.unwrap();
    gw.restart().await.unwrap();
    assert_eq!(gw.token().as_deref(), Some("tok-from-file"));
    assert!(gw.web_chat_line().unwrap().contains("(token in "));
}
