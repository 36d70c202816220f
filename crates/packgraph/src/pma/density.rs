//! The implicit tree over the leaves and its byte-density bounds.
//!
//! Node `(level, index)` covers leaves `[index << level, (index + 1) << level)`, cut at the
//! number of leaves, so the leaf count need not be a power of two (growth by 1.2 is not).
//! The root is at level ⌈log2(leaves)⌉.
//!
//! Bounds are on *byte* density (used bytes / capacity), as in the CPMA (paper, section 5).
//! Upper bounds fall linearly from `1 - slack / leaf_bytes` at the leaves to the
//! configured root bound; lower bounds rise from the leaf bound to the root bound.
//!
//! The slack (`LeafCodec::SLACK`) makes redistribution always fit: spreading a region of
//! density `d` puts at most `d · leaf_bytes + 19` bytes in any leaf of a set (a cut can land
//! one 10-byte code late, each new head costs 8 bytes, and a former head re-coded as a delta
//! can grow by 2), so sets keep 20 bytes; a map's entries carry an 8-byte value too (a late
//! cut costs up to 18 bytes), so maps keep 30.

use std::ops::Range;

/// Level of the root for `num_leaves` leaves.
pub(crate) fn root_level(num_leaves: usize) -> u32 {
    num_leaves.max(1).next_power_of_two().trailing_zeros()
}

/// Leaves covered by node `(level, index)`.
pub(crate) fn node_leaves(level: u32, index: usize, num_leaves: usize) -> Range<usize> {
    let start = (index << level).min(num_leaves);
    let end = ((index + 1) << level).min(num_leaves);
    start..end
}

/// Density bounds for one tree shape.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bounds {
    root: u32,
    upper_leaf: f64,
    upper_root: f64,
    lower_leaf: f64,
    lower_root: f64,
}

impl Bounds {
    pub(crate) fn new(
        num_leaves: usize,
        leaf_bytes: usize,
        slack: usize,
        config: &super::PmaConfig,
    ) -> Self {
        Self {
            root: root_level(num_leaves),
            upper_leaf: upper_leaf_bound(leaf_bytes, slack),
            upper_root: config.upper_density_root,
            lower_leaf: config.lower_density_leaf,
            lower_root: config.lower_density_root,
        }
    }

    pub(crate) fn root_level(&self) -> u32 {
        self.root
    }

    fn fraction(&self, level: u32) -> f64 {
        if self.root == 0 {
            1.0
        } else {
            f64::from(level) / f64::from(self.root)
        }
    }

    /// Largest allowed byte density at `level`.
    pub(crate) fn upper(&self, level: u32) -> f64 {
        self.upper_leaf - (self.upper_leaf - self.upper_root) * self.fraction(level)
    }

    /// Smallest allowed byte density at `level`.
    pub(crate) fn lower(&self, level: u32) -> f64 {
        self.lower_leaf + (self.lower_root - self.lower_leaf) * self.fraction(level)
    }

    /// Whether `bytes` in `capacity` bytes at `level` break the bound that `growing` checks.
    pub(crate) fn violated(
        &self,
        level: u32,
        bytes: usize,
        capacity: usize,
        growing: bool,
    ) -> bool {
        let density = bytes as f64 / capacity as f64;
        if growing {
            density > self.upper(level)
        } else {
            density < self.lower(level)
        }
    }
}

/// The leaves' upper density bound for a leaf size and an encoding's slack.
pub(crate) fn upper_leaf_bound(leaf_bytes: usize, slack: usize) -> f64 {
    1.0 - slack as f64 / leaf_bytes as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_cover_ragged_leaf_counts() {
        assert_eq!(root_level(1), 0);
        assert_eq!(root_level(5), 3);
        assert_eq!(node_leaves(3, 0, 5), 0..5);
        assert_eq!(node_leaves(1, 2, 5), 4..5);
        assert_eq!(node_leaves(1, 3, 5), 5..5);
    }

    #[test]
    fn bounds_tighten_toward_the_root() {
        let config = crate::pma::PmaConfig::default();
        let bounds = Bounds::new(1024, 256, 20, &config);
        assert!(bounds.upper(0) > bounds.upper(5));
        assert!((bounds.upper(10) - config.upper_density_root).abs() < 1e-12);
        assert!(bounds.lower(0) < bounds.lower(10));
        assert!(bounds.violated(0, 256, 256, true));
        assert!(!bounds.violated(0, 200, 256, true));
        assert!(bounds.violated(3, 0, 2048, false));
    }
}
