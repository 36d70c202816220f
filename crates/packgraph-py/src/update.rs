//! Edge batches from Python arguments to core [`Update`]s, for `Graph` and `Store` alike.
//!
//! The caller's ids are external; an update names edges by internal id, so building one
//! needs the graph it will be applied to (the writer holds it meanwhile). Integer ids (the
//! common case, NumPy arrays above all) take a fast path with no [`ExternalId`] per
//! endpoint: a graph whose ids are a range needs no lookup; otherwise the graph-like
//! object keeps an [`IdCache`], a plain array from external to internal id that each batch
//! brings up to date, so an endpoint costs one array read instead of a lookup in the
//! graph's radix tree (several times dearer; see `ids::TABLE_BUILD_RATIO`). Without a
//! table (sparse ids, small batches), the lookups run in parallel. Ids the graph lacks become vertices in order of first
//! appearance (`src`, then `dst`); batches that name vertices by strings go through
//! [`CoreGraph::plan_vertices`], which gives the same ids.

use std::collections::HashMap;

use packgraph::graph::{
    Applied, EdgeLeaf, ExternalId, Graph as CoreGraph, GraphRead, Update, VertexId,
};
use pyo3::prelude::*;
use rayon::prelude::*;

use packgraph::graph::{IdMap, PropertyValue};
use pyo3::exceptions::PyTypeError;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyString, PyTuple};

use crate::errors::input_error;
use crate::ids::{id_list, lookup, weight_list, IdCache, IdList};

/// Endpoint lookups below this many run on the calling thread (rayon's fork costs more).
const PARALLEL_LOOKUPS: usize = 1 << 14;

/// Edges as integer id pairs, and a weight each when given.
pub(crate) type IntEdges = (Vec<(u64, u64)>, Option<Vec<f64>>);

/// What a batch of edges does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Edit {
    Insert,
    Delete,
}

impl Edit {
    /// The edges the batch changed: inserted ones that were absent, deleted ones that were
    /// present.
    pub(crate) fn count(self, applied: &Applied) -> usize {
        match self {
            Self::Insert => applied.edges_inserted,
            Self::Delete => applied.edges_deleted,
        }
    }
}

/// The update adding vertices `ids` (any iterable or array of ids; present ones are kept).
pub(crate) fn vertices_update(ids: &Bound<'_, PyAny>) -> PyResult<Update> {
    let mut update = Update::new();
    update.add_vertices(id_list(ids, "ids")?.into_external());
    Ok(update)
}

/// The `src`, `dst` and weights (when some tuple has one; 1 for the others) lists of an
/// iterable of `(u, v)`, `(u, v, weight)` or `(u, v, {"weight": w, ...})` tuples, as
/// NetworkX's `add_edges_from` takes them; `what` names the argument in errors.
#[allow(
    clippy::type_complexity,
    reason = "three lists, named where they are used"
)]
pub(crate) fn edge_tuples<'py>(
    edges: &Bound<'py, PyAny>,
    what: &str,
) -> PyResult<(
    Bound<'py, PyList>,
    Bound<'py, PyList>,
    Option<Bound<'py, PyList>>,
)> {
    let py = edges.py();
    let (src, dst) = (PyList::empty(py), PyList::empty(py));
    let mut weights: Vec<Option<f64>> = Vec::new();
    for (i, item) in edges.try_iter()?.enumerate() {
        let item = item?;
        let parts: Vec<Bound<'py, PyAny>> = if item.is_instance_of::<PyString>() {
            Vec::new()
        } else {
            item.try_iter()
                .and_then(|it| it.collect::<PyResult<Vec<_>>>())
                .unwrap_or_default()
        };
        if !(parts.len() == 2 || parts.len() == 3) {
            return Err(input_error(
                py,
                format!("{what}[{i}] is {item}, not a (u, v) or (u, v, weight) tuple"),
            ));
        }
        src.append(&parts[0])?;
        dst.append(&parts[1])?;
        let weight = match parts.get(2) {
            None => None,
            Some(data) if data.is_instance_of::<PyDict>() => data
                .cast::<PyDict>()?
                .get_item("weight")?
                .map(|w| w.extract::<f64>())
                .transpose()?,
            Some(w) => Some(w.extract::<f64>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "{what}[{i}]: the weight is a number or a dict with a \"weight\", not {}",
                    w.get_type()
                        .name()
                        .map_or_else(|_| "?".into(), |n| n.to_string())
                ))
            })?),
        };
        weights.push(weight);
    }
    let weights = weights
        .iter()
        .any(Option::is_some)
        .then(|| PyList::new(py, weights.iter().map(|w| w.unwrap_or(1.0))))
        .transpose()?;
    Ok((src, dst, weights))
}

