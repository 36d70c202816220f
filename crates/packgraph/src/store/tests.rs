//! The store against an in-memory oracle: round trips, crashes at every operation of the
//! write path (kill and power cut), each `fsync` removed in turn, and damaged files.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use proptest::prelude::*;

use super::*;
use crate::graph::{ExternalId, Graph, GraphRead, PropertyValue, Update, VertexId, WeightedGraph};
use crate::pma::DeltaMapLeaf;

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
/// vertex or two (sometimes named), a property.
fn random_batch<C: StoreLeaf>(rng: &mut Rng, g: &Graph<C>, weighted: bool, step: usize) -> Update {
    let mut update = Update::new();
    let n = g.num_vertices().max(2) as u64;
    if rng.below(4) == 0 {
        update.add_vertices([ExternalId::Name(format!("v{step}").into())]);
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
    }
}

/// One scripted step.
#[derive(Debug, Clone, Copy)]
enum Step {
    Commit,
    Checkpoint,
    FullCheckpoint,
}

fn script(rng: &mut Rng, steps: usize) -> Vec<Step> {
    (0..steps)
        .map(|_| match rng.below(10) {
            0 => Step::Checkpoint,
            1 => Step::FullCheckpoint,
            _ => Step::Commit,
        })
        .collect()
}

/// The oracle's states after 0, 1, 2, … batches of a script, and the batches.
fn oracle<C: StoreLeaf>(
    empty: Graph<C>,
    seed: u64,
    steps: &[Step],
) -> (Vec<Fingerprint>, Vec<Update>)
where
    C::Item: Into<Item2>,
{
    let mut rng = Rng(seed);
    let mut g = empty;
    let mut states = vec![fingerprint(&g)];
    let mut batches = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        if let Step::Commit = step {
            let update = random_batch(&mut rng, &g, C::WEIGHTED, i);
            if g.apply(&update).is_ok() {
                states.push(fingerprint(&g));
                batches.push(update);
            }
        }
    }
    (states, batches)
}

/// Runs the script against a store on `vfs` until an operation fails; returns how many
/// batches were acknowledged and how many were attempted.
fn run_script<C: StoreLeaf>(
    options: StoreOptions,
    steps: &[Step],
    batches: &[Update],
) -> (usize, usize) {
    let store = match Store::<C>::open(&dir(), options) {
        Ok(store) => store,
        Err(_) => return (0, 0),
    };
    let (mut acked, mut attempted) = (0, 0);
    let mut next = batches.iter();
    for step in steps {
        let ok = match step {
            Step::Commit => {
                let Some(update) = next.next() else { break };
                attempted += 1;
                let ok = store.commit(update).is_ok();
                acked += usize::from(ok);
                ok
            }
            Step::Checkpoint => store.checkpoint().is_ok(),
            Step::FullCheckpoint => store.checkpoint_full().is_ok(),
        };
        if !ok {
            break;
        }
    }
    // The process dies here: nothing of the store's shutdown may run.
    std::mem::forget(store);
    (acked, attempted)
}

/// Checks that the directory recovers to a state after a prefix of batches that holds
/// every acknowledged one.
fn check_recovers<C: StoreLeaf>(
    vfs: &SimVfs,
    states: &[Fingerprint],
    acked: usize,
    attempted: usize,
    what: &str,
) -> std::result::Result<usize, String>
where
    C::Item: Into<Item2>,
{
    let store = Store::<C>::open(&dir(), sim_options(vfs))
        .map_err(|e| format!("{what}: reopen failed: {e}"))?;
    let got = fingerprint(&store.snapshot());
    store
        .snapshot()
        .check_invariants()
        .map_err(|e| format!("{what}: {e}"))?;
    let k = states
        .iter()
        .position(|s| *s == got)
        .ok_or_else(|| format!("{what}: recovered a state after no prefix of batches"))?;
    if k < acked || k > attempted {
        return Err(format!(
            "{what}: recovered {k} batches, but {acked} were acknowledged and {attempted} attempted"
        ));
    }
    Ok(k)
}

