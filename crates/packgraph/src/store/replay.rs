//! Log replay in merged batches.
//!
//! Replaying log records one by one pays a whole [`Graph::apply`] (its plan, its sorted
//! batches, a new version) per record; a log of one-edge batches then replays at a few
//! hundred thousand records a second. [`Replayer`] instead gathers consecutive records
//! into one [`Update`] and applies that once. The result is the one sequential replay
//! gives, because an update's edge operations already take effect in the order they were
//! added (of the operations on one edge the last wins, weights included; see
//! [`Update`]): appending each record's deletes and inserts in its own order keeps the
//! order across records. What does not commute is kept apart:
//!
//! * a record that adds vertices by external id joins the batch only while no vertex is
//!   grown past the ids (every record so far, and this one, leaves the vertex count at the
//!   id count): then each id interned by the merged batch gets the vertex sequential replay
//!   gives it, since both intern the same ids in the same order and nothing else takes a
//!   vertex number. Otherwise (a vertex grown by an edge or a count before or in it) it is
//!   applied alone, after the pending records: the integer ids given to grown vertices,
//!   and so the numbers of the ids interned after them, depend on the order;
//! * a record whose property changes name a vertex that only exists after the records
//!   before it and itself (sequential replay refuses it) is applied alone, after the
//!   pending ones, so that it fails as it would have;
//! * the vertex count after the pending records is tracked exactly (the most of the graph's
//!   count, each record's `min_vertices` and its inserts' endpoints), so each record's
//!   growth check ([`check_growth`]) sees what sequential replay saw.
//!
//! Every record still raises the graph's version by one. When a merged batch does not
//! apply, its records are applied one by one instead (a failed apply changes nothing), so
//! the error names the record sequential replay would have stopped at, at its file and
//! offset.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::recover::check_growth;
use super::wal::{LogRecord, SegmentBytes, MIN_RECORD_BYTES};
use super::StoreLeaf;
use crate::graph::{ExternalId, Graph, GraphRead, Update};
use crate::{Error, Result};

/// Edge operations gathered before a merged batch is applied: large enough that the
/// per-apply costs vanish (an apply rewrites every leaf a batch touches, which for
/// scattered edges is most of them: 2^20 one-edge records applied as one batch go 1.4 to
/// 1.6 times as fast as in batches of 2^17, `packgraph-bench store --replay-batch`), small
/// enough to bound the memory replay holds (the batch, 8 bytes an edge, and the pending
/// records' places; their payloads stay in the segments' bytes, which are read whole).
pub(super) const MERGE_OPS: usize = 1 << 20;

/// A record waiting in the merged batch, and where it was read. Its update is in the batch;
/// its payload (a range of its segment's bytes) is decoded again should the batch not
/// apply, which costs far less memory than keeping every record's decoded update.
struct Pending {
    seq: u64,
    /// Index into [`Merge::segments`].
    segment: usize,
    offset: usize,
    /// Its payload's bytes in the segment.
    payload: std::ops::Range<usize>,
}

/// Applies log records to a graph in merged batches (see the module documentation).
pub(super) struct Replayer<'g, C: StoreLeaf> {
    merge: Merge<'g, C>,
    /// The update each record is decoded into, whose lists are reused from record to
    /// record.
    decoded: Update,
}

/// The merged batch and the records in it (the replayer without its decoding buffer, so
/// that a record decoded into that buffer is taken while the buffer is borrowed).
struct Merge<'g, C: StoreLeaf> {
    graph: &'g mut Graph<C>,
    /// The merged update of `pending`.
    batch: Update,
    pending: Vec<Pending>,
    /// Edge operations in `batch`.
    ops: usize,
    /// The graph's vertex count once `pending` is applied.
    vertices: usize,
    /// Whether that count is the id count too: no vertex grown past the ids since the
    /// graph's last apply, so a record adding ids may still join the batch.
    ids_in_step: bool,
    /// The ids `pending` interns that the graph does not have yet.
    new_ids: HashSet<ExternalId>,
    /// Applies made to the graph (merged batches and records alone).
    applies: usize,
    /// The segments `pending` was read from, and their files.
    segments: Vec<(SegmentBytes, PathBuf)>,
    /// Gather at most this many edge operations or records (1: sequential replay).
    limit: usize,
}

impl<'g, C: StoreLeaf> Replayer<'g, C> {
    /// A replayer applying to `graph`, merging up to `limit` edge operations (and
    /// records) a batch.
    pub(super) fn new(graph: &'g mut Graph<C>, limit: usize) -> Self {
        let vertices = graph.num_vertices();
        let ids_in_step = graph.ids().len() == vertices;
        Self {
            merge: Merge {
                graph,
                batch: Update::new(),
                pending: Vec::new(),
                ops: 0,
                vertices,
                ids_in_step,
                new_ids: HashSet::new(),
                applies: 0,
                segments: Vec::new(),
                limit: limit.max(1),
            },
            decoded: Update::new(),
        }
    }

    /// Applies made to the graph (merged batches and records alone).
    #[cfg(test)]
    pub(super) fn applies(&self) -> usize {
        self.merge.applies
    }

    /// Takes `record`: checks it and adds it to the batch, applying the batch when it is
    /// full or the record must go alone.
    ///
    /// # Errors
    /// A record that does not decode or fails the growth check is an unlocated
    /// [`Error::Corrupt`] (the log scan names the record's place); one that does not apply
    /// is located here, since it may be the batch of an earlier record that failed.
    pub(super) fn record(&mut self, record: &LogRecord<'_>) -> Result<()> {
        self.decoded.decode_into(record.payload())?;
        self.merge.take(record, &self.decoded)
    }

