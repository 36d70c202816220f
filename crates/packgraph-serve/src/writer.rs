//! The write path of `POST /updates`: two threads of their own, fed by a queue.
//!
//! * The **writer** takes the requests waiting in its queue as a group (as many as arrive
//!   while it applies them, for up to [`GROUP_TIME`], or up to [`GROUP_EDGES`] edges of
//!   large requests) and applies their batches one after
//!   another in arrival order inside the write pool ([`Backend::apply_group`]): each batch
//!   is its own log record with its own sequence number, as `ingest` applies them, and the
//!   whole group is published as one version, which every batch of the group is
//!   acknowledged with. A refused batch is not applied (nor the rest of its request); the
//!   group's other batches are. The group's log records go to the file in one write.
//!   The writer never waits for the disk: it hands each request's outcome to the
//!   acknowledger and goes on with the next group.
//! * The **acknowledger** takes every group of outcomes waiting for it, waits once for the
//!   last of their records to be durable under the store's sync policy (under `group:MS`,
//!   one group sync covers them all), then hands them all to a task on the server's
//!   runtime, which answers each request there.
//!
//! So the many single-edge requests that arrive during one sync interval cost one hop into
//! the write pool, one published version and one wait for durability between them,
//! instead of a blocking thread, a lock, a version and a wait each. The writer's loop runs
//! on a thread of a write pool of its own, which runs one group at a time and nothing
//! else: a rayon worker waiting in a `join` runs other jobs of its pool meanwhile, so a
//! query or a second batch in that pool could land inside a batch's critical section.

use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use packgraph::store::Seq;
use tokio::sync::oneshot;

use crate::backend::Backend;
use crate::metrics::Metrics;
use crate::priority;
use crate::updates::{self, BodyKind, Outcome};

/// How long the writer goes on taking queued requests into one group: the group's first
/// request waits for the others to be applied (and the readers for its version) at most
/// about this long.
const GROUP_TIME: Duration = Duration::from_millis(1);

/// The most requests in one group.
const GROUP_REQUESTS: usize = 4096;

/// A group of large requests (at least [`LARGE_REQUEST`] edges each on average) with
/// fewer edges than this goes on taking the requests already queued past [`GROUP_TIME`],
/// as `packgraph ingest` groups the batches at hand: the edges of batches between known
/// vertices are applied as one merged batch when the group ends, and a merged batch of
/// several 1e4-edge requests inserts each edge faster than one of a single request (which
/// alone takes longer than [`GROUP_TIME`] to parse). Groups of small requests keep to
/// [`GROUP_TIME`], which bounds the wait of their first.
const GROUP_EDGES: u64 = 1 << 16;

/// Edges per request, on average over a group, past which it is a group of large requests.
const LARGE_REQUEST: u64 = 1024;

/// What a request gets back: its outcome, and whether its acknowledged batches are durable
/// (the sync's error as text otherwise).
pub(crate) type Reply = (Outcome, Result<(), String>);

/// One request's body, waiting to be applied.
struct Job {
    kind: BodyKind,
    body: Bytes,
    reply: oneshot::Sender<Reply>,
}

/// An outcome waiting to be durable.
struct Pending {
    outcome: Outcome,
    reply: oneshot::Sender<Reply>,
}

/// The two threads and the queue in front of them.
pub(crate) struct Writer {
    jobs: Option<Sender<Job>>,
    threads: Vec<JoinHandle<()>>,
}

/// The writer's end of the write path.
struct Applier {
    backend: Arc<Backend>,
    metrics: Arc<Metrics>,
    pool: Option<rayon::ThreadPool>,
    max_batch_ops: usize,
}

impl Applier {
    /// Runs the writer's loop, inside the write pool when there is one: the loop's thread
    /// is then one of the pool's, so a group needs no hop into the pool and back.
    fn run(self, jobs: Receiver<Job>, pending: Sender<Vec<Pending>>) {
        match &self.pool {
            Some(pool) => pool.install(|| self.serve(jobs, &pending)),
            None => self.serve(jobs, &pending),
        }
    }

