//! HTTPS in front of a plain-HTTP fake (the model's, say): a CA and a server certificate for
//! 127.0.0.1 made per proxy (rcgen), TLS ended with rustls, each connection's bytes copied to
//! the fake and back. The CA's PEM is what a test hands the daemon as `SSL_CERT_FILE`; a
//! client that does not trust it fails its handshake, which the proxy counts.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use anyhow::Context as _;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, KeyUsagePurpose, SanType};
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;

/// The proxy; dropping it stops it and every connection through it.
pub struct TlsProxy {
    addr: SocketAddr,
    ca_pem: String,
    refused: Arc<AtomicUsize>,
    _tasks: JoinSet<()>,
}

impl TlsProxy {
    /// HTTPS on a free port of 127.0.0.1, forwarding to `upstream` in plain HTTP.
    pub async fn start(upstream: SocketAddr) -> anyhow::Result<TlsProxy> {
        let ca_key = KeyPair::generate().context("CA key")?;
        let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "Switchboard test CA");
        ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let ca = ca_params.self_signed(&ca_key).context("CA certificate")?;

        let key = KeyPair::generate().context("server key")?;
        let mut params = CertificateParams::new(vec!["localhost".to_string()])?;
        params
            .subject_alt_names
            .push(SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)));
        let cert = params
            .signed_by(&key, &ca, &ca_key)
            .context("server certificate")?;

        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(
                vec![cert.der().clone()],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
            )?;
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let refused = Arc::new(AtomicUsize::new(0));
        let mut tasks = JoinSet::new();
        let counter = refused.clone();
        tasks.spawn(async move {
            // The connections belong to the accept loop: they end with it.
            let mut conns = JoinSet::new();
            while let Ok((tcp, _)) = listener.accept().await {
                let (acceptor, counter) = (acceptor.clone(), counter.clone());
                conns.spawn(async move {
                    let Ok(mut tls) = acceptor.accept(tcp).await else {
                        counter.fetch_add(1, Ordering::SeqCst);
                        return;
                    };
                    if let Ok(mut up) = TcpStream::connect(upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut tls, &mut up).await;
                    }
                });
                while conns.try_join_next().is_some() {}
            }
        });
        Ok(TlsProxy {
            addr,
            ca_pem: ca.pem(),
            refused,
            _tasks: tasks,
        })
    }

    /// `https://127.0.0.1:PORT`.
    pub fn origin(&self) -> String {
        format!("https://{}", self.addr)
    }

    /// The CA that signed the proxy's certificate, in PEM.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// Handshakes that failed (a client that does not trust the CA).
    pub fn refused(&self) -> usize {
        self.refused.load(Ordering::SeqCst)
    }
}
