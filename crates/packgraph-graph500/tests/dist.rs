//! `packgraph-dist`'s engine on processes simulated by threads ([`ThreadComm`]): on every
//! test graph, every algorithm on 1, 2 and 4 processes (1 to 4 on random graphs) equals the core's algorithm on one
//! (PageRank within 1e-9 relative, the others exactly), before and after update batches;
//! bad input on any process gives the same error naming file and line on every process;
//! snapshots and data directories (named ones too) as inputs.

mod common;

use packgraph::algo::AlgorithmKind;
use packgraph_graph500::comm::ThreadComm;
use packgraph_graph500::dist::run::{run, RunConfig};
use packgraph_graph500::dist::DistError;
use packgraph_graph500::grid::Grid;
use proptest::prelude::*;

use common::{
    assert_same, damaged_snapshot, data, named_directory, reference, stored_inputs, temp_dir,
    weighted_directed, KINDS,
};

/// The distributed output on `ranks` simulated processes (rank 0's), or the error every
/// process returned (checked to be the same on all).
fn distributed(ranks: usize, config: &RunConfig) -> Result<String, DistError> {
    let grid = Grid {
        rows: ranks,
        cols: 1,
    };
    let outcomes = ThreadComm::run(grid, |comm| run(comm, config).map(|(result, _)| result));
    if let Err(first) = &outcomes[0] {
        for other in &outcomes {
            assert_eq!(
                other.as_ref().err(),
                Some(first),
                "every process fails alike"
            );
        }
        return Err(first.clone());
    }
    let (ids, output) = outcomes
        .into_iter()
        .next()
        .and_then(|r| r.ok().flatten())
        .expect("rank 0 holds the result");
    let mut text = Vec::new();
    output.write_graphalytics(&ids, &mut text).expect("writes");
    Ok(String::from_utf8(text).expect("text"))
}

fn check_all_ranks(config: &RunConfig, what: &str) {
    let want = reference(config);
    for ranks in [1, 2, 4] {
        let got = distributed(ranks, config).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_same(
            config.algorithm,
            &got,
            &want,
            &format!("{what}, {ranks} ranks"),
        );
    }
}

#[test]
fn every_algorithm_equals_the_core_on_the_graphalytics_graphs() {
    for name in ["bfs", "cdlp", "lcc", "pr", "wcc", "ffm", "sssp"] {
        for directed in [true, false] {
            let graph = format!("{name}-{}", if directed { "dir" } else { "undir" });
            for kind in KINDS {
                let mut config = RunConfig::new(kind, data(&format!("{graph}.e")));
                config.load.directed = Some(directed);
                check_all_ranks(&config, &format!("{kind} on {graph}"));
            }
        }
    }
    for (graph, directed) in [("example-directed", true), ("example-undirected", false)] {
        for kind in KINDS {
            let mut config = RunConfig::new(kind, data(&format!("{graph}.v")));
            config.load.directed = Some(directed);
            config.iterations = Some(2);
            check_all_ranks(&config, &format!("{kind} on {graph}"));
        }
    }
}

#[test]
fn a_weighted_directed_graph_before_and_after_updates() {
    let dir = temp_dir("weighted");
    let (graph, updates) = weighted_directed(&dir, 300, 1500, 7);
    for kind in KINDS {
        for directed in [true, false] {
            let mut config = RunConfig::new(kind, &graph);
            config.load.directed = Some(directed);
            config.load.weighted = true;
            check_all_ranks(&config, &format!("{kind}, directed {directed}"));
            config.updates = Some(updates.clone());
            config.source = Some("10".into());
            check_all_ranks(
                &config,
                &format!("{kind} after updates, directed {directed}"),
            );
        }
    }
    std::fs::remove_dir_all(&dir).expect("cleans up");
}

#[test]
fn snapshots_and_data_directories_equal_the_core() {
    let dir = temp_dir("stored");
    let (graph, updates) = weighted_directed(&dir, 200, 1000, 5);
    // The directory's log holds the update file's batches after its first checkpoint.
    let (snapshot, store) = stored_inputs(&dir, &graph, true, Some(&updates));
    let undirected = dir.join("undirected");
    std::fs::create_dir_all(&undirected).expect("a directory");
    let (plain_snapshot, plain_store) =
        stored_inputs(&undirected, &data("example-undirected.e"), false, None);
    for kind in KINDS {
        for input in [&snapshot, &store] {
            let mut config = RunConfig::new(kind, input);
            config.load.weighted = true;
            check_all_ranks(&config, &format!("{kind} on {}", input.display()));
            config.updates = Some(updates.clone());
            config.source = Some("24".into());
            check_all_ranks(&config, &format!("{kind} on {} updated", input.display()));
        }
        for input in [&plain_snapshot, &plain_store] {
            let mut config = RunConfig::new(kind, input);
            config.iterations = Some(3);
            check_all_ranks(&config, &format!("{kind} on {}", input.display()));
        }
    }
    std::fs::remove_dir_all(&dir).expect("cleans up");
}

