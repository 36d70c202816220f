//! Merged log replay (`replay.rs`) against sequential replay and a map of edges applied
//! line by line: random scripts of records with repeated edges, deletes before and after
//! inserts, weights, vertices grown by edges and counts, ids, property changes (some naming
//! vertices that do not exist yet), and records that do not apply.

use std::collections::BTreeMap;
use std::path::Path;

use proptest::collection::vec;
use proptest::prelude::*;

use super::{fingerprint, Fingerprint, Item2};
use crate::graph::{ExternalId, Graph, GraphRead, PropertyValue, Update, VertexId};
use crate::pma::{GroupLeaf, GroupMapLeaf};
use crate::store::replay::Replayer;
use crate::store::wal::{LogRecord, SegmentBytes};
use crate::store::StoreLeaf;

#[derive(Debug, Clone)]
enum Op {
    Insert(VertexId, VertexId, Option<f64>),
    Delete(VertexId, VertexId),
    Set(VertexId, i64),
    Remove(VertexId),
    Grow(usize),
    Id(u64),
}

fn op() -> impl Strategy<Value = Op> {
    let weight = prop_oneof![
        6 => Just(None),
        3 => (0u8..4).prop_map(|w| Some(f64::from(w) * 1.5)),
        1 => Just(Some(f64::NAN)),
    ];
    prop_oneof![
        8 => (0u32..10, 0u32..10, weight).prop_map(|(u, v, w)| Op::Insert(u, v, w)),
        6 => (0u32..10, 0u32..10).prop_map(|(u, v)| Op::Delete(u, v)),
        2 => (0u32..14, 0i64..5).prop_map(|(v, x)| Op::Set(v, x)),
        1 => (0u32..14).prop_map(Op::Remove),
        1 => (0usize..13).prop_map(Op::Grow),
        1 => (0u64..4).prop_map(|i| Op::Id(100 + i)),
    ]
}

/// One record's update: its operations in order.
fn record(ops: &[Op]) -> Update {
    let mut update = Update::new();
    for op in ops {
        match *op {
            Op::Insert(u, v, None) => update.insert_edges(&[(u, v)]),
            Op::Insert(u, v, Some(w)) => update.insert_weighted_edges(&[(u, v, w)]),
            Op::Delete(u, v) => update.delete_edges(&[(u, v)]),
            Op::Set(v, x) => update.set_property("p", v, PropertyValue::Int(x)),
            Op::Remove(v) => update.remove_property("p", v),
            Op::Grow(n) => update.min_vertices(n),
            Op::Id(id) => update.add_vertices([ExternalId::Int(id)]),
        };
    }
    update
}

/// Record `seq`, read from `/log` at `offset`, whose payload is all of `segment`.
fn log_record(seq: u64, segment: &SegmentBytes, offset: usize) -> LogRecord<'_> {
    LogRecord {
        seq,
        segment,
        payload: 0..segment.len(),
        path: Path::new("/log"),
        offset,
    }
}

/// Records per segment in [`replay`]: a log segment holds many records, whose payloads
/// the replayer keeps as ranges of the segment's bytes.
const RECORDS_PER_SEGMENT: usize = 3;

/// What replay gives: the graph's fingerprint, or the error's message. The records are
/// read from segments of [`RECORDS_PER_SEGMENT`] records each, record `i` at offset
/// `40 + 100 i`.
fn replay<C: StoreLeaf>(
    start: &dyn Fn() -> Graph<C>,
    records: &[Vec<u8>],
    limit: usize,
) -> (Result<(), String>, Fingerprint)
where
    C::Item: Into<Item2>,
{
    let mut graph = start();
    let mut replayer = Replayer::new(&mut graph, limit);
    let mut result = Ok(());
    'segments: for (s, chunk) in records.chunks(RECORDS_PER_SEGMENT).enumerate() {
        let segment = SegmentBytes::new(chunk.concat());
        let mut start = 0;
        for (j, payload) in chunk.iter().enumerate() {
            let i = s * RECORDS_PER_SEGMENT + j;
            let record = LogRecord {
                seq: i as u64 + 1,
                segment: &segment,
                payload: start..start + payload.len(),
                path: Path::new("/log"),
                offset: 40 + 100 * i,
            };
            start += payload.len();
            if let Err(e) = replayer.record(&record) {
                result = Err(e);
                break 'segments;
            }
        }
    }
    let flushed = replayer.flush();
    let result = flushed.and(result).map_err(|e| e.to_string());
    (result, fingerprint(&graph))
}

