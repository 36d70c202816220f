//! `packgraph-serve`: one long-running process that holds a graph, takes updates over HTTP
//! and answers queries on consistent snapshots (`packgraph serve`).
//!
//! The server is a thin layer over the core: updates in the `ingest` line format or JSON
//! become batches through [`packgraph::io::updates`] and are committed with
//! [`Store::append_with`](packgraph::store::Store::append_with) (a directory) or
//! [`SharedGraph::commit_with`](packgraph::graph::SharedGraph::commit_with) (an in-memory
//! graph), one batch a version; queries run the algorithm registry
//! ([`packgraph::algo::Algorithm`]) on a snapshot, in the rayon pool the caller gives. The
//! core stays free of async: tokio and hyper live here only.
//!
//! * `backend.rs`: the graph the server holds ([`Backend`]): the write path, snapshots and
//!   pinned versions.
//! * `api.rs`: the routes and their handlers; `updates.rs`: request bodies as batches;
//!   `query.rs`: `/run` and `/vertices`; `answer.rs`: `/run`'s answer bodies;
//!   `error.rs`: every error as a JSON answer.
//! * `http.rs`: the accept loop (idle timeout, graceful shutdown) and [`Server`], a server
//!   on its own threads for tests and benchmarks.
//! * `writer.rs`: the write path, a writer thread that applies queued update bodies in
//!   groups and an acknowledger that answers them once a sync made them durable.
//! * `metrics.rs`: counters and histograms in the Prometheus text format.
//! * `priority.rs`: the write path's threads below the query pool's, when asked.
//! * `client.rs`: a small blocking HTTP/1.1 client for loopback tests and benchmarks, and
//!   a load generator keeping many connections posting from one thread.
//!
//! A query past its time limit, or whose client went away, is cancelled: its algorithm
//! stops at its next check and gives its place among the concurrent queries back.
//!
//! What it leaves out: TLS (put a proxy in front) and HTTP/2.

mod answer;
mod api;
mod backend;
pub mod client;
mod error;
mod http;
mod metrics;
mod priority;
mod query;
mod updates;
mod writer;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

pub use self::backend::Backend;
pub use self::http::{runtime, runtime_with_nice, serve, Server};
pub use self::priority::{lower_current_thread, lowered_store_options, DEFAULT_WRITE_NICE};

/// How the server listens and what it allows.
#[derive(Clone)]
pub struct ServeConfig {
    /// The address to listen on (port 0 picks a free port).
    pub listen: SocketAddr,
    /// The bearer token every request must carry; `None` requires none (loopback only,
    /// see [`ServeConfig::check`]).
    pub token: Option<String>,
    /// The largest request body taken, in bytes (larger: 413).
    pub max_body_bytes: usize,
    /// The most operations one batch of `POST /updates` may hold.
    pub max_batch_ops: usize,
    /// Queries (`/run`) running at once; one more is refused with 503 and `Retry-After`.
    pub max_queries: usize,
    /// How long a query may run before it is cancelled and answered 504.
    pub query_timeout: Duration,
    /// How long a connection may sit without sending a request before it is closed.
    pub idle_timeout: Duration,
    /// How long shutdown waits for requests in flight.
    pub shutdown_timeout: Duration,
    /// The threads algorithms and batches run on (`None`: rayon's global pool).
    pub pool: Option<Arc<rayon::ThreadPool>>,
    /// How much lower than the query pool's the priority of the write path's threads
    /// (writer, its pool, acknowledger) is, as a nice increment (0: the same); see
    /// [`DEFAULT_WRITE_NICE`]. The runtime's threads get theirs from [`runtime_with_nice`].
    pub write_nice: i32,
}

impl std::fmt::Debug for ServeConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The token is a secret: never printed.
        f.debug_struct("ServeConfig")
            .field("listen", &self.listen)
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("max_body_bytes", &self.max_body_bytes)
            .field("max_batch_ops", &self.max_batch_ops)
            .field("max_queries", &self.max_queries)
            .field("query_timeout", &self.query_timeout)
            .field("idle_timeout", &self.idle_timeout)
            .field("write_nice", &self.write_nice)
            .finish_non_exhaustive()
    }
}

impl ServeConfig {
    /// Defaults: 64 MiB bodies, batches of up to 1e6 operations, 4 queries at once, 60 s
    /// per query, 60 s idle connections, no token, the write path at
    /// [`DEFAULT_WRITE_NICE`] (the query pool's priority).
    pub fn new(listen: SocketAddr) -> Self {
        Self {
            listen,
            token: None,
            max_body_bytes: 64 << 20,
            max_batch_ops: packgraph::io::updates::DEFAULT_MAX_BATCH_OPS,
            max_queries: 4,
            query_timeout: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(60),
            shutdown_timeout: Duration::from_secs(30),
            pool: None,
            write_nice: DEFAULT_WRITE_NICE,
        }
    }

    /// Refuses a configuration that would expose the graph: listening on an address other
    /// than loopback needs a token.
    ///
    /// # Errors
    /// [`ConfigError`] saying what is missing or wrong.
    pub fn check(&self) -> Result<(), ConfigError> {
        match &self.token {
            None if !self.listen.ip().is_loopback() => Err(ConfigError::TokenRequired(self.listen)),
            Some(token) if token.is_empty() || token.chars().any(|c| c.is_whitespace()) => {
                Err(ConfigError::BadToken)
            }
            _ if self.max_queries == 0 => Err(ConfigError::NoQueries),
            _ => Ok(()),
        }
    }
}

/// A server configuration that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A non-loopback address without a token.
    #[error("listening on {0} (not loopback) needs a token: pass --token-file FILE")]
    TokenRequired(SocketAddr),
    /// An empty token, or one with whitespace.
    #[error("the token must be non-empty and hold no whitespace")]
    BadToken,
    /// `max_queries` 0.
    #[error("at least one query must be allowed at a time")]
    NoQueries,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_public_address_needs_a_token() {
        let mut config = ServeConfig::new("0.0.0.0:0".parse().unwrap());
        assert!(matches!(config.check(), Err(ConfigError::TokenRequired(_))));
        config.token = Some("secret".into());
        config.check().unwrap();
        config.token = Some(" ".into());
        assert!(matches!(config.check(), Err(ConfigError::BadToken)));
        let loopback = ServeConfig::new("[::1]:7700".parse().unwrap());
        loopback.check().unwrap();
        assert!(!format!("{config:?}").contains("secret"));
    }
}
