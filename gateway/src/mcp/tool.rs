//! One MCP server tool as a [`Tool`] of the gateway: offered as `mcp__<server>__<tool>`
//! with the server's JSON schema; a call forwards the arguments, waits at most the
//! server's `timeout`, and on `/stop` (the call's cancel token, or the run dropping the
//! call), or the timeout sends the server MCP's `notifications/cancelled` for it.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotification, CancelledNotificationParam,
    ClientNotification, ClientRequest, RequestId, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions};
use rmcp::RoleClient;
use serde_json::Value;
use tokio_util::task::TaskTracker;

use super::result::to_tool_result;
use crate::agent::provider::ToolSpec;
use crate::agent::tools::{Tool, ToolContext, ToolError};

/// Longest tool description kept from a server (they are sent with every model call).
const MAX_DESCRIPTION: usize = 2048;

pub struct McpTool {
    spec: ToolSpec,
    server: Arc<str>,
    /// The tool's own name, as the server knows it.
    tool: Arc<str>,
    peer: Peer<RoleClient>,
    timeout: Duration,
    /// The tool list this tool came from (see [`Tool::generation`]).
    generation: u64,
    /// Owner of the cancellations sent for calls dropped mid-way (the hub's tracker).
    tasks: TaskTracker,
}

/// How long a cancellation sent for a dropped call may take.
const CANCEL_SEND: Duration = Duration::from_secs(2);

/// The notification that tells a server to stop working on request `id`.
fn cancelled(id: RequestId, reason: &str) -> ClientNotification {
    ClientNotification::CancelledNotification(CancelledNotification {
        params: CancelledNotificationParam {
            request_id: id,
            reason: Some(reason.to_string()),
        },
        method: Default::default(),
        extensions: Default::default(),
    })
}

/// A request in flight: when the call is dropped before it ended (the run was stopped:
/// `/stop` drops the run's future), the server is told to cancel it, by a task of the
/// hub's tracker, bounded by [`CANCEL_SEND`].
struct InFlight<'a> {
    peer: &'a Peer<RoleClient>,
    tasks: &'a TaskTracker,
    id: Option<RequestId>,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            let peer = self.peer.clone();
            self.tasks.spawn(async move {
                let note = cancelled(id, "stopped");
                let _ = tokio::time::timeout(CANCEL_SEND, peer.send_notification(note)).await;
            });
        }
    }
}

impl McpTool {
    pub fn new(
        offered: String,
        server: Arc<str>,
        tool: &rmcp::model::Tool,
        peer: Peer<RoleClient>,
        timeout: Duration,
        generation: u64,
        tasks: TaskTracker,
    ) -> McpTool {
        let mut description = tool
            .description
            .as_deref()
            .or(tool.title.as_deref())
            .unwrap_or("")
            .to_string();
        if description.len() > MAX_DESCRIPTION {
            description.truncate(crate::text::floor_boundary(&description, MAX_DESCRIPTION));
            description.push('…');
        }
        let mut parameters = Value::Object((*tool.input_schema).clone());
        // Model APIs want an object schema; some servers leave the type out.
        if let Some(map) = parameters.as_object_mut() {
            map.entry("type").or_insert_with(|| "object".into());
        }
        McpTool {
            spec: ToolSpec {
                name: offered,
                description: format!("[MCP server {server}] {description}"),
                parameters,
            },
            server,
            tool: Arc::from(tool.name.as_ref()),
            peer,
            timeout,
            generation,
            tasks,
        }
    }

    /// Tell the server to stop working on request `id` (best effort: it may be gone).
    async fn cancel(&self, id: RequestId, reason: &str) {
        let _ = self.peer.send_notification(cancelled(id, reason)).await;
    }
}

#[async_trait]
impl Tool for McpTool {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    fn generation(&self) -> u64 {
        self.generation
    }

    async fn call(&self, ctx: &ToolContext<'_>, args: Value) -> Result<String, ToolError> {
        let server = &self.server;
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(CallToolRequestParams {
            meta: None,
            name: self.tool.to_string().into(),
            arguments: args.as_object().cloned(),
            task: None,
        }));
        let handle = self
            .peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .map_err(|e| {
                ToolError::Model(format!(
                    "the MCP server `{server}` is not connected ({e}); try again later"
                ))
            })?;
        let id = handle.id.clone();
        let mut in_flight = InFlight {
            peer: &self.peer,
            tasks: &self.tasks,
            id: Some(id.clone()),
        };
        let answer = tokio::select! {
            r = handle.rx => r,
            _ = tokio::time::sleep(self.timeout) => {
                in_flight.id = None;
                self.cancel(id, "timeout").await;
                return Err(ToolError::Model(format!(
                    "the MCP server `{server}` did not answer within {}",
                    humantime::format_duration(self.timeout)
                )));
            }
            _ = ctx.cancel.cancelled() => {
                in_flight.id = None;
                self.cancel(id, "stopped").await;
                return Err(ToolError::Model("stopped".into()));
            }
        };
        in_flight.id = None;
        match answer {
            Ok(Ok(ServerResult::CallToolResult(result))) => to_tool_result(&result),
            Ok(Ok(_)) => Err(ToolError::Model(format!(
                "the MCP server `{server}` sent an answer that is not a tool result"
            ))),
            Ok(Err(e)) => Err(ToolError::Model(format!(
                "the MCP server `{server}` refused the call: {e}"
            ))),
            Err(_) => Err(ToolError::Model(format!(
                "the MCP server `{server}` closed the connection during the call (it stopped, or its answer was malformed or over the size limit); it is being restarted"
            ))),
        }
    }
}
