//! The route table: every path the server answers, its handler, and who may call it
//! ([`Access`]). The router is built from this table alone, and the auth-matrix tests
//! iterate it, so a new route cannot skip the doors unnoticed.

use axum::routing::{get, post, MethodRouter};

use super::{
    api, events, mcp_cron, metrics, pages, status, telegram, webchat_files, ws, AppState, Deadline,
};

/// Who may call a route, and how they prove it (README, Security).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// `/healthz`: anyone (load balancers, container probes), no checks.
    Open,
    /// Telegram's webhook: its own secret header instead of the bearer token; refused
    /// from another site's page (Origin), never by `Host` (Telegram calls a public name).
    Webhook,
    /// The pages (web chat, control) and their static files: they hold no secret, so no
    /// token; only for the daemon's own site. A page may carry `?token=`, which it keeps
    /// in the browser and hands on to its sockets and API calls.
    Page,
    /// The WebSockets (`/ws`, `/api/events`): the bearer token in `Authorization` or as
    /// `?token=` (a browser cannot set headers on a WebSocket).
    Socket,
    /// The JSON API and `/metrics`: the bearer token in `Authorization` only.
    Api,
}

impl Access {
    /// Refuse another site's `Origin`.
    pub fn checks_origin(self) -> bool {
        !matches!(self, Access::Open)
    }

    /// With no token set, refuse a `Host` that is not a loopback name (DNS rebinding).
    pub fn checks_host(self) -> bool {
        matches!(self, Access::Page | Access::Socket | Access::Api)
    }

    /// Refuse a missing or wrong bearer token, when one is set.
    pub fn needs_token(self) -> bool {
        matches!(self, Access::Socket | Access::Api)
    }

    /// Take the token from `?token=` too (percent-decoded).
    pub fn takes_query_token(self) -> bool {
        matches!(self, Access::Socket)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Get,
    Post,
}

impl Verb {
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "GET",
            Verb::Post => "POST",
        }
    }
}

/// One row of the table. `path` uses axum's `{param}` syntax.
#[derive(Debug, Clone, Copy)]
pub struct Route {
    pub verb: Verb,
    pub path: &'static str,
    pub access: Access,
    endpoint: Endpoint,
}

#[derive(Debug, Clone, Copy)]
enum Endpoint {
    Healthz,
    Webchat,
    Control,
    Static,
    TelegramWebhook,
    Metrics,
    Status,
    ListSessions,
    Transcript,
    PostMessage,
    GetRun,
    ListSubagents,
    GetSubagent,
    StopSubagent,
    StopTree,
    Events,
    Socket,
    ListMcp,
    ListCron,
    AddCron,
    RunCron,
    RemoveCron,
    EnableCron,
    DisableCron,
    WebchatUpload,
    WebchatFile,
}

const fn route(verb: Verb, path: &'static str, access: Access, endpoint: Endpoint) -> Route {
    Route {
        verb,
        path,
        access,
        endpoint,
    }
}

