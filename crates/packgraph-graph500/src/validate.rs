//! The Graph500 validation of a parent tree, checked across the processes after every search.
//!
//! The specification's five rules, with how each is checked:
//! 1. the parents form a tree rooted at the root, without cycles: levels are computed from
//!    the parents alone (the root 0, a vertex one more than its parent, in rounds of requests
//!    to the parents' owners); a parent outside the graph or the tree, or a round that
//!    resolves nothing while vertices remain, is a violation;
//! 2. each tree edge joins levels that differ by exactly one;
//! 3. every edge of the graph joins levels that differ by at most one, or two vertices both
//!    outside the tree;
//! 4. the tree spans the root's component: no edge joins a tree vertex to a vertex outside;
//! 5. each vertex and its parent are joined by an edge of the graph.
//!
//! Rules 2 to 5 read the levels of the row and column blocks (gathered like a search's
//! bitmaps) and check each stored arc where it is stored, so the input edge list is not
//! needed again; the arcs are the input's, without duplicates and self-loops, which rules 3
//! and 4 hold for trivially.

use crate::bfs::UNREACHED;
use crate::comm::{get_u32s, put_u32s, Comm, Group};
use crate::local::LocalGraph;

/// A level not resolved yet.
const PENDING: u32 = u32::MAX - 1;

/// What validating one tree found (the same on every process).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Validation {
    /// One line per broken rule, with counts; empty if the tree is valid.
    pub errors: Vec<String>,
    /// Input edges in the root's component (duplicates and self-loops included): the TEPS
    /// edge count.
    pub nedge: u64,
    /// Vertices in the tree.
    pub tree_vertices: u64,
}

impl Validation {
    /// Whether every rule holds.
    pub fn is_valid(&self) -> bool {
        self.errors.is_empty()
    }
}

/// Counters summed over the processes.
#[derive(Default)]
struct Counts {
    out_of_range: u64,
    root: u64,
    not_in_tree: u64,
    cycle: u64,
    level_step: u64,
    edge_span: u64,
    edge_leaves: u64,
    parent_edges: u64,
    tree: u64,
    nedge2: u64,
}

impl Counts {
    fn to_array(&self) -> [u64; 10] {
        [
            self.out_of_range,
            self.root,
            self.not_in_tree,
            self.cycle,
            self.level_step,
            self.edge_span,
            self.edge_leaves,
            self.parent_edges,
            self.tree,
            self.nedge2,
        ]
    }

    fn from_array(a: [u64; 10]) -> Self {
        let [out_of_range, root, not_in_tree, cycle, level_step, edge_span, edge_leaves, parent_edges, tree, nedge2] =
            a;
        Self {
            out_of_range,
            root,
            not_in_tree,
            cycle,
            level_step,
            edge_span,
            edge_leaves,
            parent_edges,
            tree,
            nedge2,
        }
    }
}

/// Levels of the owned vertices from `parents` alone; counts parents out of range or outside
/// the tree, and vertices left on a cycle.
fn levels_from_parents(
    comm: &dyn Comm,
    graph: &LocalGraph,
    root: u32,
    parents: &[u32],
    counts: &mut Counts,
) -> Vec<u32> {
    let layout = graph.layout;
    let first = layout.block_start(layout.rank) as u32;
    let n = layout.num_vertices as u64;
    let mut levels = vec![UNREACHED; parents.len()];
    let mut pending = Vec::new();
    for (i, &p) in parents.iter().enumerate() {
        let v = first + i as u32;
        if p == UNREACHED {
            continue;
        }
        if u64::from(p) >= n {
            counts.out_of_range += 1;
        } else if v == root {
            levels[i] = if p == root { 0 } else { PENDING };
            counts.root += u64::from(p != root);
        } else {
            levels[i] = PENDING;
            pending.push(i as u32);
        }
    }
    loop {
        // Ask each pending vertex's parent's owner for the parent's level.
        let mut requests = vec![Vec::new(); comm.size()];
        for &i in &pending {
            let p = parents[i as usize];
            put_u32s(&[p], &mut requests[layout.owner(p)]);
        }
        let asked = comm.alltoall(Group::World, &requests);
        let replies: Vec<Vec<u8>> = (0..asked.parts())
            .map(|k| {
                let mut ids = Vec::new();
                get_u32s(asked.part(k), &mut ids);
                let mut reply = Vec::with_capacity(ids.len() * 4);
                let answers: Vec<u32> = ids.iter().map(|&p| levels[(p - first) as usize]).collect();
                put_u32s(&answers, &mut reply);
                reply
            })
            .collect();
        let answered = comm.alltoall(Group::World, &replies);
        let mut answers: Vec<std::vec::IntoIter<u32>> = (0..answered.parts())
            .map(|k| {
                let mut a = Vec::new();
                get_u32s(answered.part(k), &mut a);
                a.into_iter()
            })
            .collect();
        let before = pending.len() as u64;
        pending.retain(|&i| {
            let owner = layout.owner(parents[i as usize]);
            match answers[owner].next().unwrap_or(PENDING) {
                PENDING => true,
                UNREACHED => {
                    counts.not_in_tree += 1;
                    levels[i as usize] = UNREACHED;
                    false
                }
                level => {
                    levels[i as usize] = level + 1;
                    false
                }
            }
        });
        let mut progress = [before - pending.len() as u64, pending.len() as u64];
        comm.allreduce_sum(Group::World, &mut progress);
        if progress[1] == 0 {
            break;
        }
        if progress[0] == 0 {
            counts.cycle += pending.len() as u64;
            break;
        }
    }
    levels
}

