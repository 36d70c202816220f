//! The routes and their handlers. Work that can take long (taking a snapshot, which may
//! build the version's index; algorithms; checkpoints) runs on tokio's blocking threads,
//! algorithms inside the query pool, never on the threads that serve connections. Update
//! bodies go to the writer's queue ([`Writer`]), which applies and acknowledges them on
//! threads of its own.
//!
//! A query runs with a stop flag: past the time limit the handler sets it and answers 504;
//! when the client goes away, hyper drops the handler's future, whose guard sets it. The
//! algorithm then ends at its next check ([`Algorithm::run_any_interruptible`]) and gives
//! its place among the concurrent queries back.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::Router;
use http_body_util::LengthLimitError;
use packgraph::io::updates::parse_id;
use serde_json::json;
use tokio::sync::Semaphore;

use crate::answer;
use crate::backend::{version_of, Backend};
use crate::error::{json_body, json_text, ApiError};
use crate::metrics::{Gauges, Metrics};
use crate::query;
use crate::updates;
use crate::writer::Writer;
use crate::ServeConfig;

/// What every handler shares.
pub(crate) struct App {
    pub(crate) backend: Arc<Backend>,
    pub(crate) config: ServeConfig,
    pub(crate) metrics: Arc<Metrics>,
    /// One permit per query allowed to run at once.
    queries: Arc<Semaphore>,
    /// Applies update bodies and acknowledges them once durable.
    writer: Writer,
}

impl App {
    /// # Errors
    /// If the writer's threads cannot be started.
    pub(crate) fn new(backend: Arc<Backend>, config: ServeConfig) -> std::io::Result<Self> {
        let queries = Arc::new(Semaphore::new(config.max_queries));
        let threads = config
            .pool
            .as_ref()
            .map_or_else(rayon::current_num_threads, |p| p.current_num_threads());
        let metrics = Arc::new(Metrics::default());
        let writer = Writer::start(
            Arc::clone(&backend),
            Arc::clone(&metrics),
            threads,
            config.max_batch_ops,
            config.write_nice,
        )?;
        Ok(Self {
            backend,
            config,
            metrics,
            queries,
            writer,
        })
    }

    /// Runs `job` on a blocking thread, inside the query pool.
    async fn blocking<T: Send + 'static>(
        self: &Arc<Self>,
        job: impl FnOnce(&Self) -> T + Send + 'static,
    ) -> Result<T, ApiError> {
        let app = Arc::clone(self);
        tokio::task::spawn_blocking(move || match &app.config.pool {
            Some(pool) => pool.install(|| job(&app)),
            None => job(&app),
        })
        .await
        .map_err(|e| ApiError::internal(format!("the request's worker failed: {e}")))
    }

    /// Runs `job` on a blocking thread outside any pool.
    async fn blocking_plain<T: Send + 'static>(
        self: &Arc<Self>,
        job: impl FnOnce(&Self) -> T + Send + 'static,
    ) -> Result<T, ApiError> {
        let app = Arc::clone(self);
        tokio::task::spawn_blocking(move || job(&app))
            .await
            .map_err(|e| ApiError::internal(format!("the request's worker failed: {e}")))
    }
}

type Answer = Result<Response, ApiError>;

/// The router with every route, the token check when a token is configured, and JSON
/// answers for unknown routes.
pub(crate) fn router(app: Arc<App>) -> Router {
    let routes = Router::new()
        .route("/health", get(health))
        .route("/graph", get(graph))
        .route("/updates", post(post_updates))
        .route("/vertices/{id}", get(vertex))
        .route("/run/{algorithm}", get(run))
        .route("/snapshots", post(pin))
        .route("/snapshots/{version}", delete(release))
        .route("/checkpoint", post(checkpoint))
        .route("/metrics", get(metrics))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed);
    // Without a token every request passes: no layer to run per request.
    let routes = match app.config.token {
        Some(_) => routes.layer(middleware::from_fn_with_state(Arc::clone(&app), authorize)),
        None => routes,
    };
    routes.with_state(app)
}

