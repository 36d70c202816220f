//! The distributed search and its validation, on one process and on grids of threads
//! standing in for processes (no MPI needed).

use packgraph::algo::bfs as core_bfs;
use packgraph::graph::{Graph, GraphRead};
use packgraph::io::generate::kronecker;
use packgraph_graph500::benchmark::{run, Config, RunError};
use packgraph_graph500::bfs::{bfs, UNREACHED};
use packgraph_graph500::comm::{Comm, SelfComm, ThreadComm};
use packgraph_graph500::grid::{Grid, Layout};
use packgraph_graph500::local::LocalGraph;
use packgraph_graph500::validate::validate;

/// This process's share of `edges` (contiguous slices, as the benchmark cuts them).
fn share(edges: &[(u32, u32)], rank: usize, size: usize) -> &[(u32, u32)] {
    let per = edges.len().div_ceil(size);
    &edges[(rank * per).min(edges.len())..((rank + 1) * per).min(edges.len())]
}

/// Levels of every vertex of a search from `root` on `grid`, and whether every tree was valid.
fn grid_levels(grid: Grid, n: usize, edges: &[(u32, u32)], root: u32, pack: bool) -> Vec<u32> {
    let parts = ThreadComm::run(grid, |c| {
        let layout = Layout::new(grid, n, c.rank());
        let graph = LocalGraph::build(c, layout, share(edges, c.rank(), c.size()));
        let search = bfs(c, &graph, root, pack).unwrap();
        let check = validate(c, &graph, root, &search.parents);
        assert!(check.is_valid(), "{:?}", check.errors);
        search.levels
    });
    let mut levels: Vec<u32> = parts.concat();
    levels.truncate(n);
    levels
}

#[test]
fn one_process_finds_the_levels_of_the_core_bfs() {
    let scale = 10;
    let n = 1 << scale;
    let edges = kronecker(scale, 16, 5);
    let core = Graph::from_edges(n, &edges, false).unwrap();
    let layout = Layout::new(Grid { rows: 1, cols: 1 }, n, 0);
    let graph = LocalGraph::build(&SelfComm, layout, &edges);
    for root in [0u32, 1, 77, 500, 1023] {
        let expected = core_bfs(&core, root).unwrap().depths;
        for pack in [false, true] {
            let search = bfs(&SelfComm, &graph, root, pack).unwrap();
            assert_eq!(&search.levels[..n], &expected[..], "root {root}");
            assert!(validate(&SelfComm, &graph, root, &search.parents).is_valid());
        }
    }
}

/// With several threads, top-down and bottom-up levels split their work into tasks (from
/// 32 frontier ids or 512 words of row vertices); the levels are the core's and the tree
/// valid, as on one thread.
#[test]
fn threads_find_the_levels_of_the_core_bfs() {
    let scale = 15;
    let n = 1 << scale;
    let edges = kronecker(scale, 16, 11);
    let core = Graph::from_edges(n, &edges, false).unwrap();
    let layout = Layout::new(Grid { rows: 1, cols: 1 }, n, 0);
    let graph = LocalGraph::build(&SelfComm, layout, &edges);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap();
    let (mut wide_top_down, mut bottom_up) = (false, false);
    for root in [2u32, 5, 77, 1000, 4242, 20000] {
        let expected = core_bfs(&core, root).unwrap().depths;
        let search = pool.install(|| bfs(&SelfComm, &graph, root, true)).unwrap();
        assert_eq!(&search.levels[..n], &expected[..], "root {root}");
        assert!(validate(&SelfComm, &graph, root, &search.parents).is_valid());
        wide_top_down |= search
            .stats
            .iter()
            .any(|l| !l.bottom_up && l.frontier_ids >= 32);
        bottom_up |= search.stats.iter().any(|l| l.bottom_up);
    }
    assert!(wide_top_down && bottom_up, "both parallel steps reached");
}

