//! Ligra's vertex subset: a sparse list of ids or a dense membership array over all
//! vertices, converted by size (Shun and Blelloch, PPoPP 2013; Aspen section 5).

use rayon::prelude::*;

use crate::graph::VertexId;

/// A set of vertices of a graph with `num_vertices` vertices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VertexSubset {
    /// Distinct ids, in no particular order.
    Sparse {
        /// Vertices in the graph.
        num_vertices: usize,
        /// The members.
        ids: Vec<VertexId>,
    },
    /// `members[v]` says whether `v` is in the set.
    Dense {
        /// Number of members.
        len: usize,
        /// Membership of every vertex.
        members: Vec<bool>,
    },
}

impl VertexSubset {
    /// The empty set.
    pub fn empty(num_vertices: usize) -> Self {
        Self::Sparse {
            num_vertices,
            ids: Vec::new(),
        }
    }

    /// `{v}`.
    pub fn single(num_vertices: usize, v: VertexId) -> Self {
        Self::Sparse {
            num_vertices,
            ids: vec![v],
        }
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        match self {
            Self::Sparse { ids, .. } => ids.len(),
            Self::Dense { len, .. } => *len,
        }
    }

    /// Whether there are no members.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of vertices of the graph.
    pub fn num_vertices(&self) -> usize {
        match self {
            Self::Sparse { num_vertices, .. } => *num_vertices,
            Self::Dense { members, .. } => members.len(),
        }
    }

    /// The members as a list (ascending when converted from dense).
    pub fn to_ids(&self) -> Vec<VertexId> {
        match self {
            Self::Sparse { ids, .. } => ids.clone(),
            Self::Dense { members, .. } => (0..members.len() as VertexId)
                .into_par_iter()
                .filter(|&v| members[v as usize])
                .collect(),
        }
    }

    /// The membership array.
    pub fn to_dense(&self) -> Vec<bool> {
        match self {
            Self::Sparse { num_vertices, ids } => {
                let mut members = vec![false; *num_vertices];
                for &v in ids {
                    members[v as usize] = true;
                }
                members
            }
            Self::Dense { members, .. } => members.clone(),
        }
    }
}
