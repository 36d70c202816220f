//! The command line without traps: direction merges said aloud, real Matrix Market output,
//! refused unknown extensions, text round trips that keep isolated vertices, reorder's id
//! mapping, inputs positional or by option, JSON on stdout, exit codes, help texts,
//! algorithm aliases and suggestions, shared defaults and CSV input.

use std::collections::BTreeMap;
use std::path::Path;

mod common;
use common::{bad, ok, packgraph, parse_output, path};

/// Runs `packgraph args`, expects success; returns (stdout, stderr).
fn ok_both(args: &[&str]) -> (String, String) {
    let output = packgraph().args(args).output().unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(output.status.success(), "packgraph {args:?}: {stderr}");
    (String::from_utf8(output.stdout).unwrap(), stderr)
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let file = path(dir, name);
    std::fs::write(&file, text).unwrap();
    file
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// `u v` pairs of an edge list (comments left out), each undirected pair in one order.
fn pairs(text: &str) -> Vec<(u64, u64)> {
    let mut pairs: Vec<(u64, u64)> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let mut f = l.split_whitespace().map(|x| x.parse::<u64>().unwrap());
            let (u, v) = (f.next().unwrap(), f.next().unwrap());
            (u.min(v), u.max(v))
        })
        .collect();
    pairs.sort_unstable();
    pairs
}

#[test]
fn an_undirected_read_says_how_many_reciprocal_arcs_it_merged() {
    let dir = tempfile::tempdir().unwrap();
    // Two reciprocal pairs (1-2 twice over, 3-4), one repeated arc, one one-way arc.
    let g = write(dir.path(), "g.txt", "1 2\n2 1\n1 2\n3 4\n4 3\n4 5\n");
    let message = "read as undirected: 2 reciprocal arc pairs";
    let (info, stderr) = ok_both(&["info", &g, "--json"]);
    assert_eq!(json(&info)["edges"], 3);
    assert_eq!(stderr.matches(message).count(), 1, "{stderr}");
    assert!(stderr.contains("pass --directed to keep them"), "{stderr}");
    for args in [
        vec!["run", "wcc", &g],
        vec!["convert", &g, "out.pgb"],
        vec!["reorder", &g, "out.txt", "--order", "bfs"],
    ] {
        let args: Vec<String> = args
            .iter()
            .map(|a| match *a {
                "out.pgb" | "out.txt" => path(dir.path(), a),
                _ => a.to_string(),
            })
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert!(ok_both(&args).1.contains(message), "{args:?}");
    }
    // Kept apart with --directed; nothing said when asked for undirected, or with no pair.
    let (info, stderr) = ok_both(&["info", &g, "--directed", "--json"]);
    assert_eq!(json(&info)["edges"], 5);
    assert!(!stderr.contains("reciprocal"), "{stderr}");
    assert!(!ok_both(&["info", &g, "--undirected"])
        .1
        .contains("reciprocal"));
    let one_way = write(dir.path(), "one_way.txt", "1 2\n2 3\n3 1\n");
    assert!(!ok_both(&["info", &one_way]).1.contains("reciprocal"));
}

#[test]
fn convert_writes_matrix_market_that_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let weighted = write(d, "w.txt", "1 2 0.5\n2 3 1.25\n3 1 2\n3 4 1e-3\n");
    for (directed, symmetry) in [(false, "symmetric"), (true, "general")] {
        let mtx = path(d, &format!("w{directed}.mtx"));
        let mut args = vec!["convert", &weighted, &mtx];
        if directed {
            args.push("--directed");
        }
        ok(&args);
        let text = std::fs::read_to_string(&mtx).unwrap();
        assert!(
            text.starts_with(&format!(
                "%%MatrixMarket matrix coordinate real {symmetry}\n"
            )),
            "{text}"
        );
        let back = json(&ok(&["info", &mtx, "--json"]));
        assert_eq!(back["directed"], directed);
        assert_eq!(back["weighted"], true);
        assert_eq!(back["edges"], 4);
        // The same distances from the same vertex (ids 1..=4 keep their numbers).
        let source = ["--source", "1"];
        let a = ok(&[
            &["run", "sssp", &weighted][..],
            &source,
            &dir_flag(directed),
        ]
        .concat());
        let b = ok(&[&["run", "sssp", &mtx][..], &source].concat());
        assert_eq!(a, b);
    }
    // Pattern files, and a graph whose ids are not 1..=n: renumbered in order, size kept.
    let pattern = write(d, "p.txt", "10 20\n20 30\n");
    let mtx = path(d, "p.mtx");
    ok(&["convert", &pattern, &mtx]);
    let text = std::fs::read_to_string(&mtx).unwrap();
    assert!(text.starts_with("%%MatrixMarket matrix coordinate pattern symmetric\n"));
    assert!(text.contains("\n3 3 2\n"), "{text}");
    let out = path(d, "p.txt.back");
    ok(&["convert", &mtx, &out, "--to", "edgelist"]);
    assert_eq!(
        pairs(&std::fs::read_to_string(&out).unwrap()),
        [(1, 2), (2, 3)]
    );
}

