//! The collective operations the benchmark needs, over the whole grid, one grid row or one
//! grid column: all-gather, all-to-all (of byte messages) and all-reduce (of `u64`s).
//!
//! [`Comm`] is implemented by MPI (`MpiComm`, feature `mpi`), by [`SelfComm`] (one process)
//! and by [`ThreadComm`] (processes simulated by threads of one program, so that tests of
//! the 2-D algorithms need no MPI). Every process of a group must call the same collectives
//! in the same order, as with MPI.

use std::sync::{Arc, Barrier, Mutex};

use crate::grid::Grid;

/// The processes a collective spans.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// Every process, members in rank order.
    World,
    /// This process's grid row, members in column order.
    Row,
    /// This process's grid column, members in row order.
    Col,
}

/// Messages received from the members of a group, concatenated in member order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Gathered {
    /// The messages, one after another.
    pub bytes: Vec<u8>,
    /// `offsets[k]..offsets[k + 1]` is member `k`'s message.
    pub offsets: Vec<usize>,
}

impl Gathered {
    /// Member `k`'s message.
    pub fn part(&self, k: usize) -> &[u8] {
        &self.bytes[self.offsets[k]..self.offsets[k + 1]]
    }

    /// Number of members.
    pub fn parts(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    fn from_parts(parts: Vec<Vec<u8>>) -> Self {
        let mut offsets = Vec::with_capacity(parts.len() + 1);
        offsets.push(0);
        let mut bytes = Vec::with_capacity(parts.iter().map(Vec::len).sum());
        for part in parts {
            bytes.extend_from_slice(&part);
            offsets.push(bytes.len());
        }
        Self { bytes, offsets }
    }
}

/// Collective communication over a process grid.
pub trait Comm {
    /// This process's rank in the world.
    fn rank(&self) -> usize;
    /// The process grid.
    fn grid(&self) -> Grid;
    /// Every member's `data`, in member order.
    fn allgather(&self, group: Group, data: &[u8]) -> Gathered;
    /// Sends `parts[k]` to member `k`; returns what each member sent this process.
    fn alltoall(&self, group: Group, parts: &[Vec<u8>]) -> Gathered;
    /// Sends the `k`-th piece of `send`, `counts[k]` values after the pieces before it, to
    /// member `k`; returns what every member sent this process, in member order. One buffer
    /// each way, typed, where the transport can take it as it is (no byte copies).
    fn alltoallv_u64(&self, group: Group, send: &[u64], counts: &[usize]) -> Vec<u64> {
        let mut rest = send;
        let parts: Vec<Vec<u8>> = counts
            .iter()
            .map(|&c| {
                let (part, tail) = rest.split_at(c);
                rest = tail;
                u64s_to_bytes(part)
            })
            .collect();
        bytes_to_u64s(&self.alltoall(group, &parts).bytes)
    }
    /// Element-wise sum of `values` over the group, in place.
    fn allreduce_sum(&self, group: Group, values: &mut [u64]);
    /// Element-wise maximum of `values` over the group, in place.
    fn allreduce_max(&self, group: Group, values: &mut [u64]);

