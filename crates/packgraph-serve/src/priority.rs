//! Queries first, when asked: the threads of the write path and of the connections may run
//! at a lower priority than the query pool's.
//!
//! On a machine with few cores, an algorithm's threads share them with the threads that
//! take, apply and acknowledge updates. A parallel algorithm waits at every round for its
//! slowest thread, so each time a write-path thread takes a core from one of them the
//! whole query stalls. Raising the write path's nice value (Linux: `setpriority` on the
//! thread's id) lets the scheduler give a query's threads the cores whenever they are
//! runnable, while the write path still gets every core a query leaves idle and a share
//! of the rest (nice 0 against nice 5 is about 3:1 in CFS's weights). Elsewhere, and
//! where the call fails, threads keep the priority they have: only the figures change.

use std::sync::Arc;

use packgraph::store::StoreOptions;

/// How much the write path's threads are lowered by default (added to the process's nice
/// value, at most 19): not at all, so that writes come first. On a quiet 2-core machine
/// (`packgraph-bench serve --scale 18 --writers 8 --readers 1 --sync group:2`, 3 rounds),
/// `--write-nice 19` against 0 brought a BFS under single-edge writes from 2.12 to 1.52
/// times its idle time, and the edges acknowledged from 19.7 k to 10.9 k a second (ack
/// p99 10.1 → 17.5 ms); with no query running it changed nothing. Lowering the store's
/// syncer too (3 alternating pairs at 19) took the BFS from 1.62 to 1.51 and the writes
/// from 10.0 k to 8.4 k. Which side to favour is the
/// user's: `packgraph serve --write-nice N` ([`ServeConfig::write_nice`]).
///
pub const DEFAULT_WRITE_NICE: i32 = 0;

/// Adds `nice` to the calling thread's nice value (at most 19); nothing for 0 or less.
/// Threads the caller starts afterwards inherit the new value.
pub fn lower_current_thread(nice: i32) {
    if nice > 0 {
        lower(nice);
    }
}

/// Store options whose background threads (group-commit syncer, mark writer, background
/// checkpoints) run `nice` lower, as the write path's threads do; `options` as they are
/// for 0.
pub fn lowered_store_options(mut options: StoreOptions, nice: i32) -> StoreOptions {
    if nice > 0 {
        options.on_thread_start = Some(Arc::new(move || lower_current_thread(nice)));
    }
    options
}

/// Sets the calling thread's nice value to the process's main thread's plus `nice` (at
/// most 19), unless it is that low already: a thread started by a lowered thread inherits
/// its value, and lowering it again must not double the increment (tokio starts blocking
/// threads from its workers; the store's syncer starts its mark writer).
#[cfg(target_os = "linux")]
fn lower(nice: i32) {
    use rustix::process::{getpid, getpriority_process, setpriority_process};
    let tid = Some(rustix::thread::gettid());
    let current = getpriority_process(tid).unwrap_or(0);
    let main = getpriority_process(Some(getpid())).unwrap_or(current);
    let target = (main + nice).min(19);
    if current < target {
        // Lowering a thread's own priority needs no privilege; a failure leaves it as it was.
        let _ = setpriority_process(tid, target);
    }
}

#[cfg(not(target_os = "linux"))]
fn lower(_nice: i32) {}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn lowering_twice_lowers_once() {
        let tid = || Some(rustix::thread::gettid());
        let main = rustix::process::getpriority_process(Some(rustix::process::getpid())).unwrap();
        let (first, again, child) = std::thread::spawn(move || {
            lower_current_thread(2);
            let first = rustix::process::getpriority_process(tid()).unwrap();
            lower_current_thread(2);
            let again = rustix::process::getpriority_process(tid()).unwrap();
            let child = std::thread::spawn(move || {
                lower_current_thread(2);
                rustix::process::getpriority_process(tid()).unwrap()
            });
            (first, again, child.join().unwrap())
        })
        .join()
        .unwrap();
        let lowered = (main + 2).min(19);
        assert_eq!((first, again, child), (lowered, lowered, lowered));
    }

    #[test]
    fn a_thread_lowers_itself_only() {
        let tid = || Some(rustix::thread::gettid());
        let before = rustix::process::getpriority_process(tid()).unwrap();
        let lowered = std::thread::spawn(move || {
            lower_current_thread(3);
            rustix::process::getpriority_process(tid()).unwrap()
        })
        .join()
        .unwrap();
        assert_eq!(lowered, (before + 3).min(19));
        assert_eq!(rustix::process::getpriority_process(tid()).unwrap(), before);
    }
}
