//! A graph version as checkpoint units and back: the pages of its edge arrays, the base
//! unit that lists them, its vertex ids and properties, and the delta (the net change of
//! edges and vertices since a base, as an [`Update`]).

use std::path::Path;

use rayon::prelude::*;

use super::format::{in_file, reader, UnitRef, UNIT_REF_BYTES};
use crate::codec::bytes::{ByteReader, ByteWriter, BytesError};
use crate::graph::{EdgeLeaf, ExternalId, Graph, GraphRead, IdMap, Update, VertexId};
use crate::pma::{ArrayDims, DeltaMapLeaf, GroupLeaf, PmaConfig, PmaParts, PmaPartsRef};
use crate::{Error, Result};

/// Rebuilds a graph from its arrays (whether it is directed, its vertex count, its out- and
/// in-arrays), validating them fully.
type FromArrays<C> = fn(bool, usize, PmaParts, Option<PmaParts>) -> Result<Graph<C>>;

/// The leaf codecs a store can hold: [`EdgeLeaf`] with a checked rebuild from arrays.
pub trait StoreLeaf: EdgeLeaf + Sized {
    /// Whether pages are stored as group-varint pages (format 2) rather than byte codes.
    #[doc(hidden)]
    const GROUP_PAGES: bool;

    /// The checked rebuild of [`StoreLeaf::from_arrays`].
    #[doc(hidden)]
    const FROM_ARRAYS: FromArrays<Self>;

    /// The checked rebuild of [`StoreLeaf::from_legacy_arrays`].
    #[doc(hidden)]
    const FROM_LEGACY_ARRAYS: FromArrays<Self> = Self::FROM_ARRAYS;

    /// Rebuilds a graph from its arrays, validating them fully.
    #[doc(hidden)]
    fn from_arrays(d: bool, n: usize, out: PmaParts, inc: Option<PmaParts>) -> Result<Graph<Self>> {
        (Self::FROM_ARRAYS)(d, n, out, inc)
    }

    /// [`StoreLeaf::from_arrays`] for arrays whose leaves are in format 1's byte codes.
    #[doc(hidden)]
    fn from_legacy_arrays(
        directed: bool,
        num_vertices: usize,
        out: PmaParts,
        incoming: Option<PmaParts>,
    ) -> Result<Graph<Self>> {
        (Self::FROM_LEGACY_ARRAYS)(directed, num_vertices, out, incoming)
    }
}

impl StoreLeaf for GroupLeaf {
    const GROUP_PAGES: bool = true;
    const FROM_ARRAYS: FromArrays<Self> = Graph::from_parts;
    const FROM_LEGACY_ARRAYS: FromArrays<Self> = Graph::from_byte_coded_parts;
}

impl StoreLeaf for DeltaMapLeaf {
    const GROUP_PAGES: bool = false;
    const FROM_ARRAYS: FromArrays<Self> = Graph::from_weighted_parts;
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

/// Appends the page unit `payload` to `parts` (leaves padded back to `leaf_bytes`).
pub(super) fn read_page(
    payload: &[u8],
    path: &Path,
    offset: u64,
    parts: &mut PmaParts,
) -> Result<()> {
    read_page_into(&mut reader(payload, offset), parts).map_err(in_file(path))
}

fn read_page_into(r: &mut ByteReader<&[u8]>, parts: &mut PmaParts) -> Result<(), BytesError> {
    let leaf_bytes = parts.leaf_bytes;
    let at = r.offset();
    // Each leaf takes at least its size and its head.
    let count = r.count_u32(12, "the page's leaf count")?;
    if count == 0 {
        return Err(r.invalid(at, "the page's leaf count", "a page of 0 leaves"));
    }
    let first = parts.used.len();
    let sizes_at = r.offset();
    r.words_into(count, &mut parts.used, "the leaf sizes")?;
    if let Some(j) = parts.used[first..]
        .iter()
        .position(|&u| u as usize > leaf_bytes)
    {
        let used = parts.used[first + j];
        return Err(r.invalid(
            sizes_at + 4 * j as u64,
            "a leaf size",
            format!("a leaf uses {used} of {leaf_bytes} bytes"),
        ));
    }
    r.words_into(count, &mut parts.heads, "the leaf heads")?;
    for j in 0..count {
        let used = parts.used[first + j] as usize;
        let bytes = r.take(used, "the leaf bytes")?;
        parts.data.extend_from_slice(bytes);
        parts.data.resize(parts.data.len() + leaf_bytes - used, 0);
    }
    r.finish("the page's last leaf")
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

/// The ids unit: the dense range, then an encoded update adding the other ids in order.
pub(super) fn ids_payload(ids: &IdMap) -> Vec<u8> {
    let ((first, dense), rest) = ids.split();
    let mut update = Update::new();
    update.add_vertices(rest.cloned());
    let mut w = ByteWriter::default();
    w.u64(first).size(dense).bytes(&update.encode());
    w.into_vec()
}

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