fn dir_flag(directed: bool) -> Vec<&'static str> {
    if directed {
        vec!["--directed"]
    } else {
        vec![]
    }
}

#[test]
fn unknown_output_extensions_are_refused_unless_the_format_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let g = write(dir.path(), "g.txt", "1 2\n2 3\n");
    let xlsx = path(dir.path(), "g.xlsx");
    for args in [
        vec!["convert", &g, &xlsx],
        vec!["reorder", &g, &xlsx, "--order", "bfs"],
        vec![
            "generate",
            "er",
            "--vertices",
            "10",
            "--edges",
            "5",
            "-o",
            &xlsx,
        ],
    ] {
        let error = bad(&args);
        assert!(error.contains("unknown output extension .xlsx"), "{error}");
        assert!(error.contains(".mtx") && error.contains("--to"), "{error}");
        assert!(!Path::new(&xlsx).exists());
    }
    ok(&["convert", &g, &xlsx, "--to", "edgelist"]);
    assert_eq!(
        pairs(&std::fs::read_to_string(&xlsx).unwrap()),
        [(1, 2), (2, 3)]
    );
}

#[test]
fn text_round_trips_keep_isolated_vertices_and_direction() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // 40 vertices, 6 edges: most vertices are isolated.
    let pgb = path(d, "g.pgb");
    ok(&[
        "generate",
        "er",
        "--vertices",
        "40",
        "--edges",
        "6",
        "--directed",
        "-o",
        &pgb,
    ]);
    let before = json(&ok(&["info", &pgb, "--json"]));
    assert_eq!(before["vertices"], 40);
    let (txt, mtx, again) = (path(d, "g.txt"), path(d, "g.mtx"), path(d, "again.pgb"));
    ok(&["convert", &pgb, &txt]);
    ok(&["convert", &txt, &again]);
    let after = json(&ok(&["info", &again, "--json"]));
    for key in ["vertices", "edges", "directed", "isolated_vertices"] {
        assert_eq!(before[key], after[key], "{key}");
    }
    ok(&["convert", &pgb, &mtx]);
    assert_eq!(json(&ok(&["info", &mtx, "--json"]))["vertices"], 40);
    // The same results, isolated vertices included.
    assert_eq!(ok(&["run", "wcc", &pgb]), ok(&["run", "wcc", &txt]));

    // A header whose count the file contradicts is an error naming it.
    let text = std::fs::read_to_string(&txt).unwrap();
    let cut: String = text
        .lines()
        .filter(|l| !l.starts_with("# isolated"))
        .map(|l| format!("{l}\n"))
        .collect();
    let edited = write(d, "edited.txt", &cut);
    let error = bad(&["info", &edited]);
    assert!(error.contains("declares 40 vertices"), "{error}");
}

#[test]
fn reorder_to_text_writes_the_old_to_new_mapping() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let g = write(d, "g.txt", "100 7\n7 55\n55 9\n9 100\n9 3\n");
    let out = path(d, "r.txt");
    let (_, stderr) = ok_both(&["reorder", &g, &out, "--order", "degree"]);
    let map_file = format!("{out}.map");
    assert!(stderr.contains(&map_file), "{stderr}");
    let map: BTreeMap<u64, u64> = std::fs::read_to_string(&map_file)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let (old, new) = l.split_once(' ').unwrap();
            (old.parse().unwrap(), new.parse().unwrap())
        })
        .collect();
    assert_eq!(map.len(), 5);
    assert_eq!(
        map.values()
            .copied()
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        5
    );
    // The reordered file is the same graph under the mapping.
    let mapped: Vec<(u64, u64)> = {
        let mut p: Vec<(u64, u64)> = pairs(&std::fs::read_to_string(&g).unwrap())
            .into_iter()
            .map(|(u, v)| (map[&u].min(map[&v]), map[&u].max(map[&v])))
            .collect();
        p.sort_unstable();
        p
    };
    assert_eq!(pairs(&std::fs::read_to_string(&out).unwrap()), mapped);
    // Results agree under the mapping.
    let old = parse_output(&ok(&["run", "bfs", &g, "--source", "9"]));
    let new = parse_output(&ok(&["run", "bfs", &out, "--source", &map[&9].to_string()]));
    for (id, value) in &old {
        assert_eq!(&new[&map[id]], value);
    }
    // --map names the file; a snapshot keeps the ids and needs none.
    let elsewhere = path(d, "ids.map");
    ok(&["reorder", &g, &out, "--order", "bfs", "--map", &elsewhere]);
    assert!(Path::new(&elsewhere).exists());
    let pgb = path(d, "r.pgb");
    ok(&["reorder", &g, &pgb, "--order", "bfs"]);
    assert!(!Path::new(&format!("{pgb}.map")).exists());
}

