//! [`PmaConfig`], the tunables of a [`Pma`](super::Pma), and the checks of their ranges.

use super::density;
use super::leaf::{DeltaLeaf, LeafCodec};
use super::PmaError;

/// Tunables of a [`Pma`](super::Pma). The defaults were set by `packgraph bench pma`.
#[derive(Debug, Clone, PartialEq)]
pub struct PmaConfig {
    /// Factor by which capacity changes on growth (and shrink); the array is rebuilt at
    /// density `upper_density_root / growth_factor`. Range 1.05–4.
    pub growth_factor: f64,
    /// Upper byte-density bound at the root. Range (0, 1 - 20 / leaf bytes].
    pub upper_density_root: f64,
    /// Lower byte-density bound at the root; below it the array shrinks.
    pub lower_density_root: f64,
    /// Lower byte-density bound at the leaves.
    pub lower_density_leaf: f64,
    /// Fixed leaf size in bytes (a multiple of 64, at least 64); `None` picks it from the
    /// size, growing with the logarithm of the capacity.
    pub leaf_bytes: Option<usize>,
    /// Batches smaller than this are applied key by key.
    pub point_batch_max: usize,
    /// Batches of at least `len / rebuild_divisor` keys rebuild the array by a linear merge.
    pub rebuild_divisor: usize,
    /// Batch keys per serial task in the parallel merge.
    pub parallel_grain: usize,
    /// Target bytes of leaves per stored page, the unit that snapshot files and checkpoints
    /// write ([`Pma::parts`](super::Pma::parts) hands out one slice per stored page); a
    /// stored page holds the largest power of two of leaves that fits (at least one leaf).
    /// In memory, versions share pages of [`PmaConfig::share_bytes`] (when smaller).
    /// Range 64..=16777216.
    pub page_bytes: usize,
    /// Target bytes of leaves per page in memory, the unit that versions share and copy on
    /// write: a page holds the largest power of two of leaves that fits
    /// `min(share_bytes, page_bytes)` (at least one leaf). Pages of one leaf (256) make a
    /// batch of 1e3 random keys under a fresh snapshot copy 2.8 times the bytes of the
    /// leaves it changes instead of 10, but cost a pointer, a reference count and an
    /// allocation per leaf: `packgraph-bench snapshot` measured batches of 1e4 and 1e5
    /// under a fresh snapshot at 0.35 and 0.26 times the speed of 4 KiB pages (one run
    /// each, loaded machine), so the default is 4096.
    /// Range 64..=16777216.
    pub share_bytes: usize,
    /// Byte density of a bulk build into an empty array ([`Pma::from_sorted`], a graph's
    /// first load); `None` builds at the density growth rebuilds at
    /// (`upper_density_root / growth_factor`). Higher values pack an array that will not
    /// change tighter, up to the leaves' own bound (`1 - slack / leaf bytes`, which caps
    /// it); the first insert that overflows a leaf of such an array then rebuilds it at
    /// the growth density, as a growth would. Not stored: a loaded array keeps the layout
    /// it was saved in. Range (0, 1].
    ///
    /// [`Pma::from_sorted`]: super::Pma::from_sorted
    pub load_density: Option<f64>,
}

impl Default for PmaConfig {
    fn default() -> Self {
        Self {
            growth_factor: 1.2,
            upper_density_root: 0.88,
            lower_density_root: 0.3,
            lower_density_leaf: 0.08,
            leaf_bytes: None,
            point_batch_max: 100,
            rebuild_divisor: 10,
            parallel_grain: 512,
            page_bytes: 4096,
            share_bytes: SHARE_BYTES,
            load_density: None,
        }
    }
}

/// The default [`PmaConfig::share_bytes`]: in-memory pages as large as stored ones.
const SHARE_BYTES: usize = 4096;

/// Leaf size for a given capacity when none is configured (bytes, multiple of 64).
pub(crate) fn default_leaf_bytes(capacity_bytes: usize) -> usize {
    const MIN_LEAF_BYTES: usize = 256;
    const MAX_LEAF_BYTES: usize = 4096;
    const BYTES_PER_LOG2: usize = 12;
    let log2 = (usize::BITS - capacity_bytes.max(2).leading_zeros()) as usize;
    ((log2 * BYTES_PER_LOG2).div_ceil(64) * 64).clamp(MIN_LEAF_BYTES, MAX_LEAF_BYTES)
}

