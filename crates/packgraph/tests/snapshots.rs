//! Stress test of versions: one writer applies random batches (inserts and deletes, growing
//! and shrinking the graph) through a `SharedGraph` while reader threads take snapshots at
//! random times and check each against the exact oracle state of its version (and the
//! graph's invariants, the flat index the writer derived included); some snapshots are
//! held across many later versions and checked again, one reader holding dozens at once.
//! Batches of one edge come in bursts, each its own version.
//!
//! Runs for `PACKGRAPH_STRESS_SECS` seconds (default 3).

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use packgraph::algo;
use packgraph::graph::{CsrGraph, Graph, GraphRead, SharedGraph, Snapshot, Update, VertexId};

const VERTICES: u32 = 3_000;

type Arcs = BTreeSet<(VertexId, VertexId)>;

/// A small deterministic generator (splitmix64), one per thread.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn duration() -> Duration {
    let secs = std::env::var("PACKGRAPH_STRESS_SECS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(3.0);
    Duration::from_secs_f64(secs)
}

fn arcs_of(edges: &[(VertexId, VertexId)], directed: bool) -> Vec<(VertexId, VertexId)> {
    edges
        .iter()
        .filter(|(u, v)| u != v)
        .flat_map(|&(u, v)| {
            let back = (!directed).then_some((v, u));
            std::iter::once((u, v)).chain(back)
        })
        .collect()
}

/// Compares every observable of `snap` with `expected` (the arcs of its version).
fn check(snap: &Snapshot, expected: &Arcs, directed: bool) {
    assert_eq!(
        snap.num_arcs(),
        expected.len(),
        "version {}",
        snap.version()
    );
    let mut seen = Vec::with_capacity(expected.len());
    for v in 0..snap.num_vertices() as VertexId {
        let before = seen.len();
        snap.for_each_out_neighbor(v, |u| {
            seen.push((v, u));
            true
        });
        assert_eq!(seen.len() - before, snap.out_degree(v));
    }
    assert!(
        seen.iter().eq(expected.iter()),
        "version {} differs from its oracle",
        snap.version()
    );
    if directed {
        let mut incoming: Vec<(VertexId, VertexId)> = Vec::with_capacity(expected.len());
        for v in 0..snap.num_vertices() as VertexId {
            snap.for_each_in_neighbor(v, |u| {
                incoming.push((u, v));
                true
            });
        }
        incoming.sort_unstable();
        assert!(incoming.iter().eq(expected.iter()), "in-edges differ");
    }
}

/// BFS on the snapshot equals BFS on a CSR built from the oracle.
fn check_bfs(snap: &Snapshot, expected: &Arcs) {
    let arcs: Vec<(VertexId, VertexId)> = expected.iter().copied().collect();
    // Both directions are in `arcs` for an undirected graph; as directed arcs they give the
    // CSR the same adjacency.
    let csr = CsrGraph::from_edges(snap.num_vertices(), &arcs, true);
    assert_eq!(
        algo::bfs(snap, 0).unwrap().depths,
        algo::bfs_depths_serial(&csr, 0)
    );
}

/// Sets its flag when dropped: the writer holds one, so that its readers stop even if it
/// panics, and a failing writer fails the test instead of hanging it.
struct SetOnDrop<'a>(&'a AtomicBool);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

fn stress(directed: bool, seed: u64) {
    let shared = SharedGraph::new(Graph::new(directed));
    let history: Mutex<HashMap<u64, Arc<Arcs>>> = Mutex::new(HashMap::new());
    history.lock().unwrap().insert(0, Arc::new(Arcs::new()));
    let stop = AtomicBool::new(false);
    let checks = AtomicUsize::new(0);
    let deadline = Instant::now() + duration();
    std::thread::scope(|s| {
        for reader in 0..3u64 {
            let (shared, history, stop, checks) = (&shared, &history, &stop, &checks);
            s.spawn(move || {
                let mut rng = Rng(seed ^ ((reader + 1) * 7919));
                let mut held: Vec<(Snapshot, Arc<Arcs>)> = Vec::new();
                // The first reader holds many versions at once, the others a few.
                let most_held = if reader == 0 { 64 } else { 6 };
                while !stop.load(Ordering::Relaxed) {
                    let snap = shared.snapshot();
                    let expected = Arc::clone(&history.lock().unwrap()[&snap.version()]);
                    check(&snap, &expected, directed);
                    if rng.below(8) == 0 && snap.num_vertices() > 0 {
                        check_bfs(&snap, &expected);
                    }
                    if rng.below(16) == 0 {
                        snap.check_invariants().unwrap();
                    }
                    if rng.below(4) == 0 || (reader == 0 && rng.below(2) == 0) {
                        held.push((snap, expected));
                    }
                    if held.len() > most_held {
                        let (old, expected) = held.remove(rng.below(held.len() as u64) as usize);
                        check(&old, &expected, directed);
                    }
                    checks.fetch_add(1, Ordering::Relaxed);
                    std::thread::sleep(Duration::from_micros(rng.below(2_000)));
                }
                for (old, expected) in &held {
                    check(old, expected, directed);
                }
            });
        }
        let _stop_readers = SetOnDrop(&stop);
        let mut rng = Rng(seed);
        let mut oracle = Arcs::new();
        let mut version = 0u64;
        let mut growing = true;
        let mut batches = 0;
        while Instant::now() < deadline || batches < 20 {
            if oracle.len() > 60_000 {
                growing = false;
            } else if oracle.len() < 2_000 {
                growing = true;
            }
            let size = [1, 10, 300, 3_000][rng.below(4) as usize];
            // One-edge batches come in bursts of up to 100 versions.
            let burst = if size == 1 { 1 + rng.below(100) } else { 1 };
            for _ in 0..burst {
                let insert = if growing {
                    rng.below(4) != 0
                } else {
                    rng.below(4) == 0
                };
                let edges: Vec<(VertexId, VertexId)> = if insert {
                    (0..size)
                        .map(|_| {
                            let u = rng.below(u64::from(VERTICES)) as VertexId;
                            let v = rng.below(u64::from(VERTICES)) as VertexId;
                            (u, v)
                        })
                        .collect()
                } else {
                    // Mostly present edges, some absent ones.
                    let present: Vec<_> = oracle.iter().copied().collect();
                    (0..size)
                        .map(|i| {
                            if i % 5 == 4 || present.is_empty() {
                                (rng.below(100) as VertexId, rng.below(100) as VertexId)
                            } else {
                                present[rng.below(present.len() as u64) as usize]
                            }
                        })
                        .collect()
                };
                for arc in arcs_of(&edges, directed) {
                    if insert {
                        oracle.insert(arc);
                    } else {
                        oracle.remove(&arc);
                    }
                }
                version += 1;
                history
                    .lock()
                    .unwrap()
                    .insert(version, Arc::new(oracle.clone()));
                let mut update = Update::new();
                if insert {
                    update.insert_edges(&edges);
                } else {
                    update.delete_edges(&edges);
                }
                assert_eq!(shared.commit(&update).unwrap().version, version);
                batches += 1;
            }
        }
        stop.store(true, Ordering::Relaxed);
        let last = shared.snapshot();
        check(&last, &oracle, directed);
    });
    let checks = checks.load(Ordering::Relaxed);
    eprintln!("directed {directed}: {checks} snapshot checks");
    assert!(checks > 0, "no reader ran a check");
    // Every version dropped but the writer's and the published one: nothing else is held.
    let graph = shared.into_inner();
    assert_eq!(graph.version_stats().shared, 0);
}

