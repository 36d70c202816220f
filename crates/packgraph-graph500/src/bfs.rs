//! Kernel 2: a direction-optimizing breadth-first search on the 2-D partitioned graph.
//!
//! Each level is one of two steps, both ending in a *fold* along the grid row that sends
//! each discovered vertex, with a parent, to its owner:
//! * [`top_down`] (small frontiers): the owners' sorted frontier vertices are gathered along
//!   the grid column as frontier messages (`packgraph::codec::frontier`: gaps bit-packed in
//!   blocks of 128, or Elias–Fano, when compression is on) of their *active ranks*, their
//!   indices among the owner's vertices of degree ≥ 1, and every arc out of them is
//!   scanned;
//! * [`bottom_up`] (large frontiers): the frontier is gathered as a bitmap along the column,
//!   the visited set as a bitmap along the row, and each unvisited vertex scans its arcs until
//!   it meets a frontier vertex.
//!
//! The step is chosen from the measured frontier as in Beamer, Asanović and Patterson
//! (SC 2012), by [`Switch`]: bottom-up once the frontier's arcs exceed the unexplored arcs
//! over [`ALPHA`], top-down again once the frontier falls below `n /` [`BETA`] vertices
//! while shrinking. Both steps run on the rayon threads of the process when it has more
//! than one (`--threads`). Fold messages carry the discovered ids as a frontier message and the parents
//! raw. Discoveries a process owns are applied where they are found, without a message.

use std::time::Instant;

use packgraph::codec::frontier::{self, Packing};
use packgraph::pma::sort_key_bits;
use rayon::prelude::*;
use serde::Serialize;

use crate::comm::{bytes_to_u64s, get_u32s, put_u32s, u64s_to_bytes, Comm, Group};
use crate::local::LocalGraph;

/// Marks a vertex not (yet) in the tree.
pub const UNREACHED: u32 = u32::MAX;

/// Top-down → bottom-up when the frontier's arcs exceed the unexplored arcs over this.
///
/// Beamer et al. tuned 14; here, with in-arcs ordered by fanout and discoveries radix
/// sorted, a top-down level is cheaper and a bottom-up level with a small frontier (most
/// vertices read every arc and find none) costs more than its top-down twin: on Kronecker
/// scale 20, one process, 16 searches, α = 4 took 0.91 and 0.88 of the mean search time of
/// α = 14 (two alternating pairs), the level of a frontier of ~4,000 hubs going top-down.
pub const ALPHA: u64 = 4;

/// Bottom-up → top-down when the frontier, shrinking, has fewer than `n / BETA` vertices.
pub const BETA: u64 = 24;

/// Beamer's direction rule, level by level, as this search and `packgraph-dist`'s apply it:
/// bottom-up once the frontier's arcs exceed the unexplored arcs over `alpha`, top-down
/// again once the frontier, shrinking, holds fewer than `n /` [`BETA`] vertices.
///
/// ```
/// use packgraph_graph500::bfs::Switch;
///
/// let mut switch = Switch::new(1000, 10_000, 14);
/// assert!(!switch.bottom_up(1, 10)); // 10 arcs of 10,000
/// assert!(switch.bottom_up(200, 5_000)); // 5,000 of the 9,990 left
/// assert!(switch.bottom_up(300, 4_000)); // growing: stays bottom-up
/// assert!(!switch.bottom_up(20, 100)); // shrinking, under 1000 / 24
/// ```
#[derive(Debug, Clone)]
pub struct Switch {
    vertices: u64,
    unexplored: u64,
    alpha: u64,
    bottom_up: bool,
    last_size: u64,
}

impl Switch {
    /// A search of a graph of `vertices` vertices and `arcs` arcs, from a top-down level.
    pub fn new(vertices: u64, arcs: u64, alpha: u64) -> Self {
        Self {
            vertices,
            unexplored: arcs,
            alpha: alpha.max(1),
            bottom_up: false,
            last_size: 0,
        }
    }

