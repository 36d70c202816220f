//! PageRank as LDBC Graphalytics defines it: a fixed number of iterations, starting from
//! 1/n, where each iteration sets
//! `PR(v) = (1 - d) / n + d · Σ_{u → v} PR(u) / outdeg(u) + d · D / n`,
//! `D` being the total rank of vertices without out-edges (dangling vertices), so rank is
//! conserved. Pull-based: each vertex sums over its in-neighbors, so no atomics and results
//! do not depend on the thread count (sums run in a fixed order).

use rayon::prelude::*;

use crate::graph::{GraphRead, VertexId};

/// Vertices per block when summing dangling rank (fixed, so the sum's order is too).
const SUM_BLOCK: usize = 4096;

/// Vertices per parallel task of the pull step.
const PULL_BLOCK: usize = 2048;

/// PageRank scores after `iterations` iterations with damping factor `damping`.
///
/// # Complexity
/// O(iterations · (n + m)) work, O(iterations · log n) depth, two floats per vertex.
pub fn pagerank<G: GraphRead>(graph: &G, damping: f64, iterations: usize) -> Vec<f64> {
    let n = graph.num_vertices();
    if n == 0 {
        return Vec::new();
    }
    let inverse_degree: Vec<f64> = (0..n as VertexId)
        .into_par_iter()
        .map(|v| match graph.out_degree(v) {
            0 => 0.0,
            d => 1.0 / d as f64,
        })
        .collect();
    let mut rank = vec![1.0 / n as f64; n];
    let mut contribution = vec![0.0; n];
    for _ in 0..iterations {
        let dangling: f64 = rank
            .par_chunks(SUM_BLOCK)
            .zip(inverse_degree.par_chunks(SUM_BLOCK))
            .map(|(r, inv)| {
                r.iter()
                    .zip(inv)
                    .filter(|(_, &i)| i == 0.0)
                    .map(|(r, _)| r)
                    .sum::<f64>()
            })
            .collect::<Vec<f64>>()
            .iter()
            .sum();
        contribution
            .par_iter_mut()
            .zip(&rank)
            .zip(&inverse_degree)
            .for_each(|((c, r), i)| *c = r * i);
        let base = (1.0 - damping) / n as f64 + damping * dangling / n as f64;
        // Pull over blocks of vertices: each block's in-arcs are one stream, and each
        // vertex's sum runs over its in-neighbors in increasing order (deterministic).
        rank.par_chunks_mut(PULL_BLOCK)
            .enumerate()
            .for_each(|(b, block)| {
                let first = b * PULL_BLOCK;
                block.fill(0.0);
                // The sum of the current vertex stays in a register; it is stored when the
                // arcs move on to the next vertex (vertices without in-arcs keep 0).
                let (mut current, mut sum) = (first, 0.0);
                graph.for_each_in_arc_in(
                    first as VertexId..(first + block.len()) as VertexId,
                    |v, u| {
                        if v as usize != current {
                            block[current - first] = sum;
                            (current, sum) = (v as usize, 0.0);
                        }
                        sum += contribution[u as usize];
                    },
                );
                if let Some(last) = block.get_mut(current - first) {
                    *last = sum;
                }
                for r in block.iter_mut() {
                    *r = base + damping * *r;
                }
            });
    }
    rank
}

/// The same computation written as plain serial loops over out-edges (the reference).
pub fn pagerank_serial<G: GraphRead>(graph: &G, damping: f64, iterations: usize) -> Vec<f64> {
    let n = graph.num_vertices();
    let mut rank = vec![1.0 / n as f64; n];
    for _ in 0..iterations {
        let mut next = vec![0.0; n];
        let mut dangling = 0.0;
        for (u, &score) in rank.iter().enumerate() {
            let degree = graph.out_degree(u as VertexId);
            if degree == 0 {
                dangling += score;
            }
            graph.for_each_out_neighbor(u as VertexId, |v| {
                next[v as usize] += score / degree as f64;
                true
            });
        }
        for value in &mut next {
            *value = (1.0 - damping) / n as f64 + damping * (*value + dangling / n as f64);
        }
        rank = next;
    }
    rank
}