/// A vertex attribute's value as a property (`None` for Python's None: no value);
/// `TypeError` naming the attribute for a value of another type.
pub(crate) fn property_value(
    value: &Bound<'_, PyAny>,
    name: &str,
) -> PyResult<Option<PropertyValue>> {
    if value.is_none() {
        return Ok(None);
    }
    if value.is_instance_of::<PyBool>() {
        return Ok(Some(PropertyValue::Bool(value.extract()?)));
    }
    if let Ok(text) = value.cast::<PyString>() {
        return Ok(Some(PropertyValue::Text(text.to_cow()?.as_ref().into())));
    }
    if value.is_instance_of::<PyFloat>() {
        return Ok(Some(PropertyValue::Float(value.extract()?)));
    }
    if let Ok(int) = value.extract::<i64>() {
        return Ok(Some(PropertyValue::Int(int)));
    }
    if let Ok(flag) = value.extract::<bool>() {
        return Ok(Some(PropertyValue::Bool(flag)));
    }
    if let Ok(real) = value.extract::<f64>() {
        return Ok(Some(PropertyValue::Float(real)));
    }
    Err(PyTypeError::new_err(format!(
        "vertex attribute {name:?}: a value is an int (64-bit), float, bool, str or None, not {}",
        value.get_type().name()?
    )))
}

/// The update setting attribute `name` of the vertices of graph `ids`: `values` maps ids
/// to values (a dict) or lists one value per vertex in the order of `vertices()`.
pub(crate) fn attribute_update(
    ids: &IdMap,
    name: &str,
    values: &Bound<'_, PyAny>,
) -> PyResult<Update> {
    let py = values.py();
    let mut update = Update::new();
    let mut set = |v: VertexId, value: &Bound<'_, PyAny>| -> PyResult<()> {
        match property_value(value, name)? {
            Some(value) => update.set_property(name, v, value),
            None => update.remove_property(name, v),
        };
        Ok(())
    };
    if values.hasattr("items")? && values.hasattr("keys")? {
        for pair in values.call_method0("items")?.try_iter()? {
            let pair = pair?;
            let pair = pair.cast::<PyTuple>()?;
            set(lookup(ids, &pair.get_item(0)?)?, &pair.get_item(1)?)?;
        }
    } else {
        crate::ids::require_1d(values, "values")?;
        let values: Vec<Bound<'_, PyAny>> = values.try_iter()?.collect::<PyResult<_>>()?;
        if values.len() != ids.len() {
            return Err(input_error(
                py,
                format!(
                    "{} values for {} vertices: give one per vertex, or a dict of id: value",
                    values.len(),
                    ids.len()
                ),
            ));
        }
        for (v, value) in values.iter().enumerate() {
            set(v as VertexId, value)?;
        }
    }
    Ok(update)
}

/// The edges of one batch as the caller gave them: `src[i] -> dst[i]`, and a weight each
/// when given.
pub(crate) struct EdgeBatch {
    src: IdList,
    dst: IdList,
    weights: Option<Vec<f64>>,
}

