//! Python bindings of packgraph: the native module `packgraph._packgraph`, which the pure
//! Python package `packgraph` (in `python/packgraph/`) re-exports.
//!
//! Thin by design: arguments are converted, the core is called with the GIL released, and
//! [`packgraph::Error`] is mapped to the package's exceptions. No algorithm or file parser
//! lives here; algorithms run through the core's registry ([`packgraph::algo::Algorithm`]),
//! files through [`packgraph::io`], durable graphs through [`packgraph::store`]. A panic in the core is caught and raised as
//! `packgraph.Error` rather than reaching Python as a `PanicException`.

mod algo;
mod errors;
mod graph;
mod ids;
mod reads;
mod store;
mod update;
mod version;
mod writes;

use pyo3::prelude::*;

/// The native module.
#[pymodule]
fn _packgraph(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    // A CPU without what the build uses (POPCNT) gets an error at import, not SIGILL later.
    packgraph::cpu::check().map_err(|error| errors::to_py(m.py(), error))?;
    m.add_class::<graph::Graph>()?;
    m.add_class::<graph::Snapshot>()?;
    m.add_class::<store::Store>()?;
    m.add_function(wrap_pyfunction!(graph::read, m)?)?;
    m.add_function(wrap_pyfunction!(store::create, m)?)?;
    m.add_function(wrap_pyfunction!(store::open, m)?)?;
    m.add_function(wrap_pyfunction!(store::verify, m)?)?;
    algo::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