    /// Whether the level that expands a frontier of `size` vertices and `arcs` arcs (over
    /// all processes) goes bottom-up.
    pub fn bottom_up(&mut self, size: u64, arcs: u64) -> bool {
        self.bottom_up = if self.bottom_up {
            !(size < self.vertices / BETA && size < self.last_size)
        } else {
            arcs > self.unexplored / self.alpha
        };
        self.unexplored = self.unexplored.saturating_sub(arcs);
        self.last_size = size;
        self.bottom_up
    }
}

/// Whether frontier messages are bit-packed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    /// Pack every message of at least `RAW_THRESHOLD` ids that crosses the wire.
    On,
    /// Send raw ids.
    Off,
    /// Pack when the processes are not all on one host (on one host, packing saved no
    /// measurable time at scales 16 to 20: top-down frontier gathers are a tenth of the bytes).
    Auto,
}

/// What one level of one search cost.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LevelStats {
    /// The level the step discovered (1 for the root's neighbours).
    pub level: u32,
    /// Whether the step was bottom-up.
    pub bottom_up: bool,
    /// Vertices in the frontier the step expanded.
    pub frontier_ids: u64,
    /// Bytes the step's messages would take uncompressed (to other processes only).
    pub raw_bytes: u64,
    /// Bytes the step's messages took.
    pub sent_bytes: u64,
    /// The part of `raw_bytes` / `sent_bytes` in frontier-id gathers (top-down expand).
    pub frontier_raw_bytes: u64,
    /// See `frontier_raw_bytes`.
    pub frontier_sent_bytes: u64,
    /// Nanoseconds packing and unpacking messages.
    pub codec_ns: u64,
    /// Nanoseconds in collectives (waiting for other processes included).
    pub comm_ns: u64,
    /// Nanoseconds scanning arcs and updating parents.
    pub compute_ns: u64,
}

/// The result of one search on one process.
#[derive(Debug, Clone)]
pub struct Search {
    /// Parent of each owned vertex (the root is its own parent), [`UNREACHED`] if none.
    pub parents: Vec<u32>,
    /// Level of each owned vertex, [`UNREACHED`] if not reached.
    pub levels: Vec<u32>,
    /// This process's costs, per level.
    pub stats: Vec<LevelStats>,
}

#[inline]
fn bit(bits: &[u64], i: u32) -> bool {
    bits[i as usize / 64] >> (i % 64) & 1 != 0
}

#[inline]
fn set_bit(bits: &mut [u64], i: u32) {
    bits[i as usize / 64] |= 1 << (i % 64);
}

/// Nanoseconds since `start`.
fn ns(start: Instant) -> u64 {
    start.elapsed().as_nanos() as u64
}

struct State<'a> {
    comm: &'a dyn Comm,
    graph: &'a LocalGraph,
    pack: bool,
    parents: Vec<u32>,
    levels: Vec<u32>,
    /// Owned frontier, sorted global ids.
    frontier: Vec<u32>,
    /// Sum of the degrees of `frontier`.
    frontier_arcs: u64,
    /// Row-block vertices known visited (exact after a bottom-up gather, a filter otherwise).
    row_seen: Vec<u64>,
    /// Column-block frontier (bottom-up).
    col_frontier: Vec<u64>,
    /// Column-local frontier ids (top-down).
    col_ids: Vec<u32>,
    /// Discovered `(row-local id << 32) | parent`.
    found: Vec<u64>,
    /// Scratch space for sorting `found`.
    spare: Vec<u64>,
    level: LevelStats,
}