#[test]
fn a_named_data_directory_answers_in_names() {
    let dir = temp_dir("named");
    for directed in [false, true] {
        let (store, updates) = named_directory(&dir, directed);
        for kind in KINDS {
            let mut config = RunConfig::new(kind, &store);
            check_all_ranks(&config, &format!("{kind} on names, directed {directed}"));
            config.updates = Some(updates.clone());
            config.source = Some("alpha".into());
            check_all_ranks(
                &config,
                &format!("{kind} on names updated, directed {directed}"),
            );
        }
        let mut config = RunConfig::new(AlgorithmKind::Bfs, &store);
        config.source = Some("nobody".into());
        let e = distributed(2, &config).expect_err("no such name");
        assert!(
            e.to_string().starts_with("--source nobody: not a vertex"),
            "{e}"
        );
    }
    std::fs::remove_dir_all(&dir).expect("cleans up");
}

#[test]
fn a_damaged_snapshot_is_one_error_on_every_rank() {
    let dir = temp_dir("damaged");
    let snapshot = damaged_snapshot(&dir);
    let config = RunConfig::new(AlgorithmKind::Wcc, &snapshot);
    for ranks in 1..=4 {
        let e = distributed(ranks, &config).expect_err("a damaged snapshot");
        assert!(
            e.to_string().contains(&snapshot.display().to_string()),
            "{e}"
        );
        assert_eq!(e.exit_code(), 3, "{e}");
    }
    // Cut short, and --directed against an undirected snapshot.
    let bytes = std::fs::read(&snapshot).expect("reads");
    std::fs::write(&snapshot, &bytes[..bytes.len() / 2]).expect("writes");
    assert_eq!(
        distributed(2, &config).expect_err("cut short").exit_code(),
        3
    );
    let (plain, _) = stored_inputs(&dir, &data("example-undirected.e"), false, None);
    let mut config = RunConfig::new(AlgorithmKind::Wcc, &plain);
    config.load.directed = Some(true);
    let e = distributed(2, &config).expect_err("a direction the file contradicts");
    assert_eq!(e.exit_code(), 2, "{e}");
    std::fs::remove_dir_all(&dir).expect("cleans up");
}

#[test]
fn ids_spread_over_64_bits_equal_the_core() {
    // Ids far apart: the loader sorts them instead of setting bits over their range.
    let dir = temp_dir("sparse");
    let path = dir.join("sparse.el");
    let id = |i: u64| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 1;
    let text: String = (0..120u64)
        .map(|i| format!("{} {}\n", id(i % 37), id((i * 7 + 3) % 41)))
        .collect();
    std::fs::write(&path, text).expect("writes");
    for kind in KINDS {
        let mut config = RunConfig::new(kind, &path);
        config.load.directed = Some(kind == AlgorithmKind::Pagerank);
        check_all_ranks(&config, &format!("{kind} on sparse ids"));
    }
    std::fs::remove_dir_all(&dir).expect("cleans up");
}

#[test]
fn a_packgraph_header_and_isolated_vertices_count_as_in_packgraph_run() {
    let dir = temp_dir("head");
    let path = dir.join("head.el");
    let head = "# isolated vertices: 40 41\n# isolated vertices: 42\n";
    let edges = "1 2\n2 3\n3 1\n5 6\n6 5\n# isolated vertices: 77\n";
    let text = format!("# packgraph edge list: 8 vertices, 5 edges, directed\n{head}{edges}");
    std::fs::write(&path, text).expect("writes");
    for kind in KINDS {
        // The header's direction applies: no --directed.
        check_all_ranks(&RunConfig::new(kind, &path), &format!("{kind} with a head"));
    }
    let text = format!("# packgraph edge list: 9 vertices, 5 edges, directed\n{head}{edges}");
    std::fs::write(&path, text).expect("writes");
    for ranks in 1..=3 {
        let e = distributed(ranks, &RunConfig::new(AlgorithmKind::Wcc, &path))
            .expect_err("a wrong vertex count");
        assert!(
            e.to_string()
                .contains("declares 9 vertices but the file names 8"),
            "{e}"
        );
        assert_eq!(e.exit_code(), 2);
    }
    std::fs::remove_dir_all(&dir).expect("cleans up");
}

