//! The algorithms, run through the core's registry ([`Algorithm`]) on a version with the
//! GIL released; results as NumPy arrays in internal vertex order (aligned with
//! `vertices()`).
//!
//! NetworkX's conventions are adapted in `python/packgraph/__init__.py` on top of these
//! outputs (betweenness scaling, boolean MIS, hop limits); PageRank's stopping rule is the
//! core's [`pagerank_until`].

use numpy::PyArray1;
use packgraph::algo::{pagerank_until_interruptible, Algorithm, AlgorithmKind, Values, UNREACHED};
use pyo3::prelude::*;

use crate::errors::{convergence_error, detached, input_error, interruptible};
use crate::ids::{count_arg, id_array, id_list, lookup};
use crate::store::version_of;
use crate::version::{on_version, Version};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(pagerank, m)?)?;
    m.add_function(wrap_pyfunction!(betweenness_sum, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    Ok(())
}

/// `(name, summary)` of every algorithm of the registry, then `(alias, summary)` of each
/// other name it answers to (`triangles` for `tc`, …).
#[pyfunction]
fn algorithms() -> Vec<(&'static str, &'static str)> {
    let names = AlgorithmKind::ALL
        .iter()
        .map(|kind| (kind.name(), kind.summary()));
    let aliases = AlgorithmKind::ALL
        .iter()
        .flat_map(|kind| kind.aliases().iter().map(|alias| (*alias, kind.summary())));
    names.chain(aliases).collect()
}

/// The per-vertex values as a NumPy array: hops as `int64` with 9223372036854775807
/// (`i64::MAX`, the Graphalytics convention the command line writes too) for unreached,
/// reals as `float64`, labels as the label vertices' external ids, counts as `int64`.
fn values_array<'py>(
    py: Python<'py>,
    version: &Version,
    values: Values,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(match values {
        Values::Hops(hops) => {
            let hops: Vec<i64> = hops
                .into_iter()
                .map(|h| {
                    if h == UNREACHED {
                        i64::MAX
                    } else {
                        i64::from(h)
                    }
                })
                .collect();
            PyArray1::from_vec(py, hops).into_any()
        }
        Values::Reals(reals) => PyArray1::from_vec(py, reals).into_any(),
        Values::Labels(labels) => on_version!(version, g => id_array(py, g.ids(), &labels))?,
        Values::Counts(counts) => {
            let counts: Vec<i64> = counts.into_iter().map(|c| c as i64).collect();
            PyArray1::from_vec(py, counts).into_any()
        }
    })
}

/// Runs registry algorithm `name` on `graph` (a `Graph` or `Snapshot`); Ctrl-C
/// interrupts it (see [`interruptible`]).
#[pyfunction]
#[pyo3(signature = (graph, name, source = None, iterations = None, damping = 0.85, hops = None, seed = None))]
#[allow(
    clippy::too_many_arguments,
    reason = "the registry's parameters, each a keyword"
)]
fn run<'py>(
    py: Python<'py>,
    graph: &Bound<'py, PyAny>,
    name: &str,
    source: Option<&Bound<'py, PyAny>>,
    iterations: Option<&Bound<'py, PyAny>>,
    damping: f64,
    hops: Option<&Bound<'py, PyAny>>,
    seed: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let version = version_of(graph)?;
    let mut algorithm = Algorithm::from_name(name).map_err(|e| crate::errors::to_py(py, e))?;
    match source {
        Some(source) => algorithm.source = on_version!(&version, g => lookup(g.ids(), source))?,
        None if algorithm.kind.needs_source() => {
            return Err(input_error(
                py,
                format!("{name} needs a source vertex: source is None"),
            ))
        }
        None => {}
    }
    if let Some(iterations) = iterations {
        algorithm.iterations =
            Some(count_arg(iterations, "iterations", usize::MAX as u64)? as usize);
    }
    algorithm.damping = damping;
    if let Some(hops) = hops {
        algorithm.hops = count_arg(hops, "hops", u64::from(u32::MAX))? as u32;
    }
    if let Some(seed) = seed {
        algorithm.seed = count_arg(seed, "seed", u64::MAX)?;
    }
    let kernel_version = version.clone();
    let output = interruptible(
        py,
        move |stop| on_version!(&kernel_version, g => algorithm.run_interruptible(&**g, stop)),
    )?;
    values_array(py, &version, output.values)
}