fn create_empty<C: StoreLeaf>(vfs: &SimVfs, empty: Graph<C>) {
    drop(Store::create(&dir(), sim_options(vfs), empty).unwrap());
}

/// Every operation of the script fails in turn; after each, the process is killed (unsynced
/// data kept) or the power cut (unsynced data lost), and the directory must recover.
fn crash_at_every_operation<C: StoreLeaf>(empty: impl Fn() -> Graph<C>, seed: u64, steps: usize)
where
    C::Item: Into<Item2>,
{
    let mut rng = Rng(seed ^ 0x5eed);
    let steps = script(&mut rng, steps);
    let (states, batches) = oracle(empty(), seed, &steps);
    // How many operations a clean run takes.
    let clean = SimVfs::new();
    create_empty(&clean, empty());
    let start = clean.ops();
    let (acked, _) = run_script::<C>(sim_options(&clean), &steps, &batches);
    clean.kill();
    assert_eq!(acked, batches.len());
    let total = clean.ops() - start;
    assert!(total > 60, "the script ran only {total} operations");
    check_recovers::<C>(&clean, &states, acked, acked, "clean run").unwrap();
    for fail in 1..=total + 1 {
        for power_cut in [false, true] {
            let vfs = SimVfs::new();
            create_empty(&vfs, empty());
            vfs.fail_at(Some(vfs.ops() + fail));
            let (acked, attempted) = run_script::<C>(sim_options(&vfs), &steps, &batches);
            if power_cut {
                vfs.power_cut(fail);
            } else {
                vfs.kill();
            }
            let what = format!(
                "seed {seed}, operation {fail} of {total}, {}",
                if power_cut { "power cut" } else { "kill" }
            );
            let recovered = check_recovers::<C>(&vfs, &states, acked, attempted, &what).unwrap();
            // The recovered store goes on working.
            if let Some(update) = batches.get(recovered) {
                let store = Store::<C>::open(&dir(), sim_options(&vfs)).unwrap();
                store.commit(update).unwrap();
                drop(store);
                check_recovers::<C>(&vfs, &states, recovered + 1, recovered + 1, &what).unwrap();
            }
        }
    }
}

#[test]
fn crashes_at_every_operation_lose_nothing_acknowledged_undirected() {
    crash_at_every_operation(|| Graph::new(false), 1, 30);
}

#[test]
fn crashes_at_every_operation_lose_nothing_acknowledged_directed_weighted() {
    crash_at_every_operation(|| WeightedGraph::new_weighted(true), 2, 30);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_scripts_survive_power_cuts(seed in 1u64.., fail in 1u64..400, directed: bool) {
        let mut rng = Rng(seed);
        let steps = script(&mut rng, 25);
        let (states, batches) = oracle(Graph::new(directed), seed, &steps);
        let vfs = SimVfs::new();
        create_empty(&vfs, Graph::new(directed));
        vfs.fail_at(Some(vfs.ops() + fail));
        let (acked, attempted) = run_script::<GroupLeaf>(sim_options(&vfs), &steps, &batches);
        vfs.power_cut(seed);
        let result = check_recovers::<GroupLeaf>(&vfs, &states, acked, attempted, "random");
        prop_assert!(result.is_ok(), "{}", result.unwrap_err());
    }
}

/// A file system that forgets to sync one kind of file (or directories): each must turn
/// the power-cut test red, which shows that every sync of the write path is needed.
#[derive(Clone)]
struct SkipSync {
    inner: SimVfs,
    skip: &'static str,
}

struct SkipFile {
    inner: Arc<dyn VfsFile>,
    skip: bool,
}

impl VfsFile for SkipFile {
    fn append(&self, bytes: &[u8]) -> io::Result<()> {
        self.inner.append(bytes)
    }

    fn sync(&self) -> io::Result<()> {
        if self.skip {
            Ok(())
        } else {
            self.inner.sync()
        }
    }
}

