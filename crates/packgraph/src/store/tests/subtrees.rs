//! The id dictionary and the properties as subtree units (format 5): random changes of
//! ids and values across checkpoints of both kinds and reopenings read back as the
//! in-memory oracle holds them; a new base rewrites only the subtrees that changed; a
//! damaged or crafted subtree unit is reported as damage naming its pack.

use super::format::{read_unit_checked, Manifest, UnitKind, UnitRef, MANIFEST, UNIT_HEADER};
use super::units::{self, SUBTREE_VERTICES};
use super::*;

/// One step of a script.
#[derive(Debug, Clone)]
enum Step {
    /// Adds this many named vertices, each with an edge to an earlier vertex.
    AddVertices(usize),
    /// Sets column `c` (of three) on vertices drawn with this seed, this many.
    SetValues(u8, u64, usize),
    /// Removes column `c`'s values of vertices drawn with this seed, this many.
    RemoveValues(u8, u64, usize),
    /// A checkpoint: full (a new base) or not (a delta when small).
    Checkpoint(bool),
    /// Drops the store and opens it again (its next checkpoint builds on what it read).
    Reopen,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (1usize..40).prop_map(Step::AddVertices),
        (0u8..3, any::<u64>(), 1usize..30).prop_map(|(c, s, k)| Step::SetValues(c, s, k)),
        (0u8..3, any::<u64>(), 1usize..10).prop_map(|(c, s, k)| Step::RemoveValues(c, s, k)),
        any::<bool>().prop_map(Step::Checkpoint),
        Just(Step::Reopen),
    ]
}

const COLUMNS: [&str; 3] = ["rank", "label", "ok"];

/// A value of column `c` drawn from `rng`.
fn value(c: u8, rng: &mut Rng) -> PropertyValue {
    match c {
        0 => PropertyValue::Int(rng.next() as i64),
        1 => PropertyValue::Text(format!("t{}", rng.below(50)).into()),
        _ => PropertyValue::Bool(rng.below(2) == 1),
    }
}

/// The update of step `step` on a graph of `n` vertices (`None` for checkpoints and
/// reopenings).
fn update_of(step: &Step, n: usize) -> Option<Update> {
    let mut update = Update::new();
    match *step {
        Step::AddVertices(count) => {
            update.add_vertices((n..n + count).map(|i| ExternalId::from(format!("v{i}"))));
            let edges: Vec<(VertexId, VertexId)> = (n..n + count)
                .map(|v| (v as VertexId, (v / 2) as VertexId))
                .collect();
            update.insert_edges(&edges);
        }
        Step::SetValues(c, seed, count) | Step::RemoveValues(c, seed, count) => {
            let mut rng = Rng(seed | 1);
            for _ in 0..count {
                let v = rng.below(n as u64) as VertexId;
                if matches!(step, Step::SetValues(..)) {
                    update.set_property(COLUMNS[c as usize], v, value(c, &mut rng));
                } else {
                    update.remove_property(COLUMNS[c as usize], v);
                }
            }
        }
        Step::Checkpoint(_) | Step::Reopen => return None,
    }
    Some(update)
}

/// A graph of `n` named vertices, a value of each column on most of them.
fn start(n: usize) -> Graph {
    let mut g = Graph::new(false);
    let mut update = update_of(&Step::AddVertices(n), 1).unwrap();
    update.add_vertices([ExternalId::from("v0")]);
    let mut rng = Rng(3);
    for v in 0..=n as VertexId {
        for c in 0..3u8 {
            if rng.below(8) != 0 {
                update.set_property(COLUMNS[c as usize], v, value(c, &mut rng));
            }
        }
    }
    g.apply(&update).unwrap();
    g
}