    fn serve(&self, jobs: Receiver<Job>, pending: &Sender<Vec<Pending>>) {
        while let Ok(first) = jobs.recv() {
            self.metrics.write_groups.fetch_add(1, Ordering::Relaxed);
            let group: Vec<Pending> = self
                .apply_group(first, &jobs)
                .into_iter()
                .map(|(job, outcome)| Pending {
                    outcome,
                    reply: job.reply,
                })
                .collect();
            if let Err(mpsc::SendError(lost)) = pending.send(group) {
                // The acknowledger is gone only if it panicked: say so.
                answer(lost, &Err("the server's acknowledger stopped".to_owned()));
            }
        }
    }

    /// Applies `first` and the requests queued behind it as one group, published as one
    /// version, taking requests while the group is younger than [`GROUP_TIME`] (or, for
    /// large requests, smaller than [`GROUP_EDGES`]) and has fewer than [`GROUP_REQUESTS`];
    /// returns each request with its outcome.
    fn apply_group(&self, first: Job, jobs: &Receiver<Job>) -> Vec<(Job, Outcome)> {
        let started = Instant::now();
        let (mut done, version) = self.backend.apply_group(|apply| {
            let mut done = Vec::new();
            let mut edges = 0;
            let mut next = Some(first);
            while let Some(job) = next {
                let request_started = Instant::now();
                let outcome = match job.kind {
                    BodyKind::Text => {
                        updates::apply_text(&self.backend, apply, &job.body, self.max_batch_ops)
                    }
                    BodyKind::Json => updates::apply_json(apply, &job.body, self.max_batch_ops),
                };
                self.metrics.update_apply.observe(request_started.elapsed());
                edges += outcome.ops;
                done.push((job, outcome));
                next = takes_more(done.len(), edges, started.elapsed())
                    .then(|| jobs.try_recv().ok())
                    .flatten();
            }
            done
        });
        self.metrics.write_group.observe(started.elapsed());
        for (_, outcome) in &mut done {
            outcome.published_as(version);
        }
        done
    }
}

/// Whether a group of `requests` requests and `edges` edges, `elapsed` old, takes the next
/// queued request.
fn takes_more(requests: usize, edges: u64, elapsed: Duration) -> bool {
    let large = edges >= LARGE_REQUEST * requests as u64 && edges < GROUP_EDGES;
    requests < GROUP_REQUESTS && (elapsed < GROUP_TIME || large)
}

/// Answers each request of `group` with its outcome and `durable`.
fn answer(group: Vec<Pending>, durable: &Result<(), String>) {
    for p in group {
        // A request whose client went away has no one to answer.
        let _ = p.reply.send((p.outcome, durable.clone()));
    }
}

/// Where the acknowledger hands the requests it may answer: a task on the runtime that
/// serves their connections, which answers them there (waking a request's task from a
/// thread of its runtime queues it locally, where a wake from another thread goes through
/// the runtime's shared queue and may wake a sleeping worker, once per request), or, with
/// no runtime about, the acknowledger's own thread.
type Answers = Option<tokio::sync::mpsc::UnboundedSender<(Vec<Pending>, Result<(), String>)>>;

/// Starts the task that answers the groups the acknowledger sends it, on the runtime the
/// caller runs on; `None` outside one.
fn start_answering() -> Answers {
    let runtime = tokio::runtime::Handle::try_current().ok()?;
    let (send, mut groups) =
        tokio::sync::mpsc::unbounded_channel::<(Vec<Pending>, Result<(), String>)>();
    runtime.spawn(async move {
        while let Some((group, durable)) = groups.recv().await {
            answer(group, &durable);
        }
    });
    Some(send)
}

/// Answers outcomes once their batches are durable, every group waiting per wait.
fn acknowledge(
    backend: &Backend,
    metrics: &Metrics,
    pending: &Receiver<Vec<Pending>>,
    answers: &Answers,
) {
    while let Ok(mut group) = pending.recv() {
        for more in pending.try_iter() {
            group.extend(more);
        }
        let last: Option<Seq> = group
            .iter()
            .filter_map(|p| p.outcome.acked.last().map(|a| a.seq))
            .max();
        let durable = match last {
            Some(seq) => {
                let started = Instant::now();
                let durable = backend.wait_durable(seq).map_err(|e| e.to_string());
                metrics.durable_wait.observe(started.elapsed());
                durable
            }
            None => Ok(()),
        };
        match answers {
            Some(answers) => {
                // The runtime is gone only once the server stopped: answer from here.
                if let Err(tokio::sync::mpsc::error::SendError((group, durable))) =
                    answers.send((group, durable))
                {
                    answer(group, &durable);
                }
            }
            None => answer(group, &durable),
        }
    }
}

