//! The exception hierarchy and the mapping of [`packgraph::Error`] onto it.
//!
//! * `Error(Exception)`: the base of everything the package raises itself;
//! * `InputError(Error, ValueError)`: input the caller can fix, with `.path` and `.line`
//!   (`None` when not from a file); also requests a format cannot serve;
//! * `VertexNotFoundError(Error, KeyError)`: a vertex id that is not in the graph;
//! * `CorruptionError(Error)`: stored bytes that do not decode, with `.path` and `.offset`
//!   (`None` when not known);
//! * `ConvergenceError(Error, RuntimeError)`: PageRank did not meet its tolerance;
//! * `LockedError(Error, OSError)`: a data directory another writer has open, with
//!   `.filename` the directory.
//!
//! Other operating-system errors become `FileNotFoundError`, `PermissionError` or `OSError`
//! with the file name. The classes have two bases, which `create_exception!` cannot express, so
//! they are made with `type(name, bases, namespace)` when the module loads.

use std::any::Any;
use std::io::ErrorKind;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use pyo3::exceptions::{
    PyException, PyFileNotFoundError, PyKeyError, PyOSError, PyPermissionError, PyRuntimeError,
    PyValueError,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};
use pyo3::IntoPyObjectExt;

static ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static INPUT_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static VERTEX_NOT_FOUND: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static CORRUPTION_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static CONVERGENCE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static LOCKED_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

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
        "Stored bytes that do not decode: a damaged snapshot file or data directory.\n\n\
         Attributes: path (str or None): the damaged file; offset (int or None): the byte \
         where the damage was found.",
    )?;
    make_class(
        m,
        &CONVERGENCE_ERROR,
        "ConvergenceError",
        vec![base.clone(), py.get_type::<PyRuntimeError>().into_any()],
        "An iterative algorithm did not reach its tolerance within its iteration limit.",
    )?;
    make_class(
        m,
        &LOCKED_ERROR,
        "LockedError",
        vec![base, py.get_type::<PyOSError>().into_any()],
        "A data directory that another writer (a Store in this or another process) has \
         open.\n\nAttributes: filename (str): the directory.",
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

/// An exception of class `cell` with `message` and attributes `attributes`.
fn raise(
    py: Python<'_>,
    cell: &PyOnceLock<Py<PyType>>,
    message: String,
    attributes: &[(&str, Option<Py<PyAny>>)],
) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let value = class(py, cell).call1((message.clone(),))?;
        for (name, attribute) in attributes {
            value.setattr(*name, attribute)?;
        }
        Ok(PyErr::from_value(value))
    };
    build().unwrap_or_else(|e| e)
}

