//! mimalloc for programs built on packgraph (the opt-in feature `mimalloc`; the `packgraph`
//! and `packgraph-bench` binaries turn it on by default): the allocator to install and the
//! one option to set on it at start.
//!
//! ```ignore
//! #[global_allocator]
//! static GLOBAL: packgraph::allocator::MiMalloc = packgraph::allocator::MiMalloc;
//!
//! fn main() {
//!     packgraph::allocator::tune();
//!     // ...
//! }
//! ```
//!
//! Why mimalloc: with a query beside a stream of one-edge commits, the writer copies a page
//! and index segments after each published version, and the system allocator's share of
//! that (malloc, free, their consolidation, faults of returned memory) was about a quarter
//! of the writer's time (see CHANGELOG for the figures). The library itself allocates with
//! whatever allocator its program installs.

pub use mimalloc::MiMalloc;

/// mimalloc's `purge_decommits` option: `mi_option_purge_decommits` in `mimalloc.h`, index
/// 5 in both its version 2 (the one linked) and version 3.
const PURGE_DECOMMITS: libmimalloc_sys::mi_option_t = 5;

/// Has mimalloc give freed memory back lazily (`MADV_FREE`: the kernel takes the pages when
/// it needs them) rather than decommit it (`MADV_DONTNEED`), unless the environment's
/// `MIMALLOC_PURGE_DECOMMITS` says otherwise. A batch of 1e4 edges frees and allocates
/// buffers of the same sizes again at once, and a decommitted page is faulted in and zeroed
/// on its next use: a tenth of the server's time with batches of 1e4 (see CHANGELOG).
/// Harmless, and without effect, where [`MiMalloc`] is not the global allocator.
pub fn tune() {
    // SAFETY: `mi_option_set_default` stores a value in mimalloc's option table (an index
    // range check included); it touches no memory of ours, and a value other than 0 or 1
    // is not passed. An option already set from the environment is left as it is.
    unsafe { libmimalloc_sys::mi_option_set_default(PURGE_DECOMMITS, 0) };
}

#[cfg(test)]
mod tests {
    /// Reaches the `unsafe` call and reads the option back through mimalloc.
    #[test]
    fn tune_sets_lazy_purges_unless_the_environment_chose() {
        super::tune();
        // SAFETY: `mi_option_get` reads mimalloc's option table for an index it has.
        let value = unsafe { libmimalloc_sys::mi_option_get(super::PURGE_DECOMMITS) };
        let from_env = std::env::var("MIMALLOC_PURGE_DECOMMITS").is_ok();
        assert!(from_env || value == 0, "purge_decommits = {value}");
    }
}
