//! The test kit's MCP server as a program: MCP over stdio, or with `--http ADDR` over
//! streamable HTTP at `http://ADDR/mcp` (the line `listening on http://…/mcp` on stdout).

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    match (args.next().as_deref(), args.next()) {
        (Some("--http"), Some(addr)) => {
            let listener = tokio::net::TcpListener::bind(&addr).await?;
            println!("listening on http://{}/mcp", listener.local_addr()?);
            let cancel = tokio_util::sync::CancellationToken::new();
            switchboard_testkit::mcp_server::serve_http(listener, cancel).await
        }
        (None, _) => switchboard_testkit::mcp_server::serve_stdio().await,
        _ => anyhow::bail!("usage: mcp-test-server [--http ADDR]"),
    }
}
