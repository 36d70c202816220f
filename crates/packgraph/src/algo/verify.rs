//! Verifiers: each checks an algorithm's output against properties of a correct answer,
//! not against bytes of another implementation, so tests and the
//! Python bindings can all call them on any graph.
//!
//! * BFS: the source has depth 0 and is its own parent; every other reached vertex has a
//!   reached parent one level up with an edge to it; every edge leaving a reached vertex
//!   reaches a vertex at most one level deeper (so nothing reachable was missed).
//! * WCC: no edge crosses labels, and each label is the smallest vertex of its class.
//! * PageRank (fixed iterations): scores are finite, at least `(1 − d) / n`, and sum to 1.
//! * MIS: no two members are adjacent and every non-member has a member neighbor.
//! * k-core: every coreness is the h-index of its neighbors' corenesses (the fixed point
//!   that characterizes coreness).

use super::bfs::{BfsTree, UNREACHED};
use super::neighborhood::undirected_neighbors;
use crate::graph::{GraphRead, VertexId};

/// A property an algorithm's output violates.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{algorithm} output is wrong at vertex {vertex}: {what}")]
pub struct VerifyError {
    /// The algorithm checked.
    pub algorithm: &'static str,
    /// The first vertex where a property fails.
    pub vertex: u64,
    /// Which property.
    pub what: String,
}

fn fail<T>(algorithm: &'static str, vertex: usize, what: String) -> Result<T, VerifyError> {
    Err(VerifyError {
        algorithm,
        vertex: vertex as u64,
        what,
    })
}

fn check_len(algorithm: &'static str, len: usize, n: usize) -> Result<(), VerifyError> {
    if len == n {
        Ok(())
    } else {
        fail(algorithm, 0, format!("{len} values for {n} vertices"))
    }
}

/// Checks a BFS tree from `source`.
///
/// # Errors
/// The first violated property.
pub fn bfs<G: GraphRead>(graph: &G, source: VertexId, tree: &BfsTree) -> Result<(), VerifyError> {
    let n = graph.num_vertices();
    check_len("bfs", tree.depths.len(), n)?;
    check_len("bfs", tree.parents.len(), n)?;
    let s = source as usize;
    if s >= n || tree.depths[s] != 0 || tree.parents[s] != source {
        return fail(
            "bfs",
            s,
            "the source must have depth 0 and be its own parent".into(),
        );
    }
    for v in 0..n {
        let (depth, parent) = (tree.depths[v], tree.parents[v]);
        if depth == UNREACHED {
            if parent != UNREACHED {
                return fail("bfs", v, "unreached vertex with a parent".into());
            }
            continue;
        }
        if v != s {
            let ok = (parent as usize) < n
                && tree.depths[parent as usize] != UNREACHED
                && tree.depths[parent as usize] + 1 == depth
                && !graph.for_each_out_neighbor(parent, |w| w as usize != v);
            if !ok {
                return fail(
                    "bfs",
                    v,
                    format!("parent {parent} is not an edge one level up"),
                );
            }
        }
        let mut bad = None;
        graph.for_each_out_neighbor(v as VertexId, |w| {
            let dw = tree.depths[w as usize];
            if dw == UNREACHED || dw > depth + 1 {
                bad = Some(w);
            }
            bad.is_none()
        });
        if let Some(w) = bad {
            return fail("bfs", v, format!("edge to {w} reaches past the next level"));
        }
    }
    Ok(())
}

/// Checks WCC labels (smallest vertex of each component).
///
/// # Errors
/// The first violated property.
pub fn wcc<G: GraphRead>(graph: &G, labels: &[VertexId]) -> Result<(), VerifyError> {
    let n = graph.num_vertices();
    check_len("wcc", labels.len(), n)?;
    for v in 0..n {
        let label = labels[v];
        if label as usize > v || labels[label as usize] != label {
            return fail(
                "wcc",
                v,
                format!("label {label} is not the smallest vertex of its class"),
            );
        }
        let mut crossing = None;
        graph.for_each_out_neighbor(v as VertexId, |w| {
            if labels[w as usize] != label {
                crossing = Some(w);
            }
            crossing.is_none()
        });
        if let Some(w) = crossing {
            return fail("wcc", v, format!("edge to {w} crosses labels"));
        }
    }
    Ok(())
}

/// Checks PageRank scores after a fixed number of iterations with damping `damping`.
///
/// # Errors
/// The first violated property.
pub fn pagerank<G: GraphRead>(graph: &G, damping: f64, ranks: &[f64]) -> Result<(), VerifyError> {
    let n = graph.num_vertices();
    check_len("pagerank", ranks.len(), n)?;
    let floor = (1.0 - damping) / n as f64;
    for (v, &r) in ranks.iter().enumerate() {
        if !r.is_finite() || r < floor * (1.0 - 1e-9) {
            return fail(
                "pagerank",
                v,
                format!("score {r} below (1 - d) / n = {floor}"),
            );
        }
    }
    let total: f64 = ranks.iter().sum();
    if n > 0 && (total - 1.0).abs() > 1e-6 {
        return fail("pagerank", 0, format!("scores sum to {total}, not 1"));
    }
    Ok(())
}

/// Checks a maximal independent set in the undirected view.
///
/// # Errors
/// The first violated property.
pub fn mis<G: GraphRead>(graph: &G, members: &[bool]) -> Result<(), VerifyError> {
    check_len("mis", members.len(), graph.num_vertices())?;
    let mut list = Vec::new();
    for v in 0..graph.num_vertices() {
        undirected_neighbors(graph, v as VertexId, &mut list);
        let covered = list.iter().any(|&u| members[u as usize]);
        match (members[v], covered) {
            (true, true) => return fail("mis", v, "two adjacent members".into()),
            (false, false) => return fail("mis", v, "not a member and no member neighbor".into()),
            _ => {}
        }
    }
    Ok(())
}

/// Checks corenesses: each must be the h-index of its neighbors' corenesses.
///
/// # Errors
/// The first violated property.
pub fn kcore<G: GraphRead>(graph: &G, core: &[u32]) -> Result<(), VerifyError> {
    check_len("kcore", core.len(), graph.num_vertices())?;
    let mut list = Vec::new();
    for v in 0..graph.num_vertices() {
        undirected_neighbors(graph, v as VertexId, &mut list);
        let mut values: Vec<u32> = list.iter().map(|&u| core[u as usize]).collect();
        values.sort_unstable_by(|a, b| b.cmp(a));
        let h = values
            .iter()
            .enumerate()
            .take_while(|&(i, &c)| c as usize > i)
            .count() as u32;
        if core[v] != h {
            return fail(
                "kcore",
                v,
                format!("coreness {} but the neighbors' h-index is {h}", core[v]),
            );
        }
    }
    Ok(())
}