impl State<'_> {
    fn packing(&self, to_self: bool) -> Packing {
        if self.pack && !to_self {
            Packing::Packed
        } else {
            Packing::Raw
        }
    }

    fn allgather(&mut self, group: Group, data: &[u8]) -> crate::comm::Gathered {
        let start = Instant::now();
        let all = self.comm.allgather(group, data);
        self.level.comm_ns += ns(start);
        all
    }

    /// Gathers the column's frontier ids into `col_ids` (column-local).
    ///
    /// Each member sends the active ranks of its frontier vertices (their indices among its
    /// vertices of degree ≥ 1; see [`LocalGraph::active_rank`]): a vertex without arcs has
    /// nothing to expand, and on a Kronecker graph, where many vertices are isolated, ranks
    /// over the active vertices alone have smaller gaps than global ids.
    ///
    /// Past the root's level, a frontier vertex of degree 1 is left out: its one neighbour
    /// is the vertex that discovered it, so its arcs find nothing. The raw bytes counted
    /// are still those of every frontier vertex with arcs (what a raw exchange sends).
    fn expand_ids(&mut self, depth: u32) -> packgraph::Result<()> {
        let graph = self.graph;
        let others = self.comm.group_size(Group::Col) as u64 - 1;
        let start = Instant::now();
        let first = graph.layout.block_start(graph.layout.rank) as u32;
        let least = if depth == 1 { 1 } else { 2 };
        let mut with_arcs = 0;
        let mut ranks: Vec<u32> = self
            .frontier
            .iter()
            .map(|&v| (v - first) as usize)
            .filter(|&i| graph.degrees[i] > 0)
            .inspect(|_| with_arcs += 1)
            .filter(|&i| graph.degrees[i] >= least)
            .map(|i| graph.active_rank[i])
            .collect();
        ranks.sort_unstable();
        let mut message = Vec::new();
        frontier::encode(&ranks, self.packing(others == 0), &mut message)?;
        self.level.codec_ns += ns(start);
        let raw = frontier::raw_len::<u32>(with_arcs) as u64 * others;
        let sent = message.len() as u64 * others;
        self.level.frontier_raw_bytes += raw;
        self.level.frontier_sent_bytes += sent;
        self.level.raw_bytes += raw;
        self.level.sent_bytes += sent;
        let all = self.allgather(Group::Col, &message);
        let start = Instant::now();
        self.col_ids.clear();
        let mut ids = Vec::new();
        for k in 0..all.parts() {
            frontier::decode::<u32>(all.part(k), &mut ids)?;
            let active = graph.active_ids_of(k);
            if ids.last().is_some_and(|&r| r as usize >= active.len()) {
                return Err(packgraph::Error::corrupt(format!(
                    "frontier message from column member {k}: active rank {} of {}",
                    ids[ids.len() - 1],
                    active.len()
                )));
            }
            self.col_ids.extend(ids.iter().map(|&r| active[r as usize]));
        }
        self.level.codec_ns += ns(start);
        Ok(())
    }

    /// Gathers the column's frontier bitmap and the row's visited bitmap.
    ///
    /// When the row is this process alone, `row_seen` is already exact (every discovery is
    /// this process's own, marked as it is folded) and is not rebuilt.
    fn expand_bitmaps(&mut self) {
        let start = Instant::now();
        let comm_before = self.level.comm_ns;
        let layout = self.graph.layout;
        let first = layout.block_start(layout.rank) as u32;
        let mut owned = vec![0u64; layout.block / 64];
        for &v in &self.frontier {
            set_bit(&mut owned, v - first);
        }
        let bytes = u64s_to_bytes(&owned);
        let col_others = self.comm.group_size(Group::Col) as u64 - 1;
        let row_others = self.comm.group_size(Group::Row) as u64 - 1;
        let all = self.allgather(Group::Col, &bytes);
        self.col_frontier = bytes_to_u64s(&all.bytes);
        let mut moved = bytes.len() as u64 * col_others;
        if row_others > 0 {
            owned.iter_mut().for_each(|w| *w = 0);
            for (i, &p) in self.parents.iter().enumerate() {
                if p != UNREACHED {
                    set_bit(&mut owned, i as u32);
                }
            }
            let visited = u64s_to_bytes(&owned);
            let all = self.allgather(Group::Row, &visited);
            self.row_seen = bytes_to_u64s(&all.bytes);
            moved += visited.len() as u64 * row_others;
        }
        self.level.raw_bytes += moved;
        self.level.sent_bytes += moved;
        let comm = self.level.comm_ns - comm_before;
        self.level.compute_ns += ns(start).saturating_sub(comm);
    }

    /// Sends each discovered vertex to its owner; returns the owner's new frontier.
    ///
    /// Discoveries this process owns never become a message: they are applied straight
    /// from `found` (on an R×1 grid that is every discovery; packing and unpacking them took
    /// a fifth of a scale-20 search).
    fn fold(&mut self, depth: u32) -> packgraph::Result<()> {
        let layout = self.graph.layout;
        let block = layout.block as u64;
        let members = self.comm.group_size(Group::Row);
        let me = self.comm.group_rank(Group::Row);
        let start = Instant::now();
        let mut parts = Vec::with_capacity(members);
        let mut rest = &self.found[..];
        let mut own = 0..0;
        let (mut ids, mut parents_in) = (Vec::new(), Vec::new());
        for k in 0..members as u64 {
            let end = rest.partition_point(|&f| (f >> 32) < (k + 1) * block);
            if k as usize == me {
                let at = self.found.len() - rest.len();
                own = at..at + end;
                parts.push(Vec::new());
                rest = &rest[end..];
                continue;
            }
            ids.clear();
            parents_in.clear();
            for &f in &rest[..end] {
                ids.push(((f >> 32) - k * block) as u32);
                parents_in.push(f as u32);
            }
            rest = &rest[end..];
            let mut message = vec![0u8; 4];
            frontier::encode(&ids, self.packing(false), &mut message)?;
            let id_bytes = (message.len() - 4) as u32;
            message[..4].copy_from_slice(&id_bytes.to_le_bytes());
            put_u32s(&parents_in, &mut message);
            self.level.raw_bytes +=
                (4 + frontier::raw_len::<u32>(ids.len()) + 4 * ids.len()) as u64;
            self.level.sent_bytes += message.len() as u64;
            parts.push(message);
        }
        self.level.codec_ns += ns(start);
        let start = Instant::now();
        let received = (members > 1).then(|| self.comm.alltoall(Group::Row, &parts));
        self.level.comm_ns += ns(start);
        let start = Instant::now();
        let mut decode_ns = 0;
        let first = layout.block_start(layout.rank) as u32;
        let mine = me as u64 * block;
        let mut next = Vec::new();
        let (parents, levels, degrees) = (&mut self.parents, &mut self.levels, &self.graph.degrees);
        let mut arcs = 0;
        let mut claim = |i: usize, parent: u32| {
            if parents[i] == UNREACHED {
                parents[i] = parent;
                levels[i] = depth;
                arcs += degrees[i];
                next.push(first + i as u32);
            }
        };
        for k in 0..members {
            if k == me {
                for &f in &self.found[own.clone()] {
                    claim(((f >> 32) - mine) as usize, f as u32);
                }
                continue;
            }
            let part = received.as_ref().map_or(&[][..], |r| r.part(k));
            let bad = || packgraph::Error::corrupt(format!("fold message from row member {k}"));
            let id_bytes = part
                .get(..4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
                .ok_or_else(bad)?;
            let id_part = part.get(4..4 + id_bytes).ok_or_else(bad)?;
            let decoding = Instant::now();
            frontier::decode::<u32>(id_part, &mut ids)?;
            decode_ns += ns(decoding);
            parents_in.clear();
            get_u32s(&part[4 + id_bytes..], &mut parents_in);
            if parents_in.len() != ids.len() || ids.last().is_some_and(|&i| i as u64 >= block) {
                return Err(bad());
            }
            for (&i, &p) in ids.iter().zip(&parents_in) {
                claim(i as usize, p);
            }
        }
        if members > 1 {
            next.sort_unstable();
        }
        let row_first = layout.row_start() as u32;
        for &v in &next {
            set_bit(&mut self.row_seen, v - row_first);
        }
        self.frontier = next;
        self.frontier_arcs = arcs;
        self.level.codec_ns += decode_ns;
        self.level.compute_ns += ns(start).saturating_sub(decode_ns);
        Ok(())
    }
}

