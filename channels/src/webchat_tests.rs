//! Tests of the web chat hub: examples, and a property over arbitrary frames.

mod examples {
    use super::super::*;

    /// Catches: the history frame's wire shape drifting from what the page reads
    /// (`sessionKey`, lower-case roles, no `key` or `file` when there is none, a file
    /// as the live `file` frame carries it).
    #[test]
    fn the_history_frame_has_its_documented_shape() {
        let frame = ServerFrame::History {
            session_key: "agent:main:main".into(),
            messages: vec![
                HistoryMessage {
                    role: HistoryRole::User,
                    text: "hi".into(),
                    key: None,
                    file: None,
                },
                HistoryMessage {
                    role: HistoryRole::Announce,
                    text: "Status: success".into(),
                    key: Some("announce:r1".into()),
                    file: None,
                },
                HistoryMessage {
                    role: HistoryRole::Assistant,
                    text: String::new(),
                    key: Some("message:r1:c1".into()),
                    file: Some(files::FileLink {
                        id: "0123456789abcdef0123456789abcdef".into(),
                        name: "a.pdf".into(),
                        size: 3,
                        mime: "application/octet-stream".into(),
                    }),
                },
            ],
        };
        let got: serde_json::Value =
            serde_json::from_str(&frame.to_json()).expect("the frame is JSON");
        assert_eq!(
            got,
            serde_json::json!({"type": "history", "sessionKey": "agent:main:main", "messages": [
                {"role": "user", "text": "hi"},
                {"role": "announce", "text": "Status: success", "key": "announce:r1"},
                {"role": "assistant", "text": "", "key": "message:r1:c1", "file": {
                    "id": "0123456789abcdef0123456789abcdef", "name": "a.pdf", "size": 3,
                    "mime": "application/octet-stream"}},
            ]})
        );
    }

    /// Catches: a line posted under another key than its edits, or to another chat.
    #[tokio::test]
    async fn a_line_is_a_message_then_updates_of_its_key_in_its_chat_only() {
        let hub = WebChat::new();
        let (_main, mut rx) = hub.connect("main");
        let (_other, mut other_rx) = hub.connect("team");
        let origin = Origin::webchat("main", ChatKind::Direct);
        let id = hub.post_line(&origin, "progress:c1", "one").await.ok();
        assert_eq!(id.as_deref(), Some("progress:c1"));
        assert!(hub.edit_line(&origin, "progress:c1", "two").await.is_ok());
        let mut frames = Vec::new();
        while let Ok(out) = rx.try_recv() {
            frames.push(out.frame);
        }
        assert_eq!(
            frames,
            vec![
                ServerFrame::Hello {
                    chat_id: "main".into()
                },
                ServerFrame::Message {
                    text: "one".into(),
                    key: "progress:c1".into(),
                    actions: Vec::new()
                },
                ServerFrame::Update {
                    key: "progress:c1".into(),
                    text: "two".into()
                },
            ]
        );
        let others: Vec<ServerFrame> = std::iter::from_fn(|| other_rx.try_recv().ok())
            .map(|o| o.frame)
            .collect();
        assert_eq!(others.len(), 1, "only its hello: {others:?}");
    }

    /// With several gateway processes, a web chat's messages are left to the process a
    /// browser has it open on. Catches: a hub that says it reaches a chat with no socket
    /// (the message would bounce off it as a failed attempt) or misses an open one.
    #[test]
    fn a_chat_is_reached_only_while_a_socket_has_it_open() {
        let hub = WebChat::new();
        let main = Origin::webchat("main", ChatKind::Direct);
        let team = Origin::webchat("team", ChatKind::Direct);
        assert!(!hub.reaches(&main));
        let (conn, _rx) = hub.connect("main");
        assert!(hub.reaches(&main));
        assert!(!hub.reaches(&team));
        hub.disconnect(conn);
        assert!(!hub.reaches(&main));
    }