/// Compares two byte strings in time that depends on their lengths only.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

/// Refuses a request without the configured bearer token (401).
async fn authorize(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    if let Some(token) = &app.config.token {
        let given = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|value| value.as_bytes().strip_prefix(b"Bearer "));
        if !given.is_some_and(|given| constant_time_eq(given, token.as_bytes())) {
            let mut response = ApiError::new(
                StatusCode::UNAUTHORIZED,
                "missing or wrong token: send `Authorization: Bearer TOKEN`",
            )
            .into_response();
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            return response;
        }
    }
    next.run(request).await
}

async fn not_found(request: Request) -> ApiError {
    ApiError::not_found(format!("no route {}", request.uri().path()))
}

async fn method_not_allowed(request: Request) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        format!(
            "{} is not allowed on {}",
            request.method(),
            request.uri().path()
        ),
    )
}

async fn health(State(app): State<Arc<App>>) -> Answer {
    app.blocking_plain(|app| {
        let latest = app.backend.latest();
        json_body(&json!({
            "status": "ok",
            "version": version_of(&latest),
            "durable_seq": app.backend.durable_seq(),
        }))
    })
    .await
}

async fn graph(State(app): State<Arc<App>>) -> Answer {
    app.blocking_plain(|app| json_body(&query::graph_json(&app.backend.latest())))
        .await
}

/// The body, at most `max` bytes.
///
/// # Errors
/// 413 past `max`; 400 if the body cannot be read.
async fn read_body(
    body: Body,
    headers: &HeaderMap,
    max: usize,
) -> Result<axum::body::Bytes, ApiError> {
    let too_large = || {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the body is larger than {max} bytes: send smaller requests"),
        )
        .with("limit", max)
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|len| len > max as u64) {
        return Err(too_large());
    }
    axum::body::to_bytes(body, max).await.map_err(|e| {
        let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(&e);
        while let Some(c) = cause {
            if c.is::<LengthLimitError>() {
                return too_large();
            }
            cause = c.source();
        }
        ApiError::bad_request(format!("reading the body: {e}"))
    })
}

async fn post_updates(State(app): State<Arc<App>>, request: Request) -> Answer {
    let started = Instant::now();
    let metrics = &app.metrics;
    metrics.update_requests.fetch_add(1, Ordering::Relaxed);
    // The request's own headers, not a copy (as the `HeaderMap` extractor makes).
    let (parts, body) = request.into_parts();
    let result = apply_updates(&app, &parts.headers, body).await;
    if result.is_err() {
        metrics.updates_refused.fetch_add(1, Ordering::Relaxed);
    }
    metrics.ack_latency.observe(started.elapsed());
    result
}

async fn apply_updates(app: &Arc<App>, headers: &HeaderMap, body: Body) -> Answer {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    let kind = updates::body_kind(content_type)?;
    let bytes = read_body(body, headers, app.config.max_body_bytes).await?;
    let stopped = || ApiError::internal("the server's writer has stopped");
    let answer = app.writer.submit(kind, bytes).ok_or_else(stopped)?;
    let (mut outcome, durable) = answer.await.map_err(|_| stopped())?;
    if let Err(e) = durable {
        return Err(ApiError::internal(format!(
            "the batches were applied but the log could not be synced, so none is acknowledged: {e}"
        )));
    }
    let metrics = &app.metrics;
    metrics
        .batches_acked
        .fetch_add(outcome.acked.len() as u64, Ordering::Relaxed);
    metrics
        .edges_acked
        .fetch_add(outcome.ops, Ordering::Relaxed);
    match outcome.error.take() {
        Some(error) => Err(error.with("acked", outcome.acked_json())),
        None => Ok(json_text(outcome.acked_body())),
    }
}

