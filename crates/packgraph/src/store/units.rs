//! A graph version as checkpoint units and back: the pages of its edge arrays, the base
//! unit that lists them, its vertex ids and properties (since format 5 as subtree units
//! under an index unit each, the PART paper's incremental checkpoint, section 4.1: a unit
//! per subtree of [`SUBTREE_VERTICES`] vertices, content-addressed like pages, so that a
//! new base writes only the subtrees that changed), and the delta (the net change of
//! edges and vertices since a base, as an [`Update`]).

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::format::{in_file, reader, UnitKind, UnitRef, UNIT_REF_BYTES};
use crate::codec::bytes::{ByteReader, ByteWriter, BytesError};
use crate::graph::{
    EdgeLeaf, ExternalId, Graph, GraphRead, IdMap, Properties, PropertyValue, Update, VertexId,
};
use crate::pma::{
    ArrayDims, GroupLeaf, GroupMapLeaf, IntoPma, PageSlot, PmaConfig, PmaParts, PmaPartsRef,
};
use crate::{Error, Result};

/// The leaf codecs a store can hold: [`EdgeLeaf`] with a checked rebuild from arrays.
pub trait StoreLeaf: EdgeLeaf + Sized {
    /// Rebuilds a graph from its arrays (whether it is directed, its vertex count, its out-
    /// and in-arrays), validating them fully.
    #[doc(hidden)]
    fn from_arrays<A: IntoPma>(d: bool, n: usize, out: A, inc: Option<A>) -> Result<Graph<Self>>;

    /// [`StoreLeaf::from_arrays`] for arrays whose leaves are in byte codes
    /// (page units of kind 1: an unweighted graph of format 1, a weighted one before 6).
    #[doc(hidden)]
    fn from_legacy_arrays<A: IntoPma>(
        directed: bool,
        num_vertices: usize,
        out: A,
        incoming: Option<A>,
    ) -> Result<Graph<Self>> {
        Self::from_arrays(directed, num_vertices, out, incoming)
    }
}

impl StoreLeaf for GroupLeaf {
    fn from_arrays<A: IntoPma>(d: bool, n: usize, out: A, inc: Option<A>) -> Result<Graph<Self>> {
        Graph::from_parts(d, n, out, inc)
    }

    fn from_legacy_arrays<A: IntoPma>(
        d: bool,
        n: usize,
        out: A,
        inc: Option<A>,
    ) -> Result<Graph<Self>> {
        Graph::from_byte_coded_parts(d, n, out, inc)
    }
}

impl StoreLeaf for GroupMapLeaf {
    fn from_arrays<A: IntoPma>(d: bool, n: usize, out: A, inc: Option<A>) -> Result<Graph<Self>> {
        Graph::from_weighted_parts(d, n, out, inc)
    }

    fn from_legacy_arrays<A: IntoPma>(
        d: bool,
        n: usize,
        out: A,
        inc: Option<A>,
    ) -> Result<Graph<Self>> {
        Graph::from_byte_coded_weighted_parts(d, n, out, inc)
    }
}

/// The kind of the pages this build writes for a graph of leaves `C`.
pub(super) fn page_kind<C: StoreLeaf>() -> UnitKind {
    if C::WEIGHTED {
        UnitKind::GroupMapPage
    } else {
        UnitKind::GroupPage
    }
}

/// One edge array's pages as unit payloads, in page order.
pub(super) fn page_payloads(parts: &PmaPartsRef<'_>) -> Vec<Vec<u8>> {
    let leaves_per_page = parts
        .data
        .first()
        .map_or(1, |page| (page.len() / parts.leaf_bytes).max(1));
    parts
        .data
        .par_iter()
        .enumerate()
        .map(|(p, page)| {
            let first = p * leaves_per_page;
            let count = page.len() / parts.leaf_bytes;
            let used = &parts.used[first..first + count];
            let heads = &parts.heads[first..first + count];
            let data: usize = used.iter().map(|&u| u as usize).sum();
            let mut w = ByteWriter::with_capacity(4 + count * 12 + data);
            w.u32(count as u32).u32s(used).u64s(heads);
            for (j, &u) in used.iter().enumerate() {
                let leaf = &page[j * parts.leaf_bytes..];
                w.bytes(&leaf[..u as usize]);
            }
            w.into_vec()
        })
        .collect()
}