/// Column frontier ids per task of a parallel top-down step (few: the hubs of a Kronecker
/// graph's early levels have up to a tenth of the arcs each).
const TOP_DOWN_TASK: usize = 16;

/// Scans the arcs out of the column frontier; unseen targets are discovered.
///
/// With more than one thread, the frontier is split into tasks that read `row_seen`
/// without changing it; their discoveries, duplicates included, are sorted and each target
/// kept once (with its least parent), and then marked seen.
fn top_down(state: &mut State<'_>) {
    let graph = state.graph;
    state.found.clear();
    if rayon::current_num_threads() == 1 || state.col_ids.len() < 2 * TOP_DOWN_TASK {
        for &x in &state.col_ids {
            let parent = u64::from(graph.layout.col_global(x));
            for &y in graph.out_arcs(x) {
                if !bit(&state.row_seen, y) {
                    set_bit(&mut state.row_seen, y);
                    state.found.push(u64::from(y) << 32 | parent);
                }
            }
        }
        sort_found(state);
        return;
    }
    let row_seen = &state.row_seen;
    let parts: Vec<Vec<u64>> = state
        .col_ids
        .par_chunks(TOP_DOWN_TASK)
        .map(|xs| {
            let mut found = Vec::new();
            for &x in xs {
                let parent = u64::from(graph.layout.col_global(x));
                found.extend(
                    graph
                        .out_arcs(x)
                        .iter()
                        .filter(|&&y| !bit(row_seen, y))
                        .map(|&y| u64::from(y) << 32 | parent),
                );
            }
            found.sort_unstable();
            found.dedup_by_key(|f| *f >> 32);
            found
        })
        .collect();
    state.found = parts.concat();
    sort_found(state);
    state.found.dedup_by_key(|f| *f >> 32);
    for &f in &state.found {
        set_bit(&mut state.row_seen, (f >> 32) as u32);
    }
}