#[test]
fn every_command_takes_its_input_positionally_or_by_option() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let g = write(d, "g.txt", "1 2\n2 3\n3 4\n");
    assert_eq!(ok(&["run", "bfs", &g]), ok(&["run", "bfs", "--input", &g]));
    assert_eq!(ok(&["run", "bfs", &g]), ok(&["run", "bfs", "-i", &g]));
    let by_position = json(&ok(&["info", &g, "--json"]));
    let by_option = json(&ok(&["info", "--input", &g, "--json"]));
    assert_eq!(by_position["edges"], by_option["edges"]);
    let (a, b, c) = (path(d, "a.pgb"), path(d, "b.pgb"), path(d, "c.pgb"));
    ok(&["convert", &g, &a]);
    ok(&["convert", "--input", &g, &b]);
    ok(&["convert", "-i", &g, "-o", &c]);
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&c).unwrap());
    let (r1, r2) = (path(d, "r1.txt"), path(d, "r2.txt"));
    ok(&["reorder", &g, &r1, "--order", "rcm"]);
    ok(&["reorder", "--input", &g, "--output", &r2, "--order", "rcm"]);
    assert_eq!(
        std::fs::read_to_string(&r1).unwrap(),
        std::fs::read_to_string(&r2).unwrap()
    );
    // create takes its graph file as --from or --input.
    let (from, input) = (path(d, "from"), path(d, "input"));
    ok(&["create", &from, "--from", &g]);
    ok(&["create", &input, "--input", &g]);
    assert_eq!(
        json(&ok(&["info", &from, "--json"]))["edges"],
        json(&ok(&["info", &input, "--json"]))["edges"]
    );
    // Both forms at once, or none, is a usage error.
    assert!(bad(&["run", "bfs", &g, "--input", &g]).contains("--input"));
    assert!(bad(&["convert", &g]).contains("OUTPUT or --output"));
    assert!(bad(&["convert", &g, &a, &b]).contains("b.pgb"));
    assert!(bad(&["convert", "-i", &g, &a, &b]).contains("one file too many"));
    bad(&["info"]);
}

#[test]
fn json_goes_to_stdout_on_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let g = write(d, "g.txt", "1 2\n2 3\n3 4\n");
    let results = path(d, "bfs.out");
    let (stdout, stderr) = ok_both(&["run", "bfs", &g, "--json", "-o", &results]);
    assert_eq!(json(&stdout)["algorithm"], "bfs");
    assert!(!stderr.contains('{'), "{stderr}");
    assert_eq!(
        parse_output(&std::fs::read_to_string(&results).unwrap()).len(),
        4
    );
    // Without -o, stdout would mix results and JSON: refused before any work.
    assert!(bad(&["run", "bfs", &g, "--json"]).contains("-o FILE"));
    let pgb = path(d, "g.pgb");
    let cases: [(Vec<&str>, &str); 4] = [
        (vec!["info", &g, "--json"], "vertices"),
        (vec!["convert", &g, &pgb, "--json"], "format"),
        (
            vec!["reorder", &g, &pgb, "--order", "bfs", "--json"],
            "order",
        ),
        (
            vec![
                "generate",
                "er",
                "--vertices",
                "9",
                "--edges",
                "9",
                "-o",
                &pgb,
                "--json",
            ],
            "edges",
        ),
    ];
    for (args, key) in cases {
        let (stdout, stderr) = ok_both(&args);
        assert!(json(&stdout).get(key).is_some(), "{args:?}: {stdout}");
        assert!(!stderr.contains('{'), "{args:?}: {stderr}");
    }
    // Human text stays on stderr when stdout carries results.
    let (stdout, stderr) = ok_both(&["run", "bfs", &g]);
    assert!(
        stdout.lines().all(|l| l.split(' ').count() == 2),
        "{stdout}"
    );
    assert!(stderr.contains("time:"), "{stderr}");
}

