//! `check_invariants`: a full validation of a graph, for tests, debugging and
//! `packgraph info --check`.

use super::index::RunIndex;
use super::{EdgeLeaf, Graph, VertexId};
use crate::pma::{LeafCodec, Pma};
use crate::{Error, Result};

impl<C: EdgeLeaf> Graph<C> {
    /// Checks every invariant the graph relies on:
    /// * each edge array passes its own [`Pma::check_invariants`];
    /// * every arc joins two distinct vertices below the vertex count;
    /// * an undirected graph holds `v → u` for every `u → v`; a directed graph's in-array
    ///   holds exactly the reversed out-arcs, with the same weights;
    /// * the id dictionary names exactly the vertices, every property belongs to one, and
    ///   their radix trees pass [`Part::check_invariants`](crate::part::Part::check_invariants);
    /// * the flat index, if built, has one entry per vertex in whole segments and gives
    ///   every vertex's degree and run as the arrays do.
    ///
    /// # Errors
    /// [`Error::Corrupt`] naming the first invariant found broken.
    pub fn check_invariants(&self) -> Result<()> {
        let broken = |what: String| Err(Error::corrupt(format!("graph invariant broken: {what}")));
        self.out.check_invariants()?;
        if let Some(incoming) = &self.incoming {
            incoming.check_invariants()?;
        }
        if self.incoming.is_some() != self.directed {
            return broken("an in-array must exist exactly for a directed graph".into());
        }
        let n = self.num_vertices as u64;
        let mut arcs: Vec<(u64, C::Item)> = Vec::with_capacity(self.out.len());
        for item in self.out.iter() {
            let key = C::key(item);
            let (u, v) = (key >> 32, key & 0xffff_ffff);
            if u >= n || v >= n || u == v {
                return broken(format!("arc {u} -> {v} in a graph of {n} vertices"));
            }
            arcs.push(((v << 32) | u, item));
        }
        arcs.sort_unstable_by_key(|&(reversed, _)| reversed);
        let mirror: &Pma<C> = self.incoming.as_ref().unwrap_or(&self.out);
        if mirror.len() != arcs.len() {
            return broken(format!(
                "{} arcs one way, {} the other",
                arcs.len(),
                mirror.len()
            ));
        }
        for ((reversed, item), back) in arcs.iter().zip(mirror.iter()) {
            if C::key(back) != *reversed {
                let (u, v) = (reversed & 0xffff_ffff, reversed >> 32);
                return broken(format!("arc {u} -> {v} has no reverse arc"));
            }
            if C::weight(*item).to_bits() != C::weight(back).to_bits() {
                let (u, v) = (reversed & 0xffff_ffff, reversed >> 32);
                return broken(format!(
                    "the two directions of arc {u} -> {v} differ in weight"
                ));
            }
        }
        if self.ids.len() != self.num_vertices {
            return broken(format!(
                "{} vertex ids for {} vertices",
                self.ids.len(),
                self.num_vertices
            ));
        }
        self.ids.check_invariants()?;
        self.properties.check_invariants()?;
        for name in self.properties.names() {
            let column = self.properties.column(name).into_iter().flatten();
            if let Some((v, _)) = column.last().filter(|(v, _)| *v as u64 >= n) {
                return broken(format!(
                    "property {name:?} of vertex {v}, past the last vertex"
                ));
            }
        }
        if let Some(flat) = self.index.get() {
            check_index(&flat.out, &self.out, self.num_vertices)?;
            if let (Some(index), Some(set)) = (&flat.incoming, &self.incoming) {
                check_index(index, set, self.num_vertices)?;
            }
        }
        Ok(())
    }
}

/// The index gives each vertex the run the array holds.
fn check_index<C: LeafCodec>(index: &RunIndex, set: &Pma<C>, num_vertices: usize) -> Result<()> {
    index
        .check_layout(num_vertices)
        .map_err(|what| Error::corrupt(format!("graph invariant broken: {what}")))?;
    let fresh = RunIndex::build(set, num_vertices);
    for v in 0..num_vertices as VertexId {
        if index.degree(v) != fresh.degree(v) {
            return Err(Error::corrupt(format!(
                "graph invariant broken: the flat index gives vertex {v} degree {}, the array {}",
                index.degree(v),
                fresh.degree(v)
            )));
        }
        let (mut a, mut b) = (Vec::new(), Vec::new());
        index.for_each(set, v, |item| {
            a.push(C::key(item));
            true
        });
        fresh.for_each(set, v, |item| {
            b.push(C::key(item));
            true
        });
        if a != b {
            return Err(Error::corrupt(format!(
                "graph invariant broken: the flat index's run of vertex {v} is not the array's"
            )));
        }
    }
    Ok(())
}