impl EdgeBatch {
    /// Reads `src`, `dst` and `weights` (any iterables or arrays); `InputError` if their
    /// lengths differ or an id is negative.
    pub(crate) fn from_args(
        py: Python<'_>,
        src: &Bound<'_, PyAny>,
        dst: &Bound<'_, PyAny>,
        weights: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let (src, dst) = (id_list(src, "src")?, id_list(dst, "dst")?);
        if src.len() != dst.len() {
            return Err(input_error(
                py,
                format!("src has {} ids but dst has {}", src.len(), dst.len()),
            ));
        }
        let weights = weights.map(weight_list).transpose()?;
        if let Some(w) = &weights {
            if w.len() != src.len() {
                return Err(input_error(
                    py,
                    format!("{} weights for {} edges", w.len(), src.len()),
                ));
            }
            if let Some(i) = w.iter().position(|w| !w.is_finite()) {
                return Err(input_error(
                    py,
                    format!(
                        "weights[{i}] is {}, on edge {} -> {}: a weight is a finite number",
                        w[i],
                        src.show(i),
                        dst.show(i)
                    ),
                ));
            }
        }
        Ok(Self { src, dst, weights })
    }

    /// Whether edge weights were given.
    pub(crate) fn is_weighted(&self) -> bool {
        self.weights.is_some()
    }

    /// The edges as integer id pairs and the weights, if every id is an integer.
    pub(crate) fn into_int_edges(self) -> Result<IntEdges, Self> {
        match (self.src, self.dst) {
            (IdList::Ints(src), IdList::Ints(dst)) => {
                Ok((src.into_iter().zip(dst).collect(), self.weights))
            }
            (src, dst) => Err(Self {
                src,
                dst,
                weights: self.weights,
            }),
        }
    }

    /// The update applying the batch to `graph` (which the caller holds as its writer);
    /// `cache` is the graph's and is kept in step with the update. If the update then
    /// fails to apply, the caller calls [`IdCache::forget`].
    pub(crate) fn update<C: EdgeLeaf>(
        &self,
        graph: &CoreGraph<C>,
        edit: Edit,
        cache: &mut IdCache,
    ) -> Update {
        let update = match (&self.src, &self.dst, edit) {
            (IdList::Ints(src), IdList::Ints(dst), Edit::Insert) => {
                let (edges, new) = plan_ints(graph, cache, src, dst);
                let mut update = match &self.weights {
                    Some(weights) => Update::from_weighted_edges(edges, weights.clone()),
                    None => Update::from_edges(edges),
                };
                update.add_vertices(new);
                update
            }
            (IdList::Ints(src), IdList::Ints(dst), Edit::Delete) => {
                let found = lookup_ints(graph, cache, src, dst);
                let (s, d) = found.split_at(src.len());
                let edges: Vec<(VertexId, VertexId)> = s
                    .iter()
                    .zip(d)
                    .filter_map(|(&u, &v)| Some((u?, v?)))
                    .collect();
                let mut update = Update::new();
                update.delete_edges(&edges);
                update
            }
            (src, dst, edit) => {
                // New ids may be ints among names; the table would not know them.
                cache.forget();
                external_update(
                    graph,
                    &src.to_external(),
                    &dst.to_external(),
                    edit,
                    &self.weights,
                )
            }
        };
        cache.advance(graph.version());
        update
    }
}

/// Pairs `src[i]`, `dst[i]` of a list holding the internal ids of `src` then `dst`.
fn pairs(internal: &[VertexId]) -> Vec<(VertexId, VertexId)> {
    let (src, dst) = internal.split_at(internal.len() / 2);
    src.iter().copied().zip(dst.iter().copied()).collect()
}

/// The internal id of each of `src` then `dst`, `None` where `graph` has no such vertex.
fn lookup_ints<C: EdgeLeaf>(
    graph: &CoreGraph<C>,
    cache: &mut IdCache,
    src: &[u64],
    dst: &[u64],
) -> Vec<Option<VertexId>> {
    let ids = graph.ids();
    let all = || src.iter().chain(dst);
    if let Some((first, len)) = ids.as_range() {
        let dense = |&id: &u64| {
            id.checked_sub(first)
                .filter(|&offset| offset < len as u64)
                .map(|offset| offset as VertexId)
        };
        return all().map(dense).collect();
    }
    if let Some(table) = cache.table(ids, graph.version(), src.len() + dst.len()) {
        return all().map(|&id| table.get(id)).collect();
    }
    if src.len() + dst.len() < PARALLEL_LOOKUPS {
        let mut out = ids.internal_many(src);
        out.extend(ids.internal_many(dst));
        return out;
    }
    let lookup = |part: &[u64]| -> Vec<Option<VertexId>> {
        part.par_chunks(PARALLEL_LOOKUPS)
            .flat_map_iter(|chunk| ids.internal_many(chunk))
            .collect()
    };
    let (mut out, rest) = rayon::join(|| lookup(src), || lookup(dst));
    out.extend(rest);
    out
}