impl Writer {
    /// Starts the two threads; batches run in a pool of `threads` threads of their own.
    /// Every thread of the write path runs `nice` lower than its creator
    /// ([`priority`]). Called on a tokio runtime, requests are answered by a task of it.
    pub(crate) fn start(
        backend: Arc<Backend>,
        metrics: Arc<Metrics>,
        threads: usize,
        max_batch_ops: usize,
        nice: i32,
    ) -> std::io::Result<Self> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("packgraph-write-{i}"))
            .start_handler(move |_| priority::lower_current_thread(nice))
            .build()
            .ok();
        let (jobs, job_queue) = mpsc::channel();
        let (pending, pending_queue) = mpsc::channel();
        let answers = start_answering();
        let acknowledger = {
            let (backend, metrics) = (Arc::clone(&backend), Arc::clone(&metrics));
            std::thread::Builder::new()
                .name("packgraph-ack".into())
                .spawn(move || {
                    priority::lower_current_thread(nice);
                    acknowledge(&backend, &metrics, &pending_queue, &answers);
                })?
        };
        let applier = Applier {
            backend,
            metrics,
            pool,
            max_batch_ops,
        };
        let writer = std::thread::Builder::new()
            .name("packgraph-writer".into())
            .spawn(move || {
                // Without a pool, the loop applies groups on this thread.
                priority::lower_current_thread(nice);
                applier.run(job_queue, pending);
            })?;
        Ok(Self {
            jobs: Some(jobs),
            threads: vec![writer, acknowledger],
        })
    }

    /// Queues a request's body; the answer comes on the returned channel once its batches
    /// are durable (or refused). `None` if the writer has stopped.
    pub(crate) fn submit(&self, kind: BodyKind, body: Bytes) -> Option<oneshot::Receiver<Reply>> {
        let (reply, answer) = oneshot::channel();
        self.jobs.as_ref()?.send(Job { kind, body, reply }).ok()?;
        Some(answer)
    }
}