/// PageRank until the L1 change of an iteration is below `n · tol` (NetworkX's rule); with
/// `tol == 0`, exactly `max_iter` iterations (Graphalytics). `ConvergenceError` if `tol > 0`
/// is not met within `max_iter` iterations. Ctrl-C interrupts it between iterations.
#[pyfunction]
#[pyo3(signature = (graph, alpha = 0.85, max_iter = None, tol = 1e-6))]
fn pagerank<'py>(
    py: Python<'py>,
    graph: &Bound<'py, PyAny>,
    alpha: f64,
    max_iter: Option<&Bound<'py, PyAny>>,
    tol: f64,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let version = version_of(graph)?;
    let max_iter = match max_iter {
        Some(obj) => count_arg(obj, "max_iter", usize::MAX as u64)? as usize,
        None => 100,
    };
    let mut algorithm = Algorithm::new(AlgorithmKind::Pagerank);
    algorithm.damping = alpha;
    detached(py, || {
        algorithm.validate()?;
        if !(tol >= 0.0 && tol.is_finite()) {
            return Err(packgraph::Error::invalid(
                tol,
                "tol must be a finite number >= 0",
            ));
        }
        Ok(())
    })?;
    let run = interruptible(py, move |stop| {
        Ok(
            on_version!(&version, g => pagerank_until_interruptible(&**g, alpha, max_iter, tol, stop)),
        )
    })?;
    if tol > 0.0 && !run.converged {
        return Err(convergence_error(
            py,
            format!("pagerank did not converge to tol={tol} within max_iter={max_iter} iterations"),
        ));
    }
    Ok(PyArray1::from_vec(py, run.ranks))
}

/// Betweenness sums and whether each vertex is a source.
type SumsAndSources<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<bool>>);

/// The sum over `sources` (all vertices when `None`) of each source's betweenness
/// dependencies (the registry's `bc`), unscaled, and whether each vertex is one of the
/// sources, both of one version. Checks for KeyboardInterrupt and calls
/// `progress(done, total)` after each source.
#[pyfunction]
#[pyo3(signature = (graph, sources = None, progress = None))]
fn betweenness_sum<'py>(
    py: Python<'py>,
    graph: &Bound<'py, PyAny>,
    sources: Option<&Bound<'py, PyAny>>,
    progress: Option<&Bound<'py, PyAny>>,
) -> PyResult<SumsAndSources<'py>> {
    let version = version_of(graph)?;
    let n = on_version!(&version, g => g.ids().len());
    let sources: Vec<u32> = match sources {
        None => (0..n as u32).collect(),
        Some(list) => {
            let items = id_list(list, "sources")?.into_external();
            let mut internal = Vec::with_capacity(items.len());
            for id in items {
                let obj = match &id {
                    packgraph::graph::ExternalId::Int(i) => i.into_pyobject(py)?.into_any(),
                    packgraph::graph::ExternalId::Name(s) => {
                        pyo3::types::PyString::new(py, s).into_any()
                    }
                };
                internal.push(on_version!(&version, g => lookup(g.ids(), &obj))?);
            }
            internal.sort_unstable();
            internal.dedup();
            internal
        }
    };
    let mut is_source = vec![false; n];
    for &s in &sources {
        is_source[s as usize] = true;
    }
    let mut total = vec![0.0; n];
    let mut algorithm = Algorithm::new(AlgorithmKind::Bc);
    for (done, &source) in sources.iter().enumerate() {
        algorithm.source = source;
        let output = detached(py, || on_version!(&version, g => algorithm.run(&**g)))?;
        if let Values::Reals(dependencies) = output.values {
            total
                .iter_mut()
                .zip(dependencies)
                .for_each(|(t, d)| *t += d);
        }
        py.check_signals()?;
        if let Some(callback) = progress {
            callback.call1((done + 1, sources.len()))?;
        }
    }
    Ok((
        PyArray1::from_vec(py, total),
        PyArray1::from_vec(py, is_source),
    ))
}