/// The leaf count of the page unit `payload` (read at `offset` of file `path`): where
/// its leaves go in the array, before [`fill_page`] copies them there.
pub(super) fn page_leaf_count(payload: &[u8], path: &Path, offset: u64) -> Result<usize> {
    leaf_count(&mut reader(payload, offset)).map_err(in_file(path))
}

fn leaf_count(r: &mut ByteReader<&[u8]>) -> Result<usize, BytesError> {
    let at = r.offset();
    // Each leaf takes at least its size and its head.
    let count = r.count_u32(12, "the page's leaf count")?;
    if count == 0 {
        return Err(r.invalid(at, "the page's leaf count", "a page of 0 leaves"));
    }
    Ok(count)
}

/// Copies the page unit `payload` into `slot`, which holds as many leaves as the page
/// ([`page_leaf_count`]): each leaf's used bytes, its free tail zeroed.
///
/// `path` names the file, made only for an error.
pub(super) fn fill_page(
    payload: &[u8],
    path: impl FnOnce() -> PathBuf,
    offset: u64,
    slot: &mut PageSlot<'_>,
) -> Result<()> {
    fill_page_from(&mut reader(payload, offset), slot).map_err(|e| in_file(&path())(e))
}

fn fill_page_from(r: &mut ByteReader<&[u8]>, slot: &mut PageSlot<'_>) -> Result<(), BytesError> {
    let count = leaf_count(r)?;
    let leaf_bytes = slot.leaf_bytes;
    if count != slot.used.len() || slot.data_len() != count * leaf_bytes || leaf_bytes == 0 {
        return Err(r.invalid(0, "the page's leaf count", "no room for the page's leaves"));
    }
    let sizes_at = r.offset();
    let sizes = r.take(count * 4, "the leaf sizes")?;
    for (used, bytes) in slot.used.iter_mut().zip(sizes.chunks_exact(4)) {
        *used = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    }
    if let Some(j) = slot.used.iter().position(|&u| u as usize > leaf_bytes) {
        let used = slot.used[j];
        return Err(r.invalid(
            sizes_at + 4 * j as u64,
            "a leaf size",
            format!("a leaf uses {used} of {leaf_bytes} bytes"),
        ));
    }
    let heads = r.take(count * 8, "the leaf heads")?;
    for (head, bytes) in slot.heads.iter_mut().zip(heads.chunks_exact(8)) {
        *head = u64::from_le_bytes(bytes.try_into().unwrap_or_default());
    }
    for j in 0..count {
        let bytes = r.take(slot.used[j] as usize, "the leaf bytes")?;
        slot.push_leaf(bytes);
    }
    r.finish("the page's last leaf")
}

/// Appends the page unit `payload` to `parts` (leaves padded back to `leaf_bytes`).
#[cfg(test)]
pub(super) fn read_page(
    payload: &[u8],
    path: &Path,
    offset: u64,
    parts: &mut PmaParts,
) -> Result<()> {
    let count = page_leaf_count(payload, path, offset)?;
    let first = parts.used.len();
    parts.used.resize(first + count, 0);
    parts.heads.resize(first + count, 0);
    let data = parts.data.len();
    parts.data.resize(data + count * parts.leaf_bytes, 0);
    let mut slot = PageSlot::new(
        parts.leaf_bytes,
        &mut parts.data[data..],
        &mut parts.used[first..],
        &mut parts.heads[first..],
    );
    fill_page(payload, || path.to_path_buf(), offset, &mut slot)
}

/// One edge array's shape in the base unit.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ArrayShape {
    pub(super) config: PmaConfig,
    pub(super) leaf_bytes: usize,
    pub(super) num_leaves: usize,
    pub(super) len: usize,
    pub(super) pages: Vec<UnitRef>,
}

impl ArrayShape {
    pub(super) fn of(parts: &PmaPartsRef<'_>, pages: Vec<UnitRef>) -> Self {
        Self {
            config: parts.config.clone(),
            leaf_bytes: parts.leaf_bytes,
            num_leaves: parts.used.len(),
            len: parts.len,
            pages,
        }
    }

