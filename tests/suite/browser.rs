//! The pages in a real headless Chromium: the web chat (send, history, Markdown, a reply as
//! it streams) and the control page (sub-agent trees, stop). A failing page test keeps a
//! screenshot under the test target's tmp dir (`browser-artifacts/<test>.png`).

use serde_json::{json, Value};
use switchboard_testkit::browser::Browser;
use switchboard_testkit::fake_model::{FakeModel, Gate, Step};
use switchboard_testkit::harness::Gateway;

use crate::common::{chat, start, wait_outbox_sent, WAIT};
use crate::subagents::spawn_call;

/// A page test's result: its failures carry their reason, so a screenshot can be taken
/// before the test fails.
type Checked<T = ()> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// Fails the page test with a message unless `cond` holds.
macro_rules! ensure {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err(format!($($fmt)+).into());
        }
    };
    ($cond:expr) => {
        ensure!($cond, "{}", stringify!($cond))
    };
}

/// Runs a page test's body; when it fails, keeps a screenshot of the page as it was and
/// names it in the failure.
async fn keep_screenshot_on_failure(browser: &Browser, name: &str, result: Checked) {
    if let Err(e) = result {
        let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("browser-artifacts")
            .join(format!("{name}.png"));
        let shot = match browser.screenshot(&path).await {
            Ok(()) => format!("screenshot: {}", path.display()),
            Err(s) => format!("no screenshot: {s:#}"),
        };
        panic!("{e}\n{shot}");
    }
}

#[tokio::test]
async fn the_page_sends_and_shows_the_reply() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, json!({})).await;
    let browser = Browser::launch().await.unwrap();
    browser.goto(&gw.page_url("/")).await.unwrap();
    browser
        .wait_for_text("#status", "connected", WAIT)
        .await
        .unwrap();
    let input = browser.find("#input").await.unwrap();
    input.send_keys("hi from the browser").await.unwrap();
    browser.find("#send").await.unwrap().click().await.unwrap();
    browser
        .wait_for_text(".msg.user", "hi from the browser", WAIT)
        .await
        .unwrap();
    browser
        .wait_for_text(".msg.assistant", "echo: hi from the browser", WAIT)
        .await
        .unwrap();
    browser.quit().await.unwrap();
}

/// Every `#messages .msg` as (className, rendered text).
async fn messages(browser: &Browser) -> Checked<Vec<(String, String)>> {
    let v = browser
        .execute(
            "return Array.from(document.querySelectorAll('#messages .msg'))\
             .map(e => [e.className, e.innerText]);",
            vec![],
        )
        .await?;
    Ok(serde_json::from_value(v)?)
}

/// How many messages on the page contain `text`.
async fn count_containing(browser: &Browser, text: &str) -> Checked<usize> {
    Ok(messages(browser)
        .await?
        .iter()
        .filter(|(_, t)| t.contains(text))
        .count())
}

const HOSTILE: &str = "Here is **bold**, `code` and <img src=x onerror=\"window.__pwned=1\"> done";

/// On open, the page shows the conversation so far — a reply that waited in the outbox
/// while no page was open appears once, though it is both in the history and delivered
/// live —; model text is rendered as Markdown with its markup shown, never run; a reply
/// shows while it streams and the final reply takes its place.
/// Catches: no history; a history/live duplicate (the key not carried or not matched); a
/// gap (the waiting reply missing); HTML from the model parsed (the `<img onerror>`
/// would be an element and run); no streaming, or the streamed text left beside the reply.
#[tokio::test]
async fn the_page_shows_the_history_markdown_and_a_streaming_reply() {
    let fake = FakeModel::start().await.unwrap();
    let gate = Gate::new();
    fake.push_for("earlier", Step::text(HOSTILE));
    fake.push_for(
        "while away",
        Step::gated(&gate, Step::text("the answer that waited")),
    );
    let stream_gate = Gate::new();
    fake.push_for(
        "stream please",
        Step::paused("Streaming **half", &stream_gate, " and whole** now"),
    );
    let gw = start(&fake, json!({})).await;

    // Before the page opens: one exchange delivered, one reply left waiting in the outbox.
    let mut ws = chat(&gw, "main").await;
    ws.send_text("earlier question").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), HOSTILE);
    ws.send_text("asked while away").await.unwrap();
    fake.wait_for_requests(2, WAIT).await.unwrap();
    ws.close().await.unwrap();
    gate.open();
    wait_transcript_contains(&gw, "the answer that waited").await;

    let browser = Browser::launch().await.unwrap();
    let result = history_markdown_streaming(&browser, &gw, &stream_gate).await;
    keep_screenshot_on_failure(&browser, "webchat_history_markdown_streaming", result).await;
    browser.quit().await.unwrap();
}

