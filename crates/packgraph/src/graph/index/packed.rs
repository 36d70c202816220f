//! An entry of the flat index as its segment stores it: 12 bytes instead of 16.
//!
//! A [`ShortCursor`] holds the leaf of a run's first key, the low half of that key, and the
//! byte offset in the leaf just past its entry. The offset is below the leaf's size, so it
//! needs only the bits of the array's leaf size (13 for the largest default leaves of
//! 4 KiB); the degree takes the rest of that 32-bit word. A degree too large for its bits
//! (over half a million arcs with 4 KiB leaves) is stored as the escape value, and the
//! index keeps the vertex's true degree in a small table of its own.

use crate::pma::ShortCursor;

use super::Entry;

/// An entry packed into 12 bytes ([`Packing`] reads and writes it); all zeros for a vertex
/// without arcs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Packed {
    leaf: u32,
    first_low: u32,
    /// The byte offset past the first key's entry (the low `next_bits`), the degree (or the
    /// escape value) above it.
    word: u32,
}

impl Packed {
    /// A non-empty entry told apart by `tag`, for tests of the segments.
    #[cfg(test)]
    pub(super) fn tagged(tag: u32) -> Self {
        Self {
            leaf: tag,
            first_low: 0,
            word: 0,
        }
    }
}

/// How an index packs its entries: the bits of the byte offset, for the array's leaf size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Packing {
    next_bits: u32,
    /// The degree field's value for a degree kept in the table of large degrees: the
    /// field's largest value.
    escape: u32,
}

impl Packing {
    /// The packing for an array of leaves of `leaf_bytes` (offsets up to `leaf_bytes`).
    pub(super) fn for_leaf_bytes(leaf_bytes: usize) -> Self {
        let next_bits = (usize::BITS - leaf_bytes.leading_zeros()).clamp(1, 24);
        let field = (1u64 << (32 - next_bits)) - 1;
        Self {
            next_bits,
            // The unit tests escape every degree from 6 on, so that every index test
            // exercises the table of large degrees.
            escape: if cfg!(test) { 6 } else { field as u32 },
        }
    }

    /// Whether `degree` is kept in the table of large degrees.
    #[inline(always)]
    pub(super) fn escapes(self, degree: u32) -> bool {
        degree >= self.escape
    }

    /// `entry` packed; `None` if its offset does not fit (an entry of an array with larger
    /// leaves than this packing's).
    #[inline]
    pub(super) fn pack(self, entry: Entry) -> Option<Packed> {
        let (leaf, next, first_low) = entry.start.parts();
        if u64::from(next) >> self.next_bits != 0 {
            return None;
        }
        let degree = entry.degree.min(self.escape);
        Some(Packed {
            leaf,
            first_low,
            word: next | degree << self.next_bits,
        })
    }

    /// The degree field of `packed`: its degree, or the escape value.
    #[inline(always)]
    pub(super) fn degree_field(self, packed: &Packed) -> u32 {
        packed.word >> self.next_bits
    }

    /// Whether `field` (a [`Packing::degree_field`]) is the escape value.
    #[inline(always)]
    pub(super) fn is_escape(self, field: u32) -> bool {
        field == self.escape
    }

    /// The entry of `packed`, whose degree is `degree` (its field, or the table's value).
    #[inline(always)]
    pub(super) fn unpack(self, packed: &Packed, degree: u32) -> Entry {
        let next = packed.word & ((1 << self.next_bits) - 1);
        Entry {
            start: ShortCursor::from_parts(packed.leaf, next, packed.first_low),
            degree,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any entry whose offset fits its leaves packs and unpacks to itself (its degree
        /// from the field, or from the table when escaped); an empty entry packs to zeros.
        #[test]
        fn entries_pack_and_unpack(
            leaf_bytes in (1usize..=16384).prop_map(|k| k * 64),
            leaf in any::<u32>(),
            next in any::<u32>(),
            first_low in any::<u32>(),
            degree in prop_oneof![0u32..20, any::<u32>()],
        ) {
            let packing = Packing::for_leaf_bytes(leaf_bytes);
            let next = next % (leaf_bytes as u32 + 1);
            let entry = Entry { start: ShortCursor::from_parts(leaf, next, first_low), degree };
            let packed = packing.pack(entry).unwrap();
            let field = packing.degree_field(&packed);
            prop_assert_eq!(packing.is_escape(field), packing.escapes(degree));
            let degree_read = if packing.is_escape(field) { degree } else { field };
            prop_assert_eq!(packing.unpack(&packed, degree_read), entry);
            prop_assert_eq!(packing.pack(Entry::default()), Some(Packed::default()));
        }
    }

    /// An offset past the packing's leaves is refused, not cut.
    #[test]
    fn an_offset_too_large_for_the_leaves_is_refused() {
        let packing = Packing::for_leaf_bytes(4096);
        let start = ShortCursor::from_parts(3, 8192, 5);
        assert_eq!(packing.pack(Entry { start, degree: 1 }), None);
        let start = ShortCursor::from_parts(3, 4096, 5);
        assert!(packing.pack(Entry { start, degree: 1 }).is_some());
    }
}
