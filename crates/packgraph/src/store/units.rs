//! A graph version as checkpoint units and back: the pages of its edge arrays, the base
//! unit that lists them, its vertex ids and properties, and the delta (the net change of
//! edges and vertices since a base, as an [`Update`]).

use std::path::Path;

use rayon::prelude::*;

use super::format::{Cursor, UnitRef, UNIT_REF_BYTES};
use crate::graph::{EdgeLeaf, ExternalId, Graph, GraphRead, IdMap, Update, VertexId};
use crate::pma::{DeltaMapLeaf, GroupLeaf, PmaConfig, PmaParts, PmaPartsRef};
use crate::{Error, Result};

/// The leaf codecs a store can hold: [`EdgeLeaf`] with a checked rebuild from arrays.
pub trait StoreLeaf: EdgeLeaf + Sized {
    /// Whether pages are stored as group-varint pages (format 2) rather than byte codes.
    #[doc(hidden)]
    const GROUP_PAGES: bool;

    /// Rebuilds a graph from its arrays, validating them fully.
    #[doc(hidden)]
    fn from_arrays(
        directed: bool,
        num_vertices: usize,
        out: PmaParts,
        incoming: Option<PmaParts>,
    ) -> Result<Graph<Self>>;

    /// [`StoreLeaf::from_arrays`] for arrays whose leaves are in format 1's byte codes.
    #[doc(hidden)]
    fn from_legacy_arrays(
        directed: bool,
        num_vertices: usize,
        out: PmaParts,
        incoming: Option<PmaParts>,
    ) -> Result<Graph<Self>> {
        Self::from_arrays(directed, num_vertices, out, incoming)
    }
}

impl StoreLeaf for GroupLeaf {
    const GROUP_PAGES: bool = true;

    fn from_arrays(
        directed: bool,
        num_vertices: usize,
        out: PmaParts,
        incoming: Option<PmaParts>,
    ) -> Result<Graph<Self>> {
        Graph::from_parts(directed, num_vertices, out, incoming)
    }

    fn from_legacy_arrays(
        directed: bool,
        num_vertices: usize,
        out: PmaParts,
        incoming: Option<PmaParts>,
    ) -> Result<Graph<Self>> {
        Graph::from_byte_coded_parts(directed, num_vertices, out, incoming)
    }
}

impl StoreLeaf for DeltaMapLeaf {
    const GROUP_PAGES: bool = false;

    fn from_arrays(
        directed: bool,
        num_vertices: usize,
        out: PmaParts,
        incoming: Option<PmaParts>,
    ) -> Result<Graph<Self>> {
        Graph::from_weighted_parts(directed, num_vertices, out, incoming)
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
            let mut out = Vec::with_capacity(4 + count * 12 + data);
            out.extend_from_slice(&(count as u32).to_le_bytes());
            for &u in used {
                out.extend_from_slice(&u.to_le_bytes());
            }
            for &h in heads {
                out.extend_from_slice(&h.to_le_bytes());
            }
            for (j, &u) in used.iter().enumerate() {
                let leaf = &page[j * parts.leaf_bytes..];
                out.extend_from_slice(&leaf[..u as usize]);
            }
            out
        })
        .collect()
}

