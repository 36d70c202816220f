//! The store against an in-memory oracle, by the job of the file under test: crashes at
//! every operation of the write path (kill and power cut) and each `fsync` removed in turn
//! (`crash.rs`), damaged files (`damage.rs`), the write path (`commit.rs`), group appends
//! (`group.rs`), checkpoints (`checkpoint.rs`), the high-water mark (`mark.rs`), random
//! scripts of writers, crashes and readers (`scripts.rs`), ids and properties as subtree
//! units (`subtrees.rs`), and creating and opening
//! (here). This file holds the helpers they share.

mod checkpoint;
mod commit;
mod crafted;
mod crash;
mod damage;
mod group;
mod mark;
mod replay;
mod scripts;
mod sharing;
mod subtrees;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use proptest::prelude::*;

use super::*;
use crate::graph::{ExternalId, Graph, GraphRead, PropertyValue, Update, VertexId, WeightedGraph};
use crate::pma::GroupMapLeaf;

/// Everything a user can observe of a graph.
#[derive(Debug, Clone, PartialEq)]
struct Fingerprint {
    version: u64,
    directed: bool,
    num_vertices: usize,
    arcs: Vec<(u64, u64)>,
    ids: Vec<ExternalId>,
    properties: Vec<(String, VertexId, String)>,
}

fn fingerprint<C: StoreLeaf>(g: &Graph<C>) -> Fingerprint
where
    C::Item: Into<Item2>,
{
    let mut properties = Vec::new();
    for name in g.properties().names() {
        for (v, value) in g.properties().column(name).into_iter().flatten() {
            properties.push((name.to_owned(), v, format!("{value:?}")));
        }
    }
    Fingerprint {
        version: g.version(),
        directed: g.is_directed(),
        num_vertices: g.num_vertices(),
        arcs: g.out_array().iter().map(|i| i.into().0).collect(),
        ids: g.ids().iter().collect(),
        properties,
    }
}

/// A stored item as (key, weight bits or 0).
struct Item2((u64, u64));

impl From<u64> for Item2 {
    fn from(key: u64) -> Self {
        Item2((key, 0))
    }
}

impl From<(u64, u64)> for Item2 {
    fn from(item: (u64, u64)) -> Self {
        Item2(item)
    }
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// A random batch for a graph of `n` vertices: inserts, deletes of present edges, a
/// vertex or two (sometimes by an id far outside the dense range: integers, as vertices
/// created by edges get, since a directory holds one kind of id), a property.
fn random_batch<C: StoreLeaf>(rng: &mut Rng, g: &Graph<C>, weighted: bool, step: usize) -> Update {
    let mut update = Update::new();
    let n = g.num_vertices().max(2) as u64;
    if rng.below(4) == 0 {
        update.add_vertices([ExternalId::Int(1 << 40 | step as u64)]);
    }
    if rng.below(5) == 0 {
        update.min_vertices(n as usize + 3);
    }
    let present: Vec<u64> = g.out_array().iter().map(|i| C::key(i)).collect();
    let deletes: Vec<(VertexId, VertexId)> = (0..rng.below(4))
        .filter_map(|_| {
            let key = *present.get(rng.below(present.len() as u64) as usize)?;
            Some(((key >> 32) as VertexId, key as VertexId))
        })
        .collect();
    update.delete_edges(&deletes);
    let count = 1 + rng.below(12);
    let edges: Vec<(VertexId, VertexId)> = (0..count)
        .map(|_| (rng.below(n) as VertexId, rng.below(n) as VertexId))
        .collect();
    if weighted {
        let edges: Vec<(VertexId, VertexId, f64)> = edges
            .into_iter()
            .map(|(u, v)| (u, v, (rng.below(100) as f64) / 4.0))
            .collect();
        update.insert_weighted_edges(&edges);
    } else {
        update.insert_edges(&edges);
    }
    if rng.below(3) == 0 {
        let v = rng.below(n) as VertexId;
        update.set_property("score", v, PropertyValue::Int(rng.below(1000) as i64));
    }
    if rng.below(7) == 0 {
        let v = rng.below(n) as VertexId;
        update.remove_property("score", v);
    }
    update
}

fn dir() -> PathBuf {
    PathBuf::from("/data/graph")
}

fn sim_options(vfs: &SimVfs) -> StoreOptions {
    StoreOptions {
        sync: SyncPolicy::Batch,
        segment_bytes: 400,
        checkpoint_log_bytes: None,
        vfs: Arc::new(vfs.clone()),
        truncate_damaged_tail: false,
        accept_lost_log: false,
        directory_id: None,
        on_thread_start: None,
    }
}

#[test]
fn a_second_writer_is_refused_until_the_first_closes() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("g");
    let store = Store::create(&path, StoreOptions::default(), Graph::new(true)).unwrap();
    let err = Store::<GroupLeaf>::open(&path, StoreOptions::default()).unwrap_err();
    assert!(err.to_string().contains("another process"), "{err}");
    // Readers need no lock.
    store.commit(Update::new().insert_edges(&[(0, 1)])).unwrap();
    assert_eq!(load_graph::<GroupLeaf>(&path).unwrap().num_arcs(), 1);
    drop(store);
    let store = Store::<GroupLeaf>::open(&path, StoreOptions::default()).unwrap();
    assert_eq!(store.snapshot().num_arcs(), 1);
    assert!(Store::<GroupMapLeaf>::open(&path, StoreOptions::default()).is_err());
}

#[test]
fn create_refuses_a_directory_with_files() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("precious.txt"), "keep me").unwrap();
    let err = Store::create(tmp.path(), StoreOptions::default(), Graph::new(false)).unwrap_err();
    assert!(err.to_string().contains("not empty"), "{err}");
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("precious.txt")).unwrap(),
        "keep me"
    );
    let err = Store::<GroupLeaf>::open(tmp.path(), StoreOptions::default()).unwrap_err();
    assert!(err.to_string().contains("no MANIFEST"), "{err}");
}
