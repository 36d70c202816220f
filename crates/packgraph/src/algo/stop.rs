//! Stopping a running kernel from another thread. The kernels look at a flag between
//! rounds (a BFS frontier, a delta-stepping bucket, a peeling wave, an iteration) and
//! between chunks of vertices in their long parallel passes, never per edge, and return
//! [`Error::Cancelled`] once it is set: one relaxed load of a shared line per check.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use crate::graph::VertexId;
use crate::{Error, Result};

/// A flag no one sets: what the entry points that cannot be stopped pass down.
pub(crate) static NEVER: AtomicBool = AtomicBool::new(false);

/// Whether `stop` is set.
#[inline]
pub(crate) fn stopped(stop: &AtomicBool) -> bool {
    stop.load(Ordering::Relaxed)
}

/// [`Error::Cancelled`] if `stop` is set.
///
/// # Errors
/// [`Error::Cancelled`] once another thread has set `stop`.
#[inline]
pub(crate) fn check(stop: &AtomicBool) -> Result<()> {
    match stopped(stop) {
        true => Err(Error::Cancelled),
        false => Ok(()),
    }
}

/// The vertices `0..n` in ranges of `block` (the last one shorter), as a parallel
/// iterator: a pass over the vertices that looks at its flag once per range.
pub(crate) fn blocks(
    n: usize,
    block: usize,
) -> impl IndexedParallelIterator<Item = Range<VertexId>> {
    (0..n.div_ceil(block))
        .into_par_iter()
        .map(move |b| (b * block) as VertexId..((b + 1) * block).min(n) as VertexId)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;
    use crate::algo::{Algorithm, AlgorithmKind};
    use crate::graph::{CsrGraph, GraphRead, WeightedGraphRead};

    /// A graph that counts neighbor scans and sets `stop` at scan `trip`.
    struct Tripwire<'s> {
        graph: CsrGraph,
        scans: AtomicUsize,
        trip: usize,
        stop: &'s AtomicBool,
    }

    impl Tripwire<'_> {
        fn scan(&self) {
            if self.scans.fetch_add(1, Ordering::Relaxed) + 1 == self.trip {
                self.stop.store(true, Ordering::Relaxed);
            }
        }
    }

    impl GraphRead for Tripwire<'_> {
        fn num_vertices(&self) -> usize {
            self.graph.num_vertices()
        }
        fn num_arcs(&self) -> usize {
            self.graph.num_arcs()
        }
        fn is_directed(&self) -> bool {
            self.graph.is_directed()
        }
        fn out_degree(&self, v: VertexId) -> usize {
            self.graph.out_degree(v)
        }
        fn in_degree(&self, v: VertexId) -> usize {
            self.graph.in_degree(v)
        }
        fn for_each_out_neighbor(&self, v: VertexId, f: impl FnMut(VertexId) -> bool) -> bool {
            self.scan();
            self.graph.for_each_out_neighbor(v, f)
        }
        fn for_each_in_neighbor(&self, v: VertexId, f: impl FnMut(VertexId) -> bool) -> bool {
            self.scan();
            self.graph.for_each_in_neighbor(v, f)
        }
    }

    impl WeightedGraphRead for Tripwire<'_> {
        fn for_each_out_edge(&self, v: VertexId, f: impl FnMut(VertexId, f64) -> bool) -> bool {
            self.scan();
            self.graph.for_each_out_edge(v, f)
        }
    }

    /// A path of `n` vertices: as many rounds as vertices for the searches.
    fn path(n: usize) -> CsrGraph {
        let edges: Vec<_> = (1..n as VertexId).map(|v| (v - 1, v)).collect();
        CsrGraph::from_edges(n, &edges, false)
    }

    /// Scans of a whole run, and of a run whose flag is set at scan `trip` (and its result).
    fn scans(algorithm: &Algorithm, n: usize, trip: usize) -> (usize, usize, Result<()>) {
        let run = |trip| {
            let stop = AtomicBool::new(false);
            let graph = Tripwire {
                graph: path(n),
                scans: AtomicUsize::new(0),
                trip,
                stop: &stop,
            };
            let result = algorithm.run_interruptible(&graph, &stop).map(|_| ());
            (graph.scans.into_inner(), result)
        };
        let (whole, finished) = run(usize::MAX);
        finished.expect("a run nobody stops finishes");
        let (stopped, result) = run(trip);
        (whole, stopped, result)
    }

    #[test]
    fn every_algorithm_stops_soon_after_the_flag_is_set() {
        let n = 20_000;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        for kind in AlgorithmKind::ALL {
            let mut algorithm = Algorithm::new(kind);
            algorithm.hops = u32::MAX;
            let (whole, stopped, result) = pool.install(|| scans(&algorithm, n, n / 10));
            assert!(
                matches!(result, Err(Error::Cancelled)),
                "{kind}: {result:?}"
            );
            // Past the trip, the round under way (an iteration for PageRank and CDLP) and a
            // block per thread go on, no more.
            assert!(
                stopped < whole / 2,
                "{kind}: {stopped} scans when stopped, {whole} for a whole run"
            );
        }
    }

    #[test]
    fn a_flag_set_before_the_start_stops_every_algorithm_at_once() {
        let graph = path(100);
        let stop = AtomicBool::new(true);
        for kind in AlgorithmKind::ALL {
            let result = Algorithm::new(kind).run_interruptible(&graph, &stop);
            assert!(matches!(result, Err(Error::Cancelled)), "{kind}");
        }
        let stop = AtomicBool::new(false);
        for kind in AlgorithmKind::ALL {
            Algorithm::new(kind)
                .run_interruptible(&graph, &stop)
                .unwrap();
        }
    }
}
