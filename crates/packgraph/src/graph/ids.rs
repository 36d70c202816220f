//! The vertex-id dictionary: the external ids users and files name vertices by (any `u64`,
//! or a string) to the dense internal ids `0..n` the edge arrays use, and back.
//!
//! * A range of integer ids, `first..first + dense` for internal ids `0..dense`, takes no
//!   space: files numbered `0..n` or `1..=n` and graphs built over internal ids cost nothing.
//! * Every other vertex is in two persistent radix trees ([`Part`]): external → internal
//!   (integers under one tag byte, big-endian so they sort numerically, then names under
//!   another) and internal → external. Cloning the map is O(1) and shares both trees, so a
//!   graph's [`Snapshot`](super::Snapshot) resolves ids as of its own version while the
//!   writer adds vertices.
//! * Ids loaded from a file are numbered by rank (the smallest external id is vertex 0), so
//!   results written in internal order come out sorted by external id and "the smallest
//!   label" means the same on both sides. Vertices added later take the next internal ids.

use std::fmt;

use rayon::prelude::*;

use crate::graph::VertexId;
use crate::part::Part;

/// The most vertices a graph can hold (ids are 32-bit).
pub const MAX_VERTICES: usize = u32::MAX as usize;

pub use super::external_id::{name_problem, ExternalId, IdKind};

const INT_TAG: u8 = 0;
const NAME_TAG: u8 = 1;

/// The dictionary key of an integer id.
fn int_key(id: u64) -> [u8; 9] {
    let mut key = [INT_TAG; 9];
    key[1..].copy_from_slice(&id.to_be_bytes());
    key
}

/// The dictionary key of a name.
fn name_key(name: &str) -> Vec<u8> {
    let mut key = Vec::with_capacity(1 + name.len());
    key.push(NAME_TAG);
    key.extend_from_slice(name.as_bytes());
    key
}

fn external_key(id: &ExternalId) -> Vec<u8> {
    match id {
        ExternalId::Int(id) => int_key(*id).to_vec(),
        ExternalId::Name(name) => name_key(name),
    }
}

/// A bijection between a set of external ids and the internal ids `0..len`.
#[derive(Clone, Default)]
pub struct IdMap {
    /// Internal ids `0..dense` are the external integers `first..first + dense`.
    first: u64,
    dense: usize,
    /// External key → internal id, for internal ids `dense..len`.
    by_external: Part<VertexId>,
    /// Internal id (big-endian) → external id, for internal ids `dense..len`.
    by_internal: Part<ExternalId>,
    /// Vertices named by strings.
    names: usize,
    /// One more than the largest integer id (0 if none).
    next_int: u64,
}

/// The integer ids of all vertices of an [`IdMap`] (see [`IdMap::int_ids`]): the range
/// takes no space, the other ids one `u64` each.
#[derive(Debug, Clone)]
pub struct IntIds {
    first: u64,
    dense: usize,
    rest: Vec<u64>,
}

impl IntIds {
    /// The integer id of vertex `v`.
    ///
    /// # Panics
    /// If `v` is not a vertex.
    #[inline]
    pub fn get(&self, v: VertexId) -> u64 {
        let v = v as usize;
        if v < self.dense {
            self.first + v as u64
        } else {
            self.rest[v - self.dense]
        }
    }
}

/// Why ids could not be mapped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum IdMapError {
    /// More distinct ids than [`MAX_VERTICES`].
    TooMany(usize),
    /// An id occurs twice in a vertex list.
    Duplicate(u64),
}

impl fmt::Debug for IdMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IdMap")
            .field("len", &self.len())
            .field("range", &(self.first..self.first + self.dense as u64))
            .field("others", &self.by_internal.len())
            .finish()
    }
}

impl PartialEq for IdMap {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && (self.dense == 0 || (self.dense, self.first) == (other.dense, other.first))
            && self.by_internal.iter().eq(other.by_internal.iter())
    }
}

