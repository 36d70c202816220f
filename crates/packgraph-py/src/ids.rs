//! Vertex ids between Python and the core: Python ints (any `u64`) and strings on one
//! side, [`ExternalId`] and dense internal ids on the other; id arrays back to NumPy.
//!
//! Arrays of ids come back as `int64` when every id fits (the common case), `uint64` when
//! one does not, and `object` (ints and strings) when the graph names vertices by strings.
//!
//! [`IdCache`] keeps an [`IdTable`] (external integer id → internal id as a plain array)
//! between batches of edges, for graphs whose integer ids are dense enough.

use numpy::{PyArray1, PyReadonlyArray1};
use packgraph::graph::{ExternalId, IdMap, VertexId};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyList, PyString};

use crate::errors::{input_error, to_py};

/// Ids given by the caller: all integers (the fast path), or a mix with names.
pub(crate) enum IdList {
    Ints(Vec<u64>),
    Mixed(Vec<ExternalId>),
}

impl IdList {
    pub(crate) fn len(&self) -> usize {
        match self {
            Self::Ints(ids) => ids.len(),
            Self::Mixed(ids) => ids.len(),
        }
    }

    /// Id `i` as the caller wrote it (a str quoted).
    pub(crate) fn show(&self, i: usize) -> String {
        match self {
            Self::Ints(ids) => ids[i].to_string(),
            Self::Mixed(ids) => ids[i].to_string(),
        }
    }

    pub(crate) fn to_external(&self) -> Vec<ExternalId> {
        match self {
            Self::Ints(ids) => ids.iter().copied().map(ExternalId::Int).collect(),
            Self::Mixed(ids) => ids.clone(),
        }
    }

    pub(crate) fn into_external(self) -> Vec<ExternalId> {
        match self {
            Self::Ints(ids) => ids.into_iter().map(ExternalId::Int).collect(),
            Self::Mixed(ids) => ids,
        }
    }
}

/// Why an int cannot be a vertex id.
pub(crate) enum BadInt {
    Negative,
    TooLarge,
}

/// One id as the caller gave it: `Err(BadInt)` for an int that no vertex can have
/// (negative, or past `2**64 - 1`); `TypeError` for anything but an int or a str.
pub(crate) fn parse_id(obj: &Bound<'_, PyAny>) -> PyResult<Result<ExternalId, BadInt>> {
    if let Ok(name) = obj.cast::<PyString>() {
        return Ok(Ok(ExternalId::Name(name.to_cow()?.as_ref().into())));
    }
    if obj.is_instance_of::<PyInt>() || obj.hasattr("__index__")? {
        if let Ok(id) = obj.extract::<u64>() {
            return Ok(Ok(ExternalId::Int(id)));
        }
        let index = obj.py().import("operator")?.call_method1("index", (obj,))?;
        return Ok(Err(if index.lt(0)? {
            BadInt::Negative
        } else {
            BadInt::TooLarge
        }));
    }
    Err(PyTypeError::new_err(format!(
        "a vertex id is an int or a str, not {}",
        obj.get_type().name()?
    )))
}

/// One id as the caller gave it: `Ok(None)` for an int that no vertex can have.
pub(crate) fn external_id(obj: &Bound<'_, PyAny>) -> PyResult<Option<ExternalId>> {
    Ok(parse_id(obj)?.ok())
}

/// The `InputError` for item `i` of argument `what`, an int no vertex can have.
fn bad_int(obj: &Bound<'_, PyAny>, what: &str, i: usize, why: BadInt) -> PyErr {
    let why = match why {
        BadInt::Negative => "is negative",
        BadInt::TooLarge => "is too large: int ids go from 0 to 2**64 - 1",
    };
    input_error(obj.py(), format!("{what}[{i}]: vertex id {obj} {why}"))
}