#[test]
fn grids_find_the_same_levels_with_and_without_compression() {
    let scale = 11;
    let n = 1 << scale;
    let edges = kronecker(scale, 16, 9);
    let core = Graph::from_edges(n, &edges, false).unwrap();
    for root in [3u32, 1500] {
        let expected = core_bfs(&core, root).unwrap().depths;
        for (rows, cols) in [(2, 1), (1, 2), (2, 2), (3, 2)] {
            for pack in [false, true] {
                let levels = grid_levels(Grid { rows, cols }, n, &edges, root, pack);
                assert_eq!(
                    levels, expected,
                    "grid {rows}x{cols}, pack {pack}, root {root}"
                );
            }
        }
    }
}

/// Frontier messages carry ranks among the vertices with arcs: a search from an isolated
/// root (which has no rank), and searches whose frontiers end in the padding after the last
/// active vertex, still match the core's levels on every grid.
#[test]
fn isolated_roots_and_padding_search_like_the_core() {
    let scale = 10;
    let n = (1 << scale) + 9;
    let edges = kronecker(scale, 16, 4);
    let core = Graph::from_edges(n, &edges, false).unwrap();
    let isolated = (0..n as u32)
        .find(|&v| core.out_degree(v) == 0)
        .expect("a Kronecker graph of scale 10 has isolated vertices");
    for root in [isolated, n as u32 - 1, 2] {
        let expected = core_bfs(&core, root).unwrap().depths;
        for (rows, cols) in [(1, 1), (2, 1), (2, 2)] {
            for pack in [false, true] {
                let levels = grid_levels(Grid { rows, cols }, n, &edges, root, pack);
                assert_eq!(
                    levels, expected,
                    "grid {rows}x{cols}, pack {pack}, root {root}"
                );
            }
        }
    }
}

#[test]
fn validation_rejects_broken_trees() {
    let n = 1 << 9;
    let edges = kronecker(9, 8, 2);
    let layout = Layout::new(Grid { rows: 1, cols: 1 }, n, 0);
    let graph = LocalGraph::build(&SelfComm, layout, &edges);
    let root = edges[0].0;
    let good = bfs(&SelfComm, &graph, root, true).unwrap().parents;
    let errors = |parents: &[u32]| validate(&SelfComm, &graph, root, parents).errors;
    assert!(errors(&good).is_empty());
    let reached: Vec<usize> = (0..n)
        .filter(|&v| good[v] != UNREACHED && v as u32 != root)
        .collect();
    let (a, b) = (reached[0], reached[reached.len() - 1]);

    let mut cycle = good.clone();
    cycle[a] = b as u32;
    cycle[b] = a as u32;
    assert!(
        errors(&cycle).iter().any(|e| e.contains("rule")),
        "{:?}",
        errors(&cycle)
    );

    let mut dropped = good.clone();
    dropped[b] = UNREACHED;
    assert!(
        errors(&dropped).iter().any(|e| e.contains("rule 4")),
        "{:?}",
        errors(&dropped)
    );

    let mut no_edge = good.clone();
    let stranger = (0..n as u32)
        .find(|&p| {
            good[p as usize] != UNREACHED && !graph.in_arcs(a as u32).contains(&p) && p != a as u32
        })
        .unwrap();
    no_edge[a] = stranger;
    assert!(errors(&no_edge)
        .iter()
        .any(|e| e.contains("rule 5") || e.contains("rule 2")));

    let mut outside = good.clone();
    outside[a] = n as u32 + 5;
    assert!(errors(&outside).iter().any(|e| e.contains("not vertices")));

    let mut rootless = good;
    rootless[root as usize] = UNREACHED;
    assert!(errors(&rootless)
        .iter()
        .any(|e| e.contains("not in the tree")));
}