async fn history_markdown_streaming(
    browser: &Browser,
    gw: &Gateway,
    stream_gate: &Gate,
) -> Checked {
    browser.goto(&gw.page_url("/")).await?;
    browser.wait_for("#status.connected", WAIT).await?;
    browser
        .wait_for_text(".msg.assistant", "the answer that waited", WAIT)
        .await?;
    // The waiting reply is delivered live too: once that delivery is recorded, the page
    // must still show it once.
    wait_outbox_sent(gw, 2).await;
    browser
        .wait_for_text(".msg.user.history", "earlier question", WAIT)
        .await?;
    let shown = messages(browser).await?;
    let texts: Vec<&str> = shown.iter().map(|(_, t)| t.as_str()).collect();
    ensure!(
        texts
            == [
                "earlier question",
                "Here is bold, code and <img src=x onerror=\"window.__pwned=1\"> done",
                "asked while away",
                "the answer that waited",
            ],
        "history: {shown:?}"
    );
    ensure!(
        count_containing(browser, "the answer that waited").await? == 1,
        "shown twice"
    );

    // Markdown: real <strong> and <code>, the <img> only as text, nothing run.
    let probe = browser
        .execute(
            "const m = document.getElementById('messages');\
             return [m.querySelectorAll('img').length, m.querySelector('strong')?.textContent,\
                     m.querySelector('code')?.textContent, window.__pwned === undefined];",
            vec![],
        )
        .await?;
    ensure!(
        probe == json!([0, "bold", "code", true]),
        "markdown: {probe}"
    );

    // A reply as it streams, then the whole reply in its place.
    let input = browser.find("#input").await?;
    input.send_keys("stream please").await?;
    browser.find("#send").await?.click().await?;
    let partial = browser
        .wait_for_text(".msg.assistant.streaming", "Streaming", WAIT)
        .await?;
    ensure!(partial == "Streaming **half", "partial: {partial:?}");
    stream_gate.open();
    browser
        .wait_for_text(".msg.assistant", "Streaming half and whole now", WAIT)
        .await?;
    wait_outbox_sent(gw, 3).await;
    ensure!(
        browser.find_all(".msg.streaming").await?.is_empty(),
        "a streaming bubble is left"
    );
    ensure!(
        count_containing(browser, "Streaming").await? == 1,
        "{:?}",
        messages(browser).await?
    );
    let bold = browser
        .execute(
            "return Array.from(document.querySelectorAll('#messages strong')).map(e => e.textContent);",
            vec![],
        )
        .await?;
    ensure!(bold == json!(["bold", "half and whole"]), "{bold}");
    Ok(())
}

