//! Random scripts of a writer's life against an oracle: commits (acknowledged), appends
//! (logged, not yet acknowledged), checkpoints, clean closes, kills, power cuts, failing
//! operations and readers beside the writer. After every step the directory id is the
//! same, the high-water mark has not gone back and lies within the recoverable log; every
//! reopen recovers the state after a prefix of the batches that holds every acknowledged
//! one, and sequence numbers are positions in that history, never given out twice.

use super::*;
use crate::store::mark;

#[derive(Debug, Clone, Copy)]
enum Step {
    Commit,
    Append,
    Checkpoint,
    Close,
    Kill,
    PowerCut(u64),
    /// The `n`-th operation from now fails, and every one after it (the process dies).
    FailIn(u64),
    Reader,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => Just(Step::Commit),
        2 => Just(Step::Append),
        2 => Just(Step::Checkpoint),
        1 => Just(Step::Close),
        1 => Just(Step::Kill),
        1 => any::<u64>().prop_map(Step::PowerCut),
        1 => (1u64..40).prop_map(Step::FailIn),
        2 => Just(Step::Reader),
    ]
}

/// The oracle: the batches of the current history, and how many of them are acknowledged.
struct Oracle {
    directed: bool,
    history: Vec<Update>,
    states: Vec<Fingerprint>,
    acked: usize,
    /// The highest sequence number ever acknowledged.
    max_acked_seq: Seq,
}

impl Oracle {
    fn graph(&self) -> Graph<GroupLeaf> {
        let mut g = Graph::new(self.directed);
        for update in &self.history {
            g.apply(update).unwrap();
        }
        g
    }

    /// The history after recovering state `k`: later batches are gone.
    fn recovered(&mut self, k: usize) {
        self.history.truncate(k);
        self.states.truncate(k + 1);
        self.acked = self.acked.min(k);
    }

    /// The prefix whose state is `got`, which must hold every acknowledged batch.
    fn prefix_of(&self, got: &Fingerprint, what: &str) -> std::result::Result<usize, String> {
        let k = self
            .states
            .iter()
            .rposition(|s| s == got)
            .ok_or_else(|| format!("{what}: a state after no prefix of the batches"))?;
        if k < self.acked {
            return Err(format!(
                "{what}: {k} batches, but {} were acknowledged",
                self.acked
            ));
        }
        Ok(k)
    }
}

/// The writer (if one is open and working) and what the script has checked so far.
struct Run {
    vfs: SimVfs,
    store: Option<Store<GroupLeaf>>,
    /// Whether an operation failed: the store's state is unknown until a crash.
    broken: bool,
    /// Whether a failing operation is set ([`Step::FailIn`]) and has not come yet.
    armed: bool,
    /// Whether an operation may have failed since the last power cut: a mark entry may
    /// then be in the files but not synced, until a power cut drops it.
    unsynced: bool,
    dir_id: u128,
    mark: Seq,
    rng: Rng,
}

impl Run {
    /// The process ends without closing the store.
    fn crash(&mut self, power_cut: Option<u64>) {
        if let Some(store) = self.store.take() {
            std::mem::forget(store);
        }
        match power_cut {
            Some(seed) => {
                self.vfs.power_cut(seed);
                self.unsynced = false;
            }
            None => self.vfs.kill(),
        }
        self.broken = false;
        self.armed = false;
    }

    /// Opens the store again and checks what it recovered against the oracle.
    fn reopen(&mut self, oracle: &mut Oracle, what: &str) -> std::result::Result<(), String> {
        let store = Store::<GroupLeaf>::open(&dir(), sim_options(&self.vfs))
            .map_err(|e| format!("{what}: reopen failed: {e}"))?;
        let k = oracle.prefix_of(&fingerprint(&store.snapshot()), what)?;
        if store.last_seq() != k as Seq {
            return Err(format!(
                "{what}: {k} batches recovered, but the last sequence number is {}",
                store.last_seq()
            ));
        }
        oracle.recovered(k);
        self.store = Some(store);
        Ok(())
    }

