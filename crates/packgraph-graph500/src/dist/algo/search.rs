//! The direction-optimizing breadth-first search over a [`Part`]: top-down levels send the
//! owners of newly discovered vertices their sorted local indices as frontier messages;
//! bottom-up levels send each process one bit per ghost it reads.

use packgraph::algo::UNREACHED;
use packgraph::codec::frontier::{self, Packing};
use packgraph::graph::{VertexId, WeightedGraphRead};
use rayon::prelude::*;

use super::{agree, Around, Ghosts, Meta};
use crate::bfs::Switch;
use crate::comm::{Comm, Group};
use crate::dist::{DistError, Part, Store};

/// Hops from dense vertex `source` to each owned vertex ([`UNREACHED`] where none).
///
/// # Errors
/// [`DistError::Failed`] if a frontier message does not decode.
pub fn bfs(
    comm: &dyn Comm,
    part: &Part,
    source: VertexId,
    pack: bool,
) -> Result<Vec<u32>, DistError> {
    on_store!(part, g => bfs_on(comm, Meta::of(part), g, source, pack))
}

/// How a search picks the direction of each level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Direction {
    /// Beamer's rule ([`Switch`], the Graph500 search's) with his α of [`ALPHA`].
    Optimizing,
    /// Top-down levels only.
    #[cfg_attr(not(test), allow(dead_code))]
    TopDown,
    /// Bottom-up levels only (after the source's level).
    #[cfg_attr(not(test), allow(dead_code))]
    BottomUp,
}

/// Beamer's α: go bottom-up when frontier arcs > unexplored arcs / α (the Graph500 search
/// measured its own, [`crate::bfs::ALPHA`], on its 2-D partition).
const ALPHA: u64 = 14;

fn bfs_on<G: WeightedGraphRead + Sync>(
    comm: &dyn Comm,
    m: Meta,
    g: &G,
    source: VertexId,
    pack: bool,
) -> Result<Vec<u32>, DistError> {
    search(comm, m, g, source, pack, Direction::Optimizing)
}

/// Direction-optimizing BFS: top-down levels send the discovered ghosts to their owners
/// (frontier messages); bottom-up levels fetch, for every ghost a process reads, whether it
/// is in the frontier (one bit each), and each unvisited owned vertex looks for a frontier
/// vertex among its in-neighbours. Depths are the same either way.
pub(super) fn search<G: WeightedGraphRead + Sync>(
    comm: &dyn Comm,
    m: Meta,
    g: &G,
    source: VertexId,
    pack: bool,
    direction: Direction,
) -> Result<Vec<u32>, DistError> {
    let packing = if pack { Packing::Packed } else { Packing::Raw };
    let mut depth = vec![UNREACHED; m.owned];
    let mut frontier = Vec::new();
    let (o, i) = m.locate_dense(source);
    if o == m.rank {
        depth[i] = 0;
        frontier.push(i as u32);
    }
    let degree: Vec<u64> = (0..m.owned)
        .into_par_iter()
        .with_min_len(1 << 12)
        .map(|i| g.out_degree(m.row(i)) as u64)
        .collect();
    let mut totals = [degree.iter().sum::<u64>(), m.owned as u64];
    comm.allreduce_sum(Group::World, &mut totals);
    let [arcs_total, n] = totals;
    let mut switch = Switch::new(n, arcs_total, ALPHA);
    // The ghosts a bottom-up level reads, set up at the first one.
    let mut pull: Option<(Ghosts, Vec<Vec<u64>>)> = None;
    let mut level = 0;
    loop {
        let mut sums = [
            frontier.len() as u64,
            frontier.iter().map(|&i| degree[i as usize]).sum(),
        ];
        comm.allreduce_sum(Group::World, &mut sums);
        let [vertices, arcs] = sums;
        if vertices == 0 {
            break;
        }
        let bottom_up = match direction {
            Direction::TopDown => false,
            Direction::BottomUp => true,
            Direction::Optimizing => switch.bottom_up(vertices, arcs),
        };
        level += 1;
        frontier = if bottom_up {
            if pull.is_none() {
                let ghosts = Ghosts::of(m, g, Around::In);
                let requests = ghosts.requests(comm, m)?;
                pull = Some((ghosts, requests));
            }
            let (ghosts, requests) = pull.as_ref().expect("set up above");
            bottom_up_level(comm, m, ghosts, requests, &frontier, &mut depth, level)?
        } else {
            top_down_level(comm, m, g, &frontier, &mut depth, level, packing)?
        };
    }
    Ok(depth)
}

