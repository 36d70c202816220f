//! [`SharedGraph`]'s publication, indexing and repacking, against fresh builds.

use super::*;
use crate::graph::{GraphRead, VertexId};

/// The version a reader would load without publishing (its number and whether its
/// index is built), `None` once the writer let it go.
fn published(shared: &SharedGraph) -> Option<(u64, bool)> {
    let latest = shared.latest.load_full()?;
    Some((latest.version, latest.index.get().is_some()))
}

/// Small commits wait for the next snapshot, which publishes and indexes them; a large
/// one is published at once, indexed, while a reader is about (here within the read
/// window). With none about, the writer lets the latest version go; the next reader
/// publishes and builds its version's index, the same a full build gives.
#[test]
fn small_commits_are_published_by_the_next_snapshot() {
    let n = 1 << 12;
    let edges: Vec<(VertexId, VertexId)> = (0..n).map(|v| (v, (v * 7 + 1) % n)).collect();
    let mut shared = SharedGraph::new(Graph::from_edges(n as usize, &edges, true).unwrap());
    assert_eq!(shared.read_window, READ_RECENTLY);
    assert_eq!(published(&shared), Some((1, false)));
    shared
        .commit(Update::new().insert_edges(&[(2, 4)]))
        .unwrap();
    assert_eq!(published(&shared), None, "no reader yet: let go");
    let snap = shared.snapshot();
    assert!(snap.has_edge(2, 4) && snap.version() == 2);
    assert_eq!(
        published(&shared),
        Some((2, true)),
        "published and indexed by the reader"
    );
    for i in 0..40 {
        shared
            .commit(Update::new().insert_edges(&[(i + 3, i + 5)]))
            .unwrap();
    }
    assert_eq!(published(&shared), Some((2, true)), "small: not published");
    let between = shared.snapshot();
    assert!(between.has_edge(3, 5) && between.has_edge(42, 44));
    assert_eq!(between.version(), 42);
    assert!(between.graph.index.get().is_some());
    between.check_invariants().unwrap();
    assert!(
        snap.has_edge(2, 4) && !snap.has_edge(3, 5),
        "the older one unchanged"
    );

    let many: Vec<(VertexId, VertexId)> = (0..n).map(|v| (v, (v * 13 + 3) % n)).collect();
    assert!(many.len() >= PUBLISH_EDGES);
    shared.commit(Update::new().insert_edges(&many)).unwrap();
    assert_eq!(
        published(&shared),
        Some((43, true)),
        "large, a reader about: indexed"
    );

    shared.read_window = Duration::ZERO;
    std::thread::sleep(Duration::from_millis(2));
    for i in 0..20 {
        shared
            .commit(Update::new().insert_edges(&[(i, 9)]))
            .unwrap();
    }
    assert_eq!(published(&shared), None, "no reader about: let go");
    let many: Vec<(VertexId, VertexId)> = (0..n).map(|v| (v, (v * 5 + 2) % n)).collect();
    shared.commit(Update::new().insert_edges(&many)).unwrap();
    assert_eq!(published(&shared), None, "large, no reader about");
    let snap = shared.snapshot();
    assert!(snap.graph.index.get().is_some() && snap.has_edge(19, 9));
    let fresh = snap.graph.version_copy();
    fresh.build_index();
    for v in [0, 3, 9, 100, n - 1] {
        assert_eq!(snap.out_neighbors(v), fresh.out_neighbors(v));
        assert_eq!(snap.out_degree(v), fresh.out_degree(v));
    }
}

/// A repack publishes the same edges in the new layout, indexed, while a reader is
/// about, and makes it the base later indexes derive from; snapshots taken before keep
/// their layout and answers, and commits go on from the new one.
#[test]
fn a_repack_publishes_the_same_edges_packed_anew() {
    let n = 1 << 12;
    let edges: Vec<(VertexId, VertexId)> = (0..n).map(|v| (v, (v * 7 + 1) % n)).collect();
    let shared = SharedGraph::new(Graph::from_edges(n as usize, &edges, false).unwrap());
    let first = shared.snapshot();
    let more: Vec<(VertexId, VertexId)> = (0..n).map(|v| (v, (v * 13 + 3) % n)).collect();
    shared.commit(Update::new().insert_edges(&more)).unwrap();
    let roomy = shared.snapshot();
    shared.repack(Packing::Compact);
    assert_eq!(published(&shared), Some((roomy.version(), true)));
    let packed = shared.snapshot();
    packed.check_invariants().unwrap();
    assert!(packed.graph.memory().slack < roomy.graph.memory().slack);
    let base = shared.indexed.load_full().expect("an indexed base");
    assert!(
        Arc::ptr_eq(&base, &packed.graph),
        "the repacked version is the base"
    );
    for v in (0..n).step_by(97).chain([n - 1]) {
        assert_eq!(
            packed.out_neighbors(v),
            roomy.out_neighbors(v),
            "vertex {v}"
        );
    }
    assert_eq!(packed.num_arcs(), roomy.num_arcs());
    shared
        .commit(Update::new().insert_edges(&[(5, 900)]))
        .unwrap();
    let next = shared.snapshot();
    next.check_invariants().unwrap();
    assert!(next.has_edge(5, 900) && next.has_edge(900, 5));
    assert!(!packed.has_edge(5, 900) && !first.has_edge(0, 3));
    assert!(first.has_edge(0, 1) && roomy.has_edge(0, 3));
}