/// The edges after applying every record of `scripts` line by line to an empty graph, or
/// `None` where a record would be refused.
fn oracle(
    directed: bool,
    weighted: bool,
    scripts: &[Vec<Op>],
) -> Option<BTreeMap<(u32, u32), u64>> {
    let mut edges = BTreeMap::new();
    let mut vertices = 0usize;
    let key = |u: u32, v: u32| {
        if directed {
            (u, v)
        } else {
            (u.min(v), u.max(v))
        }
    };
    for ops in scripts {
        // Ids are interned first, then the count grows.
        let mut after = vertices + ops.iter().filter(|op| matches!(op, Op::Id(_))).count();
        for op in ops {
            match *op {
                Op::Insert(u, v, w) => {
                    after = after.max(u.max(v) as usize + 1);
                    if w.is_some_and(|w| !w.is_finite()) || (w.is_some() && !weighted) {
                        return None;
                    }
                    if u != v {
                        let bits = if weighted {
                            w.unwrap_or(1.0).to_bits()
                        } else {
                            0
                        };
                        edges.insert(key(u, v), bits);
                    }
                }
                Op::Delete(u, v) => {
                    edges.remove(&key(u, v));
                }
                Op::Grow(n) => after = after.max(n),
                Op::Id(_) | Op::Set(..) | Op::Remove(_) => {}
            }
        }
        let late = ops
            .iter()
            .any(|op| matches!(*op, Op::Set(v, _) | Op::Remove(v) if v as usize >= after));
        if late {
            return None;
        }
        vertices = after;
    }
    Some(edges)
}

fn arcs_of(directed: bool, edges: &BTreeMap<(u32, u32), u64>) -> Vec<(u64, u64)> {
    let mut arcs: Vec<(u64, u64)> = edges
        .iter()
        .flat_map(|(&(u, v), &w)| {
            let both = [(u, v), (v, u)];
            both.into_iter()
                .take(if directed { 1 } else { 2 })
                .map(move |(a, b)| (u64::from(a) << 32 | u64::from(b), w))
        })
        .collect();
    arcs.sort_unstable();
    arcs
}