impl Eq for IdMap {}

impl IdMap {
    /// External ids `first..first + len` (`first + len` must not pass `u64::MAX`).
    pub fn range(first: u64, len: usize) -> Self {
        Self {
            first,
            dense: len,
            next_int: if len == 0 {
                0
            } else {
                first.saturating_add(len as u64)
            },
            ..Self::default()
        }
    }

    /// The identity on `0..len`.
    pub fn identity(len: usize) -> Self {
        Self::range(0, len)
    }

    /// From strictly increasing external ids (vertex `i` is `ids[i]`); `None` if they are not.
    pub fn from_sorted(ids: Vec<u64>) -> Option<Self> {
        if ids.par_windows(2).any(|w| w[0] >= w[1]) {
            return None;
        }
        Some(Self::from_increasing(&ids))
    }

    /// From distinct external ids in any order (vertex `i` is `ids[i]`); `None` if one
    /// repeats.
    pub fn from_list(ids: &[u64]) -> Option<Self> {
        if !ids.par_windows(2).any(|w| w[0] >= w[1]) {
            return Some(Self::from_increasing(ids));
        }
        let mut pairs: Vec<(u64, VertexId)> = ids
            .iter()
            .enumerate()
            .map(|(v, &id)| (id, v as VertexId))
            .collect();
        pairs.par_sort_unstable();
        if pairs.par_windows(2).any(|w| w[0].0 == w[1].0) {
            return None;
        }
        let next_int = pairs.last().map_or(0, |&(id, _)| id.saturating_add(1));
        let (by_external, by_internal) = rayon::join(
            || pairs.iter().map(|&(id, v)| (int_key(id), v)).collect(),
            || {
                ids.iter()
                    .enumerate()
                    .map(|(v, &id)| ((v as VertexId).to_be_bytes(), ExternalId::Int(id)))
                    .collect()
            },
        );
        Some(Self {
            by_external,
            by_internal,
            next_int,
            ..Self::default()
        })
    }

    /// [`IdMap::from_sorted`] of ids known to increase.
    fn from_increasing(ids: &[u64]) -> Self {
        let (Some(&first), Some(&last)) = (ids.first(), ids.last()) else {
            return Self::default();
        };
        if last - first == ids.len() as u64 - 1 {
            return Self::range(first, ids.len());
        }
        // Keys arrive sorted, so both trees are built bottom-up in one pass each.
        let (by_external, by_internal) = rayon::join(
            || {
                ids.iter()
                    .enumerate()
                    .map(|(v, &id)| (int_key(id), v as VertexId))
                    .collect()
            },
            || {
                ids.iter()
                    .enumerate()
                    .map(|(v, &id)| ((v as VertexId).to_be_bytes(), ExternalId::Int(id)))
                    .collect()
            },
        );
        Self {
            by_external,
            by_internal,
            next_int: last.saturating_add(1),
            ..Self::default()
        }
    }

    /// The number of vertices.
    pub fn len(&self) -> usize {
        self.dense + self.by_internal.len()
    }

    /// Whether there are no vertices.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the external ids are `0..len` (internal and external ids agree).
    pub fn is_identity(&self) -> bool {
        self.by_internal.is_empty() && (self.first == 0 || self.dense == 0)
    }

    /// Whether some vertex is named by a string.
    pub fn has_names(&self) -> bool {
        self.names > 0
    }

    /// How many vertices are named by strings.
    pub fn name_count(&self) -> usize {
        self.names
    }

    /// The external id of vertex `v`, if it is one.
    pub fn external_id(&self, v: VertexId) -> Option<ExternalId> {
        if (v as usize) < self.dense {
            return Some(ExternalId::Int(self.first + u64::from(v)));
        }
        self.by_internal.get(&v.to_be_bytes()).cloned()
    }

