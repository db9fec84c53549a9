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

/// The providers' client: reqwest's defaults and the extra roots.
pub fn client() -> reqwest::Client {
    let builder = extra_roots()
        .iter()
        .fold(reqwest::Client::builder(), |b, cert| {
            b.add_root_certificate(cert.clone())
        });
    match builder.build() {
        Ok(client) => client,
        Err(e) => {
            tracing::error!(error = %e, "cannot build the HTTPS client with the system's trust roots; using the compiled-in roots only");
            reqwest::Client::new()
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