    /// Whether every process runs on one host (messages then move through shared memory).
    fn single_host(&self) -> bool {
        true
    }
    /// Processes in the world.
    fn size(&self) -> usize {
        self.grid().size()
    }
    /// Members of `group`.
    fn group_size(&self, group: Group) -> usize {
        match group {
            Group::World => self.size(),
            Group::Row => self.grid().cols,
            Group::Col => self.grid().rows,
        }
    }
    /// This process's index among the members of `group`.
    fn group_rank(&self, group: Group) -> usize {
        let (row, col) = self.grid().coords(self.rank());
        match group {
            Group::World => self.rank(),
            Group::Row => col,
            Group::Col => row,
        }
    }
}

/// World ranks of the members of `group` of process `rank`, in member order.
pub fn group_members(grid: Grid, rank: usize, group: Group) -> Vec<usize> {
    let (row, col) = grid.coords(rank);
    match group {
        Group::World => (0..grid.size()).collect(),
        Group::Row => (0..grid.cols).map(|c| grid.rank_at(row, c)).collect(),
        Group::Col => (0..grid.rows).map(|r| grid.rank_at(r, col)).collect(),
    }
}

/// `u64`s as little-endian bytes.
pub fn u64s_to_bytes(values: &[u64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Little-endian bytes as `u64`s (a trailing partial word is ignored).
pub fn bytes_to_u64s(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("chunks of 8 bytes")))
        .collect()
}

/// `u32`s as little-endian bytes, appended to `out`.
pub fn put_u32s(values: &[u32], out: &mut Vec<u8>) {
    out.reserve(values.len() * 4);
    for v in values {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// Little-endian bytes as `u32`s, appended to `out` (a trailing partial word is ignored).
pub fn get_u32s(bytes: &[u8], out: &mut Vec<u32>) {
    out.extend(
        bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().expect("chunks of 4 bytes"))),
    );
}

fn reduce(comm: &dyn Comm, group: Group, values: &mut [u64], op: fn(u64, u64) -> u64) {
    let all = comm.allgather(group, &u64s_to_bytes(values));
    for k in 0..all.parts() {
        for (v, w) in values.iter_mut().zip(bytes_to_u64s(all.part(k))) {
            *v = if k == 0 { w } else { op(*v, w) };
        }
    }
}

/// A world of one process (the 1 × 1 grid): every collective returns the process's own data.
#[derive(Debug, Default, Clone, Copy)]
pub struct SelfComm;

impl Comm for SelfComm {
    fn rank(&self) -> usize {
        0
    }
    fn grid(&self) -> Grid {
        Grid { rows: 1, cols: 1 }
    }
    fn allgather(&self, _: Group, data: &[u8]) -> Gathered {
        Gathered::from_parts(vec![data.to_vec()])
    }
    fn alltoall(&self, _: Group, parts: &[Vec<u8>]) -> Gathered {
        Gathered::from_parts(parts.to_vec())
    }
    fn allreduce_sum(&self, _: Group, _: &mut [u64]) {}
    fn allreduce_max(&self, _: Group, _: &mut [u64]) {}
}

/// Mailboxes shared by the threads of a [`ThreadComm`] world: `slots[to][from]`.
#[derive(Debug)]
struct Board {
    barrier: Barrier,
    slots: Vec<Mutex<Vec<Option<Vec<u8>>>>>,
}

/// One process of a world simulated by threads (tests and experiments without MPI).
#[derive(Debug, Clone)]
pub struct ThreadComm {
    grid: Grid,
    rank: usize,
    board: Arc<Board>,
}

impl ThreadComm {
    /// The processes of a `grid` world, one per thread to be started.
    pub fn world(grid: Grid) -> Vec<ThreadComm> {
        let size = grid.size();
        let board = Arc::new(Board {
            barrier: Barrier::new(size),
            slots: (0..size).map(|_| Mutex::new(vec![None; size])).collect(),
        });
        (0..size)
            .map(|rank| ThreadComm {
                grid,
                rank,
                board: Arc::clone(&board),
            })
            .collect()
    }

    /// Runs `f` on every process of a `grid` world, one thread each; returns the results in
    /// rank order.
    pub fn run<T: Send>(grid: Grid, f: impl Fn(&ThreadComm) -> T + Sync) -> Vec<T> {
        let world = Self::world(grid);
        std::thread::scope(|s| {
            let handles: Vec<_> = world.iter().map(|c| s.spawn(|| f(c))).collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a simulated process panicked"))
                .collect()
        })
    }

    /// Posts `messages[k]` to member `k` of `group`, waits for every process, and collects
    /// what the members posted to this one.
    fn exchange(&self, group: Group, messages: Vec<Vec<u8>>) -> Gathered {
        let members = group_members(self.grid, self.rank, group);
        for (&to, message) in members.iter().zip(messages) {
            self.board.slots[to]
                .lock()
                .expect("no thread panics holding a slot")[self.rank] = Some(message);
        }
        self.board.barrier.wait();
        let parts = {
            let mut inbox = self.board.slots[self.rank]
                .lock()
                .expect("no thread panics holding a slot");
            members
                .iter()
                .map(|&from| inbox[from].take().unwrap_or_default())
                .collect()
        };
        self.board.barrier.wait();
        Gathered::from_parts(parts)
    }
}

impl Comm for ThreadComm {
    fn rank(&self) -> usize {
        self.rank
    }
    fn grid(&self) -> Grid {
        self.grid
    }
    fn allgather(&self, group: Group, data: &[u8]) -> Gathered {
        self.exchange(group, vec![data.to_vec(); self.group_size(group)])
    }
    fn alltoall(&self, group: Group, parts: &[Vec<u8>]) -> Gathered {
        self.exchange(group, parts.to_vec())
    }
    fn allreduce_sum(&self, group: Group, values: &mut [u64]) {
        reduce(self, group, values, u64::wrapping_add);
    }
    fn allreduce_max(&self, group: Group, values: &mut [u64]) {
        reduce(self, group, values, u64::max);
    }
}

/// A [`Comm`] that counts the bytes this process sends to the others (its own part of a
/// collective is not counted): an all-to-all counts the parts for other members, an
/// all-gather its data once per other member, an all-reduce `8 · len` per other member (the
/// volume of the all-gather form; MPI's recursive doubling sends `8 · len · log2 P`).
pub struct Counting<'a> {
    inner: &'a dyn Comm,
    sent: std::cell::Cell<u64>,
    calls: std::cell::Cell<u64>,
}

impl std::fmt::Debug for Counting<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Counting {{ rank: {}, sent: {} }}",
            self.rank(),
            self.sent.get()
        )
    }
}

impl<'a> Counting<'a> {
    /// Counts what goes through `inner`.
    pub fn new(inner: &'a dyn Comm) -> Self {
        Self {
            inner,
            sent: std::cell::Cell::new(0),
            calls: std::cell::Cell::new(0),
        }
    }

    /// Bytes sent to other processes so far.
    pub fn sent(&self) -> u64 {
        self.sent.get()
    }