    /// The integer id of vertex `v` (`v < len`).
    ///
    /// # Panics
    /// If `v` is out of range or named by a string (see [`IdMap::external_id`]).
    #[inline]
    pub fn external(&self, v: VertexId) -> u64 {
        if (v as usize) < self.dense {
            return self.first + u64::from(v);
        }
        match self.by_internal.get(&v.to_be_bytes()) {
            Some(ExternalId::Int(id)) => *id,
            Some(ExternalId::Name(name)) => panic!("vertex {v} is named {name:?}"),
            None => panic!("vertex {v} out of range"),
        }
    }

    /// The internal id of integer id `id`, if it is a vertex.
    #[inline]
    pub fn internal(&self, id: u64) -> Option<VertexId> {
        self.dense_internal(id)
            .or_else(|| self.by_external.get(&int_key(id)).copied())
    }

    /// The internal id of the vertex named `name`.
    pub fn internal_name(&self, name: &str) -> Option<VertexId> {
        self.by_external.get(&name_key(name)).copied()
    }

    /// The internal id of `id`.
    pub fn internal_id(&self, id: &ExternalId) -> Option<VertexId> {
        match id {
            ExternalId::Int(id) => self.internal(*id),
            ExternalId::Name(name) => self.internal_name(name),
        }
    }

    /// [`IdMap::internal`] of every id in `ids`, in order. The ids outside the dense range
    /// are looked up in the dictionary together ([`Part::get_many`], which overlaps their
    /// cache misses).
    pub fn internal_many(&self, ids: &[u64]) -> Vec<Option<VertexId>> {
        self.lookup_many(ids, |&id| self.dense_internal(id), |&id| int_key(id))
    }

    /// [`IdMap::internal_id`] of every id in `ids`, in order, looked up together as
    /// [`IdMap::internal_many`] does.
    pub fn internal_ids(&self, ids: &[ExternalId]) -> Vec<Option<VertexId>> {
        self.lookup_many(
            ids,
            |id| match id {
                ExternalId::Int(id) => self.dense_internal(*id),
                ExternalId::Name(_) => None,
            },
            external_key,
        )
    }

    /// The internal id of `id` when it is in the dense range.
    #[inline]
    fn dense_internal(&self, id: u64) -> Option<VertexId> {
        let offset = id.checked_sub(self.first)?;
        (offset < self.dense as u64).then_some(offset as VertexId)
    }

    /// Each id's internal id: `dense(id)` if it has one, else the dictionary's entry for
    /// `key(id)`, the dictionary asked in batches.
    fn lookup_many<T, K: AsRef<[u8]>>(
        &self,
        ids: &[T],
        dense: impl Fn(&T) -> Option<VertexId>,
        key: impl Fn(&T) -> K,
    ) -> Vec<Option<VertexId>> {
        let mut out: Vec<Option<VertexId>> = ids.iter().map(&dense).collect();
        if self.by_external.is_empty() {
            return out;
        }
        const BATCH: usize = 1024;
        let mut at = Vec::with_capacity(BATCH);
        let mut keys = Vec::with_capacity(BATCH);
        let flush = |at: &mut Vec<usize>, keys: &mut Vec<K>, out: &mut Vec<Option<VertexId>>| {
            for (&i, v) in at.iter().zip(self.by_external.get_many(keys)) {
                out[i] = v.copied();
            }
            at.clear();
            keys.clear();
        };
        for (i, id) in ids.iter().enumerate() {
            if out[i].is_none() {
                at.push(i);
                keys.push(key(id));
                if at.len() == BATCH {
                    flush(&mut at, &mut keys, &mut out);
                }
            }
        }
        flush(&mut at, &mut keys, &mut out);
        out
    }

    /// `(first, len)` when the external ids are the range `first..first + len`.
    pub fn as_range(&self) -> Option<(u64, usize)> {
        self.by_internal
            .is_empty()
            .then_some((self.first, self.dense))
    }

    /// The integer ids of all vertices in internal order; `None` if some vertex is named.
    pub fn ints(&self) -> Option<Vec<u64>> {
        let ids = self.int_ids()?;
        Some((0..self.len() as VertexId).map(|v| ids.get(v)).collect())
    }

