//! The accept loop for the internet-facing listener, in place of `axum::serve` (which sets no
//! hyper timer, so no header timeout, and accepts without bound — axum-0.8.9
//! crates/serve/src/serve/mod.rs:391 builds `Builder::new(TokioExecutor::new())` with neither). Here every
//! connection holds a permit of a fixed pool (`max_connections`; the next `accept` waits for a
//! free one, so descriptors never run out), HTTP/1 headers must arrive within
//! `header_timeout` (hyper's `header_read_timeout`, hyper-1.12.0
//! src/server/conn/http1.rs:370, armed by a `TokioTimer`), and a connection lives at most
//! `max_connection_seconds` (an idle keep-alive cannot hold its permit for ever). Body size and
//! body time are the handlers' (`server::read_body`). Shutdown: stop accepting, ask every
//! connection to finish its request, and wait at most `grace` for them.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::sync::{Semaphore, watch};

/// Limits of one listener.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub header_timeout: Duration,
    pub max_connections: usize,
    pub max_connection: Duration,
    /// How long shutdown waits for open connections to finish their request.
    pub grace: Duration,
}

/// Serves `app` on `listener` until `shutdown` resolves.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let (close_tx, close_rx) = watch::channel(false);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            p = permits.clone().acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
            _ = &mut shutdown => break,
        };
        let stream = tokio::select! {
            r = listener.accept() => match r {
                Ok((s, _)) => s,
                // EMFILE and friends: back off instead of spinning; the permit goes back.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let mut close = close_rx.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let mut b = hyper::server::conn::http1::Builder::new();
            b.timer(TokioTimer::new())
                .header_read_timeout(limits.header_timeout);
            let conn = b.serve_connection(TokioIo::new(stream), TowerToHyperService::new(app));
            let mut conn = std::pin::pin!(conn);
            let age = tokio::time::sleep(limits.max_connection);
            let mut age = std::pin::pin!(age);
            let mut asked = false;
            loop {
                tokio::select! {
                    _ = conn.as_mut() => break,
                    _ = age.as_mut() => {
                        if asked {
                            break;
                        }
                        asked = true;
                        conn.as_mut().graceful_shutdown();
                        // A request still dribbling in gets the header timeout more, then goes.
                        age.as_mut().reset(tokio::time::Instant::now() + limits.header_timeout);
                    }
                    r = close.changed(), if !asked => {
                        let _ = r;
                        asked = true;
                        conn.as_mut().graceful_shutdown();
                        age.as_mut().reset(tokio::time::Instant::now() + limits.grace);
                    }
                }
            }
        });
    }
    drop(listener);
    let _ = close_tx.send(true);
    // Every permit back: every connection has ended (or the grace is over).
    let all = u32::try_from(limits.max_connections.max(1)).unwrap_or(u32::MAX);
    let _ = tokio::time::timeout(limits.grace, permits.acquire_many(all)).await;
    Ok(())
}
