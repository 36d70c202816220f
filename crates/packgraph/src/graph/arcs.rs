//! From edges to arcs: an edge `(u, v)` of an undirected graph is stored as two arcs, `u → v`
//! and `v → u`, in the one out-array; a directed graph stores `u → v` in the out-array and
//! `v → u` in the in-array. Self-loops are never stored. Large batches are split on all
//! threads, straight into vectors of their final size when the batch has no self-loop.

use rayon::prelude::*;

use super::VertexId;

/// Batches of at least this many edges are split in parallel.
const PARALLEL_EDGES: usize = 1 << 16;

/// One past the largest endpoint of `edges` (0 for none), and how many are self-loops.
pub(super) fn scan_endpoints(edges: &[(VertexId, VertexId)]) -> (usize, usize) {
    let scan = |&(u, v): &(VertexId, VertexId)| (u.max(v) as usize + 1, usize::from(u == v));
    let add = |a: (usize, usize), b: (usize, usize)| (a.0.max(b.0), a.1 + b.1);
    if edges.len() >= PARALLEL_EDGES {
        edges.par_iter().map(scan).reduce(|| (0, 0), add)
    } else {
        edges.iter().map(scan).fold((0, 0), add)
    }
}

/// The arcs of a batch of `len` edges: `make(i, u, v)` for every stored direction of edge
/// `i` (whose endpoints are `endpoints(i)`), split into the out-array's and the in-array's
/// (empty for an undirected graph). `self_loops` is how many edges are loops (from
/// [`scan_endpoints`]); they are left out.
pub(super) fn split_arcs<T: Send>(
    directed: bool,
    len: usize,
    self_loops: usize,
    endpoints: impl Fn(usize) -> (VertexId, VertexId) + Sync,
    make: impl Fn(usize, VertexId, VertexId) -> T + Sync,
) -> (Vec<T>, Vec<T>) {
    if len < PARALLEL_EDGES {
        return split_serial(directed, len, endpoints, make);
    }
    let (endpoints, make) = (&endpoints, &make);
    let forward = |i| {
        let (u, v) = endpoints(i);
        make(i, u, v)
    };
    let backward = |i| {
        let (u, v) = endpoints(i);
        make(i, v, u)
    };
    if self_loops == 0 {
        // Exact sizes: collected straight into place, no intermediate lists.
        return if directed {
            rayon::join(
                || (0..len).into_par_iter().map(forward).collect(),
                || (0..len).into_par_iter().map(backward).collect(),
            )
        } else {
            let pairs: Vec<[T; 2]> = (0..len)
                .into_par_iter()
                .map(|i| [forward(i), backward(i)])
                .collect();
            (pairs.into_flattened(), Vec::new())
        };
    }
    let is_arc = |i: &usize| {
        let (u, v) = endpoints(*i);
        u != v
    };
    if directed {
        rayon::join(
            || {
                (0..len)
                    .into_par_iter()
                    .filter(is_arc)
                    .map(forward)
                    .collect()
            },
            || {
                (0..len)
                    .into_par_iter()
                    .filter(is_arc)
                    .map(backward)
                    .collect()
            },
        )
    } else {
        let out = (0..len)
            .into_par_iter()
            .filter(is_arc)
            .flat_map_iter(|i| [forward(i), backward(i)])
            .collect();
        (out, Vec::new())
    }
}

/// [`split_arcs`] on the calling thread (small batches, and the reference in tests).
pub(super) fn split_serial<T>(
    directed: bool,
    len: usize,
    endpoints: impl Fn(usize) -> (VertexId, VertexId),
    make: impl Fn(usize, VertexId, VertexId) -> T,
) -> (Vec<T>, Vec<T>) {
    let mut out = Vec::with_capacity(if directed { len } else { 2 * len });
    let mut reversed = Vec::with_capacity(if directed { len } else { 0 });
    for i in 0..len {
        let (u, v) = endpoints(i);
        if u == v {
            continue;
        }
        out.push(make(i, u, v));
        if directed {
            reversed.push(make(i, v, u));
        } else {
            out.push(make(i, v, u));
        }
    }
    (out, reversed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn parallel_split_equals_serial(
            edges in proptest::collection::vec((0u32..50, 0u32..50), 0..300),
            copies in 1usize..4,
            directed: bool,
        ) {
            // Repeat the batch past the parallel threshold.
            let edges: Vec<_> = edges.iter().cycle().take(edges.len() * copies * 250).copied().collect();
            let (_, loops) = scan_endpoints(&edges);
            let key = |_: usize, u: VertexId, v: VertexId| (u, v);
            let parallel = split_arcs(directed, edges.len(), loops, |i| edges[i], key);
            let serial = split_serial(directed, edges.len(), |i| edges[i], key);
            prop_assert_eq!(parallel, serial);
        }
    }

    #[test]
    fn scan_finds_the_largest_endpoint_and_the_loops() {
        assert_eq!(scan_endpoints(&[]), (0, 0));
        assert_eq!(scan_endpoints(&[(3, 3), (1, 7), (2, 2)]), (8, 2));
    }
}
