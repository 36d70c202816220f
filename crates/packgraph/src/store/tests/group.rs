//! Group appends ([`Store::append_group`]): a group of batches against the same batches
//! appended one by one and against an edge-set oracle, refused batches in the middle of a
//! group (refused before anything changed, and refused after being applied, which the
//! group undoes), a failed log write inside a group, and what reopening replays.

use std::collections::{BTreeSet, HashMap};

use super::*;
use crate::graph::{Applied, IdKind};

/// Vertices 0..BASE exist from the start.
const BASE: u32 = 8;

/// One batch of a script.
#[derive(Debug, Clone)]
enum Batch {
    /// Deletes, then inserts, among the first vertices.
    Edges {
        delete: Vec<(u32, u32)>,
        insert: Vec<(u32, u32)>,
    },
    /// Adds vertex `EXTERNAL | key` (if new) with an arc from it to vertex 0.
    AddVertex(u64),
    /// An arc from vertex 0 to vertex `EXTERNAL | key`, looked up by the batch's build:
    /// refused if no earlier batch (of the group or before it) added it.
    Link(u64),
    /// Inserts, and a property of a vertex the graph lacks: refused by `apply`'s check
    /// before anything changes.
    MissingVertex(Vec<(u32, u32)>),
    /// Inserts, and a named vertex in an integer directory: refused after it was applied
    /// (the id kind check), so the group takes it back.
    Named(Vec<(u32, u32)>),
    /// More vertices than its ids and edges explain: refused before it is applied.
    TooBig,
}

const EXTERNAL: u64 = 1 << 40;

fn batch() -> impl Strategy<Value = Batch> {
    let arcs = || prop::collection::vec((0..BASE, 0..BASE), 0..4);
    prop_oneof![
        4 => (arcs(), arcs()).prop_map(|(delete, insert)| Batch::Edges { delete, insert }),
        2 => (0..4u64).prop_map(Batch::AddVertex),
        2 => (0..4u64).prop_map(Batch::Link),
        1 => arcs().prop_map(Batch::MissingVertex),
        1 => arcs().prop_map(Batch::Named),
        1 => Just(Batch::TooBig),
    ]
}

/// The update `batch` makes from `g` (as a store's build sees it).
fn build<C: StoreLeaf>(batch: &Batch, g: &Graph<C>) -> crate::Result<Update> {
    let mut update = Update::new();
    let external = |key: u64| ExternalId::Int(EXTERNAL | key);
    match batch {
        Batch::Edges { delete, insert } => {
            update.delete_edges(delete).insert_edges(insert);
        }
        Batch::AddVertex(key) => {
            let v = g
                .ids()
                .internal_id(&external(*key))
                .unwrap_or(g.num_vertices() as VertexId);
            update
                .add_vertices([external(*key)])
                .insert_edges(&[(v, 0)]);
        }
        Batch::Link(key) => {
            let v = g
                .ids()
                .internal_id(&external(*key))
                .ok_or_else(|| Error::invalid(EXTERNAL | key, "no such vertex yet"))?;
            update.insert_edges(&[(0, v)]);
        }
        Batch::MissingVertex(insert) => {
            update
                .insert_edges(insert)
                .set_property("x", 1 << 20, PropertyValue::Int(1));
        }
        Batch::Named(insert) => {
            update
                .insert_edges(insert)
                .add_vertices([ExternalId::Name("stray".into())]);
        }
        Batch::TooBig => {
            update.min_vertices(1 << 30);
        }
    }
    Ok(update)
}

/// The graph as a directed edge set, the vertex count and the external vertices added.
#[derive(Debug, Default)]
struct Oracle {
    arcs: BTreeSet<(u32, u32)>,
    num_vertices: u32,
    added: HashMap<u64, u32>,
}

impl Oracle {
    /// Applies `batch`; whether it is accepted.
    fn apply(&mut self, batch: &Batch) -> bool {
        match batch {
            Batch::Edges { delete, insert } => {
                for arc in delete {
                    self.arcs.remove(arc);
                }
                self.arcs.extend(insert.iter().filter(|(u, v)| u != v));
                true
            }
            Batch::AddVertex(key) => {
                let next = self.num_vertices;
                let v = *self.added.entry(*key).or_insert(next);
                self.num_vertices = self.num_vertices.max(v + 1);
                self.arcs.insert((v, 0));
                true
            }
            Batch::Link(key) => match self.added.get(key) {
                Some(&v) => {
                    self.arcs.insert((0, v));
                    true
                }
                None => false,
            },
            Batch::MissingVertex(_) | Batch::Named(_) | Batch::TooBig => false,
        }
    }
}

fn arcs<C: StoreLeaf>(g: &Graph<C>) -> BTreeSet<(u32, u32)> {
    let mut arcs = BTreeSet::new();
    for u in 0..g.num_vertices() as VertexId {
        for v in g.out_neighbors(u) {
            arcs.insert((u, v));
        }
    }
    arcs
}

fn start(vfs: &SimVfs) -> Store {
    let graph = Graph::from_edges(BASE as usize, &[], true).unwrap();
    Store::create_with_ids(&dir(), sim_options(vfs), graph, Some(IdKind::Int)).unwrap()
}