/// `InputError` unless `obj` is one-dimensional (when it has a shape at all: NumPy
/// arrays, pandas Series); `what` names the argument.
pub(crate) fn require_1d(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<()> {
    if obj.is_instance_of::<PyString>() {
        return Err(input_error(
            obj.py(),
            format!("{what} is a str; give a list or array of ids"),
        ));
    }
    if let Ok(ndim) = obj.getattr("ndim") {
        if ndim.extract::<usize>().ok() != Some(1) {
            let shape = obj
                .getattr("shape")
                .and_then(|s| s.str().map(|s| s.to_string()))
                .unwrap_or_else(|_| "?".into());
            return Err(input_error(
                obj.py(),
                format!("{what} must be one-dimensional; it has shape {shape}"),
            ));
        }
    }
    Ok(())
}

/// The internal id of vertex `obj`, or `None` if it is not in the graph.
pub(crate) fn find(ids: &IdMap, obj: &Bound<'_, PyAny>) -> PyResult<Option<VertexId>> {
    Ok(external_id(obj)?.and_then(|id| ids.internal_id(&id)))
}

/// The internal id of vertex `obj`; `VertexNotFoundError` if it is not in the graph.
pub(crate) fn lookup(ids: &IdMap, obj: &Bound<'_, PyAny>) -> PyResult<VertexId> {
    find(ids, obj)?.ok_or_else(|| {
        let shown = obj.repr().map_or_else(|_| "?".into(), |r| r.to_string());
        to_py(
            obj.py(),
            packgraph::Error::vertex_not_found(shown, ids.len()),
        )
    })
}

/// A list of ids from a NumPy array or any iterable of ints and strings; `what` names the
/// argument in errors.
pub(crate) fn id_list(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<IdList> {
    let py = obj.py();
    require_1d(obj, what)?;
    if let Ok(array) = obj.extract::<PyReadonlyArray1<'_, u64>>() {
        return Ok(IdList::Ints(array.as_array().to_vec()));
    }
    if let Ok(array) = obj.extract::<PyReadonlyArray1<'_, i64>>() {
        let array = array.as_array();
        if let Some(i) = array.iter().position(|&id| id < 0) {
            return Err(input_error(
                py,
                format!("{what}[{i}]: vertex id {} is negative", array[i]),
            ));
        }
        return Ok(IdList::Ints(array.iter().map(|&id| id as u64).collect()));
    }
    if obj.hasattr("dtype")? {
        let kind: String = obj.getattr("dtype")?.getattr("kind")?.extract()?;
        if kind == "i" || kind == "u" || kind == "b" {
            let numpy = py.import("numpy")?;
            let dtype = if kind == "u" { "uint64" } else { "int64" };
            let converted = numpy.call_method1("ascontiguousarray", (obj, dtype))?;
            return id_list(&converted, what);
        }
    }
    let mut ints = Vec::new();
    let mut mixed: Option<Vec<ExternalId>> = None;
    for (i, item) in obj.try_iter()?.enumerate() {
        let item = item?;
        let id = match parse_id(&item) {
            Ok(Ok(id)) => id,
            Ok(Err(why)) => return Err(bad_int(&item, what, i, why)),
            Err(_) => {
                return Err(PyTypeError::new_err(format!(
                    "{what}[{i}]: a vertex id is an int or a str, not {}",
                    item.get_type().name()?
                )))
            }
        };
        match (&mut mixed, id) {
            (None, ExternalId::Int(id)) => ints.push(id),
            (None, name) => {
                let mut all: Vec<ExternalId> = ints.drain(..).map(ExternalId::Int).collect();
                all.push(name);
                mixed = Some(all);
            }
            (Some(all), id) => all.push(id),
        }
    }
    Ok(match mixed {
        Some(all) => IdList::Mixed(all),
        None => IdList::Ints(ints),
    })
}

/// Edge weights from a NumPy array or any iterable of numbers.
pub(crate) fn weight_list(obj: &Bound<'_, PyAny>) -> PyResult<Vec<f64>> {
    require_1d(obj, "weights")?;
    if let Ok(array) = obj.extract::<PyReadonlyArray1<'_, f64>>() {
        return Ok(array.as_array().to_vec());
    }
    let numpy = obj.py().import("numpy")?;
    let converted = numpy.call_method1("asarray", (obj, "float64"))?;
    require_1d(&converted, "weights")?;
    Ok(converted
        .extract::<PyReadonlyArray1<'_, f64>>()?
        .as_array()
        .to_vec())
}

/// The external ids of `vertices` as a NumPy array (see the module documentation).
pub(crate) fn id_array<'py>(
    py: Python<'py>,
    ids: &IdMap,
    vertices: &[VertexId],
) -> PyResult<Bound<'py, PyAny>> {
    if ids.has_names() {
        let items = PyList::empty(py);
        for &v in vertices {
            match ids.external_id(v) {
                Some(ExternalId::Int(id)) => items.append(id)?,
                Some(ExternalId::Name(name)) => items.append(&*name)?,
                None => items.append(py.None())?,
            }
        }
        let numpy = py.import("numpy")?;
        let array = numpy.call_method1("empty", (vertices.len(), "object"))?;
        array.set_item(pyo3::types::PySlice::full(py), items)?;
        return Ok(array);
    }
    let external: Vec<u64> = match ids.int_ids() {
        Some(ints) => vertices.iter().map(|&v| ints.get(v)).collect(),
        None => Vec::new(),
    };
    Ok(int_array(py, external))
}

