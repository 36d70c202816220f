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

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use super::Page;

/// Most bytes of pages the pool keeps; past it the oldest pages are freed first.
const POOL_BYTES: usize = 16 << 20;
/// Most page lengths the pool keeps at once (arrays of different leaf sizes, the short last
/// page of each); a new length takes the place of the one holding the fewest bytes.
const POOL_LENGTHS: usize = 4;

/// Pages kept, by length, oldest first: the newest is taken first (its bytes are the most
/// likely still cached) and the oldest freed first.
struct Pool {
    bytes: usize,
    lengths: Vec<(usize, VecDeque<Page>)>,
}

static POOL: Mutex<Pool> = Mutex::new(Pool::new());

fn pool() -> std::sync::MutexGuard<'static, Pool> {
    // The pool's state is valid at every step, so a panic elsewhere cannot break it.
    POOL.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Pool {
    const fn new() -> Self {
        Self {
            bytes: 0,
            lengths: Vec::new(),
        }
    }

    fn take(&mut self, len: usize) -> Option<Page> {
        let (_, pages) = self.lengths.iter_mut().find(|(l, _)| *l == len)?;
        let page = pages.pop_back()?;
        self.bytes -= len;
        Some(page)
    }

    /// The index of the length holding the most (`most`) or fewest bytes.
    fn by_bytes(&self, most: bool) -> usize {
        let bytes = |at: &usize| self.lengths[*at].0 * self.lengths[*at].1.len();
        let all = 0..self.lengths.len();
        let at = if most {
            all.max_by_key(bytes)
        } else {
            all.min_by_key(bytes)
        };
        at.unwrap_or(0)
    }

    /// Keeps `page` (which nothing else holds), moving the pages it displaces to `freed`.
    fn keep(&mut self, page: Page, freed: &mut Vec<Page>) {
        let len = page.len();
        if len > POOL_BYTES {
            freed.push(page);
            return;
        }
        let at = match self.lengths.iter().position(|(l, _)| *l == len) {
            Some(at) => at,
            None if self.lengths.len() < POOL_LENGTHS => {
                self.lengths.push((len, VecDeque::new()));
                self.lengths.len() - 1
            }
            None => {
                let at = self.by_bytes(false);
                let (old, pages) = &mut self.lengths[at];
                self.bytes -= *old * pages.len();
                freed.extend(pages.drain(..));
                *old = len;
                at
            }
        };
        self.lengths[at].1.push_back(page);
        self.bytes += len;
        while self.bytes > POOL_BYTES {
            let at = self.by_bytes(true);
            let oldest = self.lengths[at].1.pop_front().expect("bytes are held");
            self.bytes -= oldest.len();
            freed.push(oldest);
        }
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
    // Pages the pool lets go of, freed after the lock.
    let mut refused = Vec::new();
    let mut pool = pool();
    for (i, page) in pages.drain(..).enumerate() {
        if i < 64 && unique & (1 << i) != 0 {
            pool.keep(page, &mut refused);
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
        let mut pool = Pool::new();
        let mut freed = Vec::new();
        let (old, new): (Page, Page) = (vec![3u8; 100].into(), vec![4u8; 100].into());
        let at = Arc::as_ptr(&new);
        pool.keep(old, &mut freed);
        pool.keep(new, &mut freed);
        assert!(freed.is_empty());
        assert!(pool.take(99).is_none() && pool.take(101).is_none());
        // The newest first.
        assert_eq!(pool.take(100).map(|p| Arc::as_ptr(&p)), Some(at));
        assert!(pool.take(100).is_some() && pool.take(100).is_none());
        assert_eq!(pool.bytes, 0);
    }

    #[test]
    fn the_pool_is_bounded_and_lets_the_oldest_go() {
        let mut pool = Pool::new();
        let mut freed = Vec::new();
        let page = |len: usize| -> Page { vec![0u8; len].into() };
        for len in 1..=POOL_LENGTHS {
            pool.keep(page(len), &mut freed);
        }
        pool.keep(page(2), &mut freed);
        assert!(freed.is_empty());
        // A new length takes the place of the one holding the fewest bytes (length 1).
        pool.keep(page(POOL_LENGTHS + 1), &mut freed);
        assert_eq!(freed.iter().map(|p| p.len()).collect::<Vec<_>>(), [1]);
        assert!(pool.take(1).is_none());
        // Past the bound, the oldest pages of the length holding the most bytes go first.
        let big = POOL_BYTES - pool.bytes;
        let first = page(big / 2);
        let at = Arc::as_ptr(&first);
        pool.keep(first, &mut freed);
        pool.keep(page(big / 2), &mut freed);
        assert!(pool.bytes <= POOL_BYTES);
        pool.keep(page(big / 2), &mut freed);
        assert!(pool.bytes <= POOL_BYTES);
        assert!(freed.iter().any(|p| std::ptr::addr_eq(Arc::as_ptr(p), at)));
        let kept: usize = pool.lengths.iter().map(|(l, p)| l * p.len()).sum();
        assert_eq!(kept, pool.bytes);
        // A page past the bound is not kept.
        freed.clear();
        pool.keep(page(POOL_BYTES + 1), &mut freed);
        assert_eq!(freed.len(), 1);
    }
}
