//! The process grid and the 2-D partition of the vertices and of the adjacency matrix.
//!
//! `P = R × C` processes form a grid; process `q` sits at row `q / C`, column `q % C`. The
//! vertices are cut into `P` equal blocks of `block` ids (a multiple of 64, so that bitmaps
//! of blocks are whole words); process `q` owns block `q` (its parents, levels, degrees).
//!
//! * The *row block* of grid row `i` is the union of the blocks owned by its `C` processes:
//!   the contiguous ids `[i·C·block, (i+1)·C·block)`. A row-local index is `v - i·C·block`.
//! * The *column block* of grid column `j` is the union of the blocks owned by the `R`
//!   processes `(k, j)`, in order of `k`: a column-local index of `v` (owned by `(k, j)`) is
//!   `k·block + v mod block`.
//!
//! Process `(i, j)` stores the arcs `u → v` with `u` in column block `j` and `v` in row
//! block `i` (Buluç and Madduri, SC 2011): a top-down step gathers the frontier along the
//! grid column, and sends discovered vertices to their owners along the grid row. `R = 1`
//! or `C = 1` is the 1-D partition.

use std::fmt;
use std::str::FromStr;

/// An `R × C` process grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grid {
    /// Rows `R`.
    pub rows: usize,
    /// Columns `C`.
    pub cols: usize,
}

impl Grid {
    /// The squarest grid of `processes`, with at least as many rows as columns: the rows
    /// are the smallest divisor at or above the square root (`2 → 2×1`, `4 → 2×2`,
    /// `6 → 3×2`). With one column the frontier exchange is an all-gather of the (compressed)
    /// frontier, the case the compressed-frontier paper measures.
    pub fn for_processes(processes: usize) -> Self {
        let processes = processes.max(1);
        let rows = (1..=processes)
            .find(|&r| r * r >= processes && processes.is_multiple_of(r))
            .unwrap_or(processes);
        Self {
            rows,
            cols: processes / rows,
        }
    }

    /// Processes in the grid.
    pub fn size(self) -> usize {
        self.rows * self.cols
    }

    /// Grid row and column of process `rank`.
    pub fn coords(self, rank: usize) -> (usize, usize) {
        (rank / self.cols, rank % self.cols)
    }

    /// The process at grid row `row`, column `col`.
    pub fn rank_at(self, row: usize, col: usize) -> usize {
        row * self.cols + col
    }
}

impl fmt::Display for Grid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.rows, self.cols)
    }
}

impl FromStr for Grid {
    type Err = String;

    /// Parses `RxC` (both at least 1).
    fn from_str(text: &str) -> Result<Self, String> {
        let bad = || format!("grid must be RxC with R, C ≥ 1 (such as 2x2), not {text:?}");
        let (rows, cols) = text.split_once(['x', 'X']).ok_or_else(bad)?;
        let rows: usize = rows.trim().parse().map_err(|_| bad())?;
        let cols: usize = cols.trim().parse().map_err(|_| bad())?;
        if rows == 0 || cols == 0 {
            return Err(bad());
        }
        Ok(Self { rows, cols })
    }
}

/// Where each vertex and each arc lives, seen from one process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// The process grid.
    pub grid: Grid,
    /// Vertices of the graph.
    pub num_vertices: usize,
    /// Ids per owned block (a multiple of 64; `size · block ≥ num_vertices`).
    pub block: usize,
    /// This process.
    pub rank: usize,
    /// This process's grid row.
    pub row: usize,
    /// This process's grid column.
    pub col: usize,
}

impl Layout {
    /// The layout of `num_vertices` vertices over `grid`, seen from `rank`.
    pub fn new(grid: Grid, num_vertices: usize, rank: usize) -> Self {
        let block = num_vertices
            .div_ceil(grid.size())
            .next_multiple_of(64)
            .max(64);
        let (row, col) = grid.coords(rank);
        Self {
            grid,
            num_vertices,
            block,
            rank,
            row,
            col,
        }
    }

