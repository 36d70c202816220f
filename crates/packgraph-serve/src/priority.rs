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

/// How much the write path's threads are lowered by default (added to the nice value
/// they start with, at most 19): not at all. `packgraph-bench serve --write-nice 5` and
/// `10` against `0` (2 threads, Kronecker s18, 8 writers × 8 in flight of single edges, 1
/// BFS reader, a machine at load 12 to 15 on 2 cores) showed no better BFS ratio and
/// fewer acknowledged edges, so the knob ([`ServeConfig::write_nice`]) stays off until a
/// quiet machine shows a gain.
///
/// [`ServeConfig::write_nice`]: crate::ServeConfig::write_nice
pub const DEFAULT_WRITE_NICE: i32 = 0;

/// Adds `nice` to the calling thread's nice value (at most 19); nothing for 0.
pub(crate) fn lower_current_thread(nice: i32) {
    if nice > 0 {
        lower(nice);
    }
}

#[cfg(target_os = "linux")]
fn lower(nice: i32) {
    use rustix::process::{getpriority_process, setpriority_process};
    let tid = Some(rustix::thread::gettid());
    let current = getpriority_process(tid).unwrap_or(0);
    // Lowering a thread's own priority needs no privilege; a failure leaves it as it was.
    let _ = setpriority_process(tid, (current + nice).min(19));
}

#[cfg(not(target_os = "linux"))]
fn lower(_nice: i32) {}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

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
