//! Update batches (`packgraph ingest`'s text format, batches ended by `commit`) applied to a
//! distributed graph: rank 0 reads a batch and sends each operation to the owners of its
//! endpoints; the owners intern new ids in their part of the dictionary, resolve the other
//! endpoint, and apply the batch to their store as one core [`Update`], operations in line
//! order (of the operations on one edge the last wins), as one process applies it. A delete
//! naming an id no process knows is dropped, as `packgraph ingest` drops it.

use std::io::BufReader;
use std::path::Path;

use packgraph::graph::{ExternalId, Graph, IdKind, Update, MAX_VERTICES};
use packgraph::io::updates::{UpdateOp, UpdateReader};

use super::load::{resolve, MISSING};
use super::{agree, alltoall_u64, owner_of_id, DistError, Part, Store};
use crate::comm::{Comm, Group};

/// An operation as sent to an owner: kind (0 insert, 1 delete), ends, weight bits and
/// whether a weight was given.
const RECORD: usize = 5;

/// What the updates did, over all processes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Applied {
    /// Batches applied.
    pub batches: usize,
    /// Operations read.
    pub ops: usize,
}

/// Applies every batch of the update file `path` to `part`, one after another. A
/// collective; the file is read by rank 0.
///
/// # Errors
/// [`DistError::Usage`] on every process for a file that cannot be opened or a malformed
/// line (naming file and line), or a weight given to an unweighted graph; batches before
/// the bad one stay applied.
pub fn apply_file(comm: &dyn Comm, part: &mut Part, path: &Path) -> Result<Applied, DistError> {
    // A numbered input's update lines name its vertices by its ids, names included.
    let kind = match &part.file_ids {
        Some(ids) if ids.ids().has_names() => IdKind::Name,
        _ => IdKind::Int,
    };
    let reader = if comm.rank() == 0 {
        std::fs::File::open(path)
            .map(|f| Some(UpdateReader::new(BufReader::new(f), path).ids(kind)))
            .map_err(|e| DistError::Usage(format!("{}: {e}", path.display())))
    } else {
        Ok(None)
    };
    let mut reader = agree(comm, reader)?;
    let mut applied = Applied::default();
    loop {
        let weighted = part.weighted();
        let batch = match reader.as_mut() {
            Some(r) => next_batch(r, weighted, part.file_ids.as_mut()),
            None => Ok(None),
        };
        let batch = agree(comm, batch)?;
        let mut more = [u64::from(batch.is_some())];
        comm.allreduce_max(Group::World, &mut more);
        if more[0] == 0 {
            return Ok(applied);
        }
        let ops = batch.unwrap_or_default();
        applied.batches += 1;
        applied.ops += ops.len() / RECORD;
        apply_batch(comm, part, route(&ops, part.size))?;
    }
}

/// The next batch from `reader` as records, or `None` at the end. `file_ids`: the ids of a
/// numbered input (rank 0's), whose keys the records carry; the batch's new vertices are
/// numbered there as the core numbers them (in the order the inserts name them), and a
/// delete naming no vertex is dropped here.
fn next_batch<R: std::io::BufRead>(
    reader: &mut UpdateReader<R>,
    weighted: bool,
    mut file_ids: Option<&mut Graph>,
) -> Result<Option<Vec<u64>>, DistError> {
    let name = reader.source_name().display().to_string();
    let Some(batch) = reader
        .next_batch()
        .map_err(|e| DistError::Usage(e.to_string()))?
    else {
        return Ok(None);
    };
    // The first bad line in line order: a name where ids are integers, a weight given to
    // an unweighted graph.
    for (op, &line) in batch.ops.iter().zip(&batch.lines) {
        let (UpdateOp::Insert(u, v, _) | UpdateOp::Delete(u, v)) = op;
        if let (None, Some(ExternalId::Name(n))) = (
            &file_ids,
            [u, v]
                .into_iter()
                .find(|x| matches!(x, ExternalId::Name(_))),
        ) {
            return Err(DistError::Usage(format!(
                "{name}:{line}: vertex ids must be integers: `{n}`"
            )));
        }
        if let (UpdateOp::Insert(_, _, Some(_)), false) = (op, weighted) {
            return Err(DistError::Usage(format!(
                "{name}:{line}: a weight given to an unweighted graph"
            )));
        }
    }
    // A numbered input's keys: the inserts' ends interned first, as the core plans a
    // batch's vertices before its operations.
    if let Some(ids) = file_ids.as_deref_mut() {
        let ends: Vec<ExternalId> = batch
            .ops
            .iter()
            .filter_map(|op| match op {
                UpdateOp::Insert(u, v, _) => Some([u.clone(), v.clone()]),
                UpdateOp::Delete(..) => None,
            })
            .flatten()
            .collect();
        ids.intern(&ends)
            .map_err(|e| DistError::Failed(format!("{name}: {e}")))?;
    }
    let key = |id: &ExternalId| match (&file_ids, id) {
        (Some(ids), id) => ids.ids().internal_id(id).map(u64::from),
        (None, ExternalId::Int(x)) => Some(*x),
        (None, ExternalId::Name(_)) => None,
    };
    let mut records = Vec::with_capacity(batch.ops.len() * RECORD);
    for (op, &line) in batch.ops.iter().zip(&batch.lines) {
        match op {
            UpdateOp::Insert(u, v, w) => {
                let (Some(u), Some(v)) = (key(u), key(v)) else {
                    return Err(DistError::Failed(format!(
                        "{name}:{line}: an inserted vertex was not numbered"
                    )));
                };
                let bits = w.unwrap_or(1.0).to_bits();
                records.extend([0, u, v, bits, u64::from(w.is_some())]);
            }
            UpdateOp::Delete(u, v) => {
                if let (Some(u), Some(v)) = (key(u), key(v)) {
                    records.extend([1, u, v, 0, 0]);
                }
            }
        }
    }
    Ok(Some(records))
}