/// The `?version=` of a vertex request.
fn vertex_version(params: &[(String, String)]) -> Result<Option<u64>, ApiError> {
    let mut version = None;
    for (name, value) in params {
        if name != "version" {
            return Err(ApiError::bad_request(format!(
                "unknown parameter `{name}`; valid: version"
            )));
        }
        let parsed = value.parse().map_err(|_| {
            ApiError::bad_request(format!("version={value}: must be a version number"))
        })?;
        version = Some(parsed);
    }
    Ok(version)
}

fn query_params(
    params: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Vec<(String, String)>, ApiError> {
    params
        .map(|Query(params)| params)
        .map_err(|e| ApiError::bad_request(format!("the query string: {e}")))
}

async fn vertex(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    params: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Answer {
    let version = vertex_version(&query_params(params)?)?;
    app.blocking_plain(move |app| {
        let graph = query::graph_at(&app.backend, version)?;
        let v = query::vertex(&graph, &parse_id(&id))?;
        Ok(json_body(&query::vertex_json(&graph, v)))
    })
    .await?
}

fn wants_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.contains("application/json"))
}

/// Sets a query's stop flag when dropped: when its handler's future is dropped before the
/// end (hyper drops it when the client goes away), the algorithm stops at its next check.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

async fn run(
    State(app): State<Arc<App>>,
    Path(name): Path<String>,
    params: Result<Query<Vec<(String, String)>>, QueryRejection>,
    headers: HeaderMap,
) -> Answer {
    let started = Instant::now();
    let kind = query::parse_algorithm(&name)?;
    let request = query::parse_run(kind, &query_params(params)?)?;
    // A version that is not pinned is answered before the query takes a place (off tokio's
    // threads: the check may take a snapshot of the latest version), so a client asking for
    // a released version hears 404 even while every place is taken.
    if let Some(version) = request.version {
        app.blocking_plain(move |app| query::graph_at(&app.backend, Some(version)).map(drop))
            .await??;
    }
    let Ok(permit) = Arc::clone(&app.queries).try_acquire_owned() else {
        app.metrics.queries_rejected.fetch_add(1, Ordering::Relaxed);
        let mut error = ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "{} queries are running, the most allowed at once: try again shortly",
                app.config.max_queries
            ),
        );
        error.retry_after = Some(1);
        return Err(error);
    };
    let json = wants_json(&headers);
    let stop = Arc::new(AtomicBool::new(false));
    let _cancel_on_drop = CancelOnDrop(Arc::clone(&stop));
    let flag = Arc::clone(&stop);
    // The snapshot (which may build its version's index), the algorithm and the formatting
    // run in the query pool; the permit is given back when the job ends, soon after `stop`.
    let job = app.blocking(move |app| {
        let _permit = permit;
        let graph = query::graph_at(&app.backend, request.version)?;
        let mut algorithm = request.algorithm;
        if let Some(source) = &request.source {
            algorithm.source = query::vertex(&graph, source)?;
        } else if kind.needs_source() && graph.num_vertices() == 0 {
            return Err(ApiError::not_found(
                "the graph has no vertices to start from",
            ));
        }
        let version = version_of(&graph);
        let output = match algorithm.run_any_interruptible(&graph, &flag) {
            Ok(output) => output,
            Err(packgraph::Error::Cancelled) => {
                app.metrics
                    .queries_cancelled
                    .fetch_add(1, Ordering::Relaxed);
                return Err(ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the query was cancelled",
                ));
            }
            Err(e) => return Err(ApiError::from_core(&e)),
        };
        let body = match json {
            true => answer::output_json(&output, graph.ids(), kind, version),
            false => answer::output_text(&output, graph.ids())?,
        };
        Ok((version, body))
    });
    let (version, body) = match tokio::time::timeout(app.config.query_timeout, job).await {
        Ok(result) => result??,
        Err(_) => {
            stop.store(true, Ordering::Relaxed);
            app.metrics
                .queries_timed_out
                .fetch_add(1, Ordering::Relaxed);
            return Err(ApiError::new(
                StatusCode::GATEWAY_TIMEOUT,
                format!(
                    "the query ran past the time limit of {:.3} s and was cancelled",
                    app.config.query_timeout.as_secs_f64()
                ),
            ));
        }
    };
    app.metrics.queries.add(kind);
    app.metrics.query_latency.observe(started.elapsed());
    let content_type = match json {
        true => "application/json",
        false => "text/plain; charset=utf-8",
    };
    Ok((
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(content_type)),
            (
                header::HeaderName::from_static("x-packgraph-version"),
                HeaderValue::from(version),
            ),
        ],
        body,
    )
        .into_response())
}