/// Waits (bounded) until the main chat's transcript holds `text`.
async fn wait_transcript_contains(gw: &Gateway, text: &str) {
    for _ in 0..400 {
        let body = gw
            .http()
            .get(format!(
                "{}/api/sessions/agent:main:main/transcript",
                gw.base_url()
            ))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        if body.contains(text) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    panic!("the transcript never held {text:?}");
}

/// The control page: children spawned through the scripted model appear in their
/// requester's tree with their details; pressing stop on one ends it (and only it), and
/// its announce in the chat says `Status: unknown`; stopping the tree ends the other.
/// Catches: the tree not built from the API, not updated from the event stream (nothing
/// else reloads it), a stop button stopping the wrong run or nothing, the tree stop
/// missing, the API token not used by the page.
#[tokio::test]
async fn the_control_page_shows_the_tree_and_stops_runs() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "fan out",
        Step::ToolCalls(vec![
            spawn_call("slow child one", json!({"label": "first"})),
            spawn_call("slow child two", json!({"label": "second"})),
        ]),
    );
    fake.push_for("fan out", Step::Text("spawned two".into()));
    fake.push_for("slow child", Step::Hang);
    fake.push_for("slow child", Step::Hang);
    let gw = start(&fake, json!({"gateway": {"auth": {"token": "s3cret"}}})).await;

    let browser = Browser::launch().await.unwrap();
    browser
        .goto(&format!("{}/control?token=s3cret", gw.base_url()))
        .await
        .unwrap();
    let result = control_tree_and_stop(&browser, &gw, &fake).await;
    keep_screenshot_on_failure(&browser, "control_tree_and_stop", result).await;
    browser.quit().await.unwrap();
}

async fn control_tree_and_stop(browser: &Browser, gw: &Gateway, fake: &FakeModel) -> Checked {
    browser.wait_for("#status.connected", WAIT).await?;
    let url = format!("{}&token=s3cret", gw.ws_url("main"));
    let mut ws = switchboard_testkit::harness::WsClient::connect(&url).await?;
    ws.next_of_type("hello", WAIT).await?;
    ws.send_text("fan out").await?;
    ensure!(ws.next_message(WAIT).await? == "spawned two");
    fake.wait_for_requests(4, WAIT).await?;

    // Both children appear, live, under the chat's session.
    let tree = "section.tree[data-requester='agent:main:main']";
    browser
        .wait_for(&format!("{tree} li.run[data-status='running']"), WAIT)
        .await?;
    let first = wait_run_line(browser, "first", "running").await?;
    wait_run_line(browser, "second", "running").await?;
    ensure!(first.contains("agent main"), "{first}");
    ensure!(first.contains("0 in / 0 out"), "{first}");

    let runs: Value = gw
        .http()
        .get(format!("{}/api/subagents", gw.base_url()))
        .bearer_auth("s3cret")
        .send()
        .await?
        .json()
        .await?;
    let id_of = |label: &str| -> Checked<String> {
        runs["subagents"]
            .as_array()
            .and_then(|a| a.iter().find(|r| r["label"] == label))
            .and_then(|r| r["runId"].as_str())
            .map(str::to_owned)
            .ok_or_else(|| format!("no run labelled {label}: {runs}").into())
    };
    let (first_id, second_id) = (id_of("first")?, id_of("second")?);

    // Stop the first: it ends, announces `unknown`, the second still runs.
    click(
        browser,
        &format!("li.run[data-run-id='{first_id}'] button.stop"),
    )
    .await?;
    let announce = loop {
        let m = ws.next_message(WAIT).await?;
        if m.starts_with("Status:") {
            break m;
        }
    };
    ensure!(
        announce.starts_with(
            "Status: unknown\nResult: (not available)\nNotes: stopped through the API"
        ),
        "{announce}"
    );
    browser
        .wait_for(
            &format!("li.run[data-run-id='{first_id}'][data-status='cancelled']"),
            WAIT,
        )
        .await?;
    ensure!(
        browser
            .find_all(&format!("li.run[data-run-id='{first_id}'] button.stop"))
            .await?
            .is_empty(),
        "an ended run keeps its stop button"
    );
    ensure!(
        !browser
            .find_all(&format!(
                "li.run[data-run-id='{second_id}'][data-status='running']"
            ))
            .await?
            .is_empty(),
        "the other child stopped too"
    );

    // Its transcript, then the tree stop for the rest.
    click(
        browser,
        &format!("li.run[data-run-id='{first_id}'] button.show"),
    )
    .await?;
    browser
        .wait_for_text("#transcript-body", "slow child one", WAIT)
        .await?;
    click(browser, &format!("{tree} button.stop-tree")).await?;
    browser
        .wait_for(
            &format!("li.run[data-run-id='{second_id}'][data-status='cancelled']"),
            WAIT,
        )
        .await?;
    browser.wait_for_text("#lanes", "subagent", WAIT).await?;
    browser
        .wait_for_text("#sessions", "agent:main:main", WAIT)
        .await?;
    Ok(())
}

