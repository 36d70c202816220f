//! Page allocations kept for reuse. A write under a snapshot copies each page it touches
//! into a new allocation, and dropping the snapshot later frees the pages it alone held:
//! with a fresh snapshot per batch the writer allocates and frees about as many pages per
//! batch as it copies. Pages are a few KiB, past the allocator's per-thread caches, so each
//! allocation and free takes its general path (bins searched, free neighbours coalesced):
//! `perf` put page allocations and frees at 16 % of batch inserts of 1e3 keys under a fresh
//! snapshot (`packgraph-bench snapshot --modes fresh`; all of the allocator at 33 %). A
//! group of the page table that is dropped therefore hands the pages it alone held to this
//! pool, and a copy takes a page of the same length from it before asking the allocator.
//!
//! The pool is process-wide (versions are dropped on any thread) and bounded: at most
//! [`POOL_BYTES`] bytes in at most [`POOL_LENGTHS`] page lengths. It hands out pages whose
//! bytes are stale: a taker overwrites them whole. Everything here is safe code: a page
//! enters only when `Arc::get_mut` shows that nothing else holds it.

use std::sync::{Arc, Mutex, PoisonError};

use super::Page;

/// Most bytes of pages the pool keeps; a page given past it is freed.
const POOL_BYTES: usize = 16 << 20;
/// Most page lengths the pool keeps at once (arrays of different leaf sizes, the short last
/// page of each); a length past them is freed unless one of them has run empty.
const POOL_LENGTHS: usize = 4;

/// Pages kept, by length.
struct Pool {
    bytes: usize,
    lengths: Vec<(usize, Vec<Page>)>,
}

static POOL: Mutex<Pool> = Mutex::new(Pool {
    bytes: 0,
    lengths: Vec::new(),
});

fn pool() -> std::sync::MutexGuard<'static, Pool> {
    // The pool's state is valid at every step, so a panic elsewhere cannot break it.
    POOL.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Pool {
    fn take(&mut self, len: usize) -> Option<Page> {
        let (_, pages) = self.lengths.iter_mut().find(|(l, _)| *l == len)?;
        let page = pages.pop()?;
        self.bytes -= len;
        Some(page)
    }

    /// Keeps `page` (which nothing else holds) if there is room; hands it back otherwise.
    fn keep(&mut self, page: Page) -> Option<Page> {
        let len = page.len();
        if self.bytes + len > POOL_BYTES {
            return Some(page);
        }
        let at = match self.lengths.iter().position(|(l, _)| *l == len) {
            Some(at) => at,
            None if self.lengths.len() < POOL_LENGTHS => {
                self.lengths.push((len, Vec::new()));
                self.lengths.len() - 1
            }
            None => match self.lengths.iter().position(|(_, pages)| pages.is_empty()) {
                Some(at) => {
                    self.lengths[at].0 = len;
                    at
                }
                None => return Some(page),
            },
        };
        self.lengths[at].1.push(page);
        self.bytes += len;
        None
    }
}

/// A copy of `page` in an allocation nothing else holds: a kept page of its length when the
/// pool has one, else a new one.
pub(super) fn copy_of(page: &[u8]) -> Page {
    // Taken in a statement of its own, so that the lock is not held while copying.
    let kept = pool().take(page.len());
    match kept {
        Some(mut kept) => {
            Arc::get_mut(&mut kept)
                .expect("a kept page is held by the pool alone")
                .copy_from_slice(page);
            kept
        }
        None => Arc::from(page),
    }
}

/// Lets go of `pages`, leaving it empty: those nothing else holds go into the pool while it
/// has room (the rest are freed).
pub(super) fn recycle(pages: &mut Vec<Page>) {
    // The counts are read before the lock (a cache miss each), the pages moved under it.
    let mut unique = 0u64;
    for (i, page) in pages.iter_mut().enumerate().take(64) {
        // A plain read first: `Arc::get_mut` is a locked instruction, and most pages of a
        // group let go of may still be held by another version.
        if Arc::strong_count(page) == 1 && Arc::get_mut(page).is_some() {
            unique |= 1 << i;
        }
    }
    if unique == 0 {
        pages.clear();
        return;
    }
    // Pages the full pool refuses, freed after the lock.
    let mut refused = Vec::new();
    let mut pool = pool();
    for (i, page) in pages.drain(..).enumerate() {
        if i < 64 && unique & (1 << i) != 0 {
            refused.extend(pool.keep(page));
        }
    }
    drop(pool);
    drop(refused);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_is_whole_and_unshared_whatever_the_pool_holds() {
        // (The pool is the process's: other tests give and take pages meanwhile.)
        let len = 4_093;
        let held: Page = vec![7u8; len].into();
        let mut pages: Vec<Page> = vec![vec![1u8; len].into(), Arc::clone(&held)];
        recycle(&mut pages);
        assert!(pages.is_empty());
        assert_eq!(Arc::strong_count(&held), 1);
        let copy = copy_of(&held);
        assert_eq!(&copy[..], &held[..]);
        assert_eq!(Arc::strong_count(&copy), 1);
        assert!(!Arc::ptr_eq(&copy, &held));
    }

    #[test]
    fn a_page_given_is_taken_again_by_length() {
        let mut pool = Pool {
            bytes: 0,
            lengths: Vec::new(),
        };
        let page: Page = vec![3u8; 100].into();
        let at = Arc::as_ptr(&page);
        assert!(pool.keep(page).is_none());
        assert!(pool.take(99).is_none() && pool.take(101).is_none());
        assert_eq!(pool.take(100).map(|p| Arc::as_ptr(&p)), Some(at));
        assert!(pool.take(100).is_none());
        assert_eq!(pool.bytes, 0);
    }

    #[test]
    fn the_pool_is_bounded() {
        let mut pool = Pool {
            bytes: 0,
            lengths: Vec::new(),
        };
        let page = |len: usize| -> Page { vec![0u8; len].into() };
        // Lengths beyond the limit are refused while every kept length has pages.
        for len in 1..=POOL_LENGTHS {
            assert!(pool.keep(page(len)).is_none());
        }
        assert!(pool.keep(page(POOL_LENGTHS + 1)).is_some());
        // A length run empty makes room for a new one.
        assert!(pool.take(1).is_some() && pool.take(1).is_none());
        assert!(pool.keep(page(POOL_LENGTHS + 1)).is_none());
        assert_eq!(
            pool.take(POOL_LENGTHS + 1).map(|p| p.len()),
            Some(POOL_LENGTHS + 1)
        );
        // Bytes beyond the limit are refused.
        let big = POOL_BYTES - pool.bytes;
        assert!(pool.keep(page(big + 1)).is_some());
        assert_eq!(pool.bytes, (2..=POOL_LENGTHS).sum::<usize>());
    }
}
