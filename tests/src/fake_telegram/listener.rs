//! A TCP listener whose connections a handler can cut, so `Failure::Drop` closes the
//! connection without any HTTP answer (axum alone always answers something).

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::connect_info::Connected;
use axum::serve::{IncomingStream, Listener};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// Pause after a failed `accept` (e.g. out of file descriptors) before trying again.
const ACCEPT_RETRY: Duration = Duration::from_millis(10);

/// Accepts TCP connections, each with a [`Conn`] handle that can cut it.
#[derive(Debug)]
pub(super) struct CuttableListener {
    inner: TcpListener,
}

impl CuttableListener {
    pub(super) fn new(inner: TcpListener) -> CuttableListener {
        CuttableListener { inner }
    }
}

/// Handed to handlers as `ConnectInfo<Conn>`: cutting it makes the connection fail its next
/// write and read, so hyper drops it without writing the response.
#[derive(Debug, Clone)]
pub(super) struct Conn {
    cut: CancellationToken,
}

impl Conn {
    pub(super) fn cut(&self) {
        self.cut.cancel();
    }
}

impl Listener for CuttableListener {
    type Io = CuttableStream;
    type Addr = Conn;

    async fn accept(&mut self) -> (CuttableStream, Conn) {
        loop {
            match self.inner.accept().await {
                Ok((stream, _)) => {
                    if let Err(error) = stream.set_nodelay(true) {
                        tracing::debug!(%error, "fake Telegram could not set TCP_NODELAY");
                    }
                    let cut = CancellationToken::new();
                    let conn = Conn { cut: cut.clone() };
                    return (CuttableStream { inner: stream, cut }, conn);
                }
                Err(error) => {
                    tracing::warn!(%error, "fake Telegram failed to accept a connection");
                    tokio::time::sleep(ACCEPT_RETRY).await;
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<Conn> {
        self.inner.local_addr().map(|_: SocketAddr| Conn {
            cut: CancellationToken::new(),
        })
    }
}

impl Connected<IncomingStream<'_, CuttableListener>> for Conn {
    fn connect_info(stream: IncomingStream<'_, CuttableListener>) -> Conn {
        stream.remote_addr().clone()
    }
}

/// A TCP stream that fails once its connection was cut.
#[derive(Debug)]
pub(super) struct CuttableStream {
    inner: TcpStream,
    cut: CancellationToken,
}

fn cut_error() -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionAborted,
        "connection cut by fake Telegram",
    )
}

impl AsyncRead for CuttableStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.cut.is_cancelled() {
            return Poll::Ready(Err(cut_error()));
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for CuttableStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.cut.is_cancelled() {
            return Poll::Ready(Err(cut_error()));
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if self.cut.is_cancelled() {
            return Poll::Ready(Err(cut_error()));
        }
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.cut.is_cancelled() {
            return Poll::Ready(Err(cut_error()));
        }
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
