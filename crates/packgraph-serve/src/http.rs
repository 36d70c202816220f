//! The accept loop: HTTP/1.1 connections served by hyper with an idle timeout, and a
//! graceful shutdown that stops accepting, lets requests in flight finish (up to
//! [`ServeConfig::shutdown_timeout`]) and returns.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use crate::api::{router, App};
use crate::priority::{self, DEFAULT_WRITE_NICE};
use crate::{Backend, ServeConfig};

/// Serves `backend` on `listener` until `shutdown` completes, then stops accepting and
/// waits for the requests in flight (at most `config.shutdown_timeout`).
///
/// # Errors
/// If the writer's threads cannot be started. A failed accept (too many open files, a
/// connection reset before it was accepted) is retried after a short pause.
pub async fn serve(
    listener: TcpListener,
    backend: Arc<Backend>,
    config: ServeConfig,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    let idle_timeout = config.idle_timeout;
    let shutdown_timeout = config.shutdown_timeout;
    let app = Arc::new(App::new(backend, config)?);
    let router = router(app);
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        // The header timeout starts when the connection waits for a request, so it also
        // closes connections that sit idle between requests.
        let connection = http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(idle_timeout)
            .keep_alive(true)
            .serve_connection(
                TokioIo::new(stream),
                TowerToHyperService::new(router.clone()),
            );
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            let _ = connection.await;
        });
    }
    drop(listener);
    let _ = tokio::time::timeout(shutdown_timeout, graceful.shutdown()).await;
    Ok(())
}

/// The runtime that serves connections with `threads` threads: with one, a single-threaded
/// runtime driven by the thread that runs it (no work stealing, no wakeups between
/// workers), else a multi-threaded one. Long work runs on its blocking threads and in
/// the pools either way.
///
/// # Errors
/// If the runtime cannot be started.
pub fn runtime(threads: usize) -> io::Result<tokio::runtime::Runtime> {
    runtime_with_nice(threads, DEFAULT_WRITE_NICE)
}

/// [`runtime`] whose threads run `nice` lower than their creator, as the write path's do
/// (see [`ServeConfig::write_nice`]): they parse and answer every request, updates too,
/// while the algorithms run in the query pool. With one thread, it is the thread that
/// calls `block_on`, whose priority the caller keeps.
///
/// # Errors
/// If the runtime cannot be started.
pub fn runtime_with_nice(threads: usize, nice: i32) -> io::Result<tokio::runtime::Runtime> {
    let mut builder = match threads {
        0 | 1 => tokio::runtime::Builder::new_current_thread(),
        _ => {
            let mut builder = tokio::runtime::Builder::new_multi_thread();
            builder.worker_threads(threads);
            builder
        }
    };
    builder
        .on_thread_start(move || priority::lower_current_thread(nice))
        .enable_all()
        .build()
}

/// A server on threads of its own (a tokio runtime with `threads` threads, see
/// [`runtime`]), for tests, benchmarks and embedding; [`Server::stop`] shuts it down
/// gracefully.
#[derive(Debug)]
pub struct Server {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<io::Result<()>>>,
}

impl Server {
    /// Binds `config.listen` and serves `backend` there.
    ///
    /// # Errors
    /// A refused configuration ([`ServeConfig::check`]) as [`io::ErrorKind::InvalidInput`],
    /// or the error binding the address or starting the runtime.
    pub fn start(backend: Arc<Backend>, config: ServeConfig, threads: usize) -> io::Result<Self> {
        config
            .check()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
        let listener = std::net::TcpListener::bind(config.listen)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let nice = config.write_nice;
        let runtime = runtime_with_nice(threads, nice)?;
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            // With one runtime thread, this is the one serving connections.
            if threads <= 1 {
                priority::lower_current_thread(nice);
            }
            runtime.block_on(async move {
                let listener = TcpListener::from_std(listener)?;
                serve(listener, backend, config, async {
                    let _ = stopped.await;
                })
                .await
            })
        });
        Ok(Self {
            addr,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The address it listens on (the real port when the configuration said 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting, waits for the requests in flight and ends the server's threads.
    ///
    /// # Errors
    /// The server's error, if it failed.
    pub fn stop(mut self) -> io::Result<()> {
        self.shut_down()
    }

    fn shut_down(&mut self) -> io::Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(io::Error::other("the server thread panicked")),
            None => Ok(()),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.shut_down();
    }
}