    /// The integer ids of all vertices, for resolving many at once (writing results):
    /// `None` if some vertex is named.
    pub fn int_ids(&self) -> Option<IntIds> {
        if self.has_names() {
            return None;
        }
        let rest = self
            .by_internal
            .iter()
            .map(|(_, id)| match id {
                ExternalId::Int(id) => *id,
                ExternalId::Name(_) => unreachable!("no names"),
            })
            .collect();
        Some(IntIds {
            first: self.first,
            dense: self.dense,
            rest,
        })
    }

    /// Every vertex's external id, in internal order.
    pub fn iter(&self) -> impl Iterator<Item = ExternalId> + '_ {
        (0..self.dense as u64)
            .map(|i| ExternalId::Int(self.first + i))
            .chain(self.by_internal.iter().map(|(_, id)| id.clone()))
    }

    /// The map in two parts, for the durable store: the dense range `(first, len)` of
    /// internal ids `0..len`, and the external ids of the other vertices in internal order.
    pub(crate) fn split(&self) -> ((u64, usize), impl Iterator<Item = &ExternalId> + '_) {
        (
            (self.first, self.dense),
            self.by_internal.iter().map(|(_, id)| id),
        )
    }

    /// The map [`IdMap::split`] gave the parts of.
    pub(crate) fn from_split(
        (first, dense): (u64, usize),
        rest: impl IntoIterator<Item = ExternalId>,
    ) -> Result<Self, IdMapError> {
        if first.checked_add(dense as u64).is_none() || dense > MAX_VERTICES {
            return Err(IdMapError::TooMany(dense));
        }
        let mut map = Self::range(first, dense);
        for id in rest {
            if !map.insert(&id)?.1 {
                return Err(IdMapError::Duplicate(match id {
                    ExternalId::Int(x) => x,
                    ExternalId::Name(_) => u64::MAX,
                }));
            }
        }
        Ok(map)
    }

    /// Checks both radix trees, and that they hold the same number of vertices.
    pub(crate) fn check_invariants(&self) -> crate::Result<()> {
        self.by_external.check_invariants()?;
        self.by_internal.check_invariants()?;
        if self.by_external.len() != self.by_internal.len() {
            return Err(crate::Error::corrupt(format!(
                "id dictionary: {} external ids but {} internal ids",
                self.by_external.len(),
                self.by_internal.len()
            )));
        }
        Ok(())
    }

    /// The vertex of `id`, adding it with the next internal id if it is new; returns the
    /// vertex and whether it was added.
    pub(crate) fn insert(&mut self, id: &ExternalId) -> Result<(VertexId, bool), IdMapError> {
        if let Some(v) = self.internal_id(id) {
            return Ok((v, false));
        }
        let v = self.len();
        if v >= MAX_VERTICES {
            return Err(IdMapError::TooMany(v + 1));
        }
        let v = v as VertexId;
        match id {
            // The next id of a plain range extends it.
            ExternalId::Int(x)
                if self.by_internal.is_empty()
                    && (self.dense == 0
                        || self.first.checked_add(self.dense as u64) == Some(*x)) =>
            {
                if self.dense == 0 {
                    self.first = *x;
                }
                self.dense += 1;
            }
            _ => {
                self.by_external.insert(&external_key(id), v);
                self.by_internal.insert(&v.to_be_bytes(), id.clone());
                self.names += usize::from(matches!(id, ExternalId::Name(_)));
            }
        }
        if let ExternalId::Int(x) = id {
            self.next_int = self.next_int.max(x.saturating_add(1));
        }
        Ok((v, true))
    }

    /// Gives vertices `len..n` integer ids (they were created over internal ids): the range
    /// extends when the map is a plain range, else each takes the next unused integer.
    pub(crate) fn grow_to(&mut self, n: usize) {
        if n <= self.len() {
            return;
        }
        if self.by_internal.is_empty()
            && (self.dense == 0 || self.first.checked_add(n as u64).is_some())
        {
            if self.dense == 0 {
                self.first = 0;
            }
            self.dense = n;
            self.next_int = self.first + n as u64;
            return;
        }
        let start = self.len();
        let fresh = self.unused_ints(n - start);
        let (by_external, by_internal): (Vec<_>, Vec<_>) = fresh
            .iter()
            .enumerate()
            .map(|(i, &id)| {
                let v = (start + i) as VertexId;
                ((int_key(id), v), (v.to_be_bytes(), ExternalId::Int(id)))
            })
            .unzip();
        self.by_external.insert_batch(by_external);
        self.by_internal.insert_batch(by_internal);
    }

    /// `count` integers no vertex has: upward from one past the largest, or, when that
    /// runs past `u64::MAX`, the gaps from 0.
    fn unused_ints(&mut self, count: usize) -> Vec<u64> {
        if let Some(end) = self.next_int.checked_add(count as u64) {
            let out = (self.next_int..end).collect();
            self.next_int = end;
            return out;
        }
        let mut out = Vec::with_capacity(count);
        let mut candidate = 0u64;
        let used = self
            .by_external
            .range(
                std::ops::Bound::Included(&[INT_TAG][..]),
                std::ops::Bound::Excluded(&[NAME_TAG][..]),
            )
            .map(|(key, _)| u64::from_be_bytes(key[1..].try_into().expect("9-byte int keys")));
        let dense = (self.dense > 0).then(|| (self.first, self.first + (self.dense as u64 - 1)));
        let mut taken: Vec<(u64, u64)> = used.map(|id| (id, id)).collect();
        taken.extend(dense);
        taken.sort_unstable();
        for (lo, hi) in taken {
            while candidate < lo && out.len() < count {
                out.push(candidate);
                candidate += 1;
            }
            candidate = candidate.max(hi.saturating_add(1));
        }
        while out.len() < count {
            out.push(candidate);
            candidate += 1;
        }
        out
    }

    /// The map of a vertex list (any order, no duplicates).
    pub(crate) fn from_vertex_list(mut ids: Vec<u64>) -> Result<Self, IdMapError> {
        ids.par_sort_unstable();
        if let Some(w) = ids.par_windows(2).find_first(|w| w[0] == w[1]) {
            return Err(IdMapError::Duplicate(w[0]));
        }
        if ids.len() > MAX_VERTICES {
            return Err(IdMapError::TooMany(ids.len()));
        }
        Ok(Self::from_increasing(&ids))
    }

    /// The map of the endpoints of `edges`, and the edges in internal ids.
    pub(crate) fn from_endpoints(
        edges: &[(u64, u64)],
    ) -> Result<(Self, Vec<(VertexId, VertexId)>), IdMapError> {
        Self::from_endpoint_chunks(&[edges])
    }

    /// [`IdMap::from_endpoints`] of the edges of `chunks` taken in order, without first
    /// concatenating them (a parser's per-block outputs).
    pub(crate) fn from_endpoint_chunks(
        chunks: &[&[(u64, u64)]],
    ) -> Result<(Self, Vec<(VertexId, VertexId)>), IdMapError> {
        // Pieces of a bounded size, in order, so that one long chunk still runs in parallel.
        let pieces: Vec<&[(u64, u64)]> = chunks
            .iter()
            .flat_map(|c| c.chunks(ENDPOINT_PIECE))
            .collect();
        let total: usize = pieces.iter().map(|p| p.len()).sum();
        if total == 0 {
            return Ok((Self::identity(0), Vec::new()));
        }
        let (min, max) = pieces
            .par_iter()
            .flat_map_iter(|p| p.iter())
            .fold(
                || (u64::MAX, 0u64),
                |(lo, hi), &(u, v)| (lo.min(u).min(v), hi.max(u).max(v)),
            )
            .reduce(|| (u64::MAX, 0), |a, b| (a.0.min(b.0), a.1.max(b.1)));
        let span = max - min;
        // Dense enough for a bitmap of at most one byte per edge.
        if span < MAX_VERTICES as u64 && span / 8 <= total as u64 + 64 {
            Self::by_bitmap(&pieces, min, span as usize + 1)
        } else {
            Self::by_sorting(&pieces)
        }
    }

    fn by_bitmap(
        pieces: &[&[(u64, u64)]],
        min: u64,
        span: usize,
    ) -> Result<(Self, Vec<(VertexId, VertexId)>), IdMapError> {
        let words = span.div_ceil(64);
        // One bitmap per rayon split (at most one byte per edge each), OR-ed together.
        let bits = pieces
            .par_iter()
            .fold(
                || vec![0u64; words],
                |mut bits, piece| {
                    for &(u, v) in piece.iter() {
                        for x in [u - min, v - min] {
                            bits[(x >> 6) as usize] |= 1 << (x & 63);
                        }
                    }
                    bits
                },
            )
            .reduce_with(|mut a, b| {
                a.iter_mut().zip(&b).for_each(|(x, y)| *x |= y);
                a
            })
            .unwrap_or_default();
        let mut ranks = Vec::with_capacity(words);
        let mut count = 0u32;
        for &word in &bits {
            ranks.push(count);
            count += word.count_ones();
        }
        let n = count as usize;
        if n > MAX_VERTICES {
            return Err(IdMapError::TooMany(n));
        }
        if n == span {
            let remapped = remap(pieces, |x| (x - min) as VertexId);
            return Ok((Self::range(min, n), remapped));
        }
        let rank = |x: u64| {
            let x = x - min;
            let (w, b) = ((x >> 6) as usize, x & 63);
            ranks[w] + (bits[w] & ((1u64 << b) - 1)).count_ones()
        };
        let remapped = remap(pieces, rank);
        let ids: Vec<u64> = bits
            .iter()
            .enumerate()
            .flat_map(|(w, &word)| {
                (0..64)
                    .filter(move |b| word >> b & 1 == 1)
                    .map(move |b| min + (w as u64) * 64 + b)
            })
            .collect();
        Ok((Self::from_increasing(&ids), remapped))
    }

    fn by_sorting(
        pieces: &[&[(u64, u64)]],
    ) -> Result<(Self, Vec<(VertexId, VertexId)>), IdMapError> {
        let mut ids: Vec<u64> = pieces
            .par_iter()
            .flat_map_iter(|p| p.iter().flat_map(|&(u, v)| [u, v]))
            .collect();
        ids.par_sort_unstable();
        ids.dedup();
        if ids.len() > MAX_VERTICES {
            return Err(IdMapError::TooMany(ids.len()));
        }
        let rank = |x: u64| {
            ids.binary_search(&x)
                .expect("every endpoint is among the ids") as VertexId
        };
        let remapped = remap(pieces, rank);
        Ok((Self::from_increasing(&ids), remapped))
    }
}