async fn pin(State(app): State<Arc<App>>) -> Answer {
    app.blocking_plain(|app| json_body(&json!({ "version": app.backend.pin() })))
        .await
}

async fn release(State(app): State<Arc<App>>, Path(version): Path<String>) -> Answer {
    let not_pinned = || ApiError::not_found(format!("version {version} is not pinned"));
    let number: u64 = version.parse().map_err(|_| not_pinned())?;
    match app.backend.release(number) {
        true => Ok(json_body(&json!({ "released": number }))),
        false => Err(not_pinned()),
    }
}

async fn checkpoint(State(app): State<Arc<App>>) -> Answer {
    let stats = app.blocking(|app| app.backend.checkpoint()).await?;
    match stats {
        None => Err(ApiError::new(
            StatusCode::CONFLICT,
            "this server holds no data directory (--demo): nothing to checkpoint",
        )),
        Some(Err(e)) => Err(ApiError::from_core(&e)),
        Some(Ok(stats)) => Ok(json_body(&json!({
            "seq": stats.seq,
            "delta": stats.delta,
            "bytes_written": stats.bytes_written,
            "bytes_reused": stats.bytes_reused,
        }))),
    }
}

async fn metrics(State(app): State<Arc<App>>) -> Answer {
    app.blocking_plain(|app| {
        let latest = app.backend.latest();
        let gauges = Gauges {
            version: version_of(&latest),
            durable_seq: app.backend.durable_seq(),
            pinned_versions: app.backend.pinned_versions(),
            vertices: latest.num_vertices(),
            edges: latest.num_edges(),
            graph_bytes: latest.size_in_bytes(),
            queries_running: app.config.max_queries - app.queries.available_permits(),
        };
        (
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
            )],
            app.metrics.render(&gauges),
        )
            .into_response()
    })
    .await
}

#[cfg(test)]
mod tests {
    use packgraph::graph::Graph;

    use super::*;
    use crate::client::Client;
    use crate::Server;

    /// With a token, every route and the fallback answer 401 without it; without one, the
    /// router has no check and answers alike.
    #[test]
    fn only_a_configured_token_is_checked() {
        for token in [Some("s3cret"), None] {
            let mut config = ServeConfig::new("127.0.0.1:0".parse().unwrap());
            config.token = token.map(str::to_owned);
            let backend = Arc::new(Backend::memory(Graph::new(false)));
            let server = Server::start(backend, config, 1).unwrap();
            let mut anonymous = Client::new(server.addr());
            let mut holder = Client::new(server.addr()).with_token("s3cret");
            let (refused, answered) = match token {
                Some(_) => (401, 200),
                None => (200, 200),
            };
            let post = |client: &mut Client| {
                client
                    .post("/updates", "text/plain", b"+ 1 2\n")
                    .unwrap()
                    .status
            };
            assert_eq!(post(&mut anonymous), refused);
            assert_eq!(post(&mut holder), answered);
            assert_eq!(anonymous.get("/health").unwrap().status, refused);
            let missing = anonymous.get("/nowhere").unwrap().status;
            assert_eq!(missing, if token.is_some() { 401 } else { 404 });
            let body = holder.post("/updates", "text/plain", b"+ 2 3\n").unwrap();
            assert_eq!(body.header("content-type"), Some("application/json"));
            let acked = &body.json().unwrap()["acked"];
            assert_eq!(acked.as_array().map(Vec::len), Some(1), "{}", body.text());
            server.stop().unwrap();
        }
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret2"));
        assert!(!constant_time_eq(b"", b"x"));
    }
}