    /// Writes the configuration words, `page_bytes`, the dimensions, the page count and
    /// the page references.
    fn put(&self, w: &mut ByteWriter) {
        self.config.write_stored(w);
        w.size(self.config.page_bytes);
        self.dims().write(w);
        w.size(self.pages.len());
        for page in &self.pages {
            page.put(w);
        }
    }

    fn get(r: &mut ByteReader<&[u8]>) -> Result<Self, BytesError> {
        let mut config = PmaConfig::read_stored(r)?;
        config.page_bytes = r.size("the page size")?;
        let dims = ArrayDims::read(r)?;
        let pages = r.count(UNIT_REF_BYTES as u64, "the page count")?;
        let pages = (0..pages)
            .map(|_| UnitRef::get(r))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            config,
            leaf_bytes: dims.leaf_bytes,
            num_leaves: dims.num_leaves,
            len: dims.len,
            pages,
        })
    }

    fn dims(&self) -> ArrayDims {
        ArrayDims {
            leaf_bytes: self.leaf_bytes,
            num_leaves: self.num_leaves,
            len: self.len,
        }
    }

    /// Zeroed arrays of this shape to copy the pages into.
    pub(super) fn zeroed_parts(&self) -> Result<PmaParts> {
        let bytes = self
            .num_leaves
            .checked_mul(self.leaf_bytes)
            .filter(|&b| b < 1 << 46)
            .ok_or_else(|| Error::corrupt("an edge array too large to be real"))?;
        if self.leaf_bytes == 0 || self.leaf_bytes > 1 << 20 {
            return Err(Error::corrupt(format!(
                "the base unit's leaf size {} is not valid",
                self.leaf_bytes
            )));
        }
        Ok(PmaParts {
            config: self.config.clone(),
            leaf_bytes: self.leaf_bytes,
            len: self.len,
            data: vec![0; bytes],
            used: vec![0; self.num_leaves],
            heads: vec![0; self.num_leaves],
        })
    }
}

/// The base unit: the vertex count and the shape and pages of each edge array.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Base {
    pub(super) num_vertices: u64,
    pub(super) out: ArrayShape,
    pub(super) incoming: Option<ArrayShape>,
}

impl Base {
    pub(super) fn encode(&self) -> Vec<u8> {
        let pages = self.out.pages.len() + self.incoming.as_ref().map_or(0, |s| s.pages.len());
        let mut w = ByteWriter::with_capacity(256 + pages * UNIT_REF_BYTES);
        w.u64(self.num_vertices)
            .u8(u8::from(self.incoming.is_some()));
        self.out.put(&mut w);
        if let Some(incoming) = &self.incoming {
            incoming.put(&mut w);
        }
        w.into_vec()
    }

    pub(super) fn decode(payload: &[u8], path: &Path, offset: u64) -> Result<Self> {
        Self::read(&mut reader(payload, offset)).map_err(in_file(path))
    }

    fn read(r: &mut ByteReader<&[u8]>) -> Result<Self, BytesError> {
        let num_vertices = r.u64("the vertex count")?;
        let at = r.offset();
        let has_in = r.u8("the in-array flag")?;
        if has_in > 1 {
            return Err(r.invalid(at, "the in-array flag", format!("in-array flag {has_in}")));
        }
        let out = ArrayShape::get(r)?;
        let incoming = if has_in == 1 {
            Some(ArrayShape::get(r)?)
        } else {
            None
        };
        r.finish("the base unit's last array")?;
        Ok(Self {
            num_vertices,
            out,
            incoming,
        })
    }

    /// Every page unit, out-array first.
    pub(super) fn pages(&self) -> impl Iterator<Item = &UnitRef> {
        self.out
            .pages
            .iter()
            .chain(self.incoming.iter().flat_map(|s| s.pages.iter()))
    }
}