/// Appends `batches` in groups of the sizes `groups` gives (cycled), checking each
/// group's answers; returns the answers.
fn append_in_groups(
    store: &Store,
    batches: &[Batch],
    groups: &[usize],
) -> Vec<Option<(Seq, Applied, u64)>> {
    let mut answers = Vec::new();
    let mut rest = batches;
    for &size in groups.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (group, later) = rest.split_at(size.clamp(1, rest.len()));
        rest = later;
        let before = store.snapshot().version();
        let (results, version) = store.append_group(|g| {
            group
                .iter()
                .map(|b| g.append_with(|graph| build(b, graph)).ok())
                .collect::<Vec<_>>()
        });
        let last = results.iter().flatten().last();
        assert_eq!(version, last.map_or(before, |(_, a)| a.version));
        assert_eq!(store.snapshot().version(), version, "one version per group");
        answers.extend(results.into_iter().map(|r| r.map(|(s, a)| (s, a, version))));
    }
    answers
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// A group of batches leaves the graph, the answers and the log as the same batches
    /// appended one by one do, and as the oracle says; reopening replays it.
    #[test]
    fn a_group_is_its_batches_one_by_one(
        batches in prop::collection::vec(batch(), 1..24),
        groups in prop::collection::vec(1..8usize, 1..4),
    ) {
        let vfs = SimVfs::new();
        let store = start(&vfs);
        let mut version = store.snapshot().version();
        let answers = append_in_groups(&store, &batches, &groups);

        let mut oracle = Oracle { num_vertices: BASE, ..Oracle::default() };
        let mut seq = 0;
        for (i, (batch, answer)) in batches.iter().zip(&answers).enumerate() {
            let accepted = oracle.apply(batch);
            prop_assert_eq!(accepted, answer.is_some(), "batch {} {:?}", i, batch);
            if let Some((s, applied, _)) = answer {
                seq += 1;
                version += 1;
                prop_assert_eq!(*s, seq, "sequence numbers count accepted batches");
                prop_assert_eq!(applied.version, version);
            }
        }
        let latest = store.snapshot();
        prop_assert_eq!(arcs(&latest), oracle.arcs.clone());
        prop_assert_eq!(latest.num_vertices(), oracle.num_vertices as usize);
        prop_assert_eq!(latest.version(), version);

        // The same batches one by one, in a directory of their own.
        let single_vfs = SimVfs::new();
        let single = start(&single_vfs);
        for (batch, answer) in batches.iter().zip(&answers) {
            let one = single.append_with(|graph| build(batch, graph));
            prop_assert_eq!(one.as_ref().ok().map(|(s, _, _)| *s), answer.as_ref().map(|(s, _, _)| *s));
        }
        let expected = fingerprint(&single.snapshot());
        prop_assert_eq!(fingerprint(&latest), expected.clone());

        // Every accepted batch is its own record: reopening replays them all.
        store.sync().unwrap();
        drop((latest, store));
        let store = Store::<GroupLeaf>::open(&dir(), sim_options(&vfs)).unwrap();
        prop_assert_eq!(store.recovery().records_replayed, seq);
        prop_assert_eq!(fingerprint(&store.snapshot()), expected);
    }
}

/// `Graph::apply` checks a whole update before it changes anything: a batch refused for
/// its last part leaves the graph exactly as it was.
#[test]
fn a_refused_update_leaves_the_graph_as_it_was() {
    let mut g = Graph::from_edges(4, &[(0, 1), (1, 2)], true).unwrap();
    let before = fingerprint(&g);
    let mut bad = Update::new();
    bad.delete_edges(&[(0, 1)])
        .insert_edges(&[(2, 3), (3, 9)])
        .add_vertices([ExternalId::Int(77)])
        .set_property("x", 1 << 20, PropertyValue::Int(1));
    assert!(g.apply(&bad).is_err());
    assert_eq!(fingerprint(&g), before);
    let mut weighted = WeightedGraph::new_weighted(false);
    weighted
        .apply(Update::new().insert_weighted_edges(&[(0, 1, 1.0)]))
        .unwrap();
    let before = fingerprint(&weighted);
    let mut nan = Update::new();
    nan.insert_weighted_edges(&[(1, 2, 2.0), (2, 3, f64::NAN)]);
    assert!(weighted.apply(&nan).is_err());
    assert_eq!(fingerprint(&weighted), before);
}

/// The log write of a group failing: the group's batches were applied and published, but
/// none of them becomes durable (waiting for one fails), and the store takes no more
/// writes.
#[test]
fn a_failed_log_write_of_a_group_makes_none_of_it_durable() {
    let vfs = SimVfs::new();
    let store = start(&vfs);
    store.commit(Update::new().insert_edges(&[(0, 1)])).unwrap();
    let before = store.snapshot().version();
    // The group's records go to the log in one write, at its end: that write fails.
    vfs.fail_at(Some(vfs.ops() + 1));
    let (results, version) = store.append_group(|g| {
        [(1, 2), (2, 3), (3, 4)]
            .iter()
            .map(|&arc| g.append(Update::new().insert_edges(&[arc])).map(|a| a.0))
            .collect::<Vec<_>>()
    });
    assert_eq!(
        results
            .into_iter()
            .collect::<crate::Result<Vec<_>>>()
            .unwrap(),
        [2, 3, 4]
    );
    assert_eq!(version, before + 3);
    for seq in 2..=4 {
        assert!(store.wait_durable(seq).is_err(), "record {seq}");
    }
    assert_eq!(store.durable_seq(), 1);
    vfs.fail_at(None);
    assert!(store.append_group(|g| g.append(&Update::new())).0.is_err());
}