/// The text of the run line labelled `label` once its status is `status`.
async fn wait_run_line(browser: &Browser, label: &str, status: &str) -> Checked<String> {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let v = browser
            .execute(
                "return Array.from(document.querySelectorAll('li.run'))\
                 .filter(li => li.dataset.status === arguments[1] &&\
                   li.querySelector('.label')?.textContent === arguments[0])\
                 .map(li => li.querySelector('.run-line').innerText);",
                vec![json!(label), json!(status)],
            )
            .await?;
        if let Some(text) = v.get(0).and_then(Value::as_str) {
            return Ok(text.to_owned());
        }
        ensure!(
            tokio::time::Instant::now() < deadline,
            "no {status} run labelled {label}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// Clicks the element matching `css`, finding it again if the page rebuilt it between
/// the find and the click (the control page redraws on events).
async fn click(browser: &Browser, css: &str) -> Checked {
    let mut last = None;
    for _ in 0..5 {
        match browser.find(css).await {
            Ok(el) => match el.click().await {
                Ok(()) => return Ok(()),
                Err(e) => last = Some(e),
            },
            Err(e) => last = Some(e),
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    Err(format!("cannot click `{css}`: {last:?}").into())
}

/// A sub-agent's progress line is one message on the page, rewritten in place by each
/// edit and at the child's end. (Catches: an `update` frame ignored by the page for a
/// message without buttons, or shown as a new message.)
#[tokio::test]
async fn the_page_rewrites_a_progress_line_in_place() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "index the docs",
        Step::ToolCalls(vec![spawn_call("docs task", json!({"label": "docs"}))]),
    );
    fake.push_for("index the docs", Step::text("Started."));
    let more = Gate::new();
    let end = Gate::new();
    let progress = |t: &str| {
        switchboard_testkit::fake_model::ToolCall::new("progress", json!({ "text": t }).to_string())
    };
    fake.push_for("docs task", Step::ToolCalls(vec![progress("reading")]));
    fake.push_for(
        "docs task",
        Step::gated(&more, Step::ToolCalls(vec![progress("writing")])),
    );
    fake.push_for("docs task", Step::gated(&end, Step::text("indexed")));
    let gw = start(&fake, json!({})).await;
    let browser = Browser::launch().await.unwrap();
    let result = progress_line(&browser, &gw, &more, &end).await;
    keep_screenshot_on_failure(&browser, "webchat_progress_line", result).await;
    browser.quit().await.unwrap();
}

async fn progress_line(browser: &Browser, gw: &Gateway, more: &Gate, end: &Gate) -> Checked {
    browser.goto(&gw.page_url("/")).await?;
    browser.wait_for_text("#status", "connected", WAIT).await?;
    browser
        .find("#input")
        .await?
        .send_keys("index the docs")
        .await?;
    browser.find("#send").await?.click().await?;
    for (gate, text) in [
        (None, "⏳ docs: reading"),
        (Some(more), "⏳ docs: writing"),
        (Some(end), "✅ docs: done"),
    ] {
        if let Some(g) = gate {
            g.open();
        }
        browser
            .wait_for_text(".msg.assistant.progress", text, WAIT)
            .await?;
        let lines: Vec<String> = messages(browser)
            .await?
            .into_iter()
            .filter(|(class, _)| class.contains("progress"))
            .map(|(_, t)| t)
            .collect();
        ensure!(lines == vec![text.to_string()], "progress lines: {lines:?}");
    }
    Ok(())
}
