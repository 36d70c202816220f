//! The exception hierarchy and the mapping of [`packgraph::Error`] onto it.
//!
//! * `Error(Exception)`: the base of everything the package raises itself;
//! * `InputError(Error, ValueError)`: input the caller can fix, with `.path` and `.line`
//!   (`None` when not from a file); also requests a format cannot serve;
//! * `VertexNotFoundError(Error, KeyError)`: a vertex id that is not in the graph;
//! * `CorruptionError(Error)`: stored bytes that do not decode;
//! * `ConvergenceError(Error, RuntimeError)`: PageRank did not meet its tolerance.
//!
//! Operating-system errors become `FileNotFoundError`, `PermissionError` or `OSError` with
//! the file name. The classes have two bases, which `create_exception!` cannot express, so
//! they are made with `type(name, bases, namespace)` when the module loads.

use std::io::ErrorKind;
use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::exceptions::{
    PyException, PyFileNotFoundError, PyKeyError, PyOSError, PyPermissionError, PyRuntimeError,
    PyValueError,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

static ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static INPUT_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static VERTEX_NOT_FOUND: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static CORRUPTION_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static CONVERGENCE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// Creates class `name` with `bases` and documentation `doc`, adds it to `m`.
fn make_class(
    m: &Bound<'_, PyModule>,
    cell: &PyOnceLock<Py<PyType>>,
    name: &str,
    bases: Vec<Bound<'_, PyAny>>,
    doc: &str,
) -> PyResult<()> {
    let py = m.py();
    let namespace = PyDict::new(py);
    namespace.set_item("__doc__", doc)?;
    namespace.set_item("__module__", "packgraph")?;
    let class = py
        .get_type::<PyType>()
        .call1((name, PyTuple::new(py, bases)?, namespace))?
        .cast_into::<PyType>()?;
    m.add(name, &class)?;
    let _ = cell.set(py, class.unbind());
    Ok(())
}

/// Adds the exception classes to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    make_class(
        m,
        &ERROR,
        "Error",
        vec![py.get_type::<PyException>().into_any()],
        "Base class of the errors packgraph raises.",
    )?;
    let base = class(py, &ERROR).into_any();
    make_class(
        m,
        &INPUT_ERROR,
        "InputError",
        vec![base.clone(), py.get_type::<PyValueError>().into_any()],
        "Input the caller can fix: a malformed file line, a bad value or argument.\n\n\
         Attributes: path (str or None): the file; line (int or None): its line, from 1.",
    )?;
    make_class(
        m,
        &VERTEX_NOT_FOUND,
        "VertexNotFoundError",
        vec![base.clone(), py.get_type::<PyKeyError>().into_any()],
        "A vertex id that is not in the graph.",
    )?;
    make_class(
        m,
        &CORRUPTION_ERROR,
        "CorruptionError",
        vec![base.clone()],
        "Stored bytes that do not decode (a damaged snapshot file).",
    )?;
    make_class(
        m,
        &CONVERGENCE_ERROR,
        "ConvergenceError",
        vec![base, py.get_type::<PyRuntimeError>().into_any()],
        "An iterative algorithm did not reach its tolerance within its iteration limit.",
    )?;
    Ok(())
}

fn class<'py>(py: Python<'py>, cell: &PyOnceLock<Py<PyType>>) -> Bound<'py, PyType> {
    match cell.get(py) {
        Some(class) => class.bind(py).clone(),
        // Only before the module finished loading, which no caller can observe.
        None => py.get_type::<PyException>(),
    }
}

/// An exception of class `cell` with `message`, and `path`/`line` attributes when given.
fn raise(
    py: Python<'_>,
    cell: &PyOnceLock<Py<PyType>>,
    message: String,
    location: Option<(Option<String>, Option<u64>)>,
) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let value = class(py, cell).call1((message.clone(),))?;
        if let Some((path, line)) = &location {
            value.setattr("path", path.clone())?;
            value.setattr("line", *line)?;
        }
        Ok(PyErr::from_value(value))
    };
    build().unwrap_or_else(|e| e)
}

/// An `InputError` for a bad argument (no file).
pub(crate) fn input_error(py: Python<'_>, message: impl Into<String>) -> PyErr {
    raise(py, &INPUT_ERROR, message.into(), Some((None, None)))
}

/// A `ConvergenceError`.
pub(crate) fn convergence_error(py: Python<'_>, message: impl Into<String>) -> PyErr {
    raise(py, &CONVERGENCE_ERROR, message.into(), None)
}

/// The exception for a core error.
pub(crate) fn to_py(py: Python<'_>, error: packgraph::Error) -> PyErr {
    use packgraph::Error as E;
    let message = error.to_string();
    match error {
        E::InvalidInput { path, line, .. } => raise(
            py,
            &INPUT_ERROR,
            message,
            Some((path.map(|p| p.display().to_string()), line)),
        ),
        E::Unsupported { path, .. } => raise(
            py,
            &INPUT_ERROR,
            message,
            Some((path.map(|p| p.display().to_string()), None)),
        ),
        E::VertexNotFound { .. } => raise(py, &VERTEX_NOT_FOUND, message, None),
        E::Corrupt { .. } => raise(py, &CORRUPTION_ERROR, message, None),
        E::Io { path, source } => {
            let errno = source.raw_os_error().unwrap_or(0);
            let args = (errno, source.to_string(), path.display().to_string());
            match source.kind() {
                ErrorKind::NotFound => PyFileNotFoundError::new_err(args),
                ErrorKind::PermissionDenied => PyPermissionError::new_err(args),
                _ => PyOSError::new_err(args),
            }
        }
        _ => raise(py, &ERROR, message, None),
    }
}

/// Runs `work` with the GIL released; a core error becomes its exception and a panic
/// `packgraph.Error`, so neither reaches Python as a `PanicException`.
pub(crate) fn detached<T: Send>(
    py: Python<'_>,
    work: impl FnOnce() -> packgraph::Result<T> + Send,
) -> PyResult<T> {
    match py.detach(|| catch_unwind(AssertUnwindSafe(work))) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(to_py(py, error)),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(raise(
                py,
                &ERROR,
                format!("internal error in packgraph (please report): {what}"),
                None,
            ))
        }
    }
}
