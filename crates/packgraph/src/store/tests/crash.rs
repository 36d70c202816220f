//! Crashes at every operation of the write path, random scripts under power cuts, and each
//! `fsync` of the write path removed in turn.

use super::*;

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

    fn write_at(&self, offset: u64, bytes: &[u8]) -> io::Result<()> {
        self.inner.write_at(offset, bytes)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.inner.set_len(len)
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
            "pack" => name.ends_with(".pack") || name.ends_with(".pack.tmp"),
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