/// Vertices per subtree unit of the id dictionary and of each property column: the
/// vertices whose 4-byte big-endian keys share their first 3 bytes, the subtree one value
/// node of a PART holds (up to 256 keys). A change to one vertex rewrites its subtree's
/// unit (about 3 KiB of property values or ids) and the index; units past 256 vertices
/// would rewrite more for a clustered change, smaller ones cost more index per value (each
/// unit takes 36 bytes in its pack and 40 in the index). The unit tests use 16, for many
/// units in small graphs: readers take any run length, since the index lists the units,
/// not their ranges.
#[cfg(not(test))]
pub(super) const SUBTREE_VERTICES: u64 = 256;
#[cfg(test)]
pub(super) const SUBTREE_VERTICES: u64 = 16;

/// Calls `emit` on each run of `items` (vertex, item) whose vertices share one subtree of
/// [`SUBTREE_VERTICES`] (the items come in vertex order).
fn for_each_subtree<T>(items: impl Iterator<Item = (u64, T)>, mut emit: impl FnMut(Vec<T>)) {
    let mut run = Vec::new();
    let mut run_subtree = 0;
    for (v, item) in items {
        let subtree = v / SUBTREE_VERTICES;
        if subtree != run_subtree && !run.is_empty() {
            emit(std::mem::take(&mut run));
        }
        run_subtree = subtree;
        run.push(item);
    }
    if !run.is_empty() {
        emit(run);
    }
}

/// The id dictionary as subtree units (format 5): its dense range, and per subtree of
/// internal ids past the range the payload of an [`UnitKind::IdSubtree`](super::format::UnitKind)
/// unit, an encoded update adding their external ids in internal order.
pub(super) fn id_subtrees(ids: &IdMap) -> ((u64, usize), Vec<Vec<u8>>) {
    let ((first, dense), rest) = ids.split();
    let mut runs: Vec<Vec<&ExternalId>> = Vec::new();
    for_each_subtree((dense as u64..).zip(rest), |run| runs.push(run));
    let payloads = runs
        .into_par_iter()
        .map(|run| {
            let mut update = Update::new();
            update.add_vertices(run.into_iter().cloned());
            update.encode()
        })
        .collect();
    ((first, dense), payloads)
}

/// The properties as subtree units (format 5): per column in name order, per subtree of
/// vertices holding a value, the payload of a property subtree unit (an encoded update
/// setting those values in vertex order).
pub(super) fn property_subtrees(props: &Properties) -> Vec<Vec<u8>> {
    let mut runs: Vec<(&str, Vec<(VertexId, &PropertyValue)>)> = Vec::new();
    for name in props.names() {
        let column = props.column(name).into_iter().flatten();
        for_each_subtree(column.map(|(v, value)| (u64::from(v), (v, value))), |run| {
            runs.push((name, run));
        });
    }
    runs.into_par_iter()
        .map(|(name, run)| {
            let mut update = Update::new();
            for (v, value) in run {
                update.set_property(name, v, value.clone());
            }
            update.encode()
        })
        .collect()
}

/// The ids index unit: the first id of the dense range (u64), its length (u64), the
/// subtree count (u64), then a reference per id subtree unit in internal order.
pub(super) fn ids_index((first, dense): (u64, usize), subtrees: &[UnitRef]) -> Vec<u8> {
    let mut w = ByteWriter::with_capacity(24 + subtrees.len() * UNIT_REF_BYTES);
    w.u64(first).size(dense);
    put_refs(&mut w, subtrees);
    w.into_vec()
}

/// The properties index unit: how many of the units listed last are overlays (u64), the
/// unit count (u64), then a reference per property subtree unit, in the order they are
/// applied. An overlay holds the changes since the subtree units before it (values set or
/// removed anywhere), so that a new base after scattered changes need not rewrite most
/// subtrees.
pub(super) fn properties_index(units: &[UnitRef], overlays: usize) -> Vec<u8> {
    let mut w = ByteWriter::with_capacity(16 + units.len() * UNIT_REF_BYTES);
    w.size(overlays);
    put_refs(&mut w, units);
    w.into_vec()
}

fn put_refs(w: &mut ByteWriter, units: &[UnitRef]) {
    w.size(units.len());
    for unit in units {
        unit.put(w);
    }
}

fn get_refs(r: &mut ByteReader<&[u8]>) -> Result<Vec<UnitRef>, BytesError> {
    let count = r.count(UNIT_REF_BYTES as u64, "the subtree unit count")?;
    let units = (0..count)
        .map(|_| UnitRef::get(r))
        .collect::<Result<Vec<_>, _>>()?;
    r.finish("the index unit's last reference")?;
    Ok(units)
}