/// Appends the page unit `payload` to `parts` (leaves padded back to `leaf_bytes`).
pub(super) fn read_page(
    payload: &[u8],
    path: &Path,
    offset: u64,
    parts: &mut PmaParts,
) -> Result<()> {
    let leaf_bytes = parts.leaf_bytes;
    let mut r = Cursor::new(payload, path, offset);
    let count = r.u32("page leaf count")? as usize;
    if count == 0 || count > payload.len() / 12 {
        return Err(r.corrupt(format!("a page of {count} leaves")));
    }
    let first = parts.used.len();
    for _ in 0..count {
        let used = r.u32("leaf size")?;
        if used as usize > leaf_bytes {
            return Err(r.corrupt(format!("a leaf uses {used} of {leaf_bytes} bytes")));
        }
        parts.used.push(used);
    }
    for _ in 0..count {
        let head = r.u64("leaf head")?;
        parts.heads.push(head);
    }
    for j in 0..count {
        let used = parts.used[first + j] as usize;
        let bytes = r.take(used, "leaf bytes")?;
        parts.data.extend_from_slice(bytes);
        parts.data.resize(parts.data.len() + leaf_bytes - used, 0);
    }
    if r.rest() != 0 {
        return Err(r.corrupt("bytes follow the page's last leaf"));
    }
    Ok(())
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

    fn put(&self, out: &mut Vec<u8>) {
        let c = &self.config;
        for value in [
            c.growth_factor,
            c.upper_density_root,
            c.lower_density_root,
            c.lower_density_leaf,
        ] {
            out.extend_from_slice(&value.to_bits().to_le_bytes());
        }
        for value in [
            c.leaf_bytes.unwrap_or(0),
            c.point_batch_max,
            c.rebuild_divisor,
            c.parallel_grain,
            c.page_bytes,
            self.leaf_bytes,
            self.num_leaves,
            self.len,
            self.pages.len(),
        ] {
            out.extend_from_slice(&(value as u64).to_le_bytes());
        }
        for page in &self.pages {
            page.put(out);
        }
    }

    fn get(r: &mut Cursor<'_>) -> Result<Self> {
        let mut floats = [0f64; 4];
        for slot in &mut floats {
            *slot = f64::from_bits(r.u64("array configuration")?);
        }
        let max = 1u64 << 48;
        let mut sizes = [0usize; 9];
        for slot in &mut sizes {
            *slot = r.size("array configuration", max)?;
        }
        let config = PmaConfig {
            growth_factor: floats[0],
            upper_density_root: floats[1],
            lower_density_root: floats[2],
            lower_density_leaf: floats[3],
            leaf_bytes: (sizes[0] != 0).then_some(sizes[0]),
            point_batch_max: sizes[1],
            rebuild_divisor: sizes[2],
            parallel_grain: sizes[3],
            page_bytes: sizes[4],
        };
        let pages = sizes[8];
        if pages > r.rest() / UNIT_REF_BYTES {
            return Err(r.corrupt(format!("{pages} pages do not fit in the base unit")));
        }
        let pages = (0..pages)
            .map(|_| UnitRef::get(r))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            config,
            leaf_bytes: sizes[5],
            num_leaves: sizes[6],
            len: sizes[7],
            pages,
        })
    }

    /// Empty arrays of this shape to read the pages into.
    pub(super) fn empty_parts(&self) -> Result<PmaParts> {
        let bytes = self
            .num_leaves
            .checked_mul(self.leaf_bytes)
            .filter(|&b| b < 1 << 46)
            .ok_or_else(|| Error::corrupt("an edge array too large to be real"))?;
        Ok(PmaParts {
            config: self.config.clone(),
            leaf_bytes: self.leaf_bytes,
            len: self.len,
            data: Vec::with_capacity(bytes),
            used: Vec::with_capacity(self.num_leaves),
            heads: Vec::with_capacity(self.num_leaves),
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
        let mut out = Vec::with_capacity(256 + pages * UNIT_REF_BYTES);
        out.extend_from_slice(&self.num_vertices.to_le_bytes());
        out.push(u8::from(self.incoming.is_some()));
        self.out.put(&mut out);
        if let Some(incoming) = &self.incoming {
            incoming.put(&mut out);
        }
        out
    }

    pub(super) fn decode(payload: &[u8], path: &Path, offset: u64) -> Result<Self> {
        let mut r = Cursor::new(payload, path, offset);
        let num_vertices = r.u64("vertex count")?;
        let has_in = r.take(1, "array count")?[0];
        if has_in > 1 {
            return Err(r.corrupt(format!("in-array flag {has_in}")));
        }
        let out = ArrayShape::get(&mut r)?;
        let incoming = if has_in == 1 {
            Some(ArrayShape::get(&mut r)?)
        } else {
            None
        };
        if r.rest() != 0 {
            return Err(r.corrupt("bytes follow the base unit's last array"));
        }
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

/// The ids unit: the dense range, then an encoded update adding the other ids in order.
pub(super) fn ids_payload(ids: &IdMap) -> Vec<u8> {
    let ((first, dense), rest) = ids.split();
    let mut update = Update::new();
    update.add_vertices(rest.cloned());
    let mut out = Vec::new();
    out.extend_from_slice(&first.to_le_bytes());
    out.extend_from_slice(&(dense as u64).to_le_bytes());
    out.extend_from_slice(&update.encode());
    out
}

pub(super) fn read_ids(payload: &[u8], path: &Path, offset: u64) -> Result<IdMap> {
    let mut r = Cursor::new(payload, path, offset);
    let first = r.u64("first id")?;
    let dense = r.size("dense id count", u64::from(u32::MAX) + 1)?;
    let update = Update::decode(&payload[16..]).map_err(|e| locate(e, path, offset + 16))?;
    IdMap::from_split((first, dense), update.vertices().iter().cloned())
        .map_err(|_| r.corrupt("the id dictionary repeats an id or holds too many"))
}

/// The properties unit: an update setting every value, column by column.
pub(super) fn properties_payload<C: EdgeLeaf>(graph: &Graph<C>) -> Vec<u8> {
    let props = graph.properties();
    let mut update = Update::new();
    for name in props.names() {
        if let Some(column) = props.column(name) {
            for (v, value) in column {
                update.set_property(name, v, value.clone());
            }
        }
    }
    update.encode()
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
/// ids), edges deleted, and edges inserted or re-weighted. Undirected graphs list each
/// edge once (`u < v`).
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
    update
}