#[test]
fn bad_input_on_any_rank_is_one_error_naming_file_and_line_on_every_rank() {
    let dir = temp_dir("bad");
    let path = dir.join("bad.el");
    let mut text: String = (0..200).map(|i| format!("{i} {}\n", i + 1)).collect();
    text.push_str("7 x8\n1 2\n");
    std::fs::write(&path, &text).expect("writes");
    let config = RunConfig::new(AlgorithmKind::Bfs, &path);
    for ranks in 1..=4 {
        let e = distributed(ranks, &config).expect_err("a malformed line");
        assert_eq!(
            e.to_string(),
            format!(
                "{}:201: vertex id is not a non-negative integer: `x8`",
                path.display()
            )
        );
        assert_eq!(e.exit_code(), 2);
    }
    // Columns that change between two processes' ranges.
    let mixed: String = (0..100)
        .map(|i| {
            if i < 50 {
                format!("{i} {}\n", i + 1)
            } else {
                format!("{i} {} 2.5\n", i + 1)
            }
        })
        .collect();
    std::fs::write(&path, mixed).expect("writes");
    for ranks in 2..=4 {
        let e = distributed(ranks, &config).expect_err("columns change");
        // Named by the process whose range holds the change, or by the first process whose
        // lines disagree with those before it: line 51 either way.
        assert!(
            e.to_string()
                .starts_with(&format!("{}:51: ", path.display())),
            "{e}"
        );
    }
    // An update file with a bad line, a source that is no vertex, a missing file.
    std::fs::write(&path, "1 2\n2 3\n").expect("writes");
    let updates = dir.join("updates.txt");
    std::fs::write(&updates, "+ 1 4\ncommit\n+ 5\n").expect("writes");
    let mut bad = config.clone();
    bad.updates = Some(updates.clone());
    let e = distributed(2, &bad).expect_err("a bad update line");
    assert!(
        e.to_string()
            .starts_with(&format!("{}:3: ", updates.display())),
        "{e}"
    );
    let mut bad = config.clone();
    bad.source = Some("77".into());
    let e = distributed(3, &bad).expect_err("no such source");
    assert_eq!(
        e.to_string(),
        "--source 77: not a vertex of the input graph (3 vertices)"
    );
    let mut bad = config.clone();
    bad.load.path = dir.join("missing.el");
    assert_eq!(distributed(2, &bad).expect_err("no file").exit_code(), 2);
    std::fs::write(&path, "1 2 0.5\n2 3 -1.5\n").expect("writes");
    let mut bad = config.clone();
    bad.algorithm = AlgorithmKind::Sssp;
    let e = distributed(2, &bad).expect_err("a negative weight");
    assert!(e.to_string().contains("need non-negative weights"), "{e}");
    assert_eq!(e.exit_code(), 2);
    let mut bad = config;
    bad.algorithm = AlgorithmKind::Tc;
    assert!(distributed(2, &bad)
        .expect_err("not distributed")
        .to_string()
        .contains("not distributed"));
    std::fs::remove_dir_all(&dir).expect("cleans up");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// Random graphs (any ids, duplicate edges, self-loops) and a random batch: every
    /// algorithm on 1 to 4 processes equals the core.
    #[test]
    fn random_graphs_and_batches_match_the_core(
        edges in prop::collection::vec((0u64..40, 0u64..40, 1u32..9), 1..80),
        batch in prop::collection::vec((any::<bool>(), 0u64..48, 0u64..48), 0..20),
        directed in any::<bool>(),
        ranks in 1usize..=4,
    ) {
        let dir = temp_dir(&format!("prop-{ranks}"));
        let graph = dir.join("g.el");
        let text: String = edges.iter().map(|(u, v, w)| format!("{} {} {w}\n", u * 3, v * 3)).collect();
        std::fs::write(&graph, text).expect("writes");
        let updates = dir.join("u.txt");
        let ops: String = batch
            .iter()
            .map(|&(insert, u, v)| format!("{} {} {}\n", if insert { "+" } else { "-" }, u * 3, v * 3))
            .collect();
        std::fs::write(&updates, ops + "commit\n").expect("writes");
        for kind in KINDS {
            for with_updates in [false, true] {
                let mut config = RunConfig::new(kind, &graph);
                config.load.directed = Some(directed);
                config.updates = with_updates.then(|| updates.clone());
                let want = reference(&config);
                let got = distributed(ranks, &config).expect("runs");
                assert_same(kind, &got, &want, &format!("{kind}, {ranks} ranks"));
            }
        }
        std::fs::remove_dir_all(&dir).expect("cleans up");
    }
}