fn check<C: StoreLeaf>(
    start: &dyn Fn() -> Graph<C>,
    weighted: bool,
    scripts: &[Vec<Op>],
    limit: usize,
) -> Result<(), TestCaseError>
where
    C::Item: Into<Item2>,
{
    let directed = start().is_directed();
    let records: Vec<Vec<u8>> = scripts.iter().map(|ops| record(ops).encode()).collect();
    let sequential = replay(start, &records, 1);
    let merged = replay(start, &records, limit);
    prop_assert_eq!(&merged.0, &sequential.0);
    if sequential.0.is_ok() {
        prop_assert_eq!(&merged.1, &sequential.1);
        prop_assert_eq!(merged.1.version, scripts.len() as u64);
    }
    // Ids interned by a record count as one vertex each only when new: the oracle knows
    // edges, and whether a record is refused, only for scripts without repeated ids.
    let ids: Vec<u64> = scripts
        .iter()
        .flatten()
        .filter_map(|op| match op {
            Op::Id(id) => Some(*id),
            _ => None,
        })
        .collect();
    let mut unique = ids.clone();
    unique.sort_unstable();
    unique.dedup();
    // Vertices grown after an id was interned take the next integer ids (101, … after
    // 100), which a later `Id` then names again: the oracle does not model that either.
    let first_id = scripts
        .iter()
        .position(|ops| ops.iter().any(|op| matches!(op, Op::Id(_))));
    let grown_after_ids = first_id.is_some_and(|first| {
        scripts[first..]
            .iter()
            .flatten()
            .any(|op| matches!(op, Op::Grow(_) | Op::Insert(..)))
    });
    if unique.len() == ids.len() && !grown_after_ids {
        match oracle(directed, weighted, scripts) {
            Some(edges) => {
                prop_assert!(sequential.0.is_ok(), "{:?}", sequential.0);
                let mut got = merged.1.arcs.clone();
                got.sort_unstable();
                prop_assert_eq!(got, arcs_of(directed, &edges));
            }
            None => prop_assert!(sequential.0.is_err()),
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn merged_replay_is_sequential_replay_weighted(
        directed in any::<bool>(),
        scripts in vec(vec(op(), 0..5), 0..40),
        limit in 1usize..24,
    ) {
        check(&|| Graph::<GroupMapLeaf>::new_weighted(directed), true, &scripts, limit)?;
    }

    #[test]
    fn merged_replay_is_sequential_replay_unweighted(
        directed in any::<bool>(),
        scripts in vec(vec(op(), 0..5), 0..40),
        limit in 1usize..24,
    ) {
        check(&|| Graph::<GroupLeaf>::new(directed), false, &scripts, limit)?;
    }
}

#[test]
fn a_record_that_does_not_apply_is_named_at_its_place() {
    let records: Vec<Vec<u8>> = [
        vec![Op::Insert(0, 1, None)],
        vec![Op::Insert(1, 2, None), Op::Delete(0, 1)],
        // Vertex 8 exists only after the next record: refused here.
        vec![Op::Set(8, 1)],
        vec![Op::Grow(9)],
    ]
    .iter()
    .map(|ops| record(ops).encode())
    .collect();
    let (result, _) = replay(&|| Graph::<GroupLeaf>::new(false), &records, 100);
    let message = result.unwrap_err();
    assert!(message.contains("record 3 does not apply"), "{message}");
    assert!(
        message.contains("/log") && message.contains("240"),
        "{message}"
    );
    // A weight in an unweighted graph fails the merged batch; the record is still named.
    let mut records = records[..2].to_vec();
    records.push(record(&[Op::Insert(3, 4, Some(2.0))]).encode());
    records.push(record(&[Op::Insert(4, 5, None)]).encode());
    let (result, _) = replay(&|| Graph::<GroupLeaf>::new(false), &records, 100);
    let message = result.unwrap_err();
    assert!(message.contains("record 3 does not apply"), "{message}");
    assert!(message.contains("unweighted"), "{message}");
}

/// Replays `records` merging up to `limit` operations; returns the graph's fingerprint
/// and the applies made.
fn replay_counting(records: &[Update], limit: usize) -> (Fingerprint, usize) {
    let mut graph = Graph::<GroupLeaf>::new(false);
    let mut replayer = Replayer::new(&mut graph, limit);
    for (i, update) in records.iter().enumerate() {
        let segment = SegmentBytes::new(update.encode());
        replayer
            .record(&log_record(i as u64 + 1, &segment, 40))
            .unwrap();
    }
    replayer.flush().unwrap();
    let applies = replayer.applies();
    (fingerprint(&graph), applies)
}

#[test]
fn records_adding_ids_merge_while_every_vertex_has_an_id() {
    let named = |names: &[&str], edges: &[(VertexId, VertexId)]| {
        let mut update = Update::new();
        update
            .add_vertices(names.iter().map(|n| ExternalId::Name((*n).into())))
            .insert_edges(edges);
        update
    };
    // Ids known, new and repeated, as a writer that names vertices logs them: one batch.
    let records = vec![
        named(&["a", "b"], &[(0, 1)]),
        named(&["b", "c"], &[(1, 2)]),
        named(&["c", "c", "d"], &[(2, 3), (3, 0)]),
        named(&["a"], &[]),
    ];
    let (merged, applies) = replay_counting(&records, 100);
    assert_eq!(applies, 1);
    assert_eq!(merged, replay_counting(&records, 1).0);
    assert_eq!(merged.num_vertices, 4);
    // Vertices grown past the ids by an edge get integer ids first: the batch is applied
    // before the next record adding ids, whose new id takes the vertex after them. A
    // record adding an id and growing past it goes alone.
    let mut grown = records.clone();
    grown.insert(2, Update::from_edges(vec![(1, 5)]));
    grown.push(named(&["e"], &[(9, 0)]));
    let (merged, applies) = replay_counting(&grown, 100);
    assert_eq!(merged, replay_counting(&grown, 1).0);
    assert_eq!(applies, 3);
    assert_eq!(merged.ids[6], ExternalId::Name("d".into()));
    assert_eq!(merged.ids[7], ExternalId::Name("e".into()));
    assert_eq!(merged.num_vertices, 10);
}

#[test]
fn a_record_that_does_not_decode_stops_replay_at_its_place() {
    // One record among thousands cut short: the records before it are applied (merged or
    // one by one), none after it, and the error says it does not decode.
    let bad = 5_000usize;
    let records: Vec<Vec<u8>> = (0..6_000u32)
        .map(|i| {
            let bytes = Update::from_edges(vec![(i, i + 1)]).encode();
            if i as usize + 1 == bad {
                bytes[..bytes.len() - 2].to_vec()
            } else {
                bytes
            }
        })
        .collect();
    for limit in [1 << 20, 7, 1] {
        let (result, graph) = replay(&|| Graph::<GroupLeaf>::new(false), &records, limit);
        let message = result.unwrap_err();
        assert!(message.contains("update record"), "{message}");
        assert_eq!(graph.version, bad as u64 - 1);
        assert_eq!(graph.arcs.len(), 2 * (bad - 1));
    }
}