#[test]
fn user_errors_exit_2_before_any_work_and_say_it_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let g = write(d, "g.txt", "1 2\n2 3\n");
    let blocker = write(d, "file", "");
    let inside_a_file = format!("{blocker}/out.txt");
    let missing_dir = path(d, "no/such/dir/out.pgb");
    for output in [&inside_a_file, &missing_dir] {
        for args in [
            vec!["run", "bfs", &g, "-o", output],
            vec!["convert", &g, output],
            vec!["reorder", &g, output, "--order", "bfs"],
            vec![
                "generate",
                "er",
                "--vertices",
                "5",
                "--edges",
                "4",
                "-o",
                output,
            ],
        ] {
            let error = bad(&args);
            assert!(error.contains("cannot write the output here"), "{error}");
            assert_eq!(error.matches("packgraph: error:").count(), 1, "{error}");
            // Checked before reading: the input's messages never appear.
            assert!(!error.contains("reciprocal") && !error.contains("time:"));
        }
    }
    // A directory as output, a reorder map that cannot be written.
    let directory = path(d, "");
    assert!(bad(&["convert", &g, &directory, "--to", "binary"]).contains("is a directory"));
    let map = format!("{blocker}/x.map");
    assert!(bad(&[
        "reorder",
        &g,
        &path(d, "r.txt"),
        "--order",
        "bfs",
        "--map",
        &map
    ])
    .contains("x.map"));
    // An input error is said once, with its file and line.
    let broken = write(d, "broken.txt", "1 2\n2 x\n");
    let error = bad(&["info", &broken]);
    assert_eq!(error.lines().count(), 1, "{error}");
    assert_eq!(error.matches("broken.txt:2").count(), 1, "{error}");
    // Ids that do not fit the command: a source that is no vertex.
    assert!(bad(&["run", "bfs", &g, "--source", "7"]).contains("not a vertex"));
}

#[test]
fn help_texts_say_the_true_defaults() {
    let run_help = ok(&["run", "--help"]);
    assert!(!run_help.contains("--source (default 0)"), "{run_help}");
    assert!(
        run_help.contains("--source (default the smallest vertex id)"),
        "{run_help}"
    );
    let convert_help = ok(&["convert", "--help"]);
    assert!(
        !convert_help.contains("Results in the file's ids"),
        "{convert_help}"
    );
    assert!(convert_help.contains(".mtx"), "{convert_help}");
    // The default source is the smallest id, also after a reorder.
    let dir = tempfile::tempdir().unwrap();
    let g = write(dir.path(), "g.txt", "5 9\n9 3\n3 12\n");
    let bfs = parse_output(&ok(&["run", "bfs", &g, "--order", "degree"]));
    assert_eq!(bfs[&3], "0");
    // info: human units in text, exact bytes in JSON.
    let info = ok(&["info", &g]);
    let memory = info.lines().find(|l| l.starts_with("memory")).unwrap();
    assert!(
        memory.contains("KiB") || memory.contains(" B ("),
        "{memory}"
    );
    assert!(json(&ok(&["info", &g, "--json"]))["bytes_in_memory"].is_u64());
}

#[test]
fn algorithms_answer_to_both_names_and_typos_get_suggestions() {
    let dir = tempfile::tempdir().unwrap();
    let g = write(dir.path(), "g.txt", "1 2\n2 3\n3 1\n3 4\n");
    for (short, long) in [
        ("tc", "triangles"),
        ("kcore", "core_number"),
        ("bc", "betweenness"),
    ] {
        assert_eq!(ok(&["run", short, &g]), ok(&["run", long, &g]), "{long}");
    }
    let help = ok(&["run", "--help"]);
    assert!(help.contains("also: triangles"), "{help}");
    assert!(help.contains("also: core_number"), "{help}");
    let error = bad(&["run", "pagernk", &g]);
    assert!(
        error.contains("a similar value exists: 'pagerank'"),
        "{error}"
    );
    let error = bad(&["run", "triangle", &g]);
    assert!(error.contains("'triangles'"), "{error}");
    let error = bad(&["run", "bfs", &g, "--sourc", "1"]);
    assert!(error.contains("--source"), "{error}");
}

