//! Runs the built `packgraph` binary on files: generate → convert → reload → run every
//! algorithm with identical results across formats, a hand-checked Graphalytics dataset,
//! the official validation graphs, and bad input (exit code 2, file/line/value named,
//! nothing written).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod common;
use common::{bad, ok, packgraph, parse_output, path};

const ALGORITHMS: [&str; 11] = [
    "bfs", "pagerank", "wcc", "cdlp", "lcc", "sssp", "bc", "mis", "khop", "tc", "kcore",
];

#[test]
fn generate_convert_reload_run_agree_across_formats() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let txt = path(d, "k.txt");
    ok(&[
        "generate",
        "kronecker",
        "--scale",
        "9",
        "--edge-factor",
        "8",
        "--weighted",
        "-o",
        &txt,
    ]);
    let pgb = path(d, "k.pgb");
    let gal = path(d, "k.v");
    ok(&["convert", &txt, &pgb]);
    ok(&["convert", &txt, &gal]);
    let gz = path(d, "k.gz");
    {
        use std::io::Write;
        let mut encoder = flate2::write::GzEncoder::new(
            std::fs::File::create(&gz).unwrap(),
            flate2::Compression::fast(),
        );
        encoder.write_all(&std::fs::read(&txt).unwrap()).unwrap();
        encoder.finish().unwrap();
    }
    let info = ok(&["info", &pgb, "--json", "--check"]);
    let info: serde_json::Value = serde_json::from_str(&info).unwrap();
    assert_eq!(info["weighted"], true);
    assert_eq!(info["invariants_ok"], true);
    assert!(ok(&["info", &txt, "--check"]).contains("every invariant holds"));
    assert!(info["edges"].as_u64().unwrap() > 1000);
    let source = ok(&["run", "bfs", "--input", &txt])
        .lines()
        .next()
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .to_string();
    for algorithm in ALGORITHMS {
        let run = |input: &str| {
            parse_output(&ok(&[
                "run",
                algorithm,
                "--input",
                input,
                "--source",
                &source,
                "--threads",
                "2",
            ]))
        };
        let reference = run(&txt);
        assert_eq!(reference.len(), info["vertices"].as_u64().unwrap() as usize);
        for input in [&pgb, &gal, &gz] {
            let other = run(input);
            if matches!(
                algorithm,
                "wcc" | "cdlp" | "mis" | "bfs" | "khop" | "tc" | "kcore"
            ) {
                assert_eq!(other, reference, "{algorithm} on {input}");
            } else {
                for (id, value) in &reference {
                    let (a, b): (f64, f64) = (value.parse().unwrap(), other[id].parse().unwrap());
                    assert!(
                        a == b || (a - b).abs() <= 1e-9 * a.abs().max(1.0),
                        "{algorithm} on {input}: vertex {id}: {a} vs {b}"
                    );
                }
            }
        }
    }
}

/// A Graphalytics dataset written by hand, with each algorithm's output worked out by hand
/// (see the comments): ids are sparse and unordered in the vertex file.
fn hand_dataset(dir: &Path) -> PathBuf {
    // 10 - 20 (1), 20 - 30 (2), 10 - 30 (5), 30 - 40 (1), 50 - 60 (3); 70 isolated.
    std::fs::write(dir.join("hand.v"), "40\n10\n70\n30\n20\n60\n50\n").unwrap();
    std::fs::write(
        dir.join("hand.e"),
        "10 20 1\n20 30 2\n10 30 5\n30 40 1\n50 60 3\n",
    )
    .unwrap();
    std::fs::write(dir.join("hand.properties"), "graph.hand.directed = false\n").unwrap();
    dir.join("hand")
}