impl SkipSync {
    fn skips(&self, path: &Path) -> bool {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        match self.skip {
            "log" => name.ends_with(".wal"),
            "pack" => name.ends_with(".pack"),
            "manifest" => name.starts_with("MANIFEST"),
            _ => false,
        }
    }
}

impl Vfs for SkipSync {
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        self.inner.create_dir_all(dir)
    }
    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        self.inner.list(dir)
    }
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.inner.read(path)
    }
    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }
    fn create(&self, path: &Path) -> io::Result<Arc<dyn VfsFile>> {
        Ok(Arc::new(SkipFile {
            inner: self.inner.create(path)?,
            skip: self.skips(path),
        }))
    }
    fn open_append(&self, path: &Path, len: u64) -> io::Result<Arc<dyn VfsFile>> {
        Ok(Arc::new(SkipFile {
            inner: self.inner.open_append(path, len)?,
            skip: self.skips(path),
        }))
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.inner.rename(from, to)
    }
    fn remove(&self, path: &Path) -> io::Result<()> {
        self.inner.remove(path)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        if self.skip == "dir" {
            Ok(())
        } else {
            self.inner.sync_dir(dir)
        }
    }
    fn lock(&self, path: &Path) -> io::Result<Box<dyn VfsLock>> {
        self.inner.lock(path)
    }
}

#[test]
fn removing_any_sync_loses_acknowledged_batches() {
    for skip in ["log", "pack", "manifest", "dir"] {
        let mut lost = false;
        'seeds: for seed in 1..40u64 {
            let mut rng = Rng(seed);
            let steps = script(&mut rng, 30);
            let (states, batches) = oracle(Graph::new(false), seed, &steps);
            for cut_after in [5u64, 20, 60, 120, 250, 500] {
                let vfs = SimVfs::new();
                let faulty = SkipSync {
                    inner: vfs.clone(),
                    skip,
                };
                let options = StoreOptions {
                    vfs: Arc::new(faulty),
                    ..sim_options(&vfs)
                };
                if Store::create(&dir(), options.clone(), Graph::new(false)).is_err() {
                    continue;
                }
                vfs.fail_at(Some(vfs.ops() + cut_after));
                let (acked, attempted) = run_script::<GroupLeaf>(options, &steps, &batches);
                vfs.power_cut(seed + cut_after);
                if check_recovers::<GroupLeaf>(&vfs, &states, acked, attempted, skip).is_err() {
                    lost = true;
                    break 'seeds;
                }
            }
        }
        assert!(
            lost,
            "without the {skip} sync no power cut lost anything: the test is blind"
        );
    }
}