    /// Collectives called so far.
    pub fn calls(&self) -> u64 {
        self.calls.get()
    }

    fn add(&self, bytes: usize) {
        self.sent.set(self.sent.get() + bytes as u64);
        self.calls.set(self.calls.get() + 1);
    }
}

impl Comm for Counting<'_> {
    fn rank(&self) -> usize {
        self.inner.rank()
    }
    fn grid(&self) -> Grid {
        self.inner.grid()
    }
    fn single_host(&self) -> bool {
        self.inner.single_host()
    }
    fn allgather(&self, group: Group, data: &[u8]) -> Gathered {
        self.add(data.len() * (self.group_size(group) - 1));
        self.inner.allgather(group, data)
    }
    fn alltoall(&self, group: Group, parts: &[Vec<u8>]) -> Gathered {
        let me = self.group_rank(group);
        let bytes: usize = parts
            .iter()
            .enumerate()
            .filter(|&(k, _)| k != me)
            .map(|(_, p)| p.len())
            .sum();
        self.add(bytes);
        self.inner.alltoall(group, parts)
    }
    fn alltoallv_u64(&self, group: Group, send: &[u64], counts: &[usize]) -> Vec<u64> {
        let me = self.group_rank(group);
        let values: usize = counts.iter().sum::<usize>() - counts.get(me).copied().unwrap_or(0);
        self.add(8 * values);
        self.inner.alltoallv_u64(group, send, counts)
    }
    fn allreduce_sum(&self, group: Group, values: &mut [u64]) {
        self.add(8 * values.len() * (self.group_size(group) - 1));
        self.inner.allreduce_sum(group, values);
    }
    fn allreduce_max(&self, group: Group, values: &mut [u64]) {
        self.add(8 * values.len() * (self.group_size(group) - 1));
        self.inner.allreduce_max(group, values);
    }
}

/// How many processes the launcher (Open MPI, or a PMI/PMIx launcher) started this one
/// among; 1 when none did. A build without MPI uses it to refuse running as one of many.
pub fn launched_processes() -> usize {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"]
        .iter()
        .find_map(|k| std::env::var(k).ok()?.parse::<usize>().ok())
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_collectives_follow_the_grid() {
        let grid = Grid { rows: 2, cols: 3 };
        let out = ThreadComm::run(grid, |c| {
            let me = c.rank() as u8;
            let row = c.allgather(Group::Row, &[me]).bytes;
            let col = c.allgather(Group::Col, &[me]).bytes;
            let parts: Vec<Vec<u8>> = (0..c.size()).map(|k| vec![me, k as u8]).collect();
            let a2a = c.alltoall(Group::World, &parts);
            let mut sum = [u64::from(me), 1];
            c.allreduce_sum(Group::World, &mut sum);
            let mut max = [u64::from(me)];
            c.allreduce_max(Group::Col, &mut max);
            (row, col, a2a.part(0).to_vec(), sum, max[0])
        });
        assert_eq!(out[4].0, [3, 4, 5]);
        assert_eq!(out[4].1, [1, 4]);
        assert_eq!(out[4].2, [0, 4]);
        assert_eq!(out[4].3, [15, 6]);
        assert_eq!(out[1].4, 4);
    }

    #[test]
    fn counting_counts_what_goes_to_other_members_only() {
        let grid = Grid { rows: 3, cols: 1 };
        let sent = ThreadComm::run(grid, |c| {
            let counting = Counting::new(c);
            let me = c.rank();
            // 10 bytes to each member, (me + 1) bytes gathered, 2 values reduced, 3 u64s to
            // each member.
            let parts = vec![vec![0u8; 10]; 3];
            counting.alltoall(Group::World, &parts);
            counting.allgather(Group::World, &vec![1u8; me + 1]);
            counting.allreduce_sum(Group::World, &mut [1, 2]);
            counting.alltoallv_u64(Group::World, &[7; 9], &[3, 3, 3]);
            (counting.sent(), counting.calls())
        });
        for (rank, &(bytes, calls)) in sent.iter().enumerate() {
            assert_eq!(bytes as usize, 20 + 2 * (rank + 1) + 32 + 48);
            assert_eq!(calls, 4);
        }
    }

    #[test]
    fn alltoallv_sends_each_piece_of_one_buffer_to_its_member() {
        let grid = Grid { rows: 1, cols: 3 };
        let out = ThreadComm::run(grid, |c| {
            let me = c.rank() as u64;
            // Member k gets k + 1 values, each `10 * me + k`; member 1 gets nothing from 2.
            let mut send = Vec::new();
            let mut counts = Vec::new();
            for k in 0..3u64 {
                let len = if me == 2 && k == 1 { 0 } else { k as usize + 1 };
                send.extend(std::iter::repeat_n(10 * me + k, len));
                counts.push(len);
            }
            c.alltoallv_u64(Group::Row, &send, &counts)
        });
        assert_eq!(out[1], [1, 1, 11, 11]);
        assert_eq!(out[2], [2, 2, 2, 12, 12, 12, 22, 22, 22]);
    }
}