/// The records for each owner of an endpoint (once where both ends have one owner).
fn route(records: &[u64], size: usize) -> Vec<Vec<u64>> {
    let mut parts = vec![Vec::new(); size];
    for r in records.chunks_exact(RECORD) {
        let (ou, ov) = (owner_of_id(r[1], size), owner_of_id(r[2], size));
        parts[ou].extend_from_slice(r);
        if ov != ou {
            parts[ov].extend_from_slice(r);
        }
    }
    parts
}

/// Interns, resolves and applies the records sent here. A collective.
fn apply_batch(comm: &dyn Comm, part: &mut Part, parts: Vec<Vec<u64>>) -> Result<(), DistError> {
    let records: Vec<u64> = alltoall_u64(comm, parts).concat();
    let records: Vec<&[u64]> = records.chunks_exact(RECORD).collect();
    for r in records.iter().filter(|r| r[0] == 0) {
        for x in [r[1], r[2]] {
            if owner_of_id(x, part.size) == part.rank && !part.index.contains_key(&x) {
                part.add_owned(x);
            }
        }
    }
    let mut max = [part.owned() as u64];
    comm.allreduce_max(Group::World, &mut max);
    let mut total = [part.owned() as u64];
    comm.allreduce_sum(Group::World, &mut total);
    let slots = max[0] as usize * part.size;
    if slots > MAX_VERTICES {
        let e = format!("{slots} vertex slots: more than the {MAX_VERTICES} dense ids");
        return Err(DistError::Failed(e));
    }
    part.slots = slots;
    part.num_vertices = total[0] as usize;
    let mut ends: Vec<u64> = records.iter().flat_map(|r| [r[1], r[2]]).collect();
    ends.sort_unstable();
    ends.dedup();
    let dense = resolve(comm, part, &ends);
    // Store vertices of the ends: new ones for inserts, none for deletes of edges the store
    // cannot hold.
    let mut local = vec![MISSING; ends.len()];
    for r in &records {
        for x in [r[1], r[2]] {
            let k = ends.binary_search(&x).expect("every end was resolved");
            if dense[k] != MISSING && (r[0] == 0 || part.store_of.contains_key(&(dense[k] as u32)))
            {
                local[k] = u64::from(part.store_vertex(dense[k] as u32));
            }
        }
    }
    let find = |x: u64| local[ends.binary_search(&x).expect("every end was resolved")];
    let update = build(&records, find, part.weighted(), part.dense_of.len());
    let applied = match &mut part.store {
        Store::Plain(g) => g.apply(&update).map(drop),
        Store::Weighted(g) => g.apply(&update).map(drop),
    };
    agree(comm, applied.map_err(|e| DistError::Failed(e.to_string())))
}

/// The core update of `records` in line order (ends as store vertices by `find`): runs of
/// deletes and of inserts, over at least `vertices` store vertices.
fn build(records: &[&[u64]], find: impl Fn(u64) -> u64, weighted: bool, vertices: usize) -> Update {
    let mut update = Update::new();
    update.min_vertices(vertices);
    for run in records.chunk_by(|a, b| a[0] == b[0]) {
        let pairs = run.iter().filter_map(|r| {
            let (u, v) = (find(r[1]), find(r[2]));
            (u != MISSING && v != MISSING).then_some((u as u32, v as u32, f64::from_bits(r[3])))
        });
        if run[0][0] == 1 {
            let deletes: Vec<(u32, u32)> = pairs.map(|(u, v, _)| (u, v)).collect();
            update.delete_edges(&deletes);
        } else if weighted {
            update.insert_weighted_edges(&pairs.collect::<Vec<_>>());
        } else {
            let inserts: Vec<(u32, u32)> = pairs.map(|(u, v, _)| (u, v)).collect();
            update.insert_edges(&inserts);
        }
    }
    update
}