#[test]
fn hand_checked_graphalytics_dataset() {
    let dir = tempfile::tempdir().unwrap();
    let input = hand_dataset(dir.path()).display().to_string();
    let run = |args: &[&str]| {
        let mut all = vec!["run"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--input", &input]);
        parse_output(&ok(&all))
    };
    let values = |pairs: &[(u64, &str)]| -> BTreeMap<u64, String> {
        pairs.iter().map(|&(id, v)| (id, v.to_string())).collect()
    };
    const NONE: &str = "9223372036854775807";
    // BFS from 10: 20 and 30 are one hop away, 40 two; 50, 60, 70 unreachable.
    assert_eq!(
        run(&["bfs", "--source", "10"]),
        values(&[
            (10, "0"),
            (20, "1"),
            (30, "1"),
            (40, "2"),
            (50, NONE),
            (60, NONE),
            (70, NONE)
        ])
    );
    // SSSP from 10: 30 via 20 (1 + 2 = 3 < 5), 40 via 30.
    assert_eq!(
        run(&["sssp", "--source", "10"]),
        values(&[
            (10, "0"),
            (20, "1"),
            (30, "3"),
            (40, "4"),
            (50, "Infinity"),
            (60, "Infinity"),
            (70, "Infinity")
        ])
    );
    // WCC: {10, 20, 30, 40}, {50, 60}, {70}.
    let wcc = run(&["wcc"]);
    let same = |a: u64, b: u64| wcc[&a] == wcc[&b];
    assert!(same(10, 20) && same(10, 30) && same(10, 40) && same(50, 60));
    assert!(!same(10, 50) && !same(10, 70) && !same(50, 70));
    // CDLP, 2 iterations. First: 10 sees {20, 30} → 20; 20 sees {10, 30} → 10; 30 sees
    // {10, 20, 40} → 10; 40 → 30; 50 → 60; 60 → 50; 70 keeps 70. Second: 10 sees {10, 10}
    // → 10; 20 sees {20, 10} → 10; 30 sees {20, 10, 30} → 10; 40 sees {10} → 10; 50 ↔ 60
    // swap back.
    assert_eq!(
        run(&["cdlp", "--iterations", "2"]),
        values(&[
            (10, "10"),
            (20, "10"),
            (30, "10"),
            (40, "10"),
            (50, "50"),
            (60, "60"),
            (70, "70")
        ])
    );
    // LCC: 10 and 20 have one neighbour pair, linked; 30 has three pairs, one linked.
    let lcc = run(&["lcc"]);
    let expected_lcc = [
        (10, 1.0),
        (20, 1.0),
        (30, 1.0 / 3.0),
        (40, 0.0),
        (50, 0.0),
        (60, 0.0),
        (70, 0.0),
    ];
    for (id, expected) in expected_lcc {
        let got: f64 = lcc[&id].parse().unwrap();
        assert!((got - expected).abs() < 1e-6, "lcc {id}: {got}");
    }
    // PageRank, one iteration, d = 0.85, N = 7: every vertex gets (1 - d)/N plus d/N of
    // the dangling vertex 70's 1/7, plus d times what its neighbours send (1/7 split over
    // their degrees 2, 2, 3, 1, 1, 1).
    let pr = run(&["pagerank", "--iterations", "1"]);
    let (d, n) = (0.85, 7.0);
    let base = (1.0 - d) / n + d * (1.0 / n) / n;
    let share = |degree: f64| (1.0 / n) / degree;
    let expected_pr = [
        (10, base + d * (share(2.0) + share(3.0))),
        (20, base + d * (share(2.0) + share(3.0))),
        (30, base + d * (share(2.0) + share(2.0) + share(1.0))),
        (40, base + d * share(3.0)),
        (50, base + d * share(1.0)),
        (60, base + d * share(1.0)),
        (70, base),
    ];
    for (id, expected) in expected_pr {
        let got: f64 = pr[&id].parse().unwrap();
        // Contributions are stored as f32 (see `algo::pagerank`): 1e-7 relative.
        assert!(
            (got - expected).abs() < 1e-7 * expected,
            "pagerank {id}: {got} vs {expected}"
        );
    }
    // Triangles: only 10-20-30.
    assert_eq!(
        run(&["tc"]),
        values(&[
            (10, "1"),
            (20, "1"),
            (30, "1"),
            (40, "0"),
            (50, "0"),
            (60, "0"),
            (70, "0")
        ])
    );
}

fn validation(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../packgraph/tests/data/graphalytics")
        .join(name)
        .display()
        .to_string()
}

fn reference(name: &str) -> BTreeMap<u64, String> {
    parse_output(&std::fs::read_to_string(validation(name)).unwrap())
}

#[test]
fn official_validation_graphs_through_the_cli() {
    for (graph, direction, source) in [
        ("example/example-directed", "--directed", "1"),
        ("example/example-undirected", "--undirected", "2"),
    ] {
        let input = validation(graph);
        let run = |args: &[&str]| {
            let mut all = vec!["run"];
            all.extend_from_slice(args);
            all.extend_from_slice(&["--input", &input, direction]);
            parse_output(&ok(&all))
        };
        assert_eq!(
            run(&["bfs", "--source", source]),
            reference(&format!("{graph}-BFS"))
        );
        assert_eq!(
            run(&["cdlp", "--iterations", "2"]),
            reference(&format!("{graph}-CDLP"))
        );
        for (args, suffix, tolerance) in [
            (vec!["pagerank", "--iterations", "2"], "PR", 1e-4),
            (vec!["sssp", "--source", source], "SSSP", 1e-4),
            (vec!["lcc"], "LCC", 1e-6),
        ] {
            let got = run(&args);
            let want = reference(&format!("{graph}-{suffix}"));
            assert_eq!(got.len(), want.len());
            for (id, w) in &want {
                let (g, w): (f64, f64) = (got[id].parse().unwrap(), w.parse().unwrap());
                let ok = if suffix == "LCC" {
                    (g - w).abs() <= tolerance
                } else {
                    g == w || (g - w).abs() <= tolerance * w.abs()
                };
                assert!(ok, "{graph} {suffix} {id}: {g} vs {w}");
            }
        }
    }
    let sssp = validation("sssp/dir-input.e");
    let got = parse_output(&ok(&[
        "run",
        "sssp",
        "-i",
        &sssp,
        "--directed",
        "--source",
        "1",
        "--weighted",
    ]));
    let want = reference("sssp/dir-output");
    for (id, w) in &want {
        let (g, w): (f64, f64) = (got[id].parse().unwrap(), w.parse().unwrap());
        assert!(
            g == w || (g - w).abs() <= 1e-4 * w.abs(),
            "sssp {id}: {g} vs {w}"
        );
    }
}

#[test]
fn summary_goes_to_stderr_and_json_to_stdout_beside_results_in_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let input = hand_dataset(dir.path()).display().to_string();
    let out = path(dir.path(), "bfs.out");
    let output = packgraph()
        .args([
            "run", "bfs", "--input", &input, "--source", "10", "--json", "-o", &out,
        ])
        .output()
        .unwrap();
    assert!(output.status.success());
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 7);
    let summary: serde_json::Value =
        serde_json::from_str(String::from_utf8(output.stdout).unwrap().trim()).unwrap();
    assert_eq!(summary["algorithm"], "bfs");
    assert_eq!(summary["result"]["reached"], 4);
    assert!(summary["load_seconds"].as_f64().is_some());
    assert!(summary["algorithm_seconds"].as_f64().is_some());
    let output = packgraph()
        .args([
            "run", "bfs", "--input", &input, "--source", "10", "-o", &out,
        ])
        .output()
        .unwrap();
    assert!(output.stdout.is_empty());
    assert!(String::from_utf8(output.stderr)
        .unwrap()
        .contains("time: load"));
    assert_eq!(
        parse_output(&std::fs::read_to_string(&out).unwrap())[&40],
        "2"
    );
}