    fn step(&mut self, oracle: &mut Oracle, step: Step, i: usize) -> Result<(), String> {
        let what = format!("step {i} ({step:?})");
        match step {
            Step::Commit | Step::Append => {
                let Some(store) = self.store.as_ref().filter(|_| !self.broken) else {
                    return Ok(());
                };
                let mut g = oracle.graph();
                let update = random_batch(&mut self.rng, &g, false, i);
                if g.apply(&update).is_err() {
                    return Ok(());
                }
                let result = if matches!(step, Step::Commit) {
                    store.commit(&update)
                } else {
                    store.append(&update)
                };
                // A failed commit may or may not be in the log: the history keeps it
                // unacknowledged, and the next recovery decides.
                oracle.history.push(update);
                oracle.states.push(fingerprint(&g));
                match result {
                    Ok((seq, _)) => {
                        if seq != oracle.history.len() as Seq {
                            return Err(format!(
                                "{what}: batch {} got {seq}",
                                oracle.history.len()
                            ));
                        }
                        if matches!(step, Step::Commit) {
                            if seq <= oracle.max_acked_seq {
                                return Err(format!(
                                    "{what}: sequence number {seq} given out again"
                                ));
                            }
                            oracle.max_acked_seq = seq;
                            oracle.acked = oracle.history.len();
                        }
                    }
                    Err(_) => self.broken = true,
                }
            }
            Step::Checkpoint => {
                if let Some(store) = self.store.as_ref().filter(|_| !self.broken) {
                    self.broken = store.checkpoint().is_err();
                }
            }
            Step::Close => {
                if self.broken || self.armed {
                    self.crash(None);
                } else if let Some(store) = self.store.take() {
                    // A clean close syncs everything: it is all acknowledged now.
                    drop(store);
                    oracle.acked = oracle.history.len();
                }
                self.reopen(oracle, &what)?;
            }
            Step::Kill => {
                self.crash(None);
                self.reopen(oracle, &what)?;
            }
            Step::PowerCut(seed) => {
                self.crash(Some(seed));
                self.reopen(oracle, &what)?;
            }
            Step::FailIn(n) => {
                self.vfs.fail_at(Some(self.vfs.ops() + n));
                self.armed = true;
                self.unsynced = true;
            }
            Step::Reader => {
                let loaded = recover::load::<GroupLeaf>(&self.vfs, &dir())
                    .map_err(|e| format!("{what}: a reader failed: {e}"))?;
                oracle.prefix_of(&fingerprint(&loaded.graph), &what)?;
            }
        }
        self.check_files(oracle, &what)
    }

    /// The directory id is the same, and the mark has not gone back below the last one
    /// known durable, nor past the log.
    fn check_files(&mut self, oracle: &Oracle, what: &str) -> Result<(), String> {
        let manifest = recover::read_manifest(&self.vfs, &dir()).map_err(|e| e.to_string())?;
        if manifest.dir_id != self.dir_id {
            return Err(format!("{what}: the directory id changed"));
        }
        let mark = mark::read(&self.vfs, &dir(), self.dir_id, false)
            .map_err(|e| format!("{what}: {e}"))?
            .unwrap_or(0);
        if mark < self.mark {
            return Err(format!(
                "{what}: the mark went back from {} to {mark}",
                self.mark
            ));
        }
        if mark > oracle.history.len() as Seq {
            return Err(format!(
                "{what}: the mark {mark} is past the {} batches logged",
                oracle.history.len()
            ));
        }
        // Once an operation may have failed, a mark entry may be written but not synced:
        // only a mark seen with no failure since the last power cut is known durable.
        if !self.unsynced {
            self.mark = mark;
        }
        Ok(())
    }
}

fn run_script(seed: u64, directed: bool, steps: &[Step]) -> Result<(), String> {
    let vfs = SimVfs::new();
    drop(Store::create(&dir(), sim_options(&vfs), Graph::new(directed)).unwrap());
    let dir_id = recover::read_manifest(&vfs, &dir()).unwrap().dir_id;
    let mut oracle = Oracle {
        directed,
        history: Vec::new(),
        states: vec![fingerprint(&Graph::<GroupLeaf>::new(directed))],
        acked: 0,
        max_acked_seq: 0,
    };
    let mut run = Run {
        vfs,
        store: None,
        broken: false,
        armed: false,
        unsynced: false,
        dir_id,
        mark: 0,
        rng: Rng(seed | 1),
    };
    run.reopen(&mut oracle, "open")?;
    for (i, &step) in steps.iter().enumerate() {
        run.step(&mut oracle, step, i)?;
    }
    run.crash(Some(seed));
    run.reopen(&mut oracle, "the end")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_lives_of_a_directory_keep_every_acknowledged_batch(
        seed: u64,
        directed: bool,
        steps in prop::collection::vec(step(), 5..40),
    ) {
        let result = run_script(seed, directed, &steps);
        prop_assert!(result.is_ok(), "{}", result.unwrap_err());
    }
}