/// With no reader about, the first commit copies the page it changes (the published
/// version shares it) and lets that version go; later commits write in place. A
/// reader that comes sees every commit, and the writer copies again while its
/// snapshot lives.
#[test]
fn without_a_reader_the_writer_writes_in_place() {
    let n = 1 << 12;
    let edges: Vec<(VertexId, VertexId)> = (0..n).map(|v| (v, (v * 7 + 1) % n)).collect();
    let shared = SharedGraph::new(Graph::from_edges(n as usize, &edges, false).unwrap());
    let one = |i: VertexId| Update::from_edges(vec![(i * 37 % n, (i * 101 + 5) % n)]);
    shared.commit(&one(0)).unwrap();
    let first = shared.version_stats().copied;
    assert!(
        first > 0,
        "the first commit copies what the published version shares"
    );
    for i in 1..500 {
        shared.commit(&one(i)).unwrap();
    }
    assert_eq!(published(&shared), None);
    assert_eq!(shared.version_stats().copied, first, "in place");
    let snap = shared.snapshot();
    assert_eq!(snap.version(), 501);
    assert!((0..500).all(|i| {
        let (u, v) = one(i).inserts[0];
        snap.has_edge(u, v)
    }));
    snap.check_invariants().unwrap();
    shared.commit(&one(500)).unwrap();
    assert!(
        shared.version_stats().copied > first,
        "a held snapshot shares the pages"
    );
    let (u, v) = one(500).inserts[0];
    assert!(!snap.has_edge(u, v) && shared.snapshot().has_edge(u, v));
    drop(snap);

    // Let go again; a caller's code under the writer's lock still finds a version.
    let mut shared = shared;
    shared.read_window = Duration::ZERO;
    std::thread::sleep(Duration::from_millis(2));
    shared.commit(&one(501)).unwrap();
    assert_eq!(published(&shared), None);
    shared
        .commit_with(|_| {
            let inside = shared.snapshot();
            assert_eq!(inside.version(), 503);
            Ok(one(502))
        })
        .unwrap();
    assert_eq!(shared.snapshot().version(), 504);
}

/// Readers that come and go while one-edge commits stream in: the writer lets the
/// version go whenever none was about for its read window (here in every other run of
/// commits, while the readers hold off) and publishes again for the next, and every
/// snapshot holds exactly the commits of its version, in any thread.
#[test]
fn readers_that_come_and_go_see_exactly_their_version() {
    let n: VertexId = 48;
    let (commits, run) = (3000, 100);
    let edge = |i: VertexId| (i * 7 % n, (i * 7 + 1 + i % (n - 1)) % n);
    let mut shared = SharedGraph::new(Graph::from_edges(n as usize, &[], false).unwrap());
    shared.read_window = Duration::from_micros(300);
    // The oracle: each vertex's neighbours after the first k commits.
    let mut prefix = vec![vec![std::collections::BTreeSet::new(); n as usize]];
    for i in 0..commits {
        let mut next = prefix.last().unwrap().clone();
        let (u, v) = edge(i);
        next[u as usize].insert(v);
        next[v as usize].insert(u);
        prefix.push(next);
    }
    let (done, quiet) = (AtomicBool::new(false), AtomicBool::new(false));
    std::thread::scope(|s| {
        for reader in 0..2u64 {
            let (shared, prefix, done, quiet) = (&shared, &prefix, &done, &quiet);
            s.spawn(move || {
                let mut pause = reader;
                while !done.load(Ordering::Acquire) {
                    pause = pause
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407)
                        >> 1;
                    std::thread::sleep(Duration::from_micros(pause % 400));
                    if quiet.load(Ordering::Acquire) {
                        continue;
                    }
                    let snap = shared.snapshot();
                    let k = snap.version() as usize - 1;
                    for v in 0..n {
                        let want: Vec<VertexId> = prefix[k][v as usize].iter().copied().collect();
                        assert_eq!(
                            snap.out_neighbors(v),
                            want,
                            "vertex {v} at version {}",
                            k + 1
                        );
                    }
                }
            });
        }
        let (mut let_go, mut kept) = (0, 0);
        for i in 0..commits {
            if i % run == 0 {
                let hold_off = (i / run) % 2 == 1;
                quiet.store(hold_off, Ordering::Release);
                match hold_off {
                    // Longer than the window, and than a snapshot already under way.
                    true => std::thread::sleep(Duration::from_millis(2)),
                    false => drop(shared.snapshot()),
                }
            }
            shared.commit(&Update::from_edges(vec![edge(i)])).unwrap();
            match published(&shared) {
                None => let_go += 1,
                Some(_) => kept += 1,
            }
        }
        done.store(true, Ordering::Release);
        assert!(
            let_go > 0 && kept > 0,
            "both ways: {let_go} let go, {kept} kept"
        );
    });
    let last = shared.snapshot();
    assert_eq!(last.version(), commits as u64 + 1);
    last.check_invariants().unwrap();
}

