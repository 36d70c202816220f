//! Unsafe code of the PMA: software prefetch hints, [`prefetch`], [`prefetch_addr`] and
//! [`hint_counts`], safe whatever their input, and the write access to a page that skips
//! the sharing check, [`cow`], an `unsafe fn` whose callers (`page.rs`) vouch that the page
//! is unshared.
//!
//! A batch merge knows the leaves it will touch next (the batch is sorted), but each leaf is
//! a cache miss; hinting the next few leaves while merging the current one overlaps those
//! misses. Measured with `packgraph bench pma` (batch inserts, see the commit message).
//!
//! `Arc::get_mut`, the safe way to write a page in place, costs an atomic read-modify-write
//! on the page's header: a cache line that the leaf being written (mid-page) does not
//! share, so one more miss per touched leaf; `packgraph bench pma` measured batch inserts
//! with the check well behind the unpaged array (see CHANGELOG). A writer with no other
//! version alive (the common case) therefore skips it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::Page;

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

/// Asks the CPU to start loading the cache line holding `addr`, which need not point into
/// anything. A hint only: it never faults and has no effect on results.
#[inline(always)]
pub(crate) fn prefetch_addr(addr: *const u8) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch never dereferences in the language sense: it cannot fault or
        // change memory, whatever the address (the pointer is only passed, never read).
        unsafe { _mm_prefetch::<_MM_HINT_T0>(addr.cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = addr;
}

/// The bytes of the page in `slot`, for writing in place: copied first (into a fresh page in
/// `slot`, counted in `copies`) if another `Arc` holds the page, unless `private` is true,
/// which skips that check and writes the page where it is.
///
/// # Safety
/// If `private` is true, `slot` must be the only `Arc`, strong or weak, of its page that
/// anything dereferences while the returned reference lives (others may exist, unread,
/// as the PMA's spare table holds them), and every access to the page through another
/// `Arc` (on any thread) must happen before this call. Otherwise the returned `&mut`
/// aliases bytes that another version reads: undefined behaviour. With `private` false any
/// `slot` is fine.
#[inline]
pub(super) unsafe fn cow<'p>(
    slot: &'p mut Page,
    private: bool,
    copies: &AtomicUsize,
) -> &'p mut [u8] {
    if private {
        // SAFETY: by the contract, no other `Arc` of the page is dereferenced while the
        // result lives and every access through one happened before this call; `slot` is
        // borrowed mutably for `'p`, so nothing else reaches the page meanwhile. A unique
        // `&mut` to its bytes is then sound, as the one `Arc::get_mut` gives; the pointer
        // comes from the `Arc`'s own allocation, not from a shared reference, so writing
        // through it is allowed.
        return unsafe { &mut *Arc::as_ptr(slot).cast_mut() };
    }
    if Arc::get_mut(slot).is_none() {
        copies.fetch_add(1, Ordering::Relaxed);
        *slot = super::pool::copy_of(slot);
    }
    Arc::get_mut(slot).expect("the page was just made unique")
}

/// The value in `slot`, for writing in place: cloned first (into a fresh `Arc` in `slot`) if
/// another `Arc` holds it, unless `private` is true, which skips that check. The page
/// table's groups take this path; a page takes [`cow`], which also counts copies.
///
/// # Safety
/// As [`cow`]: if `private` is true, `slot` must be the only `Arc`, strong or weak, of its
/// value that anything dereferences while the returned reference lives, and every access
/// through another `Arc` must happen before this call.
#[inline]
pub(super) unsafe fn unique_mut<T: Clone>(slot: &mut Arc<T>, private: bool) -> &mut T {
    if private {
        // SAFETY: by the contract, no other `Arc` of the value is dereferenced while the
        // result lives and every access through one happened before this call; `slot` is
        // borrowed mutably for the returned lifetime, so nothing else reaches the value
        // meanwhile, as `Arc::get_mut` would ensure. The pointer comes from the `Arc`'s own
        // allocation.
        return unsafe { &mut *Arc::as_ptr(slot).cast_mut() };
    }
    Arc::make_mut(slot)
}

