//! Hooks with real scripts (exit codes, stderr, stdin, a hanging hook and its process
//! group) and a local HTTP receiver.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use super::*;

fn env() -> Vec<(String, String)> {
    vec![("PATH".into(), "/usr/bin:/bin".into())]
}

fn payload() -> Value {
    start_payload(
        "r-1",
        Some("web"),
        "explore",
        "look it up",
        "agent:main:main",
    )
}

/// Catches: a refusal without its stderr, a hook that never sees its payload, a daemon
/// secret leaking into its environment, or a hanging hook (or a child it forked) left
/// running past its timeout.
#[tokio::test]
async fn commands_get_the_payload_and_their_exit_and_timeout_decide() {
    let dir = tempfile::tempdir().unwrap();
    let t = Duration::from_secs(10);
    assert_eq!(
        run_command(
            "cat > seen.json; env > env.txt",
            t,
            &env(),
            dir.path(),
            &payload()
        )
        .await,
        HookEnd::Ok
    );
    let seen: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("seen.json")).unwrap())
            .unwrap();
    assert_eq!(seen, payload());
    let env_seen = std::fs::read_to_string(dir.path().join("env.txt")).unwrap();
    assert!(!env_seen.contains("OPENAI_API_KEY"), "{env_seen}");

    assert_eq!(
        run_command(
            "echo 'over budget' >&2; exit 3",
            t,
            &env(),
            dir.path(),
            &payload()
        )
        .await,
        HookEnd::Refused("over budget".into())
    );
    assert_eq!(
        run_command("exit 1", t, &env(), dir.path(), &payload()).await,
        HookEnd::Refused("the hook `exit 1` exited with exit status: 1".into())
    );

    // A hook that hangs, with a grandchild holding its stderr: both are killed.
    let hang = "sleep 300 & echo $! > grandchild.pid; sleep 300";
    match run_command(hang, Duration::from_secs(1), &env(), dir.path(), &payload()).await {
        HookEnd::Failed(why) => assert!(why.contains("timed out after 1s"), "{why}"),
        other => panic!("{other:?}"),
    }
    let pid: i32 = std::fs::read_to_string(dir.path().join("grandchild.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // The group was sent SIGKILL; the grandchild is gone once reaped (it was re-parented).
    let mut gone = false;
    for _ in 0..200 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // Absent, or a zombie waiting for its new parent.
        if stat.is_empty() || stat.split_whitespace().nth(2) == Some("Z") {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(gone, "the hook's grandchild {pid} outlived the timeout");
}

/// Catches: an HTTP hook that posts another body, drops its headers, or reads an unbounded
/// answer; an error status not reported.
#[tokio::test]
async fn url_hooks_post_the_payload_with_their_headers() {
    use axum::{routing::post, Router};
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(Option<String>, Value)>();
    let app = Router::new()
        .route(
            "/ok",
            post(
                move |h: axum::http::HeaderMap, axum::Json(v): axum::Json<Value>| {
                    let tx = tx.clone();
                    async move {
                        let key = h
                            .get("x-key")
                            .and_then(|v| v.to_str().ok())
                            .map(str::to_string);
                        let _ = tx.send((key, v));
                        "x".repeat(1 << 20)
                    }
                },
            ),
        )
        .route(
            "/no",
            post(|| async { (axum::http::StatusCode::FORBIDDEN, "no") }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    let http = reqwest::Client::new();
    let hook = |path: &str| HookEntry {
        url: Some(format!("http://{addr}{path}")),
        headers: BTreeMap::from([("X-Key".to_string(), "k1".to_string())]),
        ..HookEntry::default()
    };
    let h = hook("/ok");
    assert_eq!(
        super::post(&http, h.url.as_deref().unwrap(), &h, &payload()).await,
        HookEnd::Ok
    );
    assert_eq!(rx.recv().await.unwrap(), (Some("k1".into()), payload()));
    let h = hook("/no");
    match super::post(&http, h.url.as_deref().unwrap(), &h, &payload()).await {
        HookEnd::Refused(why) => assert!(why.contains("403"), "{why}"),
        other => panic!("{other:?}"),
    }
    server.abort();
}