/// The dense range and the id subtree units an ids index unit (at `offset` of `path`)
/// lists.
pub(super) fn read_ids_index(
    payload: &[u8],
    path: &Path,
    offset: u64,
) -> Result<((u64, usize), Vec<UnitRef>)> {
    let mut r = reader(payload, offset);
    let read = |r: &mut ByteReader<&[u8]>| Ok((read_id_range(r)?, get_refs(r)?));
    read(&mut r).map_err(in_file(path))
}

/// The property units a properties index unit (at `offset` of `path`) lists, and how many
/// of the last of them are overlays.
pub(super) fn read_properties_index(
    payload: &[u8],
    path: &Path,
    offset: u64,
) -> Result<(Vec<UnitRef>, usize)> {
    let read = |r: &mut ByteReader<&[u8]>| {
        let overlays = r.size("the overlay count")?;
        let at = r.offset();
        let units = get_refs(r)?;
        if overlays > units.len() {
            let problem = format!("{overlays} overlays among {} units", units.len());
            return Err(r.invalid(at, "the overlay count", problem));
        }
        Ok((units, overlays))
    };
    read(&mut reader(payload, offset)).map_err(in_file(path))
}

/// The overlay unit of `current`'s properties over `subtrees` (the values some property
/// subtree units hold): the changes since, encoded.
pub(super) fn property_overlay(subtrees: &Properties, current: &Properties) -> Vec<u8> {
    let mut update = Update::new();
    property_delta(subtrees, current, &mut update);
    update.encode()
}

/// A subtree unit's payload and where it lies: its file and the payload's offset there.
pub(super) type Located<'a> = (&'a [u8], PathBuf, u64);

