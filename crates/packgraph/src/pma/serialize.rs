//! The bytes of a PMA's arrays that snapshot files (`.pgb`) and checkpoint units both store,
//! written and read by one codec: the configuration words ([`PmaConfig::write_stored`]) and
//! the array's dimensions ([`ArrayDims`]). Each format orders these as it always has and
//! keeps its own extra fields: a checkpoint's base unit adds `page_bytes` and the page
//! references; a snapshot adds nothing, and its reader takes `page_bytes` from
//! [`PmaConfig::default`]. The leaves and the per-leaf sizes and heads are bulk arrays of
//! the byte kit ([`ByteReader::words_into`]).
//!
//! Reading checks only that each size fits `usize`; the ranges are checked where the arrays
//! are rebuilt ([`Pma::from_parts`](super::Pma::from_parts) validates the configuration).

use super::{PmaConfig, PmaPartsRef};
use crate::codec::bytes::{ByteReader, ByteSource, ByteWriter, BytesError};

impl PmaConfig {
    /// Writes the stored configuration words: `growth_factor`, `upper_density_root`,
    /// `lower_density_root`, `lower_density_leaf` as f64 bits, then `leaf_bytes` (0 for
    /// automatic), `point_batch_max`, `rebuild_divisor` and `parallel_grain` as u64 (64
    /// bytes; `page_bytes` is not among them).
    pub(crate) fn write_stored(&self, w: &mut ByteWriter) {
        w.f64(self.growth_factor)
            .f64(self.upper_density_root)
            .f64(self.lower_density_root)
            .f64(self.lower_density_leaf)
            .size(self.leaf_bytes.unwrap_or(0))
            .size(self.point_batch_max)
            .size(self.rebuild_divisor)
            .size(self.parallel_grain);
    }

    /// Reads what [`PmaConfig::write_stored`] writes; `page_bytes` is the default.
    ///
    /// # Errors
    /// [`BytesError`] if the bytes end or a size does not fit `usize`.
    pub(crate) fn read_stored<R: ByteSource>(r: &mut ByteReader<R>) -> Result<Self, BytesError> {
        const WHAT: &str = "the array configuration";
        let growth_factor = r.f64(WHAT)?;
        let upper_density_root = r.f64(WHAT)?;
        let lower_density_root = r.f64(WHAT)?;
        let lower_density_leaf = r.f64(WHAT)?;
        let leaf_bytes = r.size(WHAT)?;
        Ok(Self {
            growth_factor,
            upper_density_root,
            lower_density_root,
            lower_density_leaf,
            leaf_bytes: (leaf_bytes != 0).then_some(leaf_bytes),
            point_batch_max: r.size(WHAT)?,
            rebuild_divisor: r.size(WHAT)?,
            parallel_grain: r.size(WHAT)?,
            ..Self::default()
        })
    }
}

/// The sizes of a PMA's arrays, stored as three u64 in this order by both formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ArrayDims {
    /// Bytes per leaf.
    pub(crate) leaf_bytes: usize,
    /// Number of leaves.
    pub(crate) num_leaves: usize,
    /// Number of keys.
    pub(crate) len: usize,
}

impl ArrayDims {
    /// The dimensions of `parts`.
    pub(crate) fn of(parts: &PmaPartsRef<'_>) -> Self {
        Self {
            leaf_bytes: parts.leaf_bytes,
            num_leaves: parts.used.len(),
            len: parts.len,
        }
    }

    /// Writes `leaf_bytes`, `num_leaves`, `len`.
    pub(crate) fn write(&self, w: &mut ByteWriter) {
        w.size(self.leaf_bytes).size(self.num_leaves).size(self.len);
    }

    /// Reads what [`ArrayDims::write`] writes.
    ///
    /// # Errors
    /// [`BytesError`] if the bytes end or a size does not fit `usize`.
    pub(crate) fn read<R: ByteSource>(r: &mut ByteReader<R>) -> Result<Self, BytesError> {
        Ok(Self {
            leaf_bytes: r.size("the leaf size")?,
            num_leaves: r.size("the leaf count")?,
            len: r.size("the key count")?,
        })
    }

    /// Bytes of the leaves (`num_leaves × leaf_bytes`), saturating.
    pub(crate) fn data_bytes(&self) -> u64 {
        (self.num_leaves as u64).saturating_mul(self.leaf_bytes as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stored_configuration_is_64_bytes_and_round_trips() {
        let config = PmaConfig {
            leaf_bytes: Some(512),
            point_batch_max: usize::MAX,
            page_bytes: 1 << 16,
            ..PmaConfig::default()
        };
        let mut w = ByteWriter::default();
        config.write_stored(&mut w);
        assert_eq!(w.len(), 64);
        let bytes = w.into_vec();
        let back = PmaConfig::read_stored(&mut ByteReader::new(&bytes)).unwrap();
        assert_eq!(
            back,
            PmaConfig {
                page_bytes: PmaConfig::default().page_bytes,
                ..config
            }
        );
        for len in 0..bytes.len() {
            assert!(PmaConfig::read_stored(&mut ByteReader::new(&bytes[..len])).is_err());
        }
    }

    #[test]
    fn dims_round_trip() {
        let dims = ArrayDims {
            leaf_bytes: 256,
            num_leaves: 3,
            len: 40,
        };
        let mut w = ByteWriter::default();
        dims.write(&mut w);
        assert_eq!(w.len(), 24);
        let bytes = w.into_vec();
        assert_eq!(ArrayDims::read(&mut ByteReader::new(&bytes)).unwrap(), dims);
        assert_eq!(dims.data_bytes(), 768);
    }
}