    #[tokio::test]
    async fn malformed_frames_get_a_clear_error() {
        let hub = WebChat::new();
        let (conn, _rx) = hub.connect("main");
        let answer = hub.handle_frame(conn, "{not json").await;
        assert!(
            matches!(answer, Some(ServerFrame::Error { ref error }) if error.starts_with("invalid frame")),
            "{answer:?}"
        );
        let answer = hub.handle_frame(conn, r#"{"type":"message"}"#).await;
        assert!(
            matches!(answer, Some(ServerFrame::Error { .. })),
            "{answer:?}"
        );
    }

    /// Catches: a `ping` frame with fields the protocol does not have answered `pong`
    /// (found by `any_frame_gets_its_answer`); the frames deny unknown fields.
    #[tokio::test]
    async fn a_ping_with_unknown_fields_is_an_error() {
        let hub = WebChat::new();
        let (conn, _rx) = hub.connect("main");
        assert_eq!(
            hub.handle_frame(conn, r#"{"type":"ping"}"#).await,
            Some(ServerFrame::Pong)
        );
        let answer = hub.handle_frame(conn, r#"{"type":"ping","x":1}"#).await;
        assert!(
            matches!(answer, Some(ServerFrame::Error { .. })),
            "{answer:?}"
        );
    }

    /// `f`, or a failure if it is not done within 5 s of (paused) time: a frame that
    /// never comes fails the test instead of hanging it.
    async fn within<F: std::future::Future>(f: F) -> F::Output {
        tokio::time::timeout(std::time::Duration::from_secs(5), f)
            .await
            .expect("waited past the bound")
    }

    /// A press frame reaches the gateway as a press by this chat; its answer rewrites the
    /// message on every socket of the chat and is told to the presser; a press the gateway
    /// drops unanswered, or an action id longer than any button's, gets an error.
    /// Catches: presses lost or answered to nobody, the message left with live buttons.
    #[tokio::test(start_paused = true)]
    async fn a_press_is_handed_over_and_its_answer_shown() {
        let hub = std::sync::Arc::new(WebChat::new());
        let (tx, mut inbound) = mpsc::channel(4);
        *hub.sink.lock() = Some(tx);
        let (conn, _own) = hub.connect("main");
        let (_other, mut other_frames) = hub.connect("main");
        let _ = within(other_frames.recv()).await; // hello
        let press = r#"{"type":"press","action":"approve:a1:deny","key":"approval:a1"}"#;
        let answered = {
            let hub = hub.clone();
            tokio::spawn(async move { hub.handle_frame(conn, press).await })
        };
        let got = within(inbound.recv()).await.expect("the press");
        let p = got.msg.press.clone().expect("a press");
        assert_eq!(
            (
                p.action.as_str(),
                p.message_id.as_deref(),
                got.msg.origin.chat_id.as_str()
            ),
            ("approve:a1:deny", Some("approval:a1"), "main")
        );
        let answer = crate::PressAnswer {
            notice: "Denied".into(),
            alert: false,
            update: Some("denied by you".into()),
        };
        got.answer
            .expect("answer channel")
            .send(answer)
            .expect("sent");
        assert_eq!(
            within(answered).await.expect("join"),
            Some(ServerFrame::Notice {
                text: "Denied".into(),
                alert: false
            })
        );
        assert_eq!(
            within(other_frames.recv()).await.map(|o| o.frame),
            Some(ServerFrame::Update {
                key: "approval:a1".into(),
                text: "denied by you".into()
            })
        );

        let dropped = {
            let hub = hub.clone();
            tokio::spawn(async move { hub.handle_frame(conn, press).await })
        };
        drop(within(inbound.recv()).await);
        assert!(matches!(
            within(dropped).await.expect("join"),
            Some(ServerFrame::Error { .. })
        ));
        let long = format!(
            r#"{{"type":"press","action":"{}","key":"k"}}"#,
            "x".repeat(crate::MAX_ACTION_ID + 1)
        );
        assert!(matches!(
            hub.handle_frame(conn, &long).await,
            Some(ServerFrame::Error { .. })
        ));
    }

    #[tokio::test(start_paused = true)]
    async fn messages_reach_the_sink_and_replies_reach_the_socket() {
        let hub = std::sync::Arc::new(WebChat::new());
        let (tx, mut inbound) = mpsc::channel(4);
        let cancel = CancellationToken::new();
        let runner = {
            let hub = hub.clone();
            let cancel = cancel.clone();
            tokio::spawn(async move { hub.run(tx, cancel).await })
        };
        tokio::task::yield_now().await;
        let (conn, mut frames) = hub.connect("main");
        assert_eq!(
            within(frames.recv()).await.map(|o| o.frame),
            Some(ServerFrame::Hello {
                chat_id: "main".into()
            })
        );
        assert_eq!(
            within(hub.handle_frame(conn, r#"{"type":"message","text":"hi"}"#)).await,
            None
        );
        let msg = within(inbound.recv()).await.expect("inbound message").msg;
        assert_eq!(msg.text, "hi");
        assert_eq!(msg.origin, Origin::webchat("main", ChatKind::Direct));
        let reply = OutboundMessage {
            origin: msg.origin,
            text: "hello".into(),
            footer: None,
            actions: Vec::new(),
            file: None,
            key: "k".into(),
        };
        let progress = crate::MemoryProgress::default();
        let (sent, out) = within(async {
            tokio::join!(hub.send(&reply, &progress), async {
                let out = frames.recv().await.expect("a frame");
                let frame = out.frame.clone();
                out.written();
                frame
            })
        })
        .await;
        sent.expect("send");
        assert_eq!(
            out,
            ServerFrame::Message {
                text: "hello".into(),
                key: "k".into(),
                actions: Vec::new(),
            }
        );
        cancel.cancel();
        within(runner).await.expect("join").expect("run");
    }

    /// A message is delivered once a socket has written it, not when it was queued for one:
    /// a socket that goes away with the frame still queued leaves it undelivered (the outbox
    /// retries it). Catches: counting a frame queued in memory as delivered, which a crash
    /// before the socket wrote it turned into a lost message marked sent.
    #[tokio::test]
    async fn a_message_is_delivered_only_once_a_socket_wrote_it() {
        let hub = WebChat::new();
        let (_conn, mut frames) = hub.connect("main");
        let _hello = within(frames.recv()).await;
        let msg = OutboundMessage {
            origin: Origin::webchat("main", ChatKind::Direct),
            text: "hello".into(),
            footer: None,
            actions: Vec::new(),
            file: None,
            key: "k".into(),
        };
        let progress = crate::MemoryProgress::default();
        let (sent, ()) = within(async {
            tokio::join!(hub.send(&msg, &progress), async {
                // The socket takes the frame but dies before writing it.
                let out = frames.recv().await.expect("a frame");
                drop(out);
            })
        })
        .await;
        assert!(
            matches!(sent, Err(ChannelError::Temporary(ref e)) if e.contains("closed before the message was written")),
            "{sent:?}"
        );
    }
}

mod properties {
    use proptest::prelude::*;
    use serde_json::{json, Map, Value};

    use super::super::*;

    /// A raw frame: arbitrary text, or JSON shaped like a frame with arbitrary parts.
    fn raw_frame() -> impl Strategy<Value = String> {
        let kind = prop_oneof![
            Just(json!("message")),
            Just(json!("ping")),
            Just(json!("pong")),
            ".*".prop_map(Value::from),
            Just(json!(1)),
            Just(Value::Null),
        ];
        let text = prop_oneof![
            3 => ".*".prop_map(Value::from),
            1 => Just(json!("   \n\t")),
            1 => Just(Value::from("é".repeat(TEXT_LIMIT + 1))),
            1 => Just(json!(42)),
            1 => Just(Value::Null),
        ];
        let shaped = (
            proptest::option::of(kind),
            proptest::option::of(text),
            proptest::option::of((".{0,8}", ".*")),
        )
            .prop_map(|(kind, text, extra)| {
                let mut frame = Map::new();
                if let Some(k) = kind {
                    frame.insert("type".into(), k);
                }
                if let Some(t) = text {
                    frame.insert("text".into(), t);
                }
                if let Some((k, v)) = extra {
                    frame.insert(k, Value::from(v));
                }
                Value::Object(frame).to_string()
            });
        prop_oneof![1 => ".*", 3 => shaped, 1 => any::<Vec<u8>>().prop_map(|b| String::from_utf8_lossy(&b).into_owned())]
    }

    /// What the frame should get: `Ok(None)` for a message taken, `Ok(Some(Pong))`, or an
    /// error frame.
    fn expected(raw: &str) -> Result<Option<ServerFrame>, ()> {
        let Ok(Value::Object(frame)) = serde_json::from_str::<Value>(raw) else {
            return Err(());
        };
        let keys: Vec<&str> = frame.keys().map(String::as_str).collect();
        match frame.get("type").and_then(Value::as_str) {
            Some("ping") if keys == ["type"] => Ok(Some(ServerFrame::Pong)),
            Some("message") if keys.iter().all(|k| *k == "type" || *k == "text") => {
                match frame.get("text").and_then(Value::as_str) {
                    Some(t) if !t.trim().is_empty() && t.chars().count() <= TEXT_LIMIT => Ok(None),
                    _ => Err(()),
                }
            }
            _ => Err(()),
        }
    }

    fn runtime() -> &'static tokio::runtime::Runtime {
        static RT: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
        RT.get_or_init(|| {
            tokio::runtime::Builder::new_current_thread()
                .build()
                .expect("a runtime")
        })
    }

    proptest! {
        #![proptest_config(crate::proptest_cases::config())]

        /// Catches: a frame that panics the hub, a bad frame answered with nothing (the
        /// browser never learns), or a valid one dropped or answered with an error.
        #[test]
        fn any_frame_gets_its_answer(raw in raw_frame()) {
            let hub = WebChat::new();
            let (tx, mut rx) = mpsc::channel(1);
            *hub.sink.lock() = Some(tx);
            let (conn, _frames) = hub.connect("main");
            let answer = runtime().block_on(hub.handle_frame(conn, &raw));
            let taken = rx.try_recv().ok();
            match expected(&raw) {
                Ok(None) => {
                    prop_assert_eq!(&answer, &None);
                    let msg = taken.map(|t| t.msg);
                    prop_assert!(msg.is_some(), "message not taken");
                }
                Ok(Some(frame)) => {
                    prop_assert_eq!(answer, Some(frame));
                    prop_assert!(taken.is_none());
                }
                Err(()) => {
                    prop_assert!(matches!(answer, Some(ServerFrame::Error { .. })), "{answer:?} for {raw:?}");
                    prop_assert!(taken.is_none());
                }
            }
        }
    }
}
