//! Unsafe code of the PMA: a software prefetch hint (here) and the unchecked write access
//! to an unshared page (`page::cow`).
//!
//! A batch merge knows the leaves it will touch next (the batch is sorted), but each leaf is
//! a cache miss; hinting the next few leaves while merging the current one overlaps those
//! misses. Measured with `packgraph bench pma` (batch inserts, see the commit message).

/// Asks the CPU to start loading the cache lines holding `bytes` (at most `lines` of them).
/// A hint only: it never faults and has no effect on results.
#[inline(always)]
pub(super) fn prefetch(bytes: &[u8], lines: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        for line in (0..bytes.len()).step_by(64).take(lines) {
            // SAFETY: `line < bytes.len()`, so the pointer is inside the borrowed slice; and a
            // prefetch never dereferences in the language sense: it cannot fault or change
            // memory, whatever the address.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(bytes.as_ptr().add(line).cast::<i8>()) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (bytes, lines);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefetch_accepts_any_slice() {
        let data = vec![7u8; 1000];
        prefetch(&data, 3);
        prefetch(&data[999..], 8);
        prefetch(&[], 4);
        assert_eq!(data[0], 7);
    }
}