/// The `path` and `line` attributes of an `InputError`.
fn location(
    py: Python<'_>,
    path: Option<&Path>,
    line: Option<u64>,
) -> [(&'static str, Option<Py<PyAny>>); 2] {
    [
        (
            "path",
            path.map(|p| p.display().to_string().into_py_any(py))
                .and_then(Result::ok),
        ),
        ("line", line.map(|l| l.into_py_any(py)).and_then(Result::ok)),
    ]
}

/// An `InputError` for a bad argument (no file).
pub(crate) fn input_error(py: Python<'_>, message: impl Into<String>) -> PyErr {
    raise(py, &INPUT_ERROR, message.into(), &location(py, None, None))
}

/// A `ConvergenceError`.
pub(crate) fn convergence_error(py: Python<'_>, message: impl Into<String>) -> PyErr {
    raise(py, &CONVERGENCE_ERROR, message.into(), &[])
}

/// A `LockedError` for data directory `dir`: an `OSError` with errno `EWOULDBLOCK` and
/// the directory as its file name.
pub(crate) fn locked_error(py: Python<'_>, dir: &Path) -> PyErr {
    let reason = "the data directory is open for writing elsewhere (a packgraph.Store in \
                  this or another process holds its LOCK); close that store first, or read \
                  the latest durable state without the lock with packgraph.read()";
    let build = || -> PyResult<PyErr> {
        let errno: i64 = py.import("errno")?.getattr("EWOULDBLOCK")?.extract()?;
        let args = (errno, reason, dir.display().to_string());
        Ok(PyErr::from_value(class(py, &LOCKED_ERROR).call1(args)?))
    };
    build().unwrap_or_else(|e| e)
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
            &location(py, path.as_deref(), line),
        ),
        E::Unsupported { path, .. } => raise(
            py,
            &INPUT_ERROR,
            message,
            &location(py, path.as_deref(), None),
        ),
        E::VertexNotFound { .. } => raise(py, &VERTEX_NOT_FOUND, message, &[]),
        E::Corrupt { path, offset, .. } => {
            let [path, _] = location(py, path.as_deref(), None);
            let offset = ("offset", offset.and_then(|o| o.into_py_any(py).ok()));
            raise(py, &CORRUPTION_ERROR, message, &[path, offset])
        }
        E::Io { path, source } if source.kind() == ErrorKind::WouldBlock => {
            // The store's writer lock: the error names the lock file inside the directory.
            locked_error(py, path.parent().unwrap_or(&path))
        }
        E::Io { path, source } => {
            let errno = source.raw_os_error().unwrap_or(0);
            let args = (errno, source.to_string(), path.display().to_string());
            match source.kind() {
                ErrorKind::NotFound => PyFileNotFoundError::new_err(args),
                ErrorKind::PermissionDenied => PyPermissionError::new_err(args),
                _ => PyOSError::new_err(args),
            }
        }
        _ => raise(py, &ERROR, message, &[]),
    }
}

/// Runs `work` with the GIL released; a core error becomes its exception and a panic
/// `packgraph.Error`, so neither reaches Python as a `PanicException`.
pub(crate) fn detached<T: Send>(
    py: Python<'_>,
    work: impl FnOnce() -> packgraph::Result<T> + Send,
) -> PyResult<T> {
    outcome(py, py.detach(|| catch_unwind(AssertUnwindSafe(work))))
}

/// How often [`interruptible`] looks for a signal while a kernel runs.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// Runs `work` on a thread of its own while the calling thread, GIL released, looks for
/// signals every [`SIGNAL_POLL`]: on Ctrl-C (any signal whose Python handler raises),
/// sets the flag `work` was given and raises at once. Every kernel of the registry checks
/// the flag between its rounds and ends soon after; its result is dropped. Errors and
/// panics as [`detached`].
pub(crate) fn interruptible<T: Send + 'static>(
    py: Python<'_>,
    work: impl FnOnce(&AtomicBool) -> packgraph::Result<T> + Send + 'static,
) -> PyResult<T> {
    let stop = Arc::new(AtomicBool::new(false));
    let (done, mut result) = mpsc::channel();
    let flag = Arc::clone(&stop);
    std::thread::Builder::new()
        .name("packgraph-kernel".into())
        .spawn(move || {
            // The receiver is gone when the caller was interrupted: nothing to report.
            let _ = done.send(catch_unwind(AssertUnwindSafe(|| work(&flag))));
        })
        .map_err(|e| PyOSError::new_err(format!("cannot start a thread for the kernel: {e}")))?;
    loop {
        // The receiver travels into the GIL-free closure and back (it is not `Sync`).
        let (received, receiver) = py.detach(move || (result.recv_timeout(SIGNAL_POLL), result));
        result = receiver;
        match received {
            Ok(finished) => return outcome(py, finished),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Err(signal) = py.check_signals() {
                    stop.store(true, Ordering::Relaxed);
                    return Err(signal);
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(raise(
                    py,
                    &ERROR,
                    "internal error in packgraph (please report): the kernel thread ended \
                     without a result"
                        .into(),
                    &[],
                ))
            }
        }
    }
}

/// The value of a run that returned `Ok(value)`, the core error's exception, or
/// `packgraph.Error` for a panic.
fn outcome<T>(
    py: Python<'_>,
    run: Result<packgraph::Result<T>, Box<dyn Any + Send>>,
) -> PyResult<T> {
    match run {
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
                &[],
            ))
        }
    }
}