/// One top-down level: the next frontier (local indices).
fn top_down_level<G: WeightedGraphRead>(
    comm: &dyn Comm,
    m: Meta,
    g: &G,
    frontier: &[u32],
    depth: &mut [u32],
    level: u32,
    packing: Packing,
) -> Result<Vec<u32>, DistError> {
    let mut next = Vec::new();
    let mut out = vec![Vec::new(); m.size];
    for &i in frontier {
        g.for_each_out_neighbor(m.row(i as usize), |v| {
            let (o, j) = m.locate(v);
            if o != m.rank {
                out[o].push(j as u32);
            } else if depth[j] == UNREACHED {
                depth[j] = level;
                next.push(j as u32);
            }
            true
        });
    }
    let parts: Vec<Vec<u8>> = out
        .iter_mut()
        .map(|ids| {
            ids.sort_unstable();
            ids.dedup();
            let mut bytes = Vec::new();
            frontier::encode(ids, packing, &mut bytes).expect("sorted, distinct ids");
            bytes
        })
        .collect();
    let got = comm.alltoall(Group::World, &parts);
    let mut ids = Vec::new();
    let mut outcome = Ok(());
    for k in 0..got.parts() {
        if let Err(e) = frontier::decode::<u32>(got.part(k), &mut ids) {
            outcome = Err(DistError::Failed(format!("a frontier from rank {k}: {e}")));
            break;
        }
        for &j in &ids {
            let j = j as usize;
            if j >= m.owned {
                outcome = Err(DistError::Failed(format!("rank {k} sent vertex {j}")));
            } else if depth[j] == UNREACHED {
                depth[j] = level;
                next.push(j as u32);
            }
        }
    }
    agree(comm, outcome)?;
    Ok(next)
}

/// One bottom-up level: the next frontier (local indices, increasing).
fn bottom_up_level(
    comm: &dyn Comm,
    m: Meta,
    ghosts: &Ghosts,
    requests: &[Vec<u64>],
    frontier: &[u32],
    depth: &mut [u32],
    level: u32,
) -> Result<Vec<u32>, DistError> {
    let mut in_frontier = vec![false; ghosts.values()];
    for &i in frontier {
        in_frontier[i as usize] = true;
    }
    // Whether each vertex another process reads is in the frontier: a bit each.
    let parts: Vec<Vec<u8>> = requests
        .iter()
        .map(|js| {
            let mut bits = vec![0u8; js.len().div_ceil(8)];
            for (k, &j) in js.iter().enumerate() {
                if in_frontier[j as usize] {
                    bits[k / 8] |= 1 << (k % 8);
                }
            }
            bits
        })
        .collect();
    let got = comm.alltoall(Group::World, &parts);
    let mut outcome = Ok(());
    for (o, wanted) in ghosts.wanted.iter().enumerate() {
        let bits = got.part(o);
        if bits.len() != wanted.len().div_ceil(8) {
            outcome = Err(DistError::Failed(format!(
                "rank {o} sent {} frontier bytes for {} vertices",
                bits.len(),
                wanted.len()
            )));
            break;
        }
        for k in 0..wanted.len() {
            in_frontier[ghosts.offset[o] + k] = bits[k / 8] >> (k % 8) & 1 == 1;
        }
    }
    agree(comm, outcome)?;
    let next: Vec<u32> = (0..m.owned)
        .into_par_iter()
        .with_min_len(1 << 10)
        .filter(|&i| {
            depth[i] == UNREACHED && ghosts.of_vertex(i).iter().any(|&k| in_frontier[k as usize])
        })
        .map(|i| i as u32)
        .collect();
    for &i in &next {
        depth[i as usize] = level;
    }
    Ok(next)
}
