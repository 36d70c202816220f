//! Runs the built `packgraph` binary's vertex orders: `reorder` into every output format
//! gives a graph whose algorithm results, in the input's ids, equal the original's; the
//! `--order` option of `run` and `convert` likewise; `generate` makes the layout families;
//! bad `--levels` exits with code 2 naming the value.

use std::path::Path;

mod common;
use common::{bad, ok, parse_output as results, path};

/// Algorithms whose output does not depend on float summation order.
const EXACT: [&str; 8] = ["bfs", "wcc", "cdlp", "sssp", "mis", "khop", "tc", "kcore"];

#[test]
fn reorder_writes_every_format_and_keeps_results_in_the_input_ids() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let input = path(d, "mesh.txt");
    ok(&[
        "generate",
        "mesh",
        "--rows",
        "12",
        "--cols",
        "9",
        "--diagonals",
        "--weighted",
        "-o",
        &input,
    ]);
    let source = ok(&["info", &input, "--json"]);
    assert!(source.contains("\"mean_log2_gap\""), "{source}");
    for order in ["hba", "bfs", "rcm", "degree", "random", "identity"] {
        // A snapshot keeps the input's ids: results compare directly.
        let pgb = path(d, &format!("{order}.pgb"));
        ok(&[
            "reorder", &input, &pgb, "--order", order, "--levels", "64,1K",
        ]);
        for algorithm in EXACT {
            let before = ok(&["run", algorithm, "-i", &input, "--source", "5"]);
            let after = ok(&["run", algorithm, "-i", &pgb, "--source", "5"]);
            assert_eq!(results(&before), results(&after), "{order} {algorithm}");
            let in_memory = ok(&[
                "run", algorithm, "-i", &input, "--source", "5", "--order", order,
            ]);
            assert_eq!(before, in_memory, "{order} {algorithm} (run --order)");
        }
        // Text formats number the vertices in the new order: same graph, new ids.
        for name in [format!("{order}.txt"), format!("{order}.e")] {
            let out = path(d, &name);
            ok(&["reorder", &input, &out, "--order", order]);
            let info = ok(&["info", &out, "--json"]);
            assert!(info.contains("\"vertices\":108"), "{name}: {info}");
            assert!(info.contains("\"edges\":283"), "{name}: {info}");
            assert!(info.contains("\"weighted\":true"), "{name}: {info}");
        }
        let converted = path(d, &format!("{order}-converted.txt"));
        ok(&["convert", &input, &converted, "--order", order]);
    }
}

#[test]
fn bad_levels_exit_with_code_2_naming_the_value() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let input = path(d, "tree.txt");
    ok(&["generate", "tree", "--vertices", "50", "-o", &input]);
    let out = path(d, "out.pgb");
    for (levels, named) in [
        ("64,32", "`32`"),
        ("1K,1K", "`1K`"),
        ("0,64", "`0`"),
        ("64,lots", "`lots`"),
        ("", "``"),
    ] {
        let error = bad(&[
            "reorder", &input, &out, "--order", "hba", "--levels", levels,
        ]);
        assert!(
            error.contains("--levels") && error.contains(named),
            "{levels}: {error}"
        );
        let error = bad(&[
            "run", "bfs", "-i", &input, "--order", "hba", "--levels", levels,
        ]);
        assert!(error.contains(named), "{levels}: {error}");
    }
    assert!(!Path::new(&out).exists());
    let error = bad(&["reorder", &input, &out, "--order", "gorder"]);
    assert!(error.contains("gorder"), "{error}");
    let error = bad(&["generate", "ws", "--vertices", "10", "--k", "3", "-o", &out]);
    assert!(error.contains("--k 3"), "{error}");
}

#[test]
fn generated_families_are_seeded_and_shuffled_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for family in [
        &["ws", "--vertices", "300"][..],
        &["ba", "--vertices", "300"],
        &["tree", "--vertices", "300"],
    ] {
        let (a, b, natural) = (path(d, "a.txt"), path(d, "b.txt"), path(d, "n.txt"));
        ok(&[&["generate"], family, &["-o", &a, "--seed", "4"]].concat());
        ok(&[&["generate"], family, &["-o", &b, "--seed", "4"]].concat());
        ok(&[
            &["generate"],
            family,
            &["-o", &natural, "--seed", "4", "--natural-order"],
        ]
        .concat());
        let read = |p: &str| std::fs::read_to_string(p).unwrap();
        assert_eq!(read(&a), read(&b), "{family:?}");
        assert_ne!(read(&a), read(&natural), "{family:?}");
    }
}