/// Sorts `found` by row-local id: a radix sort on the id's bits alone (on one thread, the
/// top-down level that discovers ~240,000 vertices of Kronecker scale 20 took 9–12 ms with
/// it, 19–23 ms with a comparison sort of the whole keys).
fn sort_found(state: &mut State<'_>) {
    let bits = usize::BITS - (state.graph.layout.row_len() - 1).leading_zeros();
    sort_key_bits(&mut state.found, &mut state.spare, 32, 32 + bits);
}

/// Words of 64 row vertices per task of a parallel bottom-up step.
const BOTTOM_UP_TASK: usize = 256;

/// Each unvisited row vertex with arcs stored here looks for a neighbour in the column
/// frontier (vertices without any, a third of a Kronecker graph's, are skipped a word at a
/// time). With more than one thread, tasks take ranges of words, and their discoveries,
/// each sorted, are concatenated in order.
fn bottom_up(state: &mut State<'_>) {
    let (graph, row_seen, col_frontier) = (state.graph, &state.row_seen, &state.col_frontier);
    state.found.clear();
    let words = row_seen.len();
    if rayon::current_num_threads() == 1 || words < 2 * BOTTOM_UP_TASK {
        scan_words(graph, row_seen, col_frontier, 0..words, &mut state.found);
        return;
    }
    let parts: Vec<Vec<u64>> = (0..words.div_ceil(BOTTOM_UP_TASK))
        .into_par_iter()
        .map(|t| {
            let mut found = Vec::new();
            let range = t * BOTTOM_UP_TASK..((t + 1) * BOTTOM_UP_TASK).min(words);
            scan_words(graph, row_seen, col_frontier, range, &mut found);
            found
        })
        .collect();
    state.found = parts.concat();
}