#[test]
fn readers_see_exactly_their_version_undirected() {
    stress(false, 1);
}

#[test]
fn readers_see_exactly_their_version_directed() {
    stress(true, 2);
}

/// Readers of one fresh snapshot on a shared rayon pool all need its flat index at once;
/// building it inside a `OnceLock` initialiser once deadlocked here (a worker blocked in the
/// initialiser had stolen part of the other build). Fails instead of hanging.
#[test]
fn concurrent_first_reads_of_a_snapshot_do_not_deadlock() {
    let edges = packgraph::io::generate::erdos_renyi(20_000, 200_000, 5);
    let mut graph = Graph::from_edges(20_000, &edges, false).unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for round in 0..20u32 {
            graph.insert_edges(&[(round, round + 1)]).unwrap();
            let snap = graph.snapshot();
            std::thread::scope(|s| {
                for reader in 0..4 {
                    let (snap, pool) = (&snap, &pool);
                    s.spawn(move || pool.install(|| algo::bfs(snap, reader).unwrap()));
                }
            });
        }
        done.send(()).unwrap();
    });
    finished
        .recv_timeout(Duration::from_secs(120))
        .expect("readers deadlocked on the flat index");
}

/// Ids and properties are versioned with the edges: each write names one more vertex,
/// links it to the previous one and records its number as a property of vertex 0; a reader
/// must see the three agree in every snapshot.
#[test]
fn snapshots_resolve_ids_and_properties_of_their_own_version() {
    use packgraph::graph::{ExternalId, PropertyValue};

    let mut graph = Graph::new(true);
    graph.intern(&["v0".into()]).unwrap();
    graph
        .set_property("last", 0, PropertyValue::Int(0))
        .unwrap();
    let shared = SharedGraph::new(graph);
    let stop = AtomicBool::new(false);
    let checked = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    let snap = shared.snapshot();
                    let Some(&PropertyValue::Int(last)) = snap.property("last", 0) else {
                        panic!("vertex 0 lost its property");
                    };
                    let ids = snap.ids();
                    assert_eq!(ids.len() as i64, last + 1);
                    assert_eq!(snap.num_vertices() as i64, last + 1);
                    let v = ids
                        .internal_name(&format!("v{last}"))
                        .expect("the newest name");
                    assert_eq!(ids.internal_name(&format!("v{}", last + 1)), None);
                    assert_eq!(
                        ids.external_id(v),
                        Some(ExternalId::Name(format!("v{last}").into()))
                    );
                    if last > 0 {
                        let u = ids.internal_name(&format!("v{}", last - 1)).unwrap();
                        assert!(snap.has_edge(u, v));
                        assert_eq!(snap.property("n", v), Some(&PropertyValue::Int(last)));
                    }
                    checked.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        for i in 1..=2_000i64 {
            // External ids to internal ones and the batch, under one writer lock.
            shared
                .commit_with(|g| {
                    let ids: Vec<ExternalId> =
                        vec![format!("v{}", i - 1).into(), format!("v{i}").into()];
                    let v = g.plan_vertices(&ids);
                    let mut update = Update::new();
                    update
                        .add_vertices(ids)
                        .insert_edges(&[(v[0], v[1])])
                        .set_property("n", v[1], PropertyValue::Int(i))
                        .set_property("last", 0, PropertyValue::Int(i));
                    Ok(update)
                })
                .unwrap();
        }
        stop.store(true, Ordering::Relaxed);
    });
    assert!(checked.load(Ordering::Relaxed) > 0);
    let graph = shared.into_inner();
    assert_eq!(graph.properties().count("n"), 2_000);
    let values: Vec<i64> = graph
        .properties()
        .column("n")
        .unwrap()
        .map(|(_, value)| match value {
            PropertyValue::Int(x) => *x,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(values, (1..=2_000).collect::<Vec<_>>());
}
