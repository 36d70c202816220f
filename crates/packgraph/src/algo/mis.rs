//! Maximal independent set on the undirected view, by Luby-style rounds with fixed random
//! priorities (deterministic for a seed, whatever the thread count): in each round every
//! undecided vertex whose priority beats all its undecided neighbors joins the set, and the
//! neighbors of joiners leave. Ties cannot happen: the priority is a hash of the id, with the
//! id itself as tie-breaker.

use rayon::prelude::*;

use std::sync::atomic::AtomicBool;

use super::neighborhood::all_undirected_neighbors;
use super::stop::{check, NEVER};
use crate::graph::{GraphRead, VertexId};
use crate::Result;

const UNDECIDED: u8 = 0;
const IN_SET: u8 = 1;
const OUT: u8 = 2;

fn priority(seed: u64, v: VertexId) -> (u64, VertexId) {
    let mut z = seed ^ u64::from(v).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31), v)
}

/// Membership in a maximal independent set (`true` = in the set).
///
/// # Complexity
/// O(m log n) expected work, O(log n) expected rounds.
pub fn mis<G: GraphRead>(graph: &G, seed: u64) -> Vec<bool> {
    mis_interruptible(graph, seed, &NEVER).expect("nothing sets NEVER")
}

/// [`mis`], looking at `stop` before each round.
///
/// # Errors
/// [`Error::Cancelled`](crate::Error::Cancelled) once `stop` is set.
pub(crate) fn mis_interruptible<G: GraphRead>(
    graph: &G,
    seed: u64,
    stop: &AtomicBool,
) -> Result<Vec<bool>> {
    let n = graph.num_vertices();
    let neighbors = all_undirected_neighbors(graph, stop)?;
    let mut state = vec![UNDECIDED; n];
    while state.contains(&UNDECIDED) {
        check(stop)?;
        let joins: Vec<bool> = (0..n)
            .into_par_iter()
            .map(|v| {
                state[v] == UNDECIDED
                    && neighbors[v].iter().all(|&u| {
                        state[u as usize] != UNDECIDED
                            || priority(seed, v as VertexId) < priority(seed, u)
                    })
            })
            .collect();
        let leaves: Vec<bool> = (0..n)
            .into_par_iter()
            .map(|v| {
                state[v] == UNDECIDED
                    && !joins[v]
                    && neighbors[v].iter().any(|&u| joins[u as usize])
            })
            .collect();
        state.par_iter_mut().enumerate().for_each(|(v, s)| {
            if joins[v] {
                *s = IN_SET;
            } else if leaves[v] {
                *s = OUT;
            }
        });
    }
    Ok(state.into_iter().map(|s| s == IN_SET).collect())
}