/// Every route the server answers (anything else is a JSON 404).
pub const ROUTES: &[Route] = &[
    route(Verb::Get, "/healthz", Access::Open, Endpoint::Healthz),
    route(Verb::Get, "/", Access::Page, Endpoint::Webchat),
    route(Verb::Get, "/control", Access::Page, Endpoint::Control),
    route(Verb::Get, "/static/{file}", Access::Page, Endpoint::Static),
    route(
        Verb::Post,
        "/telegram/webhook",
        Access::Webhook,
        Endpoint::TelegramWebhook,
    ),
    route(Verb::Get, "/metrics", Access::Api, Endpoint::Metrics),
    route(Verb::Get, "/api/status", Access::Api, Endpoint::Status),
    route(
        Verb::Get,
        "/api/sessions",
        Access::Api,
        Endpoint::ListSessions,
    ),
    route(
        Verb::Get,
        "/api/sessions/{key}/transcript",
        Access::Api,
        Endpoint::Transcript,
    ),
    route(
        Verb::Post,
        "/api/sessions/{key}/messages",
        Access::Api,
        Endpoint::PostMessage,
    ),
    route(Verb::Get, "/api/runs/{id}", Access::Api, Endpoint::GetRun),
    route(
        Verb::Get,
        "/api/subagents",
        Access::Api,
        Endpoint::ListSubagents,
    ),
    route(
        Verb::Get,
        "/api/subagents/{id}",
        Access::Api,
        Endpoint::GetSubagent,
    ),
    route(
        Verb::Post,
        "/api/subagents/{id}/stop",
        Access::Api,
        Endpoint::StopSubagent,
    ),
    route(
        Verb::Post,
        "/api/sessions/{key}/subagents/stop",
        Access::Api,
        Endpoint::StopTree,
    ),
    route(Verb::Get, "/api/events", Access::Socket, Endpoint::Events),
    route(Verb::Get, "/ws", Access::Socket, Endpoint::Socket),
    route(Verb::Get, "/api/mcp", Access::Api, Endpoint::ListMcp),
    route(Verb::Get, "/api/cron", Access::Api, Endpoint::ListCron),
    route(Verb::Post, "/api/cron", Access::Api, Endpoint::AddCron),
    route(
        Verb::Post,
        "/api/cron/{id}/run",
        Access::Api,
        Endpoint::RunCron,
    ),
    route(
        Verb::Post,
        "/api/cron/{id}/remove",
        Access::Api,
        Endpoint::RemoveCron,
    ),
    route(
        Verb::Post,
        "/api/cron/{id}/enable",
        Access::Api,
        Endpoint::EnableCron,
    ),
    route(
        Verb::Post,
        "/api/cron/{id}/disable",
        Access::Api,
        Endpoint::DisableCron,
    ),
    route(
        Verb::Post,
        "/api/webchat/uploads",
        Access::Api,
        Endpoint::WebchatUpload,
    ),
    route(
        Verb::Get,
        "/api/webchat/files/{id}",
        Access::Api,
        Endpoint::WebchatFile,
    ),
];

impl Route {
    /// How long a request to this route may take (see `layers.rs`).
    pub fn deadline(&self) -> Deadline {
        match self.endpoint {
            Endpoint::PostMessage => Deadline::Wait,
            _ => Deadline::Request,
        }
    }

    /// The handler, bound to the route's verb.
    pub(super) fn handler(&self) -> MethodRouter<AppState> {
        match (self.verb, self.endpoint) {
            (Verb::Get, Endpoint::Healthz) => get(|| async { "ok" }),
            (Verb::Get, Endpoint::Webchat) => get(pages::webchat),
            (Verb::Get, Endpoint::Control) => get(pages::control),
            (Verb::Get, Endpoint::Static) => get(pages::static_file),
            (Verb::Get, Endpoint::Metrics) => get(metrics::metrics),
            (Verb::Get, Endpoint::Status) => get(status::status),
            (Verb::Get, Endpoint::ListSessions) => get(api::list_sessions),
            (Verb::Get, Endpoint::Transcript) => get(api::transcript),
            (Verb::Get, Endpoint::GetRun) => get(api::get_run),
            (Verb::Get, Endpoint::ListSubagents) => get(api::list_subagents),
            (Verb::Get, Endpoint::GetSubagent) => get(api::get_subagent),
            (Verb::Get, Endpoint::Socket) => get(ws::upgrade),
            (Verb::Get, Endpoint::Events) => get(events::upgrade),
            (Verb::Post, Endpoint::TelegramWebhook) => post(telegram::webhook),
            (Verb::Post, Endpoint::PostMessage) => post(api::post_message),
            (Verb::Post, Endpoint::StopSubagent) => post(api::stop_subagent),
            (Verb::Post, Endpoint::StopTree) => post(api::stop_tree),
            (Verb::Get, Endpoint::ListMcp) => get(mcp_cron::list_mcp),
            (Verb::Get, Endpoint::ListCron) => get(mcp_cron::list_cron),
            (Verb::Post, Endpoint::AddCron) => post(mcp_cron::add_cron),
            (Verb::Post, Endpoint::RunCron) => post(mcp_cron::run_cron),
            (Verb::Post, Endpoint::RemoveCron) => post(mcp_cron::remove_cron),
            (Verb::Post, Endpoint::EnableCron) => post(mcp_cron::enable_cron),
            (Verb::Post, Endpoint::DisableCron) => post(mcp_cron::disable_cron),
            (Verb::Post, Endpoint::WebchatUpload) => post(webchat_files::upload),
            (Verb::Get, Endpoint::WebchatFile) => get(webchat_files::download),
            // Unreachable with the table above (the tests build every route); a wrong
            // pairing answers 405 rather than panicking at start.
            _ => MethodRouter::new(),
        }
    }
}