impl PmaConfig {
    /// For tests: leaves of 64 bytes, two a page, with room for many rebalances.
    #[cfg(test)]
    pub(crate) fn two_leaf_pages() -> Self {
        Self {
            leaf_bytes: Some(64),
            page_bytes: 128,
            upper_density_root: 0.6,
            lower_density_root: 0.2,
            lower_density_leaf: 0.05,
            ..Self::default()
        }
    }

    /// Checks every field's range.
    ///
    /// # Errors
    /// [`PmaError::InvalidConfig`] naming the first bad field.
    pub fn validate(&self) -> Result<(), PmaError> {
        self.validate_for_slack(DeltaLeaf::SLACK)
    }

    /// [`PmaConfig::validate`] for a leaf encoding that keeps `slack` free bytes per leaf.
    pub(crate) fn validate_for_slack(&self, slack: usize) -> Result<(), PmaError> {
        let bad = |field, value: f64, reason| {
            Err(PmaError::InvalidConfig {
                field,
                value,
                reason,
            })
        };
        let min_leaf = self.leaf_bytes.unwrap_or(default_leaf_bytes(0));
        if let Some(bytes) = self.leaf_bytes {
            if bytes < 64 || bytes % 64 != 0 || bytes > 1 << 20 {
                return bad(
                    "leaf_bytes",
                    bytes as f64,
                    "must be a multiple of 64 in 64..=1048576",
                );
            }
        }
        if !(1.05..=4.0).contains(&self.growth_factor) {
            return bad("growth_factor", self.growth_factor, "must be in 1.05..=4");
        }
        let max_upper = density::upper_leaf_bound(min_leaf, slack);
        if !(self.upper_density_root > 0.0 && self.upper_density_root <= max_upper) {
            return bad(
                "upper_density_root",
                self.upper_density_root,
                "must be in (0, 1 - slack / leaf_bytes], slack being 20 bytes for byte-coded sets, 25 for group varint and 30 for maps",
            );
        }
        let rebuilt = self.upper_density_root / self.growth_factor;
        if !(self.lower_density_root >= 0.0 && self.lower_density_root < rebuilt * 0.75) {
            return bad(
                "lower_density_root",
                self.lower_density_root,
                "must be >= 0 and below 0.75 * upper_density_root / growth_factor",
            );
        }
        if !(self.lower_density_leaf >= 0.0 && self.lower_density_leaf <= self.lower_density_root) {
            return bad(
                "lower_density_leaf",
                self.lower_density_leaf,
                "must be in 0..=lower_density_root",
            );
        }
        if !(64..=1 << 24).contains(&self.page_bytes) {
            return bad(
                "page_bytes",
                self.page_bytes as f64,
                "must be in 64..=16777216",
            );
        }
        if !(64..=1 << 24).contains(&self.share_bytes) {
            return bad(
                "share_bytes",
                self.share_bytes as f64,
                "must be in 64..=16777216",
            );
        }
        if self.rebuild_divisor == 0 || self.parallel_grain == 0 {
            return bad("rebuild_divisor/parallel_grain", 0.0, "must be positive");
        }
        if let Some(density) = self.load_density {
            if !(density > 0.0 && density <= 1.0) {
                return bad("load_density", density, "must be in (0, 1]");
            }
        }
        Ok(())
    }

    /// log2 of the leaves per page in memory (the unit versions share and copy on write)
    /// for leaves of `leaf_bytes`: the largest power of two of leaves that fits
    /// `min(page_bytes, share_bytes)`, at least one leaf.
    pub(crate) fn page_shift(&self, leaf_bytes: usize) -> u32 {
        (self.page_bytes.min(self.share_bytes) / leaf_bytes)
            .max(1)
            .ilog2()
    }

    /// log2 of the leaves per stored page (the unit of snapshot files and checkpoints) for
    /// leaves of `leaf_bytes`; never less than [`PmaConfig::page_shift`].
    pub(crate) fn stored_page_shift(&self, leaf_bytes: usize) -> u32 {
        (self.page_bytes / leaf_bytes).max(1).ilog2()
    }

    /// Byte density the array is rebuilt at (after growth or shrink, and by large batches).
    pub(crate) fn build_density(&self) -> f64 {
        self.upper_density_root / self.growth_factor
    }

    /// Byte density a bulk build into an empty array aims at (before the leaves' cap).
    pub(crate) fn load_density(&self) -> f64 {
        self.load_density.unwrap_or_else(|| self.build_density())
    }
}
