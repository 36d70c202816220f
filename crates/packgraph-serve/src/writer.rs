//! The write path of `POST /updates`: two threads of their own, fed by a queue.
//!
//! * The **writer** takes every request waiting in its queue at once (a group), and applies
//!   their batches one after another in arrival order inside the write pool, each batch
//!   its own record, sequence number and version, as `ingest` applies them. It never waits
//!   for the disk: it hands each request's outcome to the acknowledger and goes on with the
//!   next group.
//! * The **acknowledger** takes every outcome waiting for it, waits once for the last of
//!   their records to be durable under the store's sync policy (under `group:MS`, one
//!   group sync covers them all), then answers each request.
//!
//! So the many single-edge requests that arrive during one sync interval cost one hop into
//! the write pool and one wait for durability between them, instead of a blocking thread,
//! a lock and a wait each. The write pool runs one group at a time and nothing else: a
//! rayon worker waiting in a `join` runs other jobs of its pool meanwhile, so a query or a
//! second batch in that pool could land inside a batch's critical section.

use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use axum::body::Bytes;
use packgraph::store::Seq;
use tokio::sync::oneshot;

use crate::backend::Backend;
use crate::metrics::Metrics;
use crate::updates::{self, BodyKind, Outcome};

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
    fn run(self, jobs: Receiver<Job>, pending: Sender<Pending>) {
        while let Ok(first) = jobs.recv() {
            let group: Vec<Job> = std::iter::once(first).chain(jobs.try_iter()).collect();
            self.metrics
                .write_groups
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let apply = || {
                for job in group {
                    let started = Instant::now();
                    let outcome = match job.kind {
                        BodyKind::Text => {
                            updates::apply_text(&self.backend, &job.body, self.max_batch_ops)
                        }
                        BodyKind::Json => {
                            updates::apply_json(&self.backend, &job.body, self.max_batch_ops)
                        }
                    };
                    self.metrics.update_apply.observe(started.elapsed());
                    let pending_job = Pending {
                        outcome,
                        reply: job.reply,
                    };
                    if let Err(mpsc::SendError(lost)) = pending.send(pending_job) {
                        // The acknowledger is gone only if it panicked: say so.
                        let _ = lost.reply.send((
                            lost.outcome,
                            Err("the server's acknowledger stopped".to_owned()),
                        ));
                    }
                }
            };
            match &self.pool {
                Some(pool) => pool.install(apply),
                None => apply(),
            }
        }
    }
}

/// Answers outcomes once their batches are durable, a group per wait.
fn acknowledge(backend: &Backend, metrics: &Metrics, pending: &Receiver<Pending>) {
    while let Ok(first) = pending.recv() {
        let group: Vec<Pending> = std::iter::once(first).chain(pending.try_iter()).collect();
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
        for p in group {
            // A request whose client went away has no one to answer.
            let _ = p.reply.send((p.outcome, durable.clone()));
        }
    }
}

impl Writer {
    /// Starts the two threads; batches run in a pool of `threads` threads of their own.
    pub(crate) fn start(
        backend: Arc<Backend>,
        metrics: Arc<Metrics>,
        threads: usize,
        max_batch_ops: usize,
    ) -> std::io::Result<Self> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("packgraph-write-{i}"))
            .build()
            .ok();
        let (jobs, job_queue) = mpsc::channel();
        let (pending, pending_queue) = mpsc::channel();
        let acknowledger = {
            let (backend, metrics) = (Arc::clone(&backend), Arc::clone(&metrics));
            std::thread::Builder::new()
                .name("packgraph-ack".into())
                .spawn(move || acknowledge(&backend, &metrics, &pending_queue))?
        };
        let applier = Applier {
            backend,
            metrics,
            pool,
            max_batch_ops,
        };
        let writer = std::thread::Builder::new()
            .name("packgraph-writer".into())
            .spawn(move || applier.run(job_queue, pending))?;
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