/// A log step runs before its update changes anything, with what the update will
/// leave: when it fails, the writer's graph is as the earlier commits (published or
/// not) left it, and the writer goes on from there.
#[test]
fn a_failed_log_step_changes_nothing() {
    let shared = SharedGraph::new(Graph::from_edges(8, &[(0, 1)], false).unwrap());
    for e in [(1, 2), (2, 3), (3, 4)] {
        shared.commit(Update::new().insert_edges(&[e])).unwrap();
    }
    shared
        .commit(Update::new().set_property("p", 2, 7i64.into()))
        .unwrap();
    let failed = shared.commit_logged(Update::new().insert_edges(&[(5, 6), (7, 9)]), |after| {
        assert_eq!((after.version, after.vertices), (6, 10));
        Err::<(), _>(crate::Error::invalid_reason("the log is full"))
    });
    assert!(failed.is_err());
    {
        let writer = shared.lock();
        assert_eq!(
            (writer.graph.version(), writer.graph.num_vertices()),
            (5, 8)
        );
        assert!(writer.graph.has_edge(3, 4) && !writer.graph.has_edge(5, 6));
        writer.graph.check_invariants().unwrap();
    }
    shared
        .commit(Update::new().insert_edges(&[(6, 7)]))
        .unwrap();
    let snap = shared.snapshot();
    assert_eq!((snap.version(), snap.num_edges()), (6, 5));
    assert!(snap.has_edge(2, 3) && snap.has_edge(6, 7) && !snap.has_edge(5, 6));
    assert!(snap.property("p", 2).is_some());
}

/// A snapshot taken while a write group runs, by the writer's own thread or another
/// one, waits for nothing when every earlier commit is published: it gets the latest
/// version, without the group's updates. One taken by another thread while earlier small
/// commits wait to be published waits for the group, then has all of them.
#[test]
fn snapshots_during_a_write_group() {
    let shared = Arc::new(SharedGraph::new(
        Graph::from_edges(8, &[(0, 1)], false).unwrap(),
    ));
    shared
        .commit(Update::new().insert_edges(&[(1, 2)]))
        .unwrap();
    assert!(shared.snapshot().has_edge(1, 2));
    let (_, version) = shared.commit_group(|group| {
        group.commit(Update::new().insert_edges(&[(2, 3)])).unwrap();
        let inside = shared.snapshot();
        let other = std::thread::scope(|s| s.spawn(|| shared.snapshot()).join().unwrap());
        for snap in [inside, other] {
            assert_eq!(snap.version(), 2);
            assert!(snap.has_edge(1, 2) && !snap.has_edge(2, 3));
        }
    });
    assert_eq!(version, 3);
    shared
        .commit(Update::new().insert_edges(&[(3, 4)]))
        .unwrap();
    let (other, version) = shared.commit_group(|group| {
        group.commit(Update::new().insert_edges(&[(4, 5)])).unwrap();
        let reader = Arc::clone(&shared);
        let other = std::thread::spawn(move || reader.snapshot());
        std::thread::sleep(Duration::from_millis(20));
        assert!(!other.is_finished(), "waits for the group");
        other
    });
    assert_eq!(version, 5);
    let other = other.join().unwrap();
    assert_eq!((other.version(), other.num_edges()), (5, 5));
}