/// `run` loads a file packed for analysis: the same answers in less memory than `info`
/// reports for the graph loaded with room for updates.
#[test]
fn run_holds_the_graph_packed_tighter_than_a_load_for_updates() {
    let dir = tempfile::tempdir().unwrap();
    let txt = path(dir.path(), "k.txt");
    ok(&["generate", "kronecker", "--scale", "12", "-o", &txt]);
    let json = |args: &[&str]| -> serde_json::Value {
        let output = packgraph().args(args).output().unwrap();
        assert!(output.status.success(), "{output:?}");
        serde_json::from_slice(&output.stdout).unwrap()
    };
    let info = json(&["info", &txt, "--json"]);
    let out = path(dir.path(), "wcc.out");
    let run = json(&["run", "wcc", "--input", &txt, "--json", "-o", &out]);
    let (roomy, packed) = (
        info["bytes_in_memory"].as_u64().unwrap(),
        run["memory_bytes"].as_u64().unwrap(),
    );
    assert!(
        packed * 10 < roomy * 9,
        "run holds {packed} bytes, info {roomy}"
    );
    assert_eq!(run["edges"], info["edges"]);
    let pgb = path(dir.path(), "k.pgb");
    ok(&["convert", &txt, &pgb]);
    let again = path(dir.path(), "wcc-pgb.out");
    ok(&["run", "wcc", "--input", &pgb, "-o", &again]);
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        std::fs::read_to_string(&again).unwrap()
    );
}