    /// The process owning vertex `v`.
    #[inline]
    pub fn owner(&self, v: u32) -> usize {
        v as usize / self.block
    }

    /// First id of the block of process `rank`.
    #[inline]
    pub fn block_start(&self, rank: usize) -> usize {
        rank * self.block
    }

    /// Vertices this process owns that exist (the last blocks may be short or empty).
    pub fn owned_len(&self) -> usize {
        self.num_vertices
            .saturating_sub(self.block_start(self.rank))
            .min(self.block)
    }

    /// First id of this process's row block.
    #[inline]
    pub fn row_start(&self) -> usize {
        self.row * self.grid.cols * self.block
    }

    /// Length of a row block (padding included).
    pub fn row_len(&self) -> usize {
        self.grid.cols * self.block
    }

    /// Length of a column block (padding included).
    pub fn col_len(&self) -> usize {
        self.grid.rows * self.block
    }

    /// Row-local index of `v`, which must be in this process's row block.
    #[inline]
    pub fn row_local(&self, v: u32) -> u32 {
        (v as usize - self.row_start()) as u32
    }

    /// Column-local index of `v` (in the column block of `v`'s owner's grid column).
    #[inline]
    pub fn col_local(&self, v: u32) -> u32 {
        let owner = self.owner(v);
        ((owner / self.grid.cols) * self.block + v as usize % self.block) as u32
    }

    /// Global id of column-local index `x` of this process's column block.
    #[inline]
    pub fn col_global(&self, x: u32) -> u32 {
        let k = x as usize / self.block;
        (self.grid.rank_at(k, self.col) * self.block + x as usize % self.block) as u32
    }

    /// The process that stores the arc `u → v`.
    #[inline]
    pub fn arc_owner(&self, u: u32, v: u32) -> usize {
        let row = self.owner(v) / self.grid.cols;
        let col = self.owner(u) % self.grid.cols;
        self.grid.rank_at(row, col)
    }

    /// Whether `v` is in this process's column block.
    #[inline]
    pub fn in_my_col(&self, v: u32) -> bool {
        self.owner(v) % self.grid.cols == self.col
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_grids_are_square_or_tall() {
        let g = |p| Grid::for_processes(p).to_string();
        assert_eq!(g(1), "1x1");
        assert_eq!(g(2), "2x1");
        assert_eq!(g(4), "2x2");
        assert_eq!(g(6), "3x2");
        assert_eq!(g(7), "7x1");
        assert_eq!(g(16), "4x4");
    }

    #[test]
    fn grids_parse_and_refuse_nonsense() {
        assert_eq!("2x3".parse::<Grid>(), Ok(Grid { rows: 2, cols: 3 }));
        for bad in ["", "2", "0x2", "2x", "axb", "2x-1"] {
            assert!(bad.parse::<Grid>().is_err(), "{bad}");
        }
    }

    #[test]
    fn every_arc_lands_where_its_row_and_column_blocks_meet() {
        for grid in [(1, 1), (2, 1), (1, 3), (2, 2), (3, 2)] {
            let grid = Grid {
                rows: grid.0,
                cols: grid.1,
            };
            let n = 1_000;
            for rank in 0..grid.size() {
                let me = Layout::new(grid, n, rank);
                assert!(me.block.is_multiple_of(64) && me.block * grid.size() >= n);
                for u in (0..n as u32).step_by(7) {
                    for v in (0..n as u32).step_by(13) {
                        if me.arc_owner(u, v) != rank {
                            continue;
                        }
                        assert!(me.in_my_col(u));
                        assert!((me.row_local(v) as usize) < me.row_len());
                        assert!((me.col_local(u) as usize) < me.col_len());
                        assert_eq!(me.col_global(me.col_local(u)), u);
                    }
                }
            }
            let owned: usize = (0..grid.size())
                .map(|r| Layout::new(grid, n, r).owned_len())
                .sum();
            assert_eq!(owned, n);
        }
    }
}