/// The bottom-up scan of the row vertices in `words` (64 each), discoveries appended to
/// `found` in increasing order.
///
/// Each vertex checks its first in-arc, from the dense [`LocalGraph::in_first`], before it
/// reads its offsets and the rest of its arcs.
fn scan_words(
    graph: &LocalGraph,
    row_seen: &[u64],
    col_frontier: &[u64],
    words: std::ops::Range<usize>,
    found: &mut Vec<u64>,
) {
    for w in words {
        let mut unseen = !(row_seen[w] | graph.no_in_arcs[w]);
        while unseen != 0 {
            let y = (w * 64) as u32 + unseen.trailing_zeros();
            unseen &= unseen - 1;
            let first = graph.in_first[y as usize];
            let parent = if bit(col_frontier, first) {
                Some(first)
            } else {
                graph
                    .in_arcs(y)
                    .iter()
                    .skip(1)
                    .copied()
                    .find(|&x| bit(col_frontier, x))
            };
            if let Some(x) = parent {
                found.push(u64::from(y) << 32 | u64::from(graph.layout.col_global(x)));
            }
        }
    }
}

/// Breadth-first search from `root` (collective: every process calls it with the same root).
///
/// `pack` packs the messages that cross the wire (see [`Compression`]).
///
/// # Errors
/// [`packgraph::Error::Corrupt`] if a message from another process does not decode.
pub fn bfs(
    comm: &dyn Comm,
    graph: &LocalGraph,
    root: u32,
    pack: bool,
) -> packgraph::Result<Search> {
    let layout = graph.layout;
    let first = layout.block_start(layout.rank) as u32;
    let mut state = State {
        comm,
        graph,
        pack,
        parents: vec![UNREACHED; layout.block],
        levels: vec![UNREACHED; layout.block],
        frontier: Vec::new(),
        frontier_arcs: 0,
        row_seen: vec![0; layout.row_len() / 64],
        col_frontier: Vec::new(),
        col_ids: Vec::new(),
        found: Vec::new(),
        spare: Vec::new(),
        level: LevelStats::default(),
    };
    if layout.owner(root) == layout.rank {
        state.parents[(root - first) as usize] = root;
        state.levels[(root - first) as usize] = 0;
        state.frontier.push(root);
        state.frontier_arcs = graph.degrees[(root - first) as usize];
    }
    if (root as usize).wrapping_sub(layout.row_start()) < layout.row_len() {
        set_bit(&mut state.row_seen, layout.row_local(root));
    }
    let mut stats = Vec::new();
    let mut switch = Switch::new(layout.num_vertices as u64, graph.total_degree, ALPHA);
    for depth in 1.. {
        let start = Instant::now();
        let mut sizes = [state.frontier.len() as u64, state.frontier_arcs];
        comm.allreduce_sum(Group::World, &mut sizes);
        let [size, arcs] = sizes;
        if size == 0 {
            break;
        }
        let bottom = switch.bottom_up(size, arcs);
        state.level = LevelStats {
            level: depth,
            bottom_up: bottom,
            frontier_ids: size,
            comm_ns: ns(start),
            ..LevelStats::default()
        };
        if bottom {
            state.expand_bitmaps();
            let start = Instant::now();
            bottom_up(&mut state);
            state.level.compute_ns += ns(start);
        } else {
            state.expand_ids(depth)?;
            let start = Instant::now();
            top_down(&mut state);
            state.level.compute_ns += ns(start);
        }
        state.fold(depth)?;
        stats.push(state.level.clone());
    }
    Ok(Search {
        parents: state.parents,
        levels: state.levels,
        stats,
    })
}
