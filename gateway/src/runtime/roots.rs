//! The trust roots of the model providers' HTTPS client (`runtime::Http`): the Mozilla
//! roots compiled in (reqwest's webpki roots) plus the system's store — or, when set,
//! `SSL_CERT_FILE` / `SSL_CERT_DIR` instead of the system's store — so a private model
//! endpoint signed by an in-house CA works once its CA is installed on the host or named
//! by `SSL_CERT_FILE`. Read once per process, on the first provider request.

use std::sync::OnceLock;

/// The roots found beyond the compiled-in ones.
fn extra_roots() -> &'static [reqwest::Certificate] {
    static ROOTS: OnceLock<Vec<reqwest::Certificate>> = OnceLock::new();
    ROOTS.get_or_init(|| {
        let found = rustls_native_certs::load_native_certs();
        for e in &found.errors {
            tracing::warn!(error = %e, "cannot read a trust root (system store, SSL_CERT_FILE or SSL_CERT_DIR); skipped");
        }
        found
            .certs
            .iter()
            .filter_map(|der| match reqwest::Certificate::from_der(der.as_ref()) {
                Ok(cert) => Some(cert),
                Err(e) => {
                    tracing::warn!(error = %e, "a trust root is not a certificate; skipped");
                    None
                }
            })
            .collect()
    })
}

/// How long a connection to a provider is kept for the next request once idle. reqwest
/// keeps one 90 s by default; the daemon keeps it for the calls that follow each other
/// (a turn's tool rounds, sub-agents, a busy spell), as Node's `fetch` (4 s) and the
/// OpenAI Python client (5 s) do, and not for the next message a person types: the 54
/// connections of a 64-session load held ~4 MB once idle (docs/performance.md, "Memory
/// after use"), against a handshake per quiet spell. The pool looks for expired
/// connections every `MODEL_POOL_IDLE`, so one closes 3 to 6 s after its last use: before
/// the daemon gives a quiet spell's memory back (`memory::QUIET_TICKS`).
pub const MODEL_POOL_IDLE: std::time::Duration = std::time::Duration::from_secs(3);

/// The providers' client: reqwest's defaults but [`MODEL_POOL_IDLE`], and the extra roots.
pub fn client() -> reqwest::Client {
    let pooled = || reqwest::Client::builder().pool_idle_timeout(MODEL_POOL_IDLE);
    let builder = extra_roots()
        .iter()
        .fold(pooled(), |b, cert| b.add_root_certificate(cert.clone()));
    match builder.build() {
        Ok(client) => client,
        Err(e) => {
            tracing::error!(error = %e, "cannot build the HTTPS client with the system's trust roots; using the compiled-in roots only");
            pooled().build().unwrap_or_default()
        }
    }
}

/// A failed request with its causes (reqwest's own text stops at "error sending request"):
/// e.g. `…: invalid peer certificate: UnknownIssuer`, with a hint at the trust roots when a
/// certificate was refused.
pub fn describe(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    if text.contains("certificate") {
        text.push_str(
            " (the endpoint's certificate is not signed by a trusted CA: install its CA in the \
             system's store or name its PEM file in SSL_CERT_FILE)",
        );
    }
    text
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::time::{Duration, Instant};

    /// Catches: connections to the model kept idle for reqwest's 90 s (each holds its
    /// buffers): after one request, the client closes its idle connection on its own
    /// within two of its idle periods.
    #[tokio::test]
    async fn an_idle_connection_to_the_model_is_closed_by_the_client() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let server = std::thread::spawn(move || {
            let (mut tcp, _) = listener.accept().expect("accept");
            let mut buf = [0u8; 4096];
            let _ = tcp.read(&mut buf).expect("request");
            tcp.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                .expect("answer");
            let answered = Instant::now();
            tcp.set_read_timeout(Some(super::MODEL_POOL_IDLE * 4))
                .expect("timeout");
            // End of file once the client drops its idle connection; a timeout otherwise.
            let closed = matches!(tcp.read(&mut buf), Ok(0));
            (closed, answered.elapsed())
        });
        let client = super::client();
        let answer = client
            .get(format!("http://127.0.0.1:{port}/v1/models"))
            .send()
            .await
            .expect("sent");
        assert_eq!(answer.text().await.expect("body"), "ok");
        let (closed, after) = tokio::task::spawn_blocking(move || server.join().expect("server"))
            .await
            .expect("joined");
        assert!(closed, "still open after {after:?}");
        assert!(
            after >= super::MODEL_POOL_IDLE - Duration::from_millis(100),
            "{after:?}"
        );
    }

    /// Catches: a certificate failure reported without its cause or the way to fix it.
    #[tokio::test]
    async fn a_refused_certificate_is_described_with_its_cause() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        // A plain TCP server that closes at once: the TLS handshake fails.
        let server = std::thread::spawn(move || {
            let _ = listener.accept();
        });
        let e = super::client()
            .get(format!("https://127.0.0.1:{port}/"))
            .send()
            .await
            .expect_err("no TLS there");
        let text = super::describe(&e);
        assert!(text.starts_with("error sending request"), "{text}");
        assert!(text.matches(": ").count() >= 2, "no cause in {text}");
        let _ = server.join();
    }
}