#[test]
fn checkpoints_reuse_unchanged_units_and_deltas_stay_small() {
    let vfs = SimVfs::new();
    let edges: Vec<(VertexId, VertexId)> = (0..200_000u32)
        .map(|i| (i % 30_000, (i * 7 + 1) % 30_000))
        .collect();
    let g = Graph::from_edges(30_000, &edges, false).unwrap();
    let store = Store::create(&dir(), sim_options(&vfs), g).unwrap();
    let full = store.checkpoint_full().unwrap();
    assert_eq!(
        full.units_written, 0,
        "nothing changed: every unit is reused"
    );
    store
        .commit(Update::new().insert_edges(&[(1, 2999), (5, 77)]))
        .unwrap();
    let small = store.checkpoint().unwrap();
    assert!(small.delta);
    assert!(
        small.bytes_written * 20 < full.bytes_reused,
        "{small:?} vs {full:?}"
    );
    // A new base after a small change rewrites only the pages that changed.
    let rebased = store.checkpoint_full().unwrap();
    assert!(!rebased.delta);
    assert!(
        rebased.units_reused > 5 * rebased.units_written,
        "{rebased:?}"
    );
    let expected = fingerprint(&store.snapshot());
    drop(store);
    let store = Store::<GroupLeaf>::open(&dir(), sim_options(&vfs)).unwrap();
    assert_eq!(fingerprint(&store.snapshot()), expected);
    assert_eq!(store.recovery().records_replayed, 0);
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
    assert!(Store::<DeltaMapLeaf>::open(&path, StoreOptions::default()).is_err());
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

#[test]
fn a_bad_update_is_refused_and_not_logged() {
    let vfs = SimVfs::new();
    let store = Store::create(&dir(), sim_options(&vfs), Graph::new(false)).unwrap();
    store.commit(Update::new().insert_edges(&[(0, 1)])).unwrap();
    let mut bad = Update::new();
    bad.insert_edges(&[(1, 2)])
        .set_property("x", 99, PropertyValue::Int(1));
    assert!(store.commit(&bad).is_err());
    let (seq, _) = store.commit(Update::new().insert_edges(&[(2, 3)])).unwrap();
    assert_eq!(seq, 2);
    drop(store);
    let store = Store::<GroupLeaf>::open(&dir(), sim_options(&vfs)).unwrap();
    assert_eq!(store.snapshot().num_edges(), 2);
}

#[test]
fn a_failed_log_write_stops_writes_until_reopened() {
    let vfs = SimVfs::new();
    let store = Store::create(&dir(), sim_options(&vfs), Graph::new(false)).unwrap();
    store.commit(Update::new().insert_edges(&[(0, 1)])).unwrap();
    vfs.fail_at(Some(vfs.ops() + 1));
    assert!(store.commit(Update::new().insert_edges(&[(1, 2)])).is_err());
    assert_eq!(
        store.snapshot().num_edges(),
        1,
        "readers never see the failed batch"
    );
    vfs.fail_at(None);
    let err = store
        .commit(Update::new().insert_edges(&[(2, 3)]))
        .unwrap_err();
    assert!(err.to_string().contains("reopen"), "{err}");
    std::mem::forget(store);
    vfs.kill();
    let store = Store::<GroupLeaf>::open(&dir(), sim_options(&vfs)).unwrap();
    assert_eq!(store.snapshot().num_edges(), 1);
    store.commit(Update::new().insert_edges(&[(2, 3)])).unwrap();
}

/// Damage to any byte of any file is an error naming the file, or (only for the log's last
/// record) a torn tail; never a panic or a silently different graph.
#[test]
fn damaged_files_are_reported_never_misread() {
    let vfs = SimVfs::new();
    let store = Store::create(&dir(), sim_options(&vfs), Graph::new(true)).unwrap();
    let mut rng = Rng(9);
    for i in 0..12 {
        let g = store.snapshot();
        store.commit(&random_batch(&mut rng, &g, false, i)).unwrap();
        if i == 5 {
            store.checkpoint_full().unwrap();
        }
    }
    store.checkpoint().unwrap();
    for i in 12..16 {
        let g = store.snapshot();
        store.commit(&random_batch(&mut rng, &g, false, i)).unwrap();
    }
    let expected = fingerprint(&store.snapshot());
    drop(store);
    let files = vfs.list(&dir()).unwrap();
    assert!(
        files.iter().any(|f| f.ends_with(".pack")) && files.iter().any(|f| f.ends_with(".wal"))
    );
    for name in files.iter().filter(|f| *f != "LOCK") {
        let path = dir().join(name);
        let len = vfs.read(&path).unwrap().len();
        for offset in (0..len).step_by(len.div_ceil(60).max(1)) {
            let copy = SimVfs::new();
            clone_files(&vfs, &copy);
            copy.flip_bit(&path, offset, (offset % 8) as u8).unwrap();
            let verified = verify_with(&copy, &dir());
            match Store::<GroupLeaf>::open(&dir(), sim_options(&copy)) {
                Ok(store) if fingerprint(&store.snapshot()) == expected => {
                    // Damage to bytes recovery does not need (an unreferenced unit in a
                    // live pack): the graph is intact, and verify still reports it.
                    assert!(
                        verified.is_err(),
                        "{name} byte {offset}: damage went unnoticed"
                    );
                }
                Ok(_) => {
                    // Only a flip in the log's last record may be read as a torn write.
                    let report = verified.unwrap();
                    assert!(
                        report.torn_bytes > 0,
                        "{name} byte {offset}: damage went unnoticed"
                    );
                    assert!(name.ends_with(".wal"), "{name} byte {offset}");
                }
                Err(e) => {
                    let text = e.to_string();
                    assert!(
                        text.contains(name.as_str())
                            || text.contains("MANIFEST")
                            || text.contains("checkpoint"),
                        "{name} byte {offset}: {text}"
                    );
                    assert!(
                        verified.is_err(),
                        "{name} byte {offset}: verify passed damage"
                    );
                }
            }
        }
    }
}

/// Copies every file of `from` into `to`, durable.
fn clone_files(from: &SimVfs, to: &SimVfs) {
    to.create_dir_all(&dir()).unwrap();
    for name in from.list(&dir()).unwrap() {
        let path = dir().join(&name);
        let file = to.create(&path).unwrap();
        file.append(&from.read(&path).unwrap()).unwrap();
        file.sync().unwrap();
    }
    to.sync_dir(&dir()).unwrap();
}

#[test]
fn group_commit_acknowledges_after_the_sync() {
    let vfs = SimVfs::new();
    let options = StoreOptions {
        sync: SyncPolicy::Group(Duration::from_millis(2)),
        ..sim_options(&vfs)
    };
    let store = Store::create(&dir(), options.clone(), Graph::new(false)).unwrap();
    let mut last = 0;
    for i in 0..50u32 {
        let (seq, _) = store
            .append(Update::new().insert_edges(&[(i, i + 1)]))
            .unwrap();
        last = seq;
    }
    store.wait_durable(last).unwrap();
    assert!(store.durable_seq() >= last);
    let syncs = vfs.syncs();
    std::mem::forget(store);
    vfs.power_cut(3);
    let store = Store::<GroupLeaf>::open(&dir(), options).unwrap();
    assert_eq!(store.snapshot().num_edges(), 50);
    assert!(
        syncs < 60,
        "group commit synced {syncs} times for 50 batches"
    );
}

#[test]
fn background_checkpoints_trim_the_log() {
    let vfs = SimVfs::new();
    let options = StoreOptions {
        checkpoint_log_bytes: Some(2000),
        ..sim_options(&vfs)
    };
    let store = Store::create(&dir(), options.clone(), Graph::new(false)).unwrap();
    for i in 0..300u32 {
        store
            .commit(Update::new().insert_edges(&[(i, i + 1), (i, i + 2)]))
            .unwrap();
    }
    drop(store);
    let firsts: Vec<u64> = vfs
        .list(&dir())
        .unwrap()
        .iter()
        .filter_map(|n| wal::parse_segment_name(n))
        .collect();
    let store = Store::<GroupLeaf>::open(&dir(), options).unwrap();
    assert_eq!(store.snapshot().num_edges(), 600);
    let covered = store.recovery().checkpoint_seq;
    assert!(covered >= 50, "{:?}", store.recovery());
    // Every segment whose records the checkpoint covers is gone.
    let needed = firsts.iter().filter(|&&f| f <= covered + 1).count();
    assert!(
        needed <= 1,
        "segments {firsts:?} left after a checkpoint at {covered}"
    );
}

#[test]
fn sync_policies_parse() {
    assert_eq!("batch".parse::<SyncPolicy>().unwrap(), SyncPolicy::Batch);
    assert_eq!("none".parse::<SyncPolicy>().unwrap(), SyncPolicy::None);
    assert_eq!(
        "group:10".parse::<SyncPolicy>().unwrap(),
        SyncPolicy::Group(Duration::from_millis(10))
    );
    for bad in ["", "group", "group:0", "group:x", "always"] {
        let err = bad.parse::<SyncPolicy>().unwrap_err().to_string();
        assert!(err.contains("sync policy"), "{err}");
    }
    assert_eq!(
        SyncPolicy::Group(Duration::from_millis(7)).to_string(),
        "group:7"
    );
}
