//! [`Permutation`]: a checked bijection on the vertex ids `0..n`, kept with its inverse.

use rayon::prelude::*;

use crate::graph::VertexId;
use crate::{Error, Result};

/// Vectors at least this long are checked and inverted on all threads.
const PARALLEL_LEN: usize = 1 << 15;

/// A bijection on `0..n`: vertex `old` gets the id [`Permutation::new_id`]`(old)`, and
/// [`Permutation::old_id`] goes back. Both directions are stored (8 bytes per vertex).
///
/// # Examples
/// ```
/// use packgraph::layout::Permutation;
///
/// // Vertex 0 becomes 2, vertex 1 becomes 0, vertex 2 becomes 1.
/// let p = Permutation::from_new_ids(vec![2, 0, 1]).unwrap();
/// assert_eq!((p.new_id(0), p.old_id(2)), (2, 0));
/// assert_eq!(p.inverse().new_ids(), [1, 2, 0]);
/// assert!(Permutation::from_new_ids(vec![0, 0]).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Permutation {
    /// `new_of_old[old]`: the new id of vertex `old`.
    new_of_old: Vec<VertexId>,
    /// `old_of_new[new]`: the vertex that gets id `new`.
    old_of_new: Vec<VertexId>,
}

impl Permutation {
    /// The identity on `0..n`.
    pub fn identity(n: usize) -> Self {
        let ids: Vec<VertexId> = (0..n as VertexId).collect();
        Self {
            new_of_old: ids.clone(),
            old_of_new: ids,
        }
    }

    /// The permutation giving vertex `old` the id `new_ids[old]`.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the first id that is out of range or repeated.
    pub fn from_new_ids(new_ids: Vec<VertexId>) -> Result<Self> {
        let old_of_new = inverse_of(&new_ids)?;
        Ok(Self {
            new_of_old: new_ids,
            old_of_new,
        })
    }

    /// The permutation that lists the vertices in the order `order`: `order[new]` is the
    /// vertex that gets id `new`.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the first vertex that is out of range or repeated.
    pub fn from_order(order: Vec<VertexId>) -> Result<Self> {
        Ok(Self::from_new_ids(order)?.inverse())
    }

    /// Number of vertices permuted.
    pub fn len(&self) -> usize {
        self.new_of_old.len()
    }

    /// Whether it permutes no vertex.
    pub fn is_empty(&self) -> bool {
        self.new_of_old.is_empty()
    }

    /// The new id of vertex `old`.
    ///
    /// # Panics
    /// If `old` is not below [`Permutation::len`].
    #[inline]
    #[track_caller]
    pub fn new_id(&self, old: VertexId) -> VertexId {
        self.new_of_old[old as usize]
    }

    /// The vertex that gets id `new`.
    ///
    /// # Panics
    /// If `new` is not below [`Permutation::len`].
    #[inline]
    #[track_caller]
    pub fn old_id(&self, new: VertexId) -> VertexId {
        self.old_of_new[new as usize]
    }

    /// Every vertex's new id, indexed by its old id.
    pub fn new_ids(&self) -> &[VertexId] {
        &self.new_of_old
    }

    /// The vertices in their new order (indexed by new id).
    pub fn order(&self) -> &[VertexId] {
        &self.old_of_new
    }

    /// The permutation that undoes this one.
    pub fn inverse(&self) -> Self {
        Self {
            new_of_old: self.old_of_new.clone(),
            old_of_new: self.new_of_old.clone(),
        }
    }

    /// Whether every vertex keeps its id.
    pub fn is_identity(&self) -> bool {
        self.new_of_old
            .iter()
            .enumerate()
            .all(|(i, &v)| i == v as usize)
    }

    /// `self` then `next`: vertex `old` gets `next.new_id(self.new_id(old))`.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if the two permute different numbers of vertices.
    pub fn then(&self, next: &Permutation) -> Result<Self> {
        if next.len() != self.len() {
            return Err(Error::invalid_reason(format!(
                "cannot compose a permutation of {} vertices with one of {}",
                self.len(),
                next.len()
            )));
        }
        let new_ids = self.new_of_old.iter().map(|&v| next.new_id(v)).collect();
        Self::from_new_ids(new_ids)
    }
}

/// The inverse of `ids` as a map `i -> ids[i]`, or the first entry that breaks bijectivity.
fn inverse_of(ids: &[VertexId]) -> Result<Vec<VertexId>> {
    let n = ids.len();
    if n > crate::graph::MAX_VERTICES {
        return Err(Error::invalid_reason(format!(
            "a permutation of {n} vertices is more than 32-bit ids allow"
        )));
    }
    let out_of_range = |&v: &VertexId| v as usize >= n;
    let bad = if n >= PARALLEL_LEN {
        ids.par_iter().position_first(out_of_range)
    } else {
        ids.iter().position(out_of_range)
    };
    if let Some(i) = bad {
        return Err(Error::invalid(
            ids[i],
            format!("entry {i} of a permutation of {n} vertices is out of range"),
        ));
    }
    const UNSET: VertexId = VertexId::MAX;
    let mut inverse = vec![UNSET; n];
    for (i, &v) in ids.iter().enumerate() {
        let slot = &mut inverse[v as usize];
        if *slot != UNSET {
            return Err(Error::invalid(
                v,
                format!(
                    "entries {} and {i} of a permutation both map to the same id",
                    *slot
                ),
            ));
        }
        *slot = i as VertexId;
    }
    Ok(inverse)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bad_entries_are_named() {
        let error = Permutation::from_new_ids(vec![0, 3, 1]).unwrap_err();
        assert!(error.to_string().contains("entry 1"), "{error}");
        let error = Permutation::from_order(vec![1, 0, 1]).unwrap_err();
        assert!(error.to_string().contains("entries 0 and 2"), "{error}");
        assert!(Permutation::from_new_ids(Vec::new()).unwrap().is_empty());
    }

    proptest! {
        #[test]
        fn inverse_undoes_and_composition_with_it_is_the_identity(
            keys in proptest::collection::vec(any::<u64>(), 0..200),
        ) {
            let mut order: Vec<VertexId> = (0..keys.len() as VertexId).collect();
            order.sort_by_key(|&v| keys[v as usize]);
            let p = Permutation::from_order(order.clone()).unwrap();
            prop_assert_eq!(p.order(), &order[..]);
            for v in 0..p.len() as VertexId {
                prop_assert_eq!(p.old_id(p.new_id(v)), v);
            }
            prop_assert!(p.then(&p.inverse()).unwrap().is_identity());
            prop_assert_eq!(p.inverse().inverse(), p);
        }
    }
}