/// Decodes the subtree units `subtrees` (in parallel); each must be an update that holds
/// only what `holds_only` accepts, `what` naming the kind in errors.
pub(super) fn decode_subtrees(
    subtrees: &[Located<'_>],
    what: &str,
    holds_only: fn(&Update) -> bool,
) -> Result<Vec<Update>> {
    subtrees
        .par_iter()
        .map(|(payload, path, at)| {
            let update = Update::decode(payload).map_err(|e| locate(e, path, *at))?;
            if !holds_only(&update) {
                return Err(Error::Corrupt {
                    path: Some(path.clone()),
                    offset: Some(*at),
                    reason: format!("{what} holds more than {what} may"),
                });
            }
            Ok(update)
        })
        .collect()
}

/// Whether `update` only adds vertices (what an id subtree unit holds).
pub(super) fn only_vertices(update: &Update) -> bool {
    let mut only = Update::new();
    only.add_vertices(update.vertices().iter().cloned());
    *update == only
}

/// Whether `update` only sets or removes property values (what a properties unit or a
/// property subtree unit holds).
pub(super) fn only_properties(update: &Update) -> bool {
    update.vertices().is_empty()
        && update.required_vertices() == 0
        && update.inserts().is_empty()
        && update.deletes().is_empty()
}

/// The id dictionary of the dense range `range` and the id subtree units `subtrees`, in
/// internal order.
pub(super) fn read_id_subtrees(range: (u64, usize), subtrees: &[Located<'_>]) -> Result<IdMap> {
    let updates = decode_subtrees(subtrees, "an id subtree unit", only_vertices)?;
    let rest = updates.iter().flat_map(|u| u.vertices().iter().cloned());
    IdMap::from_split(range, rest).map_err(|_| {
        let (path, offset) = subtrees
            .first()
            .map(|(_, path, at)| (Some(path.clone()), Some(*at)))
            .unwrap_or_default();
        Error::Corrupt {
            path,
            offset,
            reason: "the id dictionary repeats an id or holds too many".into(),
        }
    })
}

/// The ids unit of format 1 to 4: the dense range, then an encoded update adding the
/// other ids in order.
#[cfg(test)]
pub(super) fn ids_payload(ids: &IdMap) -> Vec<u8> {
    let ((first, dense), rest) = ids.split();
    let mut update = Update::new();
    update.add_vertices(rest.cloned());
    let mut w = ByteWriter::default();
    w.u64(first).size(dense).bytes(&update.encode());
    w.into_vec()
}

/// The id dictionary of an ids unit of format 1 to 4 (at `offset` of `path`).
pub(super) fn read_ids(payload: &[u8], path: &Path, offset: u64) -> Result<IdMap> {
    let mut r = reader(payload, offset);
    let (first, dense) = read_id_range(&mut r).map_err(in_file(path))?;
    let update_at = r.offset();
    let update = Update::decode(r.take_rest()).map_err(|e| locate(e, path, update_at))?;
    IdMap::from_split((first, dense), update.vertices().iter().cloned()).map_err(|_| {
        Error::Corrupt {
            path: Some(path.to_path_buf()),
            offset: Some(update_at),
            reason: "the id dictionary repeats an id or holds too many".into(),
        }
    })
}

/// The dense range at the start of the ids unit: first id, id count.
fn read_id_range(r: &mut ByteReader<&[u8]>) -> Result<(u64, usize), BytesError> {
    let first = r.u64("the first id")?;
    let dense = r.size_at_most(u64::from(u32::MAX) + 1, "the dense id count")?;
    Ok((first, dense))
}

/// An [`Error::Corrupt`] from decoding an embedded update, placed in the file.
pub(super) fn locate(error: Error, path: &Path, base: u64) -> Error {
    match error {
        Error::Corrupt { offset, reason, .. } => Error::Corrupt {
            path: Some(path.to_path_buf()),
            offset: Some(base + offset.unwrap_or(0)),
            reason,
        },
        other => other,
    }
}

/// The net change from `base` to `current` as one update: vertices added since (with their
/// ids), edges deleted, edges inserted or re-weighted, and property values set or removed
/// (format 4). Undirected graphs list each edge once (`u < v`).
pub(super) fn delta<C: EdgeLeaf>(base: &Graph<C>, current: &Graph<C>) -> Update {
    let mut update = Update::new();
    let n0 = base.num_vertices();
    update.add_vertices(current.ids().iter().skip(n0).collect::<Vec<ExternalId>>());
    update.min_vertices(current.num_vertices());
    let keep = |key: u64| current.is_directed() || (key >> 32) < (key & 0xffff_ffff);
    let edge = |key: u64| ((key >> 32) as VertexId, key as VertexId);
    let mut deletes = Vec::new();
    let mut inserts = Vec::new();
    let mut weights = Vec::new();
    let mut old = base
        .out_array()
        .iter()
        .filter(|&i| keep(C::key(i)))
        .peekable();
    let mut new = current
        .out_array()
        .iter()
        .filter(|&i| keep(C::key(i)))
        .peekable();
    loop {
        match (old.peek().copied(), new.peek().copied()) {
            (None, None) => break,
            (Some(a), Some(b)) if C::key(a) == C::key(b) => {
                if a != b {
                    inserts.push(edge(C::key(b)));
                    weights.push(C::weight(b));
                }
                old.next();
                new.next();
            }
            (Some(a), Some(b)) if C::key(a) < C::key(b) => {
                deletes.push(edge(C::key(a)));
                old.next();
            }
            (Some(a), None) => {
                deletes.push(edge(C::key(a)));
                old.next();
            }
            (_, Some(b)) => {
                inserts.push(edge(C::key(b)));
                weights.push(C::weight(b));
                new.next();
            }
        }
    }
    update.delete_edges(&deletes);
    if C::WEIGHTED {
        let weighted: Vec<(VertexId, VertexId, f64)> = inserts
            .iter()
            .zip(&weights)
            .map(|(&(u, v), &w)| (u, v, w))
            .collect();
        update.insert_weighted_edges(&weighted);
    } else {
        update.insert_edges(&inserts);
    }
    property_delta(base.properties(), current.properties(), &mut update);
    update
}

/// Adds to `update` the property changes from `base` to `current`: each value that is new
/// or differs is set, each value `current` lacks is removed (columns in name order, values
/// in vertex order).
pub(super) fn property_delta(base: &Properties, current: &Properties, update: &mut Update) {
    let mut names: Vec<&str> = base.names().chain(current.names()).collect();
    names.sort_unstable();
    names.dedup();
    for name in names {
        let mut old = base.column(name).into_iter().flatten().peekable();
        let mut new = current.column(name).into_iter().flatten().peekable();
        loop {
            match (old.peek(), new.peek()) {
                (None, None) => break,
                (Some(&(u, a)), Some(&(v, b))) if u == v => {
                    if !same_value(a, b) {
                        update.set_property(name, v, b.clone());
                    }
                    old.next();
                    new.next();
                }
                (Some(&(u, _)), Some(&(v, _))) if u < v => {
                    update.remove_property(name, u);
                    old.next();
                }
                (Some(&(u, _)), None) => {
                    update.remove_property(name, u);
                    old.next();
                }
                (_, Some(&(v, b))) => {
                    update.set_property(name, v, b.clone());
                    new.next();
                }
            }
        }
    }
}

/// Whether two values are the same stored value (floats by their bits, so that a NaN
/// equals itself and -0 differs from 0).
fn same_value(a: &PropertyValue, b: &PropertyValue) -> bool {
    match (a, b) {
        (PropertyValue::Float(x), PropertyValue::Float(y)) => x.to_bits() == y.to_bits(),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(pages: u64) -> ArrayShape {
        ArrayShape {
            config: PmaConfig {
                leaf_bytes: Some(256),
                // Sizes past 2^48 are legal configurations and must come back.
                point_batch_max: usize::MAX,
                page_bytes: 1 << 14,
                ..PmaConfig::default()
            },
            leaf_bytes: 256,
            num_leaves: 5,
            len: 77,
            pages: (0..pages)
                .map(|p| UnitRef {
                    pack: p,
                    offset: 24 + p,
                    len: 100,
                    hash: u128::from(p) << 64 | 9,
                })
                .collect(),
        }
    }

    #[test]
    fn base_units_round_trip_and_refuse_every_truncation() {
        let base = Base {
            num_vertices: 12,
            out: shape(3),
            incoming: Some(shape(1)),
        };
        let bytes = base.encode();
        // Vertex count, flag, then per array 13 words (4 floats, 9 sizes) and 40 bytes per page.
        assert_eq!(bytes.len(), 9 + 2 * 13 * 8 + 4 * UNIT_REF_BYTES);
        let path = Path::new("pack-00000001.pack");
        assert_eq!(Base::decode(&bytes, path, 56).unwrap(), base);
        for len in 0..bytes.len() {
            let e = Base::decode(&bytes[..len], path, 56).unwrap_err();
            assert!(
                matches!(&e, Error::Corrupt { offset: Some(o), .. } if *o >= 56),
                "{e}"
            );
        }
        let mut extra = bytes.clone();
        extra.push(0);
        assert!(Base::decode(&extra, path, 0).is_err());
    }

    #[test]
    fn pages_round_trip_and_refuse_bad_counts_and_sizes() {
        let page = vec![7u8; 512];
        let config = PmaConfig::default();
        let parts = PmaPartsRef {
            config: &config,
            leaf_bytes: 256,
            len: 10,
            data: vec![&page],
            used: vec![3, 200],
            heads: vec![5, 9],
        };
        let payloads = page_payloads(&parts);
        let empty = || PmaParts {
            config: config.clone(),
            leaf_bytes: 256,
            len: 10,
            data: Vec::new(),
            used: Vec::new(),
            heads: Vec::new(),
        };
        let path = Path::new("p");
        let mut back = empty();
        read_page(&payloads[0], path, 0, &mut back).unwrap();
        assert_eq!((back.used, back.heads), (vec![3, 200], vec![5, 9]));
        assert_eq!(&back.data[..3], &[7, 7, 7]);
        assert_eq!(back.data.len(), 512);
        let mut huge = payloads[0].clone();
        huge[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        let e = read_page(&huge, path, 0, &mut empty()).unwrap_err();
        assert!(e.to_string().contains("runs past the end"), "{e}");
        let mut oversized = payloads[0].clone();
        oversized[4..8].copy_from_slice(&257u32.to_le_bytes());
        let e = read_page(&oversized, path, 0, &mut empty()).unwrap_err();
        assert!(e.to_string().contains("uses 257 of 256"), "{e}");
    }
}