#[test]
fn the_benchmark_reports_the_same_edges_on_every_grid() {
    let config = Config {
        scale: 10,
        roots: 8,
        ..Config::default()
    };
    let one = run(&SelfComm, &config, false, &mut |_| {}).unwrap();
    assert_eq!(one.nbfs, 8);
    assert!(one.validation_errors.is_empty());
    assert!(one
        .output_block()
        .contains("bfs  harmonic_mean_TEPS:     !  "));
    let grid = Grid { rows: 2, cols: 2 };
    let four = ThreadComm::run(grid, |c| {
        let config = Config {
            grid: Some(grid),
            ..config.clone()
        };
        run(c, &config, true, &mut |_| {}).unwrap()
    });
    let roots = |r: &packgraph_graph500::report::Report| -> Vec<(u32, u64)> {
        r.runs.iter().map(|run| (run.root, run.nedge)).collect()
    };
    assert_eq!(roots(&four[0]), roots(&one));
    assert!(four[0].frontier_sent_bytes <= four[0].frontier_raw_bytes);
    assert!(four[0].sent_bytes <= four[0].raw_bytes);
}

#[test]
fn bad_arguments_are_refused_before_any_work() {
    let usage = |config: Config, p: usize| match config.plan(p) {
        Err(RunError::Usage(message)) => message,
        other => panic!("expected a usage error, got {other:?}"),
    };
    let base = Config::default();
    assert!(usage(
        Config {
            scale: 0,
            ..base.clone()
        },
        1
    )
    .contains("--scale 0"));
    assert!(usage(
        Config {
            scale: 31,
            ..base.clone()
        },
        1
    )
    .contains("out of range"));
    assert!(usage(
        Config {
            edge_factor: 0,
            ..base.clone()
        },
        1
    )
    .contains("--edgefactor"));
    assert!(usage(
        Config {
            roots: 0,
            ..base.clone()
        },
        1
    )
    .contains("--roots"));
    let grid = Some(Grid { rows: 2, cols: 2 });
    assert!(usage(
        Config {
            grid,
            ..base.clone()
        },
        3
    )
    .contains("needs 4 processes"));
    assert_eq!(base.plan(4).unwrap(), Grid { rows: 2, cols: 2 });
}

#[test]
fn an_input_file_is_searched_and_validated() {
    let dir = std::env::temp_dir().join(format!("pg500-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("g.txt");
    let text: String = kronecker(8, 4, 3)
        .iter()
        .map(|(u, v)| format!("{u} {v}\n"))
        .collect();
    std::fs::write(&path, text).unwrap();
    let config = Config {
        input: Some(path.clone()),
        roots: 5,
        ..Config::default()
    };
    let report = run(&SelfComm, &config, true, &mut |_| {}).unwrap();
    assert_eq!(report.nbfs, 5);
    assert!(report.validation_errors.is_empty());
    let grid = Grid { rows: 1, cols: 2 };
    let two = ThreadComm::run(grid, |c| {
        run(
            c,
            &Config {
                grid: Some(grid),
                ..config.clone()
            },
            true,
            &mut |_| {},
        )
        .unwrap()
    });
    assert_eq!(two[0].runs.len(), 5);

    let missing = Config {
        input: Some(dir.join("missing.txt")),
        ..config
    };
    match run(&SelfComm, &missing, true, &mut |_| {}) {
        Err(RunError::Input(message)) => assert!(message.contains("missing.txt"), "{message}"),
        other => panic!("expected an input error, got {other:?}"),
    }
    std::fs::remove_dir_all(dir).unwrap();
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// On random graphs dense enough for bottom-up levels (a target's first in-arc, read
    /// from its own array, then the rest of its arcs), every grid finds the core's levels
    /// and a valid tree.
    #[test]
    fn random_graphs_search_like_the_core_on_every_grid(
        n in 2usize..150,
        raw in proptest::collection::vec((0u32..150, 0u32..150), 0..700),
        root in 0u32..150,
        shape in 0usize..4,
    ) {
        let edges: Vec<(u32, u32)> = raw
            .iter()
            .map(|&(u, v)| (u % n as u32, v % n as u32))
            .collect();
        let root = root % n as u32;
        let core = Graph::from_edges(n, &edges, false).unwrap();
        let expected = core_bfs(&core, root).unwrap().depths;
        let (rows, cols) = [(1, 1), (2, 1), (1, 2), (2, 2)][shape];
        let levels = grid_levels(Grid { rows, cols }, n, &edges, root, true);
        proptest::prop_assert_eq!(levels, expected);
    }
}