impl Drop for Writer {
    /// Applies and acknowledges what is queued, then ends both threads.
    fn drop(&mut self) {
        drop(self.jobs.take());
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use packgraph::graph::{AnyGraph, Graph};
    use packgraph::store::{AnyStore, StoreOptions};

    use super::*;
    use crate::backend::version_of;

    /// Once the runtime that answers requests is gone (a server shutting down), the
    /// acknowledger answers them itself: no request is left without its answer.
    #[test]
    fn requests_are_answered_without_the_answering_task() {
        let backend = Backend::memory(Graph::new(false));
        let metrics = Metrics::default();
        let (send, groups) = tokio::sync::mpsc::unbounded_channel();
        drop(groups);
        let (pending, queue) = mpsc::channel();
        let mut answers = Vec::new();
        for _ in 0..2 {
            let (reply, answer) = oneshot::channel();
            let outcome = Outcome::default();
            pending.send(vec![Pending { outcome, reply }]).unwrap();
            answers.push(answer);
        }
        drop(pending);
        acknowledge(&backend, &metrics, &queue, &Some(send));
        for answer in answers {
            let (outcome, durable) = answer.blocking_recv().unwrap();
            assert!(outcome.acked.is_empty() && durable.is_ok());
        }
    }

    /// Requests queued together are applied as one group: every batch its own sequence
    /// number, all acknowledged with the one version published; a bad request keeps its
    /// earlier batch and loses its later ones, and the requests after it are applied.
    #[test]
    fn queued_requests_are_applied_as_one_group() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g");
        let options = StoreOptions::default();
        let store = AnyStore::create(
            &path,
            options.clone(),
            AnyGraph::Unweighted(Graph::new(false)),
        )
        .unwrap();
        let backend = Arc::new(Backend::durable(store));
        let applier = Applier {
            backend: Arc::clone(&backend),
            metrics: Arc::new(Metrics::default()),
            pool: None,
            max_batch_ops: 100,
        };
        let bodies: [(BodyKind, &str); 4] = [
            (BodyKind::Text, "+ 1 2\n"),
            // A vertex the first request created, then a bad line: its first batch stays.
            (BodyKind::Text, "+ 2 3\ncommit\n+ 3 4 x\ncommit\n+ 4 5\n"),
            (BodyKind::Json, r#"{"insert":[[5,6],[6,7]]}"#),
            (BodyKind::Text, "+ 7 8\n"),
        ];
        let (send, queue) = mpsc::channel();
        for (kind, body) in bodies {
            let (reply, _) = oneshot::channel();
            send.send(Job {
                kind,
                body: Bytes::from_static(body.as_bytes()),
                reply,
            })
            .unwrap();
        }
        let first = queue.recv().unwrap();
        let done = applier.apply_group(first, &queue);
        assert_eq!(done.len(), 4, "one group takes every queued request");
        let acked: Vec<(u64, u64)> = done
            .iter()
            .flat_map(|(_, outcome)| outcome.acked.iter().map(|a| (a.seq, a.version)))
            .collect();
        assert_eq!(acked, [(1, 4), (2, 4), (3, 4), (4, 4)]);
        let error = done[1].1.error.as_ref().unwrap();
        assert_eq!(error.fields["line"], 3);
        let latest = backend.latest();
        assert_eq!((latest.num_edges(), version_of(&latest)), (5, 4));
        backend.wait_durable(4).unwrap();
        drop((latest, applier, backend));
        let store = AnyStore::open(&path, options).unwrap();
        assert_eq!(store.graph().num_edges(), 5);
    }

    /// Queued requests of many edges each are applied as one group past [`GROUP_TIME`], up
    /// to [`GROUP_EDGES`] edges, so that their edges are inserted as one merged batch.
    #[test]
    fn queued_large_requests_are_merged_past_the_group_time() {
        let n = 300;
        let backend = Arc::new(Backend::memory(Graph::from_edges(n, &[], false).unwrap()));
        let applier = Applier {
            backend: Arc::clone(&backend),
            metrics: Arc::new(Metrics::default()),
            pool: None,
            max_batch_ops: 1 << 20,
        };
        let per_request = 2 * LARGE_REQUEST as usize;
        let requests = 5;
        let (send, queue) = mpsc::channel();
        for r in 0..requests {
            let body: String = (0..per_request)
                .map(|i| format!("+ {} {}\n", (r * per_request + i) % n, (i * 7 + r + 1) % n))
                .collect();
            let (reply, _) = oneshot::channel();
            let job = Job {
                kind: BodyKind::Text,
                body: Bytes::from(body),
                reply,
            };
            send.send(job).unwrap();
        }
        let started = Instant::now();
        let done = applier.apply_group(queue.recv().unwrap(), &queue);
        assert_eq!(done.len(), requests, "after {:?}", started.elapsed());
        assert!(done.iter().all(|(_, outcome)| outcome.error.is_none()));
        let edges: u64 = done.iter().map(|(_, outcome)| outcome.ops).sum();
        assert_eq!(edges, (requests * per_request) as u64);
        assert!(edges < GROUP_EDGES);
        assert!(version_of(&backend.latest()) > 1);
    }

    /// Small requests are grouped for [`GROUP_TIME`]; large ones past it, up to
    /// [`GROUP_EDGES`]; never more than [`GROUP_REQUESTS`].
    #[test]
    fn groups_of_large_requests_outlast_the_group_time() {
        let late = GROUP_TIME * 20;
        assert!(takes_more(30, 30, Duration::ZERO));
        assert!(!takes_more(30, 30, late), "small requests: time is up");
        assert!(takes_more(1, 10_000, late), "large requests go on");
        assert!(takes_more(6, 60_000, late));
        assert!(
            !takes_more(7, 70_000, late),
            "enough edges for one merged batch"
        );
        assert!(
            !takes_more(3, 3 * LARGE_REQUEST - 1, late),
            "smaller on average"
        );
        assert!(!takes_more(GROUP_REQUESTS, 1 << 30, Duration::ZERO));
    }
}
