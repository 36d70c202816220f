//! External vertex ids (any `u64`, as files give them) to dense internal ids and back.
//!
//! Internal ids are the ranks of the external ids in increasing order, so the mapping is
//! monotone: the smallest external id is vertex 0, results written in internal order come
//! out sorted by external id, and "the smallest label" means the same on both sides. Files
//! whose ids are already `first..first + n` keep them (offset by `first`) at no cost.

use rayon::prelude::*;

use crate::graph::VertexId;

/// The most vertices a graph can hold (ids are 32-bit).
pub const MAX_VERTICES: usize = u32::MAX as usize;

/// A monotone bijection between a set of external `u64` ids and `0..len`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdMap {
    repr: Repr,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Repr {
    /// External ids `first..first + len`.
    Range { first: u64, len: usize },
    /// External ids in increasing order.
    Sorted(Vec<u64>),
}

/// Why ids could not be mapped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum IdMapError {
    /// More distinct ids than [`MAX_VERTICES`].
    TooMany(usize),
    /// An id occurs twice in a vertex list.
    Duplicate(u64),
}

impl IdMap {
    /// External ids `first..first + len`.
    pub fn range(first: u64, len: usize) -> Self {
        Self {
            repr: Repr::Range { first, len },
        }
    }

    /// The identity on `0..len`.
    pub fn identity(len: usize) -> Self {
        Self::range(0, len)
    }

    /// From strictly increasing external ids; `None` if they are not.
    pub fn from_sorted(ids: Vec<u64>) -> Option<Self> {
        if ids.par_windows(2).any(|w| w[0] >= w[1]) {
            return None;
        }
        let contiguous = match (ids.first(), ids.last()) {
            (Some(&first), Some(&last)) => last - first == ids.len() as u64 - 1,
            _ => true,
        };
        Some(if contiguous {
            Self::range(ids.first().copied().unwrap_or(0), ids.len())
        } else {
            Self {
                repr: Repr::Sorted(ids),
            }
        })
    }

    /// The number of vertices.
    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Range { len, .. } => *len,
            Repr::Sorted(ids) => ids.len(),
        }
    }

    /// Whether there are no vertices.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the external ids are `0..len` (internal and external ids agree).
    pub fn is_identity(&self) -> bool {
        matches!(self.repr, Repr::Range { first: 0, .. })
    }

    /// The external id of internal vertex `v` (`v < len`).
    ///
    /// # Panics
    /// If `v` is out of range.
    #[inline]
    pub fn external(&self, v: VertexId) -> u64 {
        match &self.repr {
            Repr::Range { first, len } => {
                assert!((v as usize) < *len, "vertex {v} out of range");
                first + u64::from(v)
            }
            Repr::Sorted(ids) => ids[v as usize],
        }
    }

    /// The internal id of external id `id`, if it is a vertex.
    #[inline]
    pub fn internal(&self, id: u64) -> Option<VertexId> {
        match &self.repr {
            Repr::Range { first, len } => {
                let offset = id.checked_sub(*first)?;
                (offset < *len as u64).then_some(offset as VertexId)
            }
            Repr::Sorted(ids) => ids.binary_search(&id).ok().map(|i| i as VertexId),
        }
    }

    /// The external ids in increasing order, when they are not a range.
    pub fn sorted_ids(&self) -> Option<&[u64]> {
        match &self.repr {
            Repr::Range { .. } => None,
            Repr::Sorted(ids) => Some(ids),
        }
    }

    /// `(first, len)` when the external ids are a range.
    pub fn as_range(&self) -> Option<(u64, usize)> {
        match self.repr {
            Repr::Range { first, len } => Some((first, len)),
            Repr::Sorted(_) => None,
        }
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
        Ok(Self::from_sorted(ids).expect("sorted without duplicates"))
    }

    /// The map of the endpoints of `edges`, and the edges in internal ids.
    pub(crate) fn from_endpoints(
        edges: &[(u64, u64)],
    ) -> Result<(Self, Vec<(VertexId, VertexId)>), IdMapError> {
        if edges.is_empty() {
            return Ok((Self::identity(0), Vec::new()));
        }
        let (min, max) = edges
            .par_iter()
            .fold(
                || (u64::MAX, 0u64),
                |(lo, hi), &(u, v)| (lo.min(u).min(v), hi.max(u).max(v)),
            )
            .reduce(|| (u64::MAX, 0), |a, b| (a.0.min(b.0), a.1.max(b.1)));
        let span = max - min;
        // Dense enough for a bitmap of at most one byte per edge.
        if span < MAX_VERTICES as u64 && span / 8 <= edges.len() as u64 + 64 {
            Self::by_bitmap(edges, min, span as usize + 1)
        } else {
            Self::by_sorting(edges)
        }
    }

    fn by_bitmap(
        edges: &[(u64, u64)],
        min: u64,
        span: usize,
    ) -> Result<(Self, Vec<(VertexId, VertexId)>), IdMapError> {
        let words = span.div_ceil(64);
        // One bitmap per thread (at most one byte per edge each), OR-ed together.
        let per_thread = edges.len().div_ceil(rayon::current_num_threads()).max(1);
        let bits = edges
            .par_chunks(per_thread)
            .map(|chunk| {
                let mut bits = vec![0u64; words];
                for &(u, v) in chunk {
                    for x in [u - min, v - min] {
                        bits[(x >> 6) as usize] |= 1 << (x & 63);
                    }
                }
                bits
            })
            .reduce_with(|mut a, b| {
                a.iter_mut().zip(&b).for_each(|(x, y)| *x |= y);
                a
            })
            .unwrap_or_default();
        let mut ranks = Vec::with_capacity(words);
        let mut total = 0u32;
        for &word in &bits {
            ranks.push(total);
            total += word.count_ones();
        }
        let n = total as usize;
        if n > MAX_VERTICES {
            return Err(IdMapError::TooMany(n));
        }
        if n == span {
            let remapped = edges
                .par_iter()
                .map(|&(u, v)| ((u - min) as VertexId, (v - min) as VertexId))
                .collect();
            return Ok((Self::range(min, n), remapped));
        }
        let rank = |x: u64| {
            let x = x - min;
            let (w, b) = ((x >> 6) as usize, x & 63);
            ranks[w] + (bits[w] & ((1u64 << b) - 1)).count_ones()
        };
        let remapped = edges.par_iter().map(|&(u, v)| (rank(u), rank(v))).collect();
        let ids: Vec<u64> = bits
            .iter()
            .enumerate()
            .flat_map(|(w, &word)| {
                (0..64)
                    .filter(move |b| word >> b & 1 == 1)
                    .map(move |b| min + (w as u64) * 64 + b)
            })
            .collect();
        Ok((
            Self {
                repr: Repr::Sorted(ids),
            },
            remapped,
        ))
    }

    fn by_sorting(edges: &[(u64, u64)]) -> Result<(Self, Vec<(VertexId, VertexId)>), IdMapError> {
        let mut ids: Vec<u64> = edges.par_iter().flat_map_iter(|&(u, v)| [u, v]).collect();
        ids.par_sort_unstable();
        ids.dedup();
        if ids.len() > MAX_VERTICES {
            return Err(IdMapError::TooMany(ids.len()));
        }
        let map = Self::from_sorted(ids).expect("sorted and deduplicated");
        let remapped = edges
            .par_iter()
            .map(|&(u, v)| {
                let find = |x| map.internal(x).expect("every endpoint is mapped");
                (find(u), find(v))
            })
            .collect();
        Ok((map, remapped))
    }
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
        assert_eq!(map.sorted_ids(), Some(&[10, 20, 30][..]));
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
    }
}