/// Hints the reference counts of the values behind `arcs` into the cache. Cloning or
/// dropping a level of pointers (the page table's, the vertex index's) increments or
/// decrements the count of every value it points to, each a cache miss at a random address
/// behind a locked instruction, so they would be taken one after another; hinting them all
/// first overlaps them (`packgraph-bench snapshot`, see CHANGELOG).
#[inline(always)]
pub(crate) fn hint_counts<T: ?Sized>(arcs: &[Arc<T>]) {
    for arc in arcs {
        // The counts sit right before the value, in the same or the previous cache line.
        let value = Arc::as_ptr(arc).cast::<u8>();
        prefetch_addr(value.wrapping_sub(2 * std::mem::size_of::<usize>()));
    }
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
        prefetch_addr(data.as_ptr().wrapping_add(5000));
        prefetch_addr(std::ptr::null());
        assert_eq!(data[0], 7);
    }

    #[test]
    fn unique_mut_clones_a_shared_value_and_writes_an_unshared_one_in_place() {
        let mut slot = Arc::new(vec![1u32, 2, 3]);
        let at = Arc::as_ptr(&slot);
        // SAFETY: `private` is false: no contract to meet.
        unsafe { unique_mut(&mut slot, false)[0] = 7 };
        assert_eq!((Arc::as_ptr(&slot), slot[0]), (at, 7));
        let other = Arc::clone(&slot);
        // SAFETY: `private` is false: no contract to meet.
        unsafe { unique_mut(&mut slot, false)[1] = 8 };
        assert_eq!((other[1], slot[1]), (2, 8));
        assert_ne!(Arc::as_ptr(&slot), at);
        drop(other);
        let at = Arc::as_ptr(&slot);
        // SAFETY: `slot` is the only `Arc` of its value (`other` was dropped above, on this
        // thread).
        unsafe { unique_mut(&mut slot, true)[2] = 9 };
        assert_eq!((Arc::as_ptr(&slot), &slot[..]), (at, &[7, 8, 9][..]));
        // Another `Arc` that nothing reads while the reference lives (as a spare page
        // table holds them): written in place, seen through it afterwards.
        let unread = Arc::clone(&slot);
        // SAFETY: `unread` is not dereferenced while the returned reference lives.
        unsafe { unique_mut(&mut slot, true)[0] = 4 };
        assert!(Arc::ptr_eq(&unread, &slot));
        assert_eq!(&unread[..], &[4, 8, 9][..]);
    }

    #[test]
    fn cow_copies_a_shared_page_and_writes_an_unshared_one_in_place() {
        let copies = AtomicUsize::new(0);
        let mut page: Page = vec![1u8; 64].into();
        let at = Arc::as_ptr(&page).cast::<u8>();
        // SAFETY: `private` is false: no contract to meet.
        let bytes = unsafe { cow(&mut page, false, &copies) };
        bytes[0] = 2;
        assert_eq!((Arc::as_ptr(&page).cast::<u8>(), page[0]), (at, 2));
        assert_eq!(copies.load(Ordering::Relaxed), 0);

        let other = Arc::clone(&page);
        // SAFETY: `private` is false: no contract to meet.
        let bytes = unsafe { cow(&mut page, false, &copies) };
        bytes[0] = 3;
        assert_eq!((other[0], page[0]), (2, 3));
        assert_ne!(Arc::as_ptr(&page).cast::<u8>(), at);
        assert_eq!(copies.load(Ordering::Relaxed), 1);

        // A second holder that reads on another thread and is dropped there.
        let mut page = other;
        let reader = Arc::clone(&page);
        let sum = std::thread::spawn(move || reader.iter().map(|&b| u64::from(b)).sum::<u64>())
            .join()
            .expect("the reader thread does not panic");
        assert_eq!(sum, 2 + 63);
        let at = Arc::as_ptr(&page).cast::<u8>();
        // SAFETY: `page` is the only `Arc` of its page: `reader` was moved into the thread
        // and dropped there, and `join` makes its reads happen before this call.
        let bytes = unsafe { cow(&mut page, true, &copies) };
        bytes[63] = 4;
        assert_eq!(Arc::as_ptr(&page).cast::<u8>(), at);
        assert_eq!((page[0], page[63]), (2, 4));
        assert_eq!(copies.load(Ordering::Relaxed), 1);
    }
}
