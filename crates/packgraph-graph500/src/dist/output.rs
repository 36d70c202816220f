//! Results in the file's ids: every process sends `(external id, value)` of its vertices to
//! rank 0, which writes them as `packgraph run` does (the core's Graphalytics writer, in
//! increasing id order; for a snapshot or data directory, the keys are its vertex numbers
//! and rank 0 writes them by the file's ids, names included). Rank 0 holds 16 bytes per
//! vertex for this.

use std::io::Write;
use std::path::Path;

use packgraph::algo::{AlgoOutput, Values};
use packgraph::graph::IdMap;

use super::{agree, alltoall_u64, DistError, Part};
use crate::comm::Comm;

/// The values of the owned vertices, by local index.
#[derive(Debug, Clone, PartialEq)]
pub enum Local {
    /// Hops (`packgraph::algo::UNREACHED` where none).
    Hops(Vec<u32>),
    /// Reals (`f64::INFINITY` where unreached).
    Reals(Vec<f64>),
    /// Labels that are external ids of vertices.
    Labels(Vec<u64>),
}

impl Local {
    fn word(&self, i: usize) -> u64 {
        match self {
            Self::Hops(h) => u64::from(h[i]),
            Self::Reals(r) => r[i].to_bits(),
            Self::Labels(l) => l[i],
        }
    }
}

/// The whole result on rank 0 (`None` elsewhere): ids increasing, with the core's output
/// type. A collective.
///
/// # Errors
/// [`DistError::Failed`] if a label names no vertex (it cannot, unless a process is broken).
pub fn gather(
    comm: &dyn Comm,
    part: &Part,
    values: &Local,
) -> Result<Option<(IdMap, AlgoOutput)>, DistError> {
    let mut parts = vec![Vec::new(); comm.size()];
    parts[0] = (0..part.owned())
        .flat_map(|i| [part.ids[i], values.word(i)])
        .collect();
    let got = alltoall_u64(comm, parts);
    if comm.rank() != 0 {
        return agree(comm, Ok(None));
    }
    let mut pairs: Vec<(u64, u64)> = got
        .iter()
        .flat_map(|p| p.chunks_exact(2).map(|c| (c[0], c[1])))
        .collect();
    pairs.sort_unstable_by_key(|p| p.0);
    let ids: Vec<u64> = pairs.iter().map(|p| p.0).collect();
    let words = pairs.iter().map(|p| p.1);
    let values = match values {
        Local::Hops(_) => Ok(Values::Hops(words.map(|w| w as u32).collect())),
        Local::Reals(_) => Ok(Values::Reals(words.map(f64::from_bits).collect())),
        Local::Labels(_) => words
            .map(|l| ids.binary_search(&l).map(|k| k as u32))
            .collect::<Result<Vec<u32>, usize>>()
            .map(Values::Labels)
            .map_err(|_| DistError::Failed("a component label names no vertex".into())),
    };
    let map = match &part.file_ids {
        // Keys of a numbered input are the vertices of the file's ids, all of them.
        Some(file) => (ids.len() == file.ids().len()
            && ids.iter().enumerate().all(|(k, &x)| k as u64 == x))
        .then(|| file.ids().clone())
        .ok_or_else(|| {
            DistError::Failed("the processes' keys do not number the file's vertices".into())
        }),
        None => IdMap::from_sorted(ids)
            .ok_or_else(|| DistError::Failed("two processes own the same vertex id".into())),
    };
    let outcome = match (values, map) {
        (Ok(values), Ok(map)) => Ok(Some((
            map,
            AlgoOutput {
                values,
                summary: Vec::new(),
            },
        ))),
        (Err(e), _) | (_, Err(e)) => Err(e),
    };
    agree(comm, outcome)
}

/// Writes `output` as `id value` lines to `path`, or to stdout without one (a closed pipe
/// is not an error).
///
/// # Errors
/// [`DistError::Usage`] naming the file when it cannot be written.
pub fn write(ids: &IdMap, output: &AlgoOutput, path: Option<&Path>) -> Result<(), DistError> {
    match path {
        Some(path) => {
            let fail = |e: std::io::Error| DistError::Usage(format!("{}: {e}", path.display()));
            let file = std::fs::File::create(path).map_err(fail)?;
            let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
            output
                .write_graphalytics(ids, &mut out)
                .and_then(|()| out.flush())
                .map_err(fail)
        }
        None => {
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::with_capacity(1 << 20, stdout.lock());
            match output
                .write_graphalytics(ids, &mut out)
                .and_then(|()| out.flush())
            {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    Err(DistError::Failed(format!("writing the results: {e}")))
                }
                _ => Ok(()),
            }
        }
    }
}