/// `int64` when every value fits, else `uint64`.
pub(crate) fn int_array(py: Python<'_>, values: Vec<u64>) -> Bound<'_, PyAny> {
    if values.iter().all(|&x| x <= i64::MAX as u64) {
        let signed: Vec<i64> = values.into_iter().map(|x| x as i64).collect();
        PyArray1::from_vec(py, signed).into_any()
    } else {
        PyArray1::from_vec(py, values).into_any()
    }
}

/// No vertex has this external id, in an [`IdTable`].
const ABSENT: VertexId = VertexId::MAX;

/// An [`IdTable`] may be at most this many times longer than the vertex count (plus
/// [`TABLE_SLACK`]); ids spread wider are looked up in the graph's own map.
const TABLE_SPREAD: usize = 4;
/// Table entries allowed beyond [`TABLE_SPREAD`] times the vertex count (256 KiB).
const TABLE_SLACK: usize = 1 << 16;

/// A table is built for a batch with at least `vertices / TABLE_BUILD_RATIO` endpoints:
/// building reads every id once where a lookup in the graph's map costs several times
/// more (measured; see CHANGELOG), and the table serves later batches too.
const TABLE_BUILD_RATIO: usize = 8;

/// External integer id → internal id, as a plain array indexed by the external id, for
/// graphs whose integer ids are dense enough (see [`TABLE_SPREAD`]).
pub(crate) struct IdTable {
    internal: Vec<VertexId>,
}

impl IdTable {
    /// The table of `ids`; `None` if a vertex is named by a string or the ids are too
    /// sparse.
    pub(crate) fn build(ids: &IdMap) -> Option<Self> {
        let ints = ids.int_ids()?;
        let n = ids.len() as VertexId;
        let max = (0..n).map(|v| ints.get(v)).max().unwrap_or(0);
        if max >= (TABLE_SPREAD * ids.len() + TABLE_SLACK) as u64 {
            return None;
        }
        let mut internal = vec![ABSENT; max as usize + 1];
        for v in 0..n {
            internal[ints.get(v) as usize] = v;
        }
        Some(Self { internal })
    }

    /// The internal id of `id`, if it is a vertex.
    #[inline]
    pub(crate) fn get(&self, id: u64) -> Option<VertexId> {
        let v = *self.internal.get(usize::try_from(id).ok()?)?;
        (v != ABSENT).then_some(v)
    }

    /// Makes room for ids up to `max` in a graph that will have up to `num_vertices`
    /// vertices; false (and unchanged) if the table would be too sparse.
    pub(crate) fn reserve(&mut self, max: u64, num_vertices: usize) -> bool {
        let Ok(max) = usize::try_from(max) else {
            return false;
        };
        if max < self.internal.len() {
            return true;
        }
        if max >= TABLE_SPREAD * num_vertices + TABLE_SLACK {
            return false;
        }
        self.internal.resize(max + 1, ABSENT);
        true
    }

    /// The internal id of `id`, giving it `*next` (then advanced) if it is new; `id` is
    /// below the reserved bound.
    #[inline]
    pub(crate) fn intern(&mut self, id: u64, next: &mut VertexId, new: &mut Vec<u64>) -> VertexId {
        let slot = &mut self.internal[id as usize];
        if *slot == ABSENT {
            *slot = *next;
            *next += 1;
            new.push(id);
        }
        *slot
    }
}

/// What a graph-like object remembers about its ids between batches: an [`IdTable`] and
/// the graph version it describes. Every batch the binding writes keeps it current; a
/// write that does not (`add_vertices`) leaves it behind its graph's version, and the next
/// large batch builds it again.
#[derive(Default)]
pub(crate) struct IdCache {
    /// The version `table` describes; with `table == None`, the version at which the ids
    /// were found unfit for a table.
    version: Option<u64>,
    table: Option<IdTable>,
}

impl IdCache {
    /// The table for a graph at `version` with ids `ids`, built if `endpoints` justify it;
    /// `None` when there is none (ids unfit, or a small batch).
    pub(crate) fn table(
        &mut self,
        ids: &IdMap,
        version: u64,
        endpoints: usize,
    ) -> Option<&mut IdTable> {
        if self.version != Some(version) {
            self.table = None;
            self.version = None;
            if endpoints * TABLE_BUILD_RATIO >= ids.len() {
                self.table = IdTable::build(ids);
                self.version = Some(version);
            }
        }
        self.table.as_mut()
    }

    /// Drops the table: the ids may have changed in ways it does not know.
    pub(crate) fn forget(&mut self) {
        *self = Self::default();
    }

    /// Drops the table but remembers that the ids at the current version do not fit one.
    pub(crate) fn unfit(&mut self) {
        self.table = None;
    }

    /// The graph went from `version` to `version + 1` by a batch the table took in.
    pub(crate) fn advance(&mut self, version: u64) {
        if self.version == Some(version) {
            self.version = Some(version + 1);
        }
    }
}

/// Argument `name`, an int from 0 to `max`; `InputError` naming it otherwise
/// (`TypeError` for something that is not an int).
pub(crate) fn count_arg(obj: &Bound<'_, PyAny>, name: &str, max: u64) -> PyResult<u64> {
    if let Ok(value) = obj.extract::<u64>() {
        if value <= max {
            return Ok(value);
        }
    }
    if !(obj.is_instance_of::<PyInt>() || obj.hasattr("__index__")?) {
        return Err(PyTypeError::new_err(format!(
            "{name} must be an int, not {}",
            obj.get_type().name()?
        )));
    }
    let py = obj.py();
    let value = py.import("operator")?.call_method1("index", (obj,))?;
    Err(input_error(
        py,
        if value.lt(0)? {
            format!("{name} must be >= 0, not {value}")
        } else {
            format!("{name} must be at most {max}, not {value}")
        },
    ))
}