/// Each value of the row (or column) block from its owners.
fn gather_u32s(comm: &dyn Comm, group: Group, owned: &[u32]) -> Vec<u32> {
    let mut bytes = Vec::with_capacity(owned.len() * 4);
    put_u32s(owned, &mut bytes);
    let all = comm.allgather(group, &bytes);
    let mut out = Vec::with_capacity(all.bytes.len() / 4);
    get_u32s(&all.bytes, &mut out);
    out
}

/// Checks the parent tree of a search from `root` (collective).
///
/// `parents` holds the parent of each owned vertex, [`UNREACHED`] for none.
pub fn validate(comm: &dyn Comm, graph: &LocalGraph, root: u32, parents: &[u32]) -> Validation {
    let layout = graph.layout;
    let mut counts = Counts::default();
    let levels = levels_from_parents(comm, graph, root, parents, &mut counts);
    for (i, &level) in levels.iter().enumerate() {
        if level != UNREACHED {
            counts.tree += 1;
            counts.nedge2 += graph.edge_weights[i];
        }
    }
    let row_levels = gather_u32s(comm, Group::Row, &levels);
    let row_parents = gather_u32s(comm, Group::Row, parents);
    let col_levels = gather_u32s(comm, Group::Col, &levels);
    let reached = |l: u32| l < PENDING;
    let row_first = layout.row_start() as u64;
    for (y, (&ly, &p)) in row_levels.iter().zip(&row_parents).enumerate() {
        let arcs = graph.in_arcs(y as u32);
        for &x in arcs {
            let lx = col_levels[x as usize];
            if reached(lx) != reached(ly) {
                counts.edge_leaves += 1;
            } else if reached(lx) && lx.abs_diff(ly) > 1 {
                counts.edge_span += 1;
            }
        }
        let v = row_first + y as u64;
        if p == UNREACHED || v == u64::from(root) || p as usize >= layout.num_vertices {
            continue;
        }
        if layout.in_my_col(p) {
            let x = layout.col_local(p);
            if arcs.contains(&x) {
                counts.parent_edges += 1;
            }
            let lp = col_levels[x as usize];
            if reached(ly) && reached(lp) && ly != lp + 1 {
                counts.level_step += 1;
            }
        }
    }
    let mut sums = counts.to_array();
    comm.allreduce_sum(Group::World, &mut sums);
    let c = Counts::from_array(sums);
    let mut errors = Vec::new();
    if c.tree == 0 {
        errors.push(format!("the root {root} is not in the tree (rule 1)"));
    }
    let mut fail = |count: u64, what: &str| {
        if count > 0 {
            errors.push(format!("{count} {what}"));
        }
    };
    fail(c.out_of_range, "parents are not vertices of the graph");
    fail(c.root, "root's parent is not the root (rule 1)");
    fail(
        c.not_in_tree,
        "vertices have a parent outside the tree (rule 1)",
    );
    fail(c.cycle, "vertices lie on a cycle of parents (rule 1)");
    fail(
        c.level_step,
        "tree edges join levels that do not differ by one (rule 2)",
    );
    fail(c.edge_span, "arcs join levels more than one apart (rule 3)");
    fail(
        c.edge_leaves,
        "arcs join the tree to a vertex outside it (rule 4)",
    );
    fail(
        c.tree.saturating_sub(1).saturating_sub(c.parent_edges),
        "vertices are not joined to their parent by an edge (rule 5)",
    );
    Validation {
        errors,
        nedge: c.nedge2 / 2,
        tree_vertices: c.tree,
    }
}