    /// Applies the pending records (as one batch, or one by one if the batch fails).
    pub(super) fn flush(&mut self) -> Result<()> {
        self.merge.flush()
    }
}

impl<C: StoreLeaf> Merge<'_, C> {
    /// [`Replayer::record`] of `record`, decoded into `update`.
    fn take(&mut self, record: &LogRecord<'_>, update: &Update) -> Result<()> {
        let seq = record.seq;
        let has_ids = !update.vertices().is_empty();
        if has_ids && !self.ids_in_step {
            self.flush()?;
        }
        check_growth(update, self.vertices)
            .map_err(|reason| Error::corrupt(format!("record {seq}: {reason}")))?;
        // The ids it adds that neither the graph nor a pending record has.
        let mut added: Vec<&ExternalId> = Vec::new();
        for id in update.vertices() {
            if self.graph.ids().internal_id(id).is_none()
                && !self.new_ids.contains(id)
                && !added.contains(&id)
            {
                added.push(id);
            }
        }
        let interned = self.vertices + added.len();
        let vertices = vertices_after(interned, update);
        let late_property = update
            .property_changes()
            .iter()
            .any(|c| c.vertex as usize >= vertices);
        // Ids merge only into a batch whose vertices all have ids, this record's included.
        let ids_apart = has_ids && !(self.ids_in_step && vertices == interned);
        if ids_apart || late_property {
            self.flush()?;
            return self.apply_alone(seq, record.path, record.offset, update);
        }
        self.ids_in_step &= vertices == interned;
        self.new_ids.extend(added.into_iter().cloned());
        let segment = self.segment_of(record);
        self.batch.append(update);
        self.ops += update.inserts().len() + update.deletes().len();
        self.vertices = vertices;
        self.pending.push(Pending {
            seq,
            segment,
            offset: record.offset,
            payload: record.payload.clone(),
        });
        if self.ops >= self.limit || self.pending.len() >= self.limit {
            self.flush()?;
        }
        Ok(())
    }

    /// The index in `segments` of `record`'s segment, added (and room reserved for the
    /// records it may still hold, at most its bytes left over [`MIN_RECORD_BYTES`]: no
    /// growth while a segment is gathered) when it is new.
    fn segment_of(&mut self, record: &LogRecord<'_>) -> usize {
        let known = self
            .segments
            .last()
            .is_some_and(|(bytes, _)| SegmentBytes::ptr_eq(bytes, record.segment));
        if !known {
            self.segments.push((
                SegmentBytes::clone(record.segment),
                record.path.to_path_buf(),
            ));
            let left = record.segment.len().saturating_sub(record.offset) / MIN_RECORD_BYTES;
            let room = left.min(self.limit.saturating_sub(self.pending.len()));
            self.pending.reserve(room);
            if self.batch.is_empty() {
                // Room for an edge a record, as one-edge records (the most a log holds)
                // take.
                self.batch = Update::from_edges(Vec::with_capacity(room));
            }
        }
        self.segments.len() - 1
    }

    /// Applies the pending records (as one batch, or one by one if the batch fails).
    fn flush(&mut self) -> Result<()> {
        let pending = std::mem::take(&mut self.pending);
        let batch = std::mem::take(&mut self.batch);
        self.ops = 0;
        let result = match pending.len() {
            0 => Ok(()),
            1 => self.apply_each(&pending),
            n => {
                let version = self.graph.version();
                self.applies += 1;
                if self.graph.apply(&batch).is_ok() {
                    self.graph.set_version(version + n as u64);
                    Ok(())
                } else {
                    self.apply_each(&pending)
                }
            }
        };
        self.segments.clear();
        self.new_ids.clear();
        self.in_step();
        result
    }

    /// Takes the vertex count from the graph after an apply (or none).
    fn in_step(&mut self) {
        self.vertices = self.graph.num_vertices();
        self.ids_in_step = self.graph.ids().len() == self.vertices;
    }

    /// Applies records one by one (decoded again from their payloads, which decoded
    /// before), stopping at the first that fails.
    fn apply_each(&mut self, pending: &[Pending]) -> Result<()> {
        for p in pending {
            let (bytes, path) = &self.segments[p.segment];
            let (bytes, path) = (SegmentBytes::clone(bytes), path.clone());
            let update = Update::decode(&bytes[p.payload.clone()])?;
            self.apply_alone(p.seq, &path, p.offset, &update)?;
        }
        Ok(())
    }

    fn apply_alone(&mut self, seq: u64, path: &Path, offset: usize, update: &Update) -> Result<()> {
        self.applies += 1;
        self.graph.apply(update).map_err(|e| Error::Corrupt {
            path: Some(path.to_path_buf()),
            offset: Some(offset as u64),
            reason: format!(
                "record {seq} does not decode: record {seq} does not apply to the graph: {e}"
            ),
        })?;
        self.in_step();
        Ok(())
    }
}

/// The vertex count after applying `update` to a graph of `vertices` vertices (counting
/// the ids it interns): edges' endpoints past the count add vertices, deletes' do not.
fn vertices_after(vertices: usize, update: &Update) -> usize {
    let endpoints = update
        .inserts()
        .iter()
        .map(|&(u, v)| u.max(v) as usize + 1)
        .max()
        .unwrap_or(0);
    vertices.max(update.required_vertices()).max(endpoints)
}
