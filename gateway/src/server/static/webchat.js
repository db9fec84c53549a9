// Switchboard web chat: the page's script (served at /static/webchat.js). The wire
// protocol and the DOM contract are described at the top of webchat.html.
"use strict";
(function () {
  // Bounds: reconnect backoff and how much debug history the page keeps.
  const BACKOFF_MIN_MS = 1000;
  const BACKOFF_MAX_MS = 10000;
  const PING_INTERVAL_MS = 25000;
  const MAX_EVENTS = 200;
  const TOKEN_KEY = "switchboard.token";

  const $ = (id) => document.getElementById(id);
  const messagesEl = $("messages");
  const scroller = $("scroller");
  const emptyEl = $("empty");
  const statusEl = $("status");
  const typingEl = $("typing");
  const inputEl = $("input");
  const formEl = $("composer");
  const eventLog = $("event-log");
  const eventCount = $("event-count");

  // --- parameters ---------------------------------------------------------------------
  const params = new URLSearchParams(location.search);
  let chatId = params.get("chat") || "main";
  let token = params.get("token");
  try {
    if (token) {
      localStorage.setItem(TOKEN_KEY, token);
    } else {
      token = localStorage.getItem(TOKEN_KEY);
    }
  } catch (_) {
    // Storage may be unavailable (file://, private mode); the URL token still works.
  }
  if (params.has("token")) {
    // Keep the token out of the address bar, history and bookmarks once read.
    params.delete("token");
    const rest = params.toString();
    try {
      history.replaceState(null, "", location.pathname + (rest ? "?" + rest : "") + location.hash);
    } catch (_) {
      // Not allowed for this document (e.g. opened from a file): nothing to clean.
    }
  }
  // Uploads and downloads (webchat_files.js).
  const files = window.SwitchboardFiles
    ? window.SwitchboardFiles.init({ token: token, addMessage: addMessage, inputEl: inputEl, formEl: formEl })
    : null;
  $("chat-id").textContent = "chat: " + chatId;
  document.title = "Switchboard · " + chatId;

  // --- rendering ----------------------------------------------------------------------
  function nearBottom() {
    return scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 80;
  }

  function scrollToBottom() {
    scroller.scrollTop = scroller.scrollHeight;
  }

  function addMessage(kind, text) {
    const stick = nearBottom();
    const div = document.createElement("div");
    div.className = "msg " + kind;
    if (kind === "assistant" && /^Status:/.test(text)) {
      div.classList.add("announce");
    }
    setText(div, kind, text);
    messagesEl.appendChild(div);
    emptyEl.hidden = true;
    if (stick || kind === "user") scrollToBottom();
    return div;
  }

  // A message's text: the assistant's as Markdown (built as DOM nodes, never parsed as
  // HTML: model output is untrusted), everything else as plain text.
  function setText(div, kind, text) {
    if (kind === "assistant" && window.SwitchboardMarkdown) {
      window.SwitchboardMarkdown.renderInto(div, text);
    } else {
      div.textContent = text;
    }
  }

  // --- history and streaming ------------------------------------------------------------
  // The session this chat talks to (from the history frame): its live events are this
  // chat's own, the others are its sub-agents'.
  let sessionKey = null;
  // Delivery keys already on the page (from the history, or a streamed reply made final):
  // the same message delivered live is not shown twice.
  const shownKeys = new Set();
  // Streamed replies being written, by run id: { div, text }.
  const streams = new Map();
  // Runs whose reply is final on the page: a delta or `run.ended` of theirs that comes
  // after the delivered reply (events may trail messages) changes nothing.
  const settledRuns = new Set();
  const MAX_SETTLED = 1000;
  // Messages typed while no socket was open.
  const typedOffline = [];

  function showHistory(frame) {
    if (typeof frame.sessionKey === "string") sessionKey = frame.sessionKey;
    if (!Array.isArray(frame.messages)) return;
    // A reconnect sends the history again: start from it.
    messagesEl.replaceChildren();
    streams.clear();
    shownKeys.clear();
    for (const m of frame.messages) {
      if (!m || typeof m.text !== "string") continue;
      if (m.role === "tool") {
        addToolCall({ tool: m.text });
        continue;
      }
      const div = m.file && typeof m.file === "object" && files
        ? files.show({ file: m.file })
        : addMessage(m.role === "user" ? "user" : "assistant", m.text);
      div.classList.add("history");
      if (m.role === "announce") div.classList.add("announce");
      if (typeof m.key === "string") {
        div.dataset.key = m.key;
        shownKeys.add(m.key);
      }
    }
    // Typed while disconnected: sent on reconnect, maybe not stored yet when the
    // history was read.
    for (const text of typedOffline.splice(0)) addMessage("user", text);
    emptyEl.hidden = messagesEl.children.length > 0;
    scrollToBottom();
  }

  // A `run.delta` of this chat's own run: the reply as it is written.
  function streamDelta(ev) {
    const runId = String(ev.runId ?? "");
    if (settledRuns.has(runId)) return;
    let s = streams.get(runId);
    if (!s) {
      const stick = nearBottom();
      const div = document.createElement("div");
      div.className = "msg assistant streaming";
      div.dataset.run = runId;
      messagesEl.appendChild(div);
      emptyEl.hidden = true;
      s = { div: div, text: "" };
      streams.set(runId, s);
      if (stick) scrollToBottom();
    }
    const piece = String(ev.text ?? "");
    s.text = ev.reset === true ? piece : s.text + piece;
    const stick = nearBottom();
    setText(s.div, "assistant", s.text);
    if (stick) scrollToBottom();
  }

  // The streamed text of `runId` becomes the final reply `text` (its delivery key then
  // counts as shown), or goes away when the run ended without one.
  function settleStream(runId, text) {
    if (settledRuns.size >= MAX_SETTLED) settledRuns.clear();
    settledRuns.add(runId);
    const s = streams.get(runId);
    if (!s) return false;
    streams.delete(runId);
    if (typeof text !== "string") {
      s.div.remove();
      return true;
    }
    s.div.classList.remove("streaming");
    setText(s.div, "assistant", text);
    const key = "run:" + runId + ":reply";
    s.div.dataset.key = key;
    shownKeys.add(key);
    return true;
  }

  // A delivered message: the final form of a streamed reply, one the page already shows,
  // or a new one.
  function showDelivered(frame) {
    const key = typeof frame.key === "string" ? frame.key : null;
    const text = String(frame.text ?? "");
    const streamed = key && /^run:(.*):reply$/.exec(key);
    if (streamed && settleStream(streamed[1], text)) return;
    if (key && shownKeys.has(key)) return;
    const div = addMessage("assistant", text);
    // (Other keys are not marked shown here: every part of a split message has its key.)
    if (key && isProgressKey(key)) {
      div.dataset.key = key;
      shownKeys.add(key);
      div.classList.add("progress");
    }
    if (Array.isArray(frame.actions) && frame.actions.length > 0 && key) {
      addActions(div, key, frame.actions);
    }
  }

  // A sub-agent's progress line: one message per child, rewritten in place by `update`
  // frames of its key.
  function isProgressKey(key) {
    return key.startsWith("progress:");
  }

  // Buttons under a message: pressing one sends the press and disables the row until the
  // gateway answers (an `update` replaces the row with the outcome).
  function addActions(div, key, actions) {
    div.dataset.key = key;
    const row = document.createElement("div");
    row.className = "actions";
    for (const a of actions) {
      if (!a || typeof a.id !== "string" || typeof a.label !== "string") continue;
      const b = document.createElement("button");
      b.type = "button";
      b.className = "action";
      b.dataset.action = a.id;
      b.textContent = a.label;
      b.addEventListener("click", () => {
        for (const other of row.querySelectorAll("button")) other.disabled = true;
        sendFrame({ type: "press", action: a.id, key: key });
      });
      row.appendChild(b);
    }
    div.appendChild(row);
  }

  function updateMessage(key, text) {
    let found = false;
    for (const div of messagesEl.querySelectorAll("div.msg.assistant")) {
      if (div.dataset.key !== key) continue;
      found = true;
      if (isProgressKey(key)) {
        setText(div, "assistant", text);
        continue;
      }
      div.textContent = text; // drops the buttons too
      div.classList.add("settled");
    }
    // A progress line posted before this page was opened: shown from its first edit on.
    if (!found && isProgressKey(key)) showDelivered({ key: key, text: text });
  }

  function notice(text, alert) {
    const div = addMessage(alert ? "error" : "notice", text);
    // A refused press leaves its buttons usable again.
    if (alert) {
      for (const b of messagesEl.querySelectorAll("div.actions button")) b.disabled = false;
    }
    return div;
  }

  // A tool call of this chat's run, as one collapsed line (open it for the details).
  function addToolCall(ev) {
    const stick = nearBottom();
    const details = document.createElement("details");
    details.className = "msg tool";
    const summary = document.createElement("summary");
    const ms = Number.isFinite(ev.durationMs) ? " · " + ev.durationMs + " ms" : "";
    const outcome = ev.ok === false ? " · error" : ev.ok === true ? " · ok" : "";
    summary.textContent = "🔧 " + String(ev.tool ?? "tool") + outcome + ms;
    details.appendChild(summary);
    const body = document.createElement("div");
    body.className = "tool-detail";
    body.textContent = ev.ok === false
      ? String(ev.error ?? "failed")
      : ev.callId ? "call " + String(ev.callId) + " finished" : "called earlier in this conversation";
    details.appendChild(body);
    messagesEl.appendChild(details);
    emptyEl.hidden = true;
    if (stick) scrollToBottom();
  }

  function setTyping(active) {
    const stick = nearBottom();
    typingEl.hidden = !active;
    if (active && stick) scrollToBottom();
  }

  function setStatus(state) {
    statusEl.classList.toggle("connected", state === "connected");
    statusEl.textContent =
      state === "connected" ? "connected"
      : state === "connecting" ? "connecting…"
      : state === "offline" ? "offline (no gateway)"
      : "disconnected — reconnecting…";
  }

  function logEvent(event) {
    let line;
    try { line = JSON.stringify(event); } catch (_) { line = String(event); }
    const lines = eventLog.textContent ? eventLog.textContent.split("\n") : [];
    lines.push(line);
    while (lines.length > MAX_EVENTS) lines.shift();
    eventLog.textContent = lines.join("\n");
    eventCount.textContent = String(Number(eventCount.textContent) + 1);
  }

  // --- connection ---------------------------------------------------------------------
  let ws = null;
  let backoff = BACKOFF_MIN_MS;
  let reconnectTimer = null;
  let pingTimer = null;
  const outbox = []; // frames typed while disconnected, flushed on (re)connect

  function wsUrl() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    let url = scheme + "://" + location.host + "/ws?chat=" + encodeURIComponent(chatId);
    if (token) url += "&token=" + encodeURIComponent(token);
    return url;
  }

  function sendFrame(frame) {
    const raw = JSON.stringify(frame);
    if (ws && ws.readyState === WebSocket.OPEN) {
      ws.send(raw);
    } else {
      outbox.push(raw);
    }
  }

  function scheduleReconnect() {
    if (reconnectTimer !== null) return;
    const delay = backoff;
    backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
    reconnectTimer = setTimeout(() => {
      reconnectTimer = null;
      connect();
    }, delay);
  }

  function connect() {
    let sock;
    try {
      sock = new WebSocket(wsUrl());
    } catch (e) {
      setStatus("disconnected");
      scheduleReconnect();
      return;
    }
    ws = sock;
    sock.onopen = () => {
      if (ws !== sock) return;
      backoff = BACKOFF_MIN_MS;
      setStatus("connected");
      while (outbox.length > 0) sock.send(outbox.shift());
      clearInterval(pingTimer);
      pingTimer = setInterval(() => {
        if (sock.readyState === WebSocket.OPEN) sock.send(JSON.stringify({ type: "ping" }));
      }, PING_INTERVAL_MS);
    };
    sock.onmessage = (ev) => {
      if (ws !== sock || typeof ev.data !== "string") return;
      let frame;
      try {
        frame = JSON.parse(ev.data);
      } catch (_) {
        logEvent({ unparsed: ev.data });
        return;
      }
      handleFrame(frame);
    };
    sock.onclose = () => {
      if (ws !== sock) return;
      ws = null;
      clearInterval(pingTimer);
      pingTimer = null;
      setTyping(false);
      setStatus("disconnected");
      scheduleReconnect();
    };
    // An error is always followed by close, which does the reconnecting.
    sock.onerror = () => {};
  }

  function handleFrame(frame) {
    switch (frame && frame.type) {
      case "hello": {
        const id = frame.chatId ?? frame.chat_id; // tolerate either spelling
        if (typeof id === "string" && id) {
          chatId = id;
          $("chat-id").textContent = "chat: " + chatId;
        }
        break;
      }
      case "history":
        showHistory(frame);
        break;
      case "message":
        showDelivered(frame);
        break;
      case "file": {
        // Shown already when the history had it (a reconnect before the ack).
        const key = typeof frame.key === "string" ? frame.key : null;
        if (!files || (key && shownKeys.has(key))) break;
        const div = files.show(frame);
        if (key) {
          div.dataset.key = key;
          shownKeys.add(key);
        }
        break;
      }
      case "update":
        updateMessage(String(frame.key ?? ""), String(frame.text ?? ""));
        break;
      case "notice":
        notice(String(frame.text ?? ""), frame.alert === true);
        break;
      case "typing":
        setTyping(frame.active === true);
        break;
      case "error":
        addMessage("error", String(frame.error ?? "unknown error"));
        break;
      case "event": {
        const ev = frame.event;
        if (!ev || typeof ev !== "object") break;
        const own = sessionKey !== null && ev.sessionKey === sessionKey;
        if (ev.type === "run.delta") {
          // Not logged: one line per piece would push everything else out of the log.
          if (own) streamDelta(ev);
          break;
        }
        logEvent(ev);
        if (ev.type === "run.tool") addToolCall(ev);
        if (ev.type === "run.ended" && own) {
          settleStream(String(ev.runId ?? ""), typeof ev.reply === "string" && ev.reply ? ev.reply : undefined);
        }
        break;
      }
      case "pong":
        break;
      default:
        logEvent(frame);
    }
  }

  // --- composer -----------------------------------------------------------------------
  function autosize() {
    inputEl.style.height = "auto";
    inputEl.style.height = inputEl.scrollHeight + 2 + "px";
    // Show a scrollbar only once the box has reached its CSS max-height.
    inputEl.style.overflowY = inputEl.scrollHeight > inputEl.clientHeight ? "auto" : "hidden";
  }

  function submit() {
    const text = inputEl.value;
    const attached = files ? files.take() : [];
    if (text.trim() === "" && attached.length === 0) return;
    addMessage("user", text + attached.map((f) => "\n📎 " + f.name).join(""));
    if (!(ws && ws.readyState === WebSocket.OPEN)) typedOffline.push(text);
    const frame = { type: "message", text: text };
    if (attached.length > 0) frame.files = attached;
    sendFrame(frame);
    inputEl.value = "";
    autosize();
    inputEl.focus();
  }

  formEl.addEventListener("submit", (e) => {
    e.preventDefault();
    submit();
  });
  inputEl.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing && e.keyCode !== 229) {
      e.preventDefault();
      submit();
    }
  });
  inputEl.addEventListener("input", autosize);

  setStatus("connecting");
  if (location.protocol === "http:" || location.protocol === "https:") {
    connect();
  } else {
    // Opened as a file: there is no gateway to talk to.
    setStatus("offline");
  }
  inputEl.focus();
})();
