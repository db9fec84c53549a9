// Switchboard control page: its script (served at /static/control.js). Reads the JSON API,
// listens to the operators' event stream and refreshes what an event changed. Every text
// from the daemon (keys, labels, tasks, transcripts) goes into the page as textContent.
"use strict";
(function () {
  // Bounds and pacing: how many rows the page asks for, how long it gathers events before
  // refreshing, how it reconnects to the event stream.
  const MAX_SESSIONS = 200;
  const MAX_SUBAGENTS = 1000;
  const REFRESH_AFTER_MS = 150;
  const TICK_MS = 1000;
  const BACKOFF_MIN_MS = 1000;
  const BACKOFF_MAX_MS = 10000;
  const TOKEN_KEY = "switchboard.token";

  const $ = (id) => document.getElementById(id);

  // --- token (as the web chat keeps it) ---------------------------------------------------
  const params = new URLSearchParams(location.search);
  let token = params.get("token");
  try {
    if (token) localStorage.setItem(TOKEN_KEY, token);
    else token = localStorage.getItem(TOKEN_KEY);
  } catch (_) {
    // No storage: the URL token still works for this page view.
  }
  if (params.has("token")) {
    params.delete("token");
    const rest = params.toString();
    try {
      history.replaceState(null, "", location.pathname + (rest ? "?" + rest : ""));
    } catch (_) {
      // Not allowed for this document: nothing to clean.
    }
  }

  // --- API ----------------------------------------------------------------------------------
  async function api(method, path) {
    const headers = {};
    if (token) headers.Authorization = "Bearer " + token;
    const resp = await fetch(path, { method: method, headers: headers, cache: "no-store" });
    const text = await resp.text();
    if (!resp.ok) {
      let msg = text;
      try { msg = JSON.parse(text).error || text; } catch (_) { /* not JSON */ }
      throw new Error(method + " " + path + ": " + resp.status + " " + msg);
    }
    return text;
  }
  const getJson = async (path) => JSON.parse(await api("GET", path));

  function showError(e) {
    const el = $("error");
    el.hidden = !e;
    el.textContent = e ? String(e.message || e) : "";
  }

  // --- small DOM helpers --------------------------------------------------------------------
  function node(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function fillTable(id, rows) {
    const body = $(id).tBodies[0];
    body.replaceChildren(...rows.map((cells) => {
      const tr = node("tr");
      for (const c of cells) tr.appendChild(c instanceof Node ? wrapTd(c) : node("td", null, c));
      return tr;
    }));
  }

  function wrapTd(child) {
    const td = node("td");
    td.appendChild(child);
    return td;
  }

  function ago(ms) {
    if (!Number.isFinite(ms)) return "";
    const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
    return s < 60 ? s + " s ago" : s < 3600 ? Math.round(s / 60) + " min ago" : Math.round(s / 3600) + " h ago";
  }

  function duration(ms) {
    if (!Number.isFinite(ms) || ms < 0) return "";
    const s = Math.round(ms / 1000);
    return s < 60 ? s + " s" : Math.floor(s / 60) + " min " + (s % 60) + " s";
  }

  // --- sub-agent trees ----------------------------------------------------------------------
  let runs = [];
  let lastRuns = null;

  function runtimeOf(r) {
    const start = Number.isFinite(r.startedAt) ? r.startedAt : null;
    if (start === null) return "not started";
    const end = Number.isFinite(r.endedAt) ? r.endedAt : Date.now();
    return duration(end - start);
  }

  function statusOf(r) {
    return r.outcome || r.status || "unknown";
  }

  function runNode(r, byRequester, depth) {
    const li = node("li", "run");
    li.dataset.runId = r.runId;
    li.dataset.status = statusOf(r);
    const line = node("div", "run-line");
    line.appendChild(node("span", "status", statusOf(r)));
    line.appendChild(node("span", "label", r.label || r.task.slice(0, 80)));
    line.appendChild(node("span", "meta agent", "agent " + r.agentId));
    line.appendChild(node("span", "meta model", r.model || "default model"));
    line.appendChild(node("span", "meta runtime", runtimeOf(r)));
    line.appendChild(node("span", "meta tokens", r.inputTokens + " in / " + r.outputTokens + " out"));
    line.appendChild(node("span", "meta cost", Number.isFinite(r.costUsd) ? "$" + r.costUsd.toFixed(4) : "cost n/a"));
    if (r.announceState && r.announceState !== "none") {
      line.appendChild(node("span", "meta announce", "announce " + r.announceState));
    }
    const show = node("button", "show", "transcript");
    show.type = "button";
    show.addEventListener("click", () => showTranscript(r.childSessionKey, r.label || r.runId));
    line.appendChild(show);
    if (!r.endedAt) {
      const stop = node("button", "stop", "stop");
      stop.type = "button";
      stop.addEventListener("click", () => act(stop, "POST", "/api/subagents/" + encodeURIComponent(r.runId) + "/stop"));
      line.appendChild(stop);
    }
    li.appendChild(line);
    const kids = byRequester.get(r.childSessionKey) || [];
    if (kids.length > 0 && depth < 16) {
      const ul = node("ul");
      for (const k of kids) ul.appendChild(runNode(k, byRequester, depth + 1));
      li.appendChild(ul);
    }
    return li;
  }

  function renderTrees() {
    const byRequester = new Map();
    const children = new Set();
    for (const r of runs) {
      if (r.archivedAt) continue;
      if (!byRequester.has(r.requesterSessionKey)) byRequester.set(r.requesterSessionKey, []);
      byRequester.get(r.requesterSessionKey).push(r);
      children.add(r.childSessionKey);
    }
    for (const list of byRequester.values()) list.sort((a, b) => a.createdAt - b.createdAt);
    const roots = [...byRequester.keys()].filter((k) => !children.has(k)).sort();
    const trees = $("trees");
    if (roots.length === 0) {
      trees.replaceChildren(node("p", "empty", "No sub-agents."));
      return;
    }
    trees.replaceChildren(...roots.map((key) => {
      const section = node("section", "tree");
      section.dataset.requester = key;
      const h = node("h3");
      h.appendChild(node("span", "requester", key));
      const stop = node("button", "stop-tree", "stop tree");
      stop.type = "button";
      stop.addEventListener("click", () => act(stop, "POST", "/api/sessions/" + encodeURIComponent(key) + "/subagents/stop"));
      h.appendChild(stop);
      section.appendChild(h);
      const ul = node("ul");
      for (const r of byRequester.get(key)) ul.appendChild(runNode(r, byRequester, 0));
      section.appendChild(ul);
      return section;
    }));
  }

  async function act(button, method, path) {
    button.disabled = true;
    try {
      await api(method, path);
      showError(null);
    } catch (e) {
      showError(e);
      button.disabled = false;
    }
    refreshSoon();
  }

  async function showTranscript(key, title) {
    $("transcript").hidden = false;
    $("transcript-title").textContent = title;
    const body = $("transcript-body");
    body.textContent = "loading…";
    try {
      const text = await api("GET", "/api/sessions/" + encodeURIComponent(key) + "/transcript");
      const lines = [];
      for (const raw of text.split("\n")) {
        if (!raw.trim()) continue;
        let m;
        try { m = JSON.parse(raw); } catch (_) { continue; }
        let line = "[" + String(m.role) + "] " + String(m.content ?? "");
        for (const c of m.tool_calls || []) line += "\n  → " + String(c.name) + " " + String(c.arguments);
        lines.push(line);
      }
      body.textContent = lines.length ? lines.join("\n\n") : "(empty)";
    } catch (e) {
      body.textContent = String(e.message || e);
    }
  }
  $("transcript-close").addEventListener("click", () => { $("transcript").hidden = true; });

  // --- the rest -----------------------------------------------------------------------------
  function renderSessions(sessions) {
    fillTable("sessions", sessions.map((s) => {
      const cells = [s.sessionKey, s.agentId, s.status, s.running ? "running " + s.running : "idle", ago(s.updatedAt)];
      return cells;
    }));
    const rows = $("sessions").tBodies[0].rows;
    sessions.forEach((s, i) => {
      rows[i].className = "session";
      rows[i].dataset.key = s.sessionKey;
    });
  }

  function renderStatus(st) {
    $("summary").textContent = "v" + st.version + " · up " + duration(st.uptimeSeconds * 1000) +
      " · " + st.activeRuns + " active runs · " + st.webchatConnections + " web chats";
    fillTable("lanes", st.lanes.map((l) => [l.name, l.active + " / " + l.capacity, l.queued]));
    fillTable("outbox", Object.entries(st.outbox).map(([state, n]) => [state, n]));
    fillTable("channels", st.channels.map((c) => [c.id, c.running ? "running" : "restarting", c.restarts]));
  }

  function renderMcp(m) {
    fillTable("mcp", m.servers.map((s) => [s.name, s.state + (s.lastError ? " (" + s.lastError + ")" : ""),
      Array.isArray(s.tools) ? s.tools.length : 0, s.restarts]));
  }

  let loading = null;
  let again = false;
  async function refresh() {
    if (loading) {
      again = true;
      return loading;
    }
    loading = (async () => {
      try {
        const [st, sessions, subs, mcp] = await Promise.all([
          getJson("/api/status"),
          getJson("/api/sessions?limit=" + MAX_SESSIONS),
          getJson("/api/subagents?limit=" + MAX_SUBAGENTS),
          getJson("/api/mcp"),
        ]);
        renderStatus(st);
        renderSessions(sessions.sessions);
        runs = subs.subagents;
        // Rebuilt only when something changed: a button is not swapped under the pointer.
        const seen = JSON.stringify(runs);
        if (seen !== lastRuns) {
          lastRuns = seen;
          renderTrees();
        }
        renderMcp(mcp);
        showError(null);
      } catch (e) {
        showError(e);
      }
    })();
    await loading;
    loading = null;
    if (again) {
      again = false;
      refresh();
    }
  }

  let refreshTimer = null;
  function refreshSoon() {
    if (refreshTimer !== null) return;
    refreshTimer = setTimeout(() => {
      refreshTimer = null;
      refresh();
    }, REFRESH_AFTER_MS);
  }

  // --- the event stream ---------------------------------------------------------------------
  let backoff = BACKOFF_MIN_MS;
  function listen() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    let url = scheme + "://" + location.host + "/api/events";
    if (token) url += "?token=" + encodeURIComponent(token);
    const sock = new WebSocket(url);
    sock.onopen = () => {
      backoff = BACKOFF_MIN_MS;
      $("status").classList.add("connected");
      $("status").textContent = "connected";
      refresh(); // whatever happened while the stream was down
    };
    sock.onmessage = (m) => {
      let frame;
      try { frame = JSON.parse(m.data); } catch (_) { return; }
      const type = frame && frame.event && frame.event.type;
      // Text pieces of a reply change nothing shown here.
      if (typeof type === "string" && type !== "run.delta") refreshSoon();
    };
    sock.onclose = () => {
      $("status").classList.remove("connected");
      $("status").textContent = "disconnected — reconnecting…";
      setTimeout(listen, backoff);
      backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
    };
    sock.onerror = () => {};
  }

  // Running times tick without asking the daemon.
  setInterval(() => {
    for (const el of document.querySelectorAll("li.run")) {
      const r = runs.find((x) => x.runId === el.dataset.runId);
      const span = el.querySelector(":scope > .run-line .runtime");
      if (r && span && !r.endedAt) span.textContent = runtimeOf(r);
    }
  }, TICK_MS);

  if (location.protocol === "http:" || location.protocol === "https:") {
    refresh();
    listen();
  } else {
    $("status").textContent = "offline (no gateway)";
  }
})();