#[test]
fn defaults_are_shared_and_unreached_vertices_follow_graphalytics() {
    let dir = tempfile::tempdir().unwrap();
    let g = write(dir.path(), "g.txt", "1 2\n2 3\n7 8\n");
    let bfs = parse_output(&ok(&["run", "bfs", &g, "--source", "1"]));
    assert_eq!(bfs[&7], i64::MAX.to_string());
    let sssp = parse_output(&ok(&["run", "sssp", &g, "--source", "1"]));
    assert_eq!(sssp[&7], "Infinity");
    // mis: the default seed is the registry's (1).
    assert_eq!(
        ok(&["run", "mis", &g]),
        ok(&["run", "mis", &g, "--seed", "1"])
    );
}

#[test]
fn csv_headers_and_delimiters_are_detected_or_given() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let csv = write(d, "g.csv", "source,target,weight\n1,2,0.5\n2,3,1.5\n");
    let (info, stderr) = ok_both(&["info", &csv, "--json"]);
    assert_eq!(json(&info)["edges"], 2);
    assert_eq!(json(&info)["weighted"], true);
    assert!(
        stderr.contains("skipped the header line \"source,target,weight\""),
        "{stderr}"
    );
    // --header says it quietly; --no-header makes the header an error naming line 1.
    let (_, quiet) = ok_both(&["info", &csv, "--header"]);
    assert!(!quiet.contains("skipped"), "{quiet}");
    let error = bad(&["info", &csv, "--no-header"]);
    assert!(
        error.contains("g.csv:1:") && error.contains("`source`"),
        "{error}"
    );
    // --header on a file whose first line is data skips that line.
    let plain = write(d, "plain.csv", "1,2\n2,3\n3,4\n");
    assert_eq!(
        json(&ok(&["info", &plain, "--header", "--json"]))["edges"],
        2
    );
    // ; and | are detected from the first data line, or given.
    let semi = write(d, "semi.csv", "from;to\n1;2\n2;3\n");
    assert_eq!(json(&ok(&["info", &semi, "--json"]))["edges"], 2);
    let pipe = write(d, "pipe.txt", "1|2\n2|3\n3|1\n");
    assert_eq!(json(&ok(&["info", &pipe, "--json"]))["edges"], 3);
    assert_eq!(
        json(&ok(&["info", &pipe, "--delimiter", "|", "--json"]))["edges"],
        3
    );
    // A bad delimiter, and a line the delimiter does not split, are clear errors.
    assert!(bad(&["info", &pipe, "--delimiter", "ab"]).contains("one ASCII punctuation"));
    let error = bad(&["info", &pipe, "--delimiter", ";"]);
    assert!(error.contains("pipe.txt:1:"), "{error}");
}

/// A locked data directory exits 2, said once: `tests/store.rs::a_second_writer_is_refused`.
#[test]
fn checkpoint_prints_its_figures_as_json() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = path(tmp.path(), "d");
    ok(&["create", &dir]);
    let (stdout, stderr) = ok_both(&["checkpoint", &dir, "--json"]);
    let summary = json(&stdout);
    assert!(summary["bytes_written"].is_u64(), "{summary}");
    assert!(summary["delta"].is_boolean(), "{summary}");
    assert!(!stderr.contains('{'), "{stderr}");
}

/// `create`, `verify` and `recover` print their figures as one JSON object on stdout too.
#[test]
fn directory_commands_print_their_figures_as_json() {
    let tmp = tempfile::tempdir().unwrap();
    let g = write(tmp.path(), "g.txt", "1 2\n2 3\n3 4\n");
    let dir = path(tmp.path(), "d");
    let (stdout, stderr) = ok_both(&["create", &dir, "--from", &g, "--json"]);
    let created = json(&stdout);
    assert_eq!(created["vertices"], 4, "{created}");
    assert_eq!(created["edges"], 3, "{created}");
    assert_eq!(created["ids"], "int", "{created}");
    assert!(!stderr.contains('{'), "{stderr}");
    let updates = write(tmp.path(), "u.txt", "+ 4 5\ncommit\n+ 5 6\n");
    ok(&["ingest", &dir, "--updates", &updates]);
    let (stdout, _) = ok_both(&["verify", &dir, "--json"]);
    let report = json(&stdout);
    assert_eq!(report["ok"], true, "{report}");
    assert_eq!(report["vertices"], 6, "{report}");
    assert_eq!(report["arcs"], 10, "{report}");
    assert!(report["records"].as_u64().unwrap() >= 2, "{report}");
    let (stdout, _) = ok_both(&["recover", &dir, "--json"]);
    let recovered = json(&stdout);
    assert!(recovered["damaged_seq"].is_null(), "{recovered}");
    assert!(recovered["last_seq"].as_u64().unwrap() >= 2, "{recovered}");
}