/// What the oracle and the store must agree on (the version aside: a reopened store
/// counts its checkpoint as one version).
fn observed(g: &Graph) -> Fingerprint {
    Fingerprint {
        version: 0,
        ..fingerprint(g)
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Random id and value changes, checkpoints of both kinds and reopenings: the store
    /// reads back what the oracle holds, after every reopening and at the end.
    #[test]
    fn ids_and_values_read_back_across_checkpoints(
        n in 1usize..120,
        steps in proptest::collection::vec(step(), 1..14),
    ) {
        let vfs = SimVfs::new();
        let mut oracle = start(n);
        let mut store =
            Store::create(&dir(), sim_options(&vfs), start(n)).unwrap();
        for step in &steps {
            match (step, update_of(step, oracle.num_vertices())) {
                (_, Some(update)) => {
                    oracle.apply(&update).unwrap();
                    store.commit(&update).unwrap();
                }
                (Step::Checkpoint(full), None) => {
                    let stats = if *full {
                        store.checkpoint_full().unwrap()
                    } else {
                        store.checkpoint().unwrap()
                    };
                    prop_assert!(!*full || !stats.delta);
                }
                _ => {
                    drop(store);
                    store = Store::open(&dir(), sim_options(&vfs)).unwrap();
                    prop_assert_eq!(observed(&store.snapshot()), observed(&oracle));
                }
            }
        }
        store.checkpoint().unwrap();
        drop(store);
        verify_with(&vfs, &dir()).unwrap();
        let store = Store::<GroupLeaf>::open(&dir(), sim_options(&vfs)).unwrap();
        prop_assert_eq!(store.recovery().records_replayed, 0);
        prop_assert_eq!(observed(&store.snapshot()), observed(&oracle));
    }
}

/// The manifest of the directory in `vfs`.
fn manifest(vfs: &SimVfs) -> Manifest {
    let path = dir().join(MANIFEST);
    Manifest::decode(&path, &vfs.read(&path).unwrap()).unwrap()
}

/// The payload of `unit` of `kind` in the directory in `vfs`.
fn payload(vfs: &SimVfs, unit: &UnitRef, kind: UnitKind) -> Vec<u8> {
    let path = dir().join(format::pack_name(unit.pack));
    let bytes = vfs.read(&path).unwrap();
    read_unit_checked(&path, &bytes, unit, kind)
        .unwrap()
        .to_vec()
}

/// The property units the manifest's index lists, and how many of the last are overlays.
fn property_units(vfs: &SimVfs) -> (Vec<UnitRef>, usize) {
    let index = manifest(vfs).properties;
    let bytes = payload(vfs, &index, UnitKind::PropertiesIndex);
    units::read_properties_index(&bytes, Path::new("p"), 0).unwrap()
}

#[test]
fn a_new_base_rewrites_only_the_changed_subtrees() {
    let vfs = SimVfs::new();
    let n = 40 * SUBTREE_VERTICES as usize;
    let store = Store::create(&dir(), sim_options(&vfs), start(n)).unwrap();
    let (before, overlays) = property_units(&vfs);
    assert_eq!(overlays, 0);
    assert!(before.len() >= 3 * 40, "{}", before.len());
    // Scattered values and a new vertex: the same subtrees again and an overlay.
    let mut update = Update::new();
    for v in [0, 100, 300, 500] {
        update.set_property("rank", v, PropertyValue::Int(-7));
    }
    update.add_vertices([ExternalId::from("new")]);
    store.commit(&update).unwrap();
    let stats = store.checkpoint_full().unwrap();
    let (after, overlays) = property_units(&vfs);
    assert_eq!((overlays, &after[..before.len()]), (1, &before[..]));
    // The overlay, the new vertex's id subtree, two index units, the base unit and the
    // page the new vertex changed.
    assert!(stats.units_written <= 8, "{stats:?}");
    assert!(stats.units_reused >= before.len() as u64, "{stats:?}");
    // A run of values too large for an overlay: the changed subtrees are written again,
    // the others pointed to.
    let run = 20 * SUBTREE_VERTICES as VertexId;
    let mut update = Update::new();
    for v in 0..run {
        update.set_property("rank", v, PropertyValue::Int(-8));
    }
    store.commit(&update).unwrap();
    let stats = store.checkpoint_full().unwrap();
    let (again, overlays) = property_units(&vfs);
    assert_eq!((overlays, again.len()), (0, before.len()));
    let changed = before.iter().zip(&again).filter(|(a, b)| a != b).count();
    // The run's 20 subtrees and the one of vertex 500.
    assert!((20..=21).contains(&changed), "{changed}");
    assert!(
        stats.units_reused >= (before.len() - 21) as u64,
        "{stats:?}"
    );
    drop(store);
    let store = Store::<GroupLeaf>::open(&dir(), sim_options(&vfs)).unwrap();
    assert_eq!(
        store.snapshot().property("rank", 500),
        Some(&PropertyValue::Int(-7))
    );
    assert_eq!(
        store.snapshot().property("rank", run - 1),
        Some(&PropertyValue::Int(-8))
    );
}

#[test]
fn a_damaged_subtree_unit_is_damage_naming_its_pack() {
    let vfs = SimVfs::new();
    let store = Store::create(&dir(), sim_options(&vfs), start(100)).unwrap();
    drop(store);
    let unit = property_units(&vfs).0[2];
    let path = dir().join(format::pack_name(unit.pack));
    let original = vfs.read(&path).unwrap();
    let mut damaged = original.clone();
    damaged[unit.offset as usize + UNIT_HEADER + 3] ^= 4;
    let file = vfs.create(&path).unwrap();
    file.append(&damaged).unwrap();
    file.sync().unwrap();
    let err = Store::<GroupLeaf>::open(&dir(), sim_options(&vfs)).unwrap_err();
    assert!(matches!(err, Error::Corrupt { .. }), "{err}");
    let message = err.to_string();
    assert!(message.contains(&format::pack_name(unit.pack)), "{message}");
    assert!(message.contains("PropertySubtree unit"), "{message}");
    assert!(verify_with(&vfs, &dir()).is_err());
}

#[test]
fn subtree_units_holding_more_than_their_kind_are_refused() {
    let path = Path::new("pack-00000001.pack");
    let mut edges = Update::new();
    edges
        .set_property("rank", 1, PropertyValue::Int(1))
        .insert_edges(&[(0, 1)]);
    let mut names = Update::new();
    names.add_vertices([ExternalId::from("a")]).min_vertices(9);
    for (payload, what, only) in [
        (
            edges.encode(),
            "a property subtree unit",
            units::only_properties as fn(&Update) -> bool,
        ),
        (names.encode(), "an id subtree unit", units::only_vertices),
    ] {
        let located = [(&payload[..], path.to_path_buf(), 77)];
        let err = units::decode_subtrees(&located, what, only).unwrap_err();
        let message = err.to_string();
        assert!(message.contains("holds more than"), "{message}");
        assert!(
            matches!(
                err,
                Error::Corrupt {
                    offset: Some(77),
                    ..
                }
            ),
            "{message}"
        );
        // A truncated payload is damage at its offset too.
        let cut = [(&payload[..payload.len() - 1], path.to_path_buf(), 77)];
        assert!(units::decode_subtrees(&cut, what, only).is_err());
    }
    // Index units refuse every truncation and trailing bytes.
    let refs: Vec<UnitRef> = (1..4)
        .map(|p| UnitRef {
            pack: p,
            offset: 40,
            len: 9,
            hash: u128::from(p),
        })
        .collect();
    let ids = units::ids_index((5, 3), &refs);
    let props = units::properties_index(&refs, 1);
    assert_eq!(
        units::read_ids_index(&ids, path, 0).unwrap(),
        ((5, 3), refs.clone())
    );
    assert_eq!(
        units::read_properties_index(&props, path, 0).unwrap(),
        (refs.clone(), 1)
    );
    let err = units::read_properties_index(&units::properties_index(&refs, 4), path, 0);
    assert!(err.unwrap_err().to_string().contains("4 overlays among 3"));
    for len in 0..ids.len() {
        assert!(
            units::read_ids_index(&ids[..len], path, 0).is_err(),
            "{len}"
        );
    }
    for len in 0..props.len() {
        assert!(
            units::read_properties_index(&props[..len], path, 0).is_err(),
            "{len}"
        );
    }
    let mut long = props.clone();
    long.push(0);
    assert!(units::read_properties_index(&long, path, 0).is_err());
}

#[test]
fn an_ids_unit_of_format_4_reads_back() {
    let g = start(50);
    let payload = units::ids_payload(g.ids());
    let ids = units::read_ids(&payload, Path::new("p"), 0).unwrap();
    assert_eq!(ids, *g.ids());
}