/// Edges per parallel piece when mapping endpoints.
const ENDPOINT_PIECE: usize = 1 << 16;

/// The edges of `pieces`, in order, with both endpoints mapped by `f`; each piece is
/// written on its own task into its share of the output.
fn remap(
    pieces: &[&[(u64, u64)]],
    f: impl Fn(u64) -> VertexId + Sync,
) -> Vec<(VertexId, VertexId)> {
    crate::par::map_concat(pieces, |&(u, v)| (f(u), f(v)))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use proptest::prelude::*;

    use super::*;

    fn check(edges: &[(u64, u64)]) {
        let (map, remapped) = IdMap::from_endpoints(edges).unwrap();
        let oracle: Vec<u64> = edges
            .iter()
            .flat_map(|&(u, v)| [u, v])
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        assert_eq!(map.len(), oracle.len());
        for (i, &id) in oracle.iter().enumerate() {
            assert_eq!(map.external(i as VertexId), id);
            assert_eq!(map.internal(id), Some(i as VertexId));
        }
        for (&(u, v), &(a, b)) in edges.iter().zip(&remapped) {
            assert_eq!((map.external(a), map.external(b)), (u, v));
        }
    }

    #[test]
    fn dense_zero_based_ids_are_the_identity() {
        let edges = [(0, 1), (2, 3), (3, 0)];
        let (map, remapped) = IdMap::from_endpoints(&edges).unwrap();
        assert!(map.is_identity());
        assert_eq!(remapped, [(0, 1), (2, 3), (3, 0)]);
    }

    #[test]
    fn offsets_gaps_and_huge_ids_map_by_rank() {
        check(&[(1, 2), (2, 3)]);
        check(&[(5, 70), (200, 5), (64, 63)]);
        check(&[(u64::MAX, 0), (1 << 40, 7)]);
        let map = IdMap::from_endpoints(&[(10, 12)]).unwrap().0;
        assert_eq!(map.internal(11), None);
        assert_eq!(map.internal(13), None);
        assert_eq!(map.internal(9), None);
    }

    #[test]
    fn vertex_lists_reject_duplicates() {
        assert_eq!(
            IdMap::from_vertex_list(vec![3, 1, 3]),
            Err(IdMapError::Duplicate(3))
        );
        let map = IdMap::from_vertex_list(vec![30, 10, 20]).unwrap();
        assert_eq!(map.ints(), Some(vec![10, 20, 30]));
        assert_eq!(map.as_range(), None);
        assert_eq!(
            IdMap::from_vertex_list(vec![2, 1, 3]).unwrap(),
            IdMap::range(1, 3)
        );
    }

    proptest! {
        #[test]
        fn endpoints_map_matches_a_btreeset(
            edges in prop::collection::vec((0u64..300, 0u64..300), 0..200),
            shift in prop_oneof![Just(0u64), Just(1u64), Just(1u64 << 50)],
        ) {
            let edges: Vec<_> = edges.iter().map(|&(u, v)| (u + shift, v * v * v + shift)).collect();
            check(&edges);
        }

        #[test]
        fn chunked_endpoints_map_as_the_concatenation(
            edges in prop::collection::vec((0u64..300, 0u64..300), 0..200),
            cuts in prop::collection::vec(0usize..200, 0..6),
            shift in prop_oneof![Just(0u64), Just(1u64 << 50)],
        ) {
            let edges: Vec<_> = edges.iter().map(|&(u, v)| (u + shift, v * v + shift)).collect();
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(edges.len())).collect();
            cuts.push(0);
            cuts.push(edges.len());
            cuts.sort_unstable();
            let chunks: Vec<&[(u64, u64)]> = cuts.windows(2).map(|w| &edges[w[0]..w[1]]).collect();
            let chunked = IdMap::from_endpoint_chunks(&chunks).unwrap();
            prop_assert_eq!(chunked, IdMap::from_endpoints(&edges).unwrap());
        }
    }

    #[derive(Debug, Clone)]
    enum IdOp {
        Insert(ExternalId),
        Grow(usize),
        Snapshot,
        DropOldest,
    }

    fn id_op() -> impl Strategy<Value = IdOp> {
        let int = prop_oneof![0u64..40, Just(u64::MAX), Just(u64::MAX - 1)];
        prop_oneof![
            5 => int.prop_map(|x| IdOp::Insert(ExternalId::Int(x))),
            3 => "[a-c]{0,3}".prop_map(|s| IdOp::Insert(ExternalId::Name(s.into()))),
            2 => (0usize..4).prop_map(IdOp::Grow),
            1 => Just(IdOp::Snapshot),
            1 => Just(IdOp::DropOldest),
        ]
    }

    /// The oracle: external ids in internal order.
    fn check_map(map: &IdMap, oracle: &[ExternalId]) {
        assert_eq!(map.len(), oracle.len());
        let distinct: BTreeSet<&ExternalId> = oracle.iter().collect();
        assert_eq!(distinct.len(), oracle.len(), "an id was given twice");
        for (v, id) in oracle.iter().enumerate() {
            assert_eq!(map.external_id(v as VertexId).as_ref(), Some(id));
            assert_eq!(map.internal_id(id), Some(v as VertexId));
        }
        assert!(map.iter().eq(oracle.iter().cloned()));
        assert_eq!(map.external_id(oracle.len() as VertexId), None);
        // Batched lookups against single ones, absent ids included (the oracle's ids,
        // integers around them, and names that are not vertices).
        let mut asked: Vec<ExternalId> = oracle.to_vec();
        for id in oracle {
            if let ExternalId::Int(x) = id {
                asked.extend([x.wrapping_add(1), x.wrapping_sub(1)].map(ExternalId::Int));
            }
        }
        asked.extend(["nobody".into(), "".into()]);
        let single: Vec<Option<VertexId>> = asked.iter().map(|id| map.internal_id(id)).collect();
        assert_eq!(map.internal_ids(&asked), single);
        let ints: Vec<u64> = asked
            .iter()
            .filter_map(|id| match id {
                ExternalId::Int(x) => Some(*x),
                ExternalId::Name(_) => None,
            })
            .collect();
        let single: Vec<Option<VertexId>> = ints.iter().map(|&x| map.internal(x)).collect();
        assert_eq!(map.internal_many(&ints), single);
        let named = oracle
            .iter()
            .filter(|id| matches!(id, ExternalId::Name(_)))
            .count();
        assert_eq!(map.name_count(), named);
        let names = named > 0;
        assert_eq!(map.has_names(), names);
        if let Some(ints) = map.int_ids() {
            for (v, id) in oracle.iter().enumerate() {
                assert_eq!(&ExternalId::Int(ints.get(v as VertexId)), id);
            }
        }
        let list = map.ints();
        assert_eq!(list.is_some(), !names);
        if let Some(list) = list {
            assert_eq!(
                IdMap::from_list(&list).as_ref().map(|m| m.len()),
                Some(list.len())
            );
        }
    }

    proptest! {
        #[test]
        fn every_version_of_the_dictionary_keeps_its_ids(
            start in prop_oneof![Just(None), (0u64..5, 0usize..6).prop_map(Some)],
            ops in prop::collection::vec(id_op(), 0..40),
        ) {
            let (mut map, mut oracle) = match start {
                None => (IdMap::default(), Vec::new()),
                Some((first, len)) => (
                    IdMap::range(first, len),
                    (first..first + len as u64).map(ExternalId::Int).collect(),
                ),
            };
            let mut versions: Vec<(IdMap, Vec<ExternalId>)> = Vec::new();
            for op in ops {
                match op {
                    IdOp::Insert(id) => {
                        let (v, added) = map.insert(&id).unwrap();
                        match oracle.iter().position(|x| *x == id) {
                            Some(at) => prop_assert_eq!((v as usize, added), (at, false)),
                            None => {
                                prop_assert_eq!((v as usize, added), (oracle.len(), true));
                                oracle.push(id);
                            }
                        }
                    }
                    IdOp::Grow(k) => {
                        map.grow_to(oracle.len() + k);
                        // New vertices get integers nobody has.
                        for v in oracle.len()..oracle.len() + k {
                            let id = map.external_id(v as VertexId).unwrap();
                            prop_assert!(matches!(id, ExternalId::Int(_)));
                            prop_assert!(!oracle.contains(&id));
                            oracle.push(id);
                        }
                    }
                    IdOp::Snapshot => versions.push((map.clone(), oracle.clone())),
                    IdOp::DropOldest => {
                        if !versions.is_empty() {
                            versions.remove(0);
                        }
                    }
                }
                check_map(&map, &oracle);
                for (version, expected) in &versions {
                    check_map(version, expected);
                }
            }
        }
    }
}
