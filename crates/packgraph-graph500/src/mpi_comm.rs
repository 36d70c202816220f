//! [`Comm`] over MPI (rsmpi on the system's MPI library): the world, and communicators for
//! the grid row and the grid column split from it.
//!
//! Message sizes are MPI `int` counts of bytes; a message of 2 GiB or more aborts the run
//! with a message (every process stops, none waits forever).

use mpi::collective::SystemOperation;
use mpi::datatype::{Partition, PartitionMut};
use mpi::topology::{Color, SimpleCommunicator};
use mpi::traits::*;
use mpi::Count;

use crate::comm::{Comm, Gathered, Group};
use crate::grid::Grid;

/// A process of an MPI world arranged as a grid.
pub struct MpiComm {
    world: SimpleCommunicator,
    row: SimpleCommunicator,
    col: SimpleCommunicator,
    grid: Grid,
    rank: usize,
    single_host: bool,
}

impl std::fmt::Debug for MpiComm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MpiComm {{ rank: {}, grid: {} }}", self.rank, self.grid)
    }
}

impl MpiComm {
    /// The grid `grid` over `world`, whose size must be `grid.size()` (checked by
    /// [`Config::plan`](crate::benchmark::Config::plan) first).
    pub fn new(world: SimpleCommunicator, grid: Grid) -> Self {
        let rank = world.rank() as usize;
        assert_eq!(
            world.size() as usize,
            grid.size(),
            "the grid fills the world"
        );
        let (r, c) = grid.coords(rank);
        let split = |color: usize, key: usize| {
            world
                .split_by_color_with_key(Color::with_value(color as i32), key as i32)
                .expect("a defined color gives a communicator")
        };
        let row = split(r, c);
        let col = split(c, r);
        let single_host = world.split_shared(0).size() == world.size();
        Self {
            world,
            row,
            col,
            grid,
            rank,
            single_host,
        }
    }

    /// Stops every process of the world with `code`.
    pub fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }

    fn comm(&self, group: Group) -> &SimpleCommunicator {
        match group {
            Group::World => &self.world,
            Group::Row => &self.row,
            Group::Col => &self.col,
        }
    }

    /// Displacements of `counts`; aborts the run if the total passes MPI's `int`.
    fn displacements(&self, counts: &[Count]) -> (Vec<Count>, usize) {
        let mut displs = Vec::with_capacity(counts.len());
        let mut total: usize = 0;
        for &c in counts {
            displs.push(Count::try_from(total).unwrap_or_else(|_| self.too_big(total)));
            total += c as usize;
        }
        if Count::try_from(total).is_err() {
            self.too_big(total);
        }
        (displs, total)
    }

    fn too_big(&self, bytes: usize) -> ! {
        eprintln!(
            "error: rank {}: a message of {bytes} bytes passes MPI's 2 GiB count limit; use more processes",
            self.rank
        );
        self.world.abort(1)
    }

    fn count(&self, len: usize) -> Count {
        Count::try_from(len).unwrap_or_else(|_| self.too_big(len))
    }
}

fn gathered(bytes: Vec<u8>, counts: &[Count], displs: &[Count]) -> Gathered {
    let mut offsets: Vec<usize> = displs.iter().map(|&d| d as usize).collect();
    offsets
        .push(displs.last().map_or(0, |&d| d as usize) + counts.last().map_or(0, |&c| c as usize));
    Gathered { bytes, offsets }
}

impl Comm for MpiComm {
    fn rank(&self) -> usize {
        self.rank
    }

    fn grid(&self) -> Grid {
        self.grid
    }

    fn single_host(&self) -> bool {
        self.single_host
    }

    fn allgather(&self, group: Group, data: &[u8]) -> Gathered {
        let comm = self.comm(group);
        let mut counts = vec![0 as Count; comm.size() as usize];
        comm.all_gather_into(&self.count(data.len()), &mut counts[..]);
        let (displs, total) = self.displacements(&counts);
        // Buffers are never empty: an empty slice's dangling address is 1, which Open MPI
        // reads as MPI_IN_PLACE.
        let mut bytes = vec![0u8; total + 1];
        let send: Vec<u8>;
        let data = if data.is_empty() {
            send = vec![0];
            &send[..0]
        } else {
            data
        };
        let mut parts = PartitionMut::new(&mut bytes[..], &counts[..], &displs[..]);
        comm.all_gather_varcount_into(data, &mut parts);
        bytes.truncate(total);
        gathered(bytes, &counts, &displs)
    }

    fn alltoall(&self, group: Group, parts: &[Vec<u8>]) -> Gathered {
        let comm = self.comm(group);
        let send_counts: Vec<Count> = parts.iter().map(|p| self.count(p.len())).collect();
        let (send_displs, _) = self.displacements(&send_counts);
        let mut recv_counts = vec![0 as Count; comm.size() as usize];
        comm.all_to_all_into(&send_counts[..], &mut recv_counts[..]);
        let (recv_displs, total) = self.displacements(&recv_counts);
        // One spare byte in each buffer, as in `allgather`.
        let mut send: Vec<u8> = parts.concat();
        send.push(0);
        let mut bytes = vec![0u8; total + 1];
        comm.all_to_all_varcount_into(
            &Partition::new(&send[..], &send_counts[..], &send_displs[..]),
            &mut PartitionMut::new(&mut bytes[..], &recv_counts[..], &recv_displs[..]),
        );
        bytes.truncate(total);
        gathered(bytes, &recv_counts, &recv_displs)
    }

    fn alltoallv_u64(&self, group: Group, send: &[u64], counts: &[usize]) -> Vec<u64> {
        let comm = self.comm(group);
        let send_counts: Vec<Count> = counts.iter().map(|&c| self.count(c)).collect();
        let (send_displs, _) = self.displacements(&send_counts);
        let mut recv_counts = vec![0 as Count; comm.size() as usize];
        comm.all_to_all_into(&send_counts[..], &mut recv_counts[..]);
        let (recv_displs, total) = self.displacements(&recv_counts);
        // Never an empty buffer, as in `allgather`.
        let spare = [0u64; 1];
        let send = if send.is_empty() { &spare[..] } else { send };
        let mut values = vec![0u64; total + 1];
        comm.all_to_all_varcount_into(
            &Partition::new(send, &send_counts[..], &send_displs[..]),
            &mut PartitionMut::new(&mut values[..], &recv_counts[..], &recv_displs[..]),
        );
        values.truncate(total);
        values
    }

    fn allreduce_sum(&self, group: Group, values: &mut [u64]) {
        if values.is_empty() {
            return;
        }
        let send = values.to_vec();
        self.comm(group)
            .all_reduce_into(&send[..], values, SystemOperation::sum());
    }

    fn allreduce_max(&self, group: Group, values: &mut [u64]) {
        if values.is_empty() {
            return;
        }
        let send = values.to_vec();
        self.comm(group)
            .all_reduce_into(&send[..], values, SystemOperation::max());
    }
}