/// The edges `src[i] -> dst[i]` of an insert into `graph` in internal ids, and the ids
/// that are new, in the order they get their internal ids (`num_vertices`,
/// `num_vertices + 1`, ...: first appearance in `src`, then `dst`).
fn plan_ints<C: EdgeLeaf>(
    graph: &CoreGraph<C>,
    cache: &mut IdCache,
    src: &[u64],
    dst: &[u64],
) -> (Vec<(VertexId, VertexId)>, Vec<ExternalId>) {
    let num_vertices = graph.num_vertices();
    let endpoints = src.len() + dst.len();
    let mut new = Vec::new();
    let mut next = num_vertices as VertexId;
    if graph.ids().as_range().is_none() {
        if let Some(table) = cache.table(graph.ids(), graph.version(), endpoints) {
            let max = src.iter().chain(dst).copied().max().unwrap_or(0);
            if table.reserve(max, num_vertices + endpoints) {
                let internal: Vec<VertexId> = src
                    .iter()
                    .chain(dst)
                    .map(|&id| table.intern(id, &mut next, &mut new))
                    .collect();
                return (
                    pairs(&internal),
                    new.into_iter().map(ExternalId::Int).collect(),
                );
            }
            cache.unfit();
        }
    }
    let found = lookup_ints(graph, cache, src, dst);
    let mut fresh: HashMap<u64, VertexId> = HashMap::new();
    let internal: Vec<VertexId> = found
        .into_iter()
        .zip(src.iter().chain(dst))
        .map(|(found, &id)| {
            found.unwrap_or_else(|| {
                *fresh.entry(id).or_insert_with(|| {
                    new.push(id);
                    next += 1;
                    next - 1
                })
            })
        })
        .collect();
    (
        pairs(&internal),
        new.into_iter().map(ExternalId::Int).collect(),
    )
}

/// The update of a batch whose ids may be strings, through the core's planner.
fn external_update<C: EdgeLeaf>(
    graph: &CoreGraph<C>,
    src: &[ExternalId],
    dst: &[ExternalId],
    edit: Edit,
    weights: &Option<Vec<f64>>,
) -> Update {
    if edit == Edit::Delete {
        let ids = graph.ids();
        let edges: Vec<(VertexId, VertexId)> = src
            .iter()
            .zip(dst)
            .filter_map(|(u, v)| Some((ids.internal_id(u)?, ids.internal_id(v)?)))
            .collect();
        let mut update = Update::new();
        update.delete_edges(&edges);
        return update;
    }
    let (internal, new) = plan_external(graph, src, dst);
    let mut update = match weights {
        Some(weights) => Update::from_weighted_edges(pairs(&internal), weights.clone()),
        None => Update::from_edges(pairs(&internal)),
    };
    update.add_vertices(new);
    update
}

/// The internal ids of `src` then `dst` as [`CoreGraph::plan_vertices`] gives them, and
/// the ids that are new, in order.
fn plan_external<C: EdgeLeaf>(
    graph: &CoreGraph<C>,
    src: &[ExternalId],
    dst: &[ExternalId],
) -> (Vec<VertexId>, Vec<ExternalId>) {
    let all: Vec<ExternalId> = src.iter().chain(dst).cloned().collect();
    let internal = graph.plan_vertices(&all);
    let mut next = graph.num_vertices() as VertexId;
    let mut new = Vec::new();
    for (id, &v) in all.iter().zip(&internal) {
        if v == next {
            new.push(id.clone());
            next += 1;
        }
    }
    (internal, new)
}