#[test]
fn bad_input_exits_2_naming_file_line_and_value() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let write = |name: &str, bytes: &[u8]| {
        let p = d.join(name);
        std::fs::write(&p, bytes).unwrap();
        p.display().to_string()
    };
    let malformed = write("bad.txt", b"1 2\n2 x3\n");
    let message = bad(&["run", "bfs", "--input", &malformed]);
    assert!(
        message.contains("bad.txt:2: vertex id is not a non-negative integer: `x3`"),
        "{message}"
    );
    let message = bad(&["info", &write("w.txt", b"1 2 0.5\n2 3 nan\n")]);
    assert!(
        message.contains("w.txt:2: weight is not finite"),
        "{message}"
    );
    let message = bad(&["info", &write("empty.txt", b"")]);
    assert!(
        message.contains("empty.txt: contains no edges"),
        "{message}"
    );
    let message = bad(&["info", &path(d, "missing.txt")]);
    assert!(message.contains("missing.txt: No such file"), "{message}");
    let message = bad(&["info", &d.display().to_string()]);
    assert!(message.contains("is a directory"), "{message}");
    let message = bad(&[
        "info",
        &write("cut.gz", &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0x33]),
    ]);
    assert!(
        message.contains("gzip stream is truncated or corrupt"),
        "{message}"
    );

    let good = write("good.txt", b"5 6\n6 7\n");
    let message = bad(&["run", "bfs", "--input", &good, "--source", "99"]);
    assert!(message.contains("--source 99: not a vertex"), "{message}");
    let message = bad(&["run", "sssp", "--input", &good, "--weighted"]);
    assert!(message.contains("has no edge weights"), "{message}");
    let message = bad(&["run", "pagerank", "--input", &good, "--damping", "1.5"]);
    assert!(message.contains("--damping 1.5"), "{message}");
    bad(&["run", "nosuch", "--input", &good]);
    bad(&["run", "bfs", "--input", &good, "--format", "xml"]);
    bad(&[
        "generate",
        "kronecker",
        "--scale",
        "40",
        "-o",
        &path(d, "x.txt"),
    ]);

    // A corrupted snapshot is refused, and a failed convert leaves its output untouched.
    let pgb = path(d, "g.pgb");
    ok(&["convert", &good, &pgb]);
    let mut bytes = std::fs::read(&pgb).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&pgb, &bytes).unwrap();
    let message = bad(&["info", &pgb]);
    assert!(
        message.contains("corrupted packgraph snapshot"),
        "{message}"
    );
    let kept = write("kept.txt", b"precious\n");
    bad(&["convert", &malformed, &kept]);
    assert_eq!(std::fs::read(&kept).unwrap(), b"precious\n");
}

#[test]
fn help_texts_explain_the_commands() {
    let help = ok(&["--help"]);
    for command in ["run", "info", "convert", "generate", "bench"] {
        assert!(help.contains(command), "{help}");
    }
    let help = ok(&["run", "--help"]);
    for word in [
        "bfs",
        "pagerank",
        "sssp",
        "--source",
        "--input",
        "Graphalytics",
    ] {
        assert!(help.contains(word), "{word}: {help}");
    }
}

#[test]
fn generate_refuses_a_graph_that_cannot_fit_in_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let out = path(tmp.path(), "g.txt");
    let err = bad(&[
        "generate",
        "er",
        "--vertices",
        "2",
        "--edges",
        "1e12",
        "-o",
        &out,
    ]);
    assert!(
        err.contains("2 vertices and 1000000000000 edges need about 48000.0 GB of memory"),
        "{err}"
    );
    assert!(!std::path::Path::new(&out).exists());
    let err = bad(&[
        "generate",
        "kronecker",
        "--scale",
        "31",
        "--edge-factor",
        "1000000",
        "-o",
        &out,
    ]);
    assert!(err.contains("need about"), "{err}");
}

/// A reader that closes the pipe before `info` and `run` write (`packgraph info G | head
/// -1`) ends them quietly: no panic message, and a status that says success.
#[test]
fn a_closed_stdout_pipe_is_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let txt = path(dir.path(), "g.txt");
    std::fs::write(&txt, "1 2\n2 3\n").unwrap();
    for args in [
        vec!["info", txt.as_str()],
        vec!["run", "bfs", "--input", &txt],
    ] {
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("packgraph"))
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(out.status.success(), "{args:?}: {:?} {stderr}", out.status);
    }
}
