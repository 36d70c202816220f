//! Graph files: round trips through every writable format, the bundled real graphs, every
//! kind of bad input (a clear error naming file, line and value; never a panic), parsers
//! fed arbitrary bytes, and the regression corpus in `tests/corpus`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use packgraph::graph::{AnyGraph, WeightedGraphRead};
use packgraph::io::{load, save, Dataset, Format, LoadOptions};
use packgraph::Error;
use proptest::prelude::*;

/// Edges in external ids with weights (1 when unweighted), undirected ones both ways.
fn edge_map(data: &Dataset) -> BTreeMap<(u64, u64), f64> {
    let mut edges = BTreeMap::new();
    for v in 0..data.graph.num_vertices() as u32 {
        let u = data.ids().external(v);
        let mut add = |w: u32, weight: f64| {
            edges.insert((u, data.ids().external(w)), weight);
            true
        };
        match &data.graph {
            AnyGraph::Unweighted(g) => g.for_each_out_edge(v, &mut add),
            AnyGraph::Weighted(g) => g.for_each_out_edge(v, &mut add),
        };
    }
    edges
}

fn vertices(data: &Dataset) -> Vec<u64> {
    (0..data.ids().len() as u32)
        .map(|v| data.ids().external(v))
        .collect()
}

fn write(dir: &Path, name: &str, text: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

fn load_default(path: &Path) -> Result<Dataset, Error> {
    load(path, &LoadOptions::default())
}

fn options(directed: bool) -> LoadOptions {
    LoadOptions {
        directed: Some(directed),
        ..LoadOptions::default()
    }
}

#[test]
fn edge_lists_read_comments_commas_and_weights() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "g.csv",
        b"% comment\n# another\n\n5,7,0.5\n  7 ,9, 2\r\n9\t5\t-1.25\n",
    );
    let data = load(&path, &options(true)).unwrap();
    assert_eq!(vertices(&data), [5, 7, 9]);
    assert!(data.graph.is_weighted() && data.graph.is_directed());
    let edges = edge_map(&data);
    assert_eq!(edges[&(5, 7)], 0.5);
    assert_eq!(edges[&(7, 9)], 2.0);
    assert_eq!(edges[&(9, 5)], -1.25);
    assert_eq!(edges.len(), 3);
}

#[test]
fn self_loops_are_counted_not_lost_silently() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "g.txt", b"1 1\n1 2\n2 2\n");
    let data = load_default(&path).unwrap();
    assert_eq!(data.self_loops, 2);
    assert_eq!(data.graph.num_edges(), 1);
    assert_eq!(vertices(&data), [1, 2]);
}

#[test]
fn gzip_is_detected_by_content_not_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "plain-name.txt", &gzip(b"1 2\n2 3\n"));
    let data = load_default(&path).unwrap();
    assert_eq!(data.graph.num_edges(), 2);
    let path = write(
        dir.path(),
        "m.dat",
        &gzip(b"%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n3 1\n"),
    );
    assert_eq!(Format::detect(&path).unwrap(), Format::MatrixMarket);
    let data = load_default(&path).unwrap();
    assert!(data.graph.is_directed());
    assert_eq!(
        edge_map(&data).keys().copied().collect::<Vec<_>>(),
        [(1, 2), (3, 1)]
    );
}

#[test]
fn matrix_market_symmetry_weights_and_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "s.mtx",
        b"%%MatrixMarket matrix coordinate real symmetric\n% c\n4 4 3\n2 1 1.5\n3 2 2\n4 4 9\n",
    );
    let data = load_default(&path).unwrap();
    assert!(!data.graph.is_directed());
    assert_eq!(vertices(&data), [1, 2, 3, 4]);
    assert_eq!(data.self_loops, 1);
    let edges = edge_map(&data);
    assert_eq!(edges[&(1, 2)], 1.5);
    assert_eq!(edges[&(2, 1)], 1.5);
    assert_eq!(edges.len(), 4);
    let data = load(&path, &options(false)).unwrap();
    assert!(!data.graph.is_directed());
    let path = write(
        dir.path(),
        "g.mtx",
        b"%%matrixmarket MATRIX coordinate integer general\n3 3 1\n1 3 7\n",
    );
    let data = load(&path, &options(false)).unwrap();
    assert!(!data.graph.is_directed());
    assert_eq!(edge_map(&data).len(), 2);
}

#[test]
fn graphalytics_pairs_are_found_from_either_file_or_the_prefix() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "d.v", b"100\n7\n300\n42\n");
    write(dir.path(), "d.e", b"7 100 0.5\n100 300 1.5\n");
    write(dir.path(), "d.properties", b"graph.d.directed = true\n");
    for name in ["d.v", "d.e", "d"] {
        let path = dir.path().join(name);
        assert_eq!(Format::detect(&path).unwrap(), Format::Graphalytics);
        let data = load_default(&path).unwrap();
        assert_eq!(vertices(&data), [7, 42, 100, 300]);
        assert!(data.graph.is_directed() && data.graph.is_weighted());
        assert_eq!(edge_map(&data)[&(100, 300)], 1.5);
    }
    let data = load(&dir.path().join("d"), &options(false)).unwrap();
    assert!(!data.graph.is_directed());
}

#[test]
fn graphalytics_validation_graphs_load_with_their_counts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/graphalytics");
    for (name, directed, n, m) in [
        ("example/example-directed", true, 10, 17),
        ("example/example-undirected", false, 9, 12),
        ("sssp/dir-input", true, 0, 0),
        ("sssp/undir-input", false, 0, 0),
    ] {
        let data = load(&root.join(name), &options(directed)).unwrap();
        if n > 0 {
            assert_eq!(data.graph.num_vertices(), n, "{name}");
            assert_eq!(data.graph.num_edges(), m, "{name}");
        }
        assert!(data.graph.is_weighted());
    }
    // Directedness comes from the properties file when present.
    let data = load_default(&root.join("example/example-directed.v")).unwrap();
    assert!(!data.graph.is_directed(), "no properties file beside it");
}

fn real(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../data/real")
        .join(name)
}

#[test]
fn bundled_real_graphs_have_their_documented_sizes() {
    for (name, directed, n, m) in [
        ("facebook_combined.txt.gz", false, 4_039, 88_234),
        ("email-Enron.txt.gz", false, 36_691, 183_830),
        ("Wiki-Vote.txt.gz", true, 7_115, 103_689),
        ("soc-Epinions1.lcc.txt.gz", false, 75_877, 405_739),
        ("luxembourg_osm.mtx.gz", false, 114_599, 119_666),
    ] {
        let data = load(&real(name), &options(directed)).unwrap();
        assert_eq!(data.graph.num_vertices(), n, "{name}");
        assert_eq!(data.graph.num_edges(), m, "{name}");
        assert_eq!(data.self_loops, 0, "{name}");
    }
}

fn round_trip(data: &Dataset, dir: &Path) {
    let before = edge_map(data);
    for (format, name) in [
        (Format::EdgeList, "out.txt"),
        (Format::Graphalytics, "out.v"),
        (Format::Binary, "out.pgb"),
    ] {
        let path = dir.join(name);
        if format == Format::EdgeList && data.graph.num_edges() == 0 {
            // Only isolated vertices (self-loops are not stored): refused, nothing written.
            let error = save(data, &path, format).unwrap_err().to_string();
            assert!(error.contains("without edges"), "{error}");
            assert!(!path.exists());
            continue;
        }
        save(data, &path, format).unwrap();
        let back = load(
            &path,
            &LoadOptions {
                directed: Some(data.graph.is_directed()),
                ..LoadOptions::default()
            },
        )
        .unwrap();
        assert_eq!(edge_map(&back), before, "{format:?}");
        assert_eq!(
            back.graph.is_weighted(),
            data.graph.is_weighted(),
            "{format:?}"
        );
        {
            // Every format keeps every vertex, isolated ones included (an edge list in its
            // `# isolated vertices:` lines).
            let sorted = |data: &Dataset| {
                let mut ids = vertices(data);
                ids.sort_unstable();
                ids
            };
            assert_eq!(sorted(&back), sorted(data), "{format:?}");
        }
    }
}

#[test]
fn real_graphs_round_trip_through_every_writable_format() {
    let dir = tempfile::tempdir().unwrap();
    for (name, directed) in [("Wiki-Vote.txt.gz", true), ("luxembourg_osm.mtx.gz", false)] {
        round_trip(&load(&real(name), &options(directed)).unwrap(), dir.path());
    }
}

#[test]
fn matrix_market_is_written_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "g.txt", b"1 2\n2 3\n");
    let data = load_default(&path).unwrap();
    let mtx = dir.path().join("g.mtx");
    save(&data, &mtx, Format::MatrixMarket).unwrap();
    assert_eq!(
        std::fs::read_to_string(&mtx).unwrap(),
        "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n3 2\n"
    );
    let back = load_default(&mtx).unwrap();
    assert_eq!((back.graph.num_vertices(), back.graph.num_edges()), (3, 2));
    assert!(!back.graph.is_directed());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn random_graphs_round_trip(
        edges in prop::collection::vec((0u64..40, 0u64..40, -8i32..8), 1..120),
        directed in any::<bool>(),
        weighted in any::<bool>(),
        spread in prop_oneof![Just(1u64), Just(1000u64), Just(1u64 << 40)],
    ) {
        let dir = tempfile::tempdir().unwrap();
        let text: String = edges
            .iter()
            .map(|&(u, v, w)| {
                if weighted {
                    format!("{} {} {}\n", u * spread, v * spread, f64::from(w) / 4.0)
                } else {
                    format!("{} {}\n", u * spread, v * spread)
                }
            })
            .collect();
        let path = write(dir.path(), "in.txt", text.as_bytes());
        let data = load(&path, &options(directed)).unwrap();
        // Oracle: last weight wins, both directions when undirected, no self-loops.
        let mut oracle = BTreeMap::new();
        for &(u, v, w) in &edges {
            if u == v {
                continue;
            }
            let w = if weighted { f64::from(w) / 4.0 } else { 1.0 };
            oracle.insert((u * spread, v * spread), w);
            if !directed {
                oracle.insert((v * spread, u * spread), w);
            }
        }
        prop_assert_eq!(edge_map(&data), oracle);
        round_trip(&data, dir.path());
    }
}

/// Self-loops only: the graph keeps the vertices and no edges. Graphalytics and snapshots
/// keep it (weighted or not); an edge list cannot, so writing one is refused.
#[test]
fn a_graph_of_self_loops_only_round_trips_where_the_format_can_hold_it() {
    for (text, weighted) in [("33 33\n", false), ("33 33 0.5\n7 7 1\n", true)] {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "in.txt", text.as_bytes());
        let data = load(&path, &options(false)).unwrap();
        assert_eq!(data.graph.num_edges(), 0);
        assert_eq!(data.graph.is_weighted(), weighted);
        round_trip(&data, dir.path());
    }
}

/// A load that must fail; returns the message.
fn fails(path: &Path, options: &LoadOptions) -> String {
    match load(path, options) {
        Ok(_) => panic!("{} loaded", path.display()),
        Err(error) => error.to_string(),
    }
}

#[test]
fn every_bad_input_gives_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let default = LoadOptions::default();
    let cases: Vec<(&str, &[u8], &str)> = vec![
        (
            "neg.txt",
            b"1 2\n-3 4\n",
            "neg.txt:2: negative vertex id: `-3`",
        ),
        (
            "word.txt",
            b"1 2\n3 four\n",
            "word.txt:2: vertex id is not a non-negative integer: `four`",
        ),
        (
            "big.txt",
            b"1 2\n18446744073709551616 1\n",
            "big.txt:2: vertex id beyond the supported range (0 to 2^64-1): `18446744073709551616`",
        ),
        (
            "one.txt",
            b"# c\n1 2\n3\n",
            "one.txt:3: expected two vertex ids, found one: `3`",
        ),
        ("many.txt", b"1 2 3 4\n", "many.txt:1: too many columns"),
        (
            "nan.txt",
            b"1 2 0.5\n2 3 NaN\n",
            "nan.txt:2: weight is not finite (NaN or infinity): `NaN`",
        ),
        ("inf.txt", b"1 2 inf\n", "inf.txt:1: weight is not finite"),
        (
            "wword.txt",
            b"1 2 heavy\n",
            "wword.txt:1: weight is not a number: `heavy`",
        ),
        (
            "mixed.txt",
            b"1 2 0.5\n2 3\n",
            "mixed.txt:2: this line has no weight column but earlier lines have one",
        ),
        ("empty.txt", b"", "empty.txt: contains no edges"),
        (
            "comments.txt",
            b"# only\n% comments\n",
            "comments.txt: contains no edges",
        ),
        (
            "lies.mtx",
            b"%%MatrixMarket matrix coordinate pattern general\n3 3 5\n1 2\n",
            "lies.mtx: the size line declares 5 entries but the file has 1",
        ),
        (
            "range.mtx",
            b"%%MatrixMarket matrix coordinate pattern general\n3 3 1\n4 1\n",
            "range.mtx:3: index outside 1..=rows of the size line: `4`",
        ),
        (
            "nosize.mtx",
            b"%%MatrixMarket matrix coordinate pattern general\n% c\n",
            "nosize.mtx: ends before the size line",
        ),
        (
            "rect.mtx",
            b"%%MatrixMarket matrix coordinate pattern general\n3 4 0\n",
            "rect.mtx: the matrix is 3 x 4",
        ),
        (
            "cplx.mtx",
            b"%%MatrixMarket matrix coordinate complex general\n1 1 0\n",
            "cplx.mtx:1: the field must be pattern, integer or real",
        ),
        (
            "arr.mtx",
            b"%%MatrixMarket matrix array real general\n1 1\n",
            "arr.mtx:1: only the coordinate format is supported",
        ),
        (
            "val.mtx",
            b"%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2\n",
            "val.mtx:3: missing the entry's value",
        ),
    ];
    for (name, text, expected) in cases {
        let path = write(d, name, text);
        let message = fails(&path, &default);
        assert!(message.contains(expected), "{name}: {message}");
        assert!(message.contains(&path.display().to_string()), "{message}");
    }
    // Errors past the first parallel piece still name the right line.
    let mut long = String::new();
    for i in 0..400_000 {
        long.push_str(&format!("{i} {}\n", i + 1));
    }
    long.push_str("5 -6\n");
    let path = write(d, "long.txt", long.as_bytes());
    assert!(fails(&path, &default).contains("long.txt:400001: negative vertex id: `-6`"));

    let path = write(d, "trunc.gz", &gzip(long.as_bytes())[..2000]);
    assert!(fails(&path, &default).contains("gzip stream is truncated or corrupt"));
    let mut bad = gzip(b"1 2\n");
    let middle = bad.len() / 2;
    bad[middle] ^= 0xff;
    let path = write(d, "bad.gz", &bad);
    assert!(fails(&path, &default).contains("bad.gz"));

    assert!(fails(&d.join("missing.txt"), &default).contains("missing.txt: No such file"));
    assert!(fails(d, &default).contains("is a directory"));

    // Graphalytics: unknown endpoint, duplicate vertex, bad property, half a pair.
    write(d, "u.v", b"1\n2\n");
    write(d, "u.e", b"1 2\n2 3\n");
    assert!(fails(&d.join("u"), &default)
        .contains("u.e:2: edge endpoint is not listed in the vertex file: `3`"));
    write(d, "dup.v", b"1\n2\n1\n");
    write(d, "dup.e", b"1 2\n");
    assert!(fails(&d.join("dup"), &default).contains("dup.v:3: vertex listed twice: `1`"));
    write(d, "p.v", b"1\n");
    write(d, "p.e", b"");
    write(d, "p.properties", b"graph.p.directed = maybe\n");
    assert!(fails(&d.join("p"), &default)
        .contains("p.properties:1: graph.p.directed must be true or false"));
    write(d, "half.v", b"1\n");
    let forced = LoadOptions {
        format: Some(Format::Graphalytics),
        ..LoadOptions::default()
    };
    assert!(fails(&d.join("half.v"), &forced).contains("needs both NAME.v and NAME.e"));
    write(d, "nov.v", b"");
    write(d, "nov.e", b"");
    assert!(fails(&d.join("nov"), &default).contains("nov.v: the vertex file lists no vertices"));
}

#[test]
fn damaged_snapshots_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let source = write(d, "g.txt", b"1 2 0.5\n2 3 1\n3 1 2\n10 11 3\n");
    let data = load(&source, &options(true)).unwrap();
    let path = d.join("g.pgb");
    save(&data, &path, Format::Binary).unwrap();
    let good = std::fs::read(&path).unwrap();
    assert_eq!(edge_map(&load_default(&path).unwrap()), edge_map(&data));

    let forced = LoadOptions {
        format: Some(Format::Binary),
        ..LoadOptions::default()
    };
    // Every single-byte change is caught (checksum, sizes, magic or version).
    for at in (0..good.len()).step_by(7) {
        let mut bytes = good.clone();
        bytes[at] ^= 0x5a;
        let path = write(d, "flip.pgb", &bytes);
        let message = fails(&path, &forced);
        assert!(message.contains("flip.pgb"), "{message}");
    }
    let path = write(d, "cut.pgb", &good[..good.len() - 9]);
    assert!(fails(&path, &forced).contains("the header says"));
    let path = write(d, "short.pgb", &good[..20]);
    assert!(fails(&path, &forced).contains("shorter than the header"));
    let mut bytes = good.clone();
    bytes[40] ^= 1;
    let path = write(d, "sum.pgb", &bytes);
    assert!(fails(&path, &forced).contains("checksum mismatch"));
    let mut bytes = good.clone();
    bytes[8] = 9;
    let path = write(d, "ver.pgb", &bytes);
    assert!(fails(&path, &forced).contains("snapshot format version 9"));
    let path = write(d, "text.pgb", b"1 2\n");
    assert!(fails(&path, &forced).contains("not a packgraph snapshot"));
    assert!(fails(&path.with_extension("none"), &forced).contains("No such file"));
}

/// Loads `bytes` in every format; only errors or graphs may come out.
fn load_any(dir: &Path, bytes: &[u8]) {
    let path = write(dir, "fuzz.in", bytes);
    for (format, _) in Format::ALL {
        if format == Format::Graphalytics {
            write(dir, "fz.v", bytes);
            write(dir, "fz.e", bytes);
            let _ = load(&dir.join("fz"), &LoadOptions::default());
            continue;
        }
        let options = LoadOptions {
            format: Some(format),
            ..LoadOptions::default()
        };
        if let Ok(data) = load(&path, &options) {
            let _ = edge_map(&data);
        }
    }
}

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

#[test]
fn regression_corpus_never_panics() {
    let dir = tempfile::tempdir().unwrap();
    let mut count = 0;
    for entry in std::fs::read_dir(corpus()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            continue;
        }
        load_any(dir.path(), &std::fs::read(&path).unwrap());
        count += 1;
    }
    assert!(count >= 10, "corpus has {count} files");
}

fn text_like() -> impl Strategy<Value = Vec<u8>> {
    let token = prop_oneof![
        Just(b"1".to_vec()),
        Just(b"42".to_vec()),
        Just(b"-7".to_vec()),
        Just(b"0.5".to_vec()),
        Just(b"nan".to_vec()),
        Just(b"99999999999999999999".to_vec()),
        Just(b" ".to_vec()),
        Just(b"\t".to_vec()),
        Just(b",".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"#".to_vec()),
        Just(b"%".to_vec()),
        Just(b"%%MatrixMarket matrix coordinate real symmetric\n".to_vec()),
        Just(b"3 3 2\n".to_vec()),
        prop::collection::vec(any::<u8>(), 1..4),
    ];
    prop::collection::vec(token, 0..40).prop_map(|t| t.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn parsers_survive_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let dir = tempfile::tempdir().unwrap();
        load_any(dir.path(), &bytes);
        load_any(dir.path(), &gzip(&bytes));
    }

    #[test]
    fn parsers_survive_text_like_input(bytes in text_like()) {
        let dir = tempfile::tempdir().unwrap();
        load_any(dir.path(), &bytes);
    }

    #[test]
    fn snapshots_survive_arbitrary_damage(
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in any::<prop::sample::Index>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let source = write(dir.path(), "g.txt", b"1 2\n2 3\n3 1\n7 8\n8 1\n");
        let data = load(&source, &options(true)).unwrap();
        let path = dir.path().join("g.pgb");
        save(&data, &path, Format::Binary).unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        for (at, byte) in flips {
            let i = at.index(bytes.len());
            bytes[i] ^= byte;
        }
        load_any(dir.path(), &bytes);
        let end = cut.index(bytes.len());
        load_any(dir.path(), &bytes[..end]);
    }
}

/// Vertices added by id after loading get the next internal ids, so the ids are no longer
/// increasing: snapshot files keep them as a list; a damaged list is refused; graphs with
/// named vertices are kept by snapshots, written by edge lists and refused by Graphalytics.
#[test]
fn added_vertex_ids_round_trip_and_named_graphs_are_written() {
    use packgraph::graph::ExternalId;

    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let source = write(d, "g.txt", b"10 20\n20 30\n");
    let mut data = load(&source, &options(true)).unwrap();
    let AnyGraph::Unweighted(graph) = &mut data.graph else {
        panic!("unweighted")
    };
    let v = graph.intern(&[5.into(), 20.into()]).unwrap();
    assert_eq!(v, [3, 1]);
    graph.insert_edges(&[(3, 0)]).unwrap();
    assert_eq!(vertices(&data), [10, 20, 30, 5]);
    let path = d.join("g.pgb");
    save(&data, &path, Format::Binary).unwrap();
    let back = load_default(&path).unwrap();
    assert_eq!(vertices(&back), [10, 20, 30, 5]);
    assert_eq!(edge_map(&back), edge_map(&data));
    assert_eq!(back.ids().internal(5), Some(3));
    // Other formats renumber by rank; the edges in external ids are the same.
    round_trip(&data, d);

    // The last id made equal to the first, checksums fixed: refused as a repeat.
    let mut bytes = std::fs::read(&path).unwrap();
    let len = bytes.len();
    bytes[len - 8..].copy_from_slice(&10u64.to_le_bytes());
    let payload_crc = crc32fast::hash(&bytes[48..]);
    bytes[40..44].copy_from_slice(&payload_crc.to_le_bytes());
    let header_crc = crc32fast::hash(&bytes[..44]);
    bytes[44..48].copy_from_slice(&header_crc.to_le_bytes());
    let repeated = write(d, "repeat.pgb", &bytes);
    let message = fails(&repeated, &LoadOptions::default());
    assert!(
        message.contains("repeat.pgb") && message.contains("a vertex id is repeated"),
        "{message}"
    );

    // A named vertex: Graphalytics refuses it and no file appears; a snapshot keeps it; an
    // edge list writes its name.
    let AnyGraph::Unweighted(graph) = &mut data.graph else {
        panic!("unweighted")
    };
    let alice = graph.intern(&[ExternalId::from("alice")]).unwrap()[0];
    graph.insert_edges(&[(alice, 0)]).unwrap();
    let path = d.join("named.v");
    let error = save(&data, &path, Format::for_output(&path))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("named.v") && error.contains("Graphalytics"),
        "{error}"
    );
    assert!(!path.exists() && !d.join("named.e").exists());
    let path = d.join("named.pgb");
    save(&data, &path, Format::Binary).unwrap();
    let back = load_default(&path).unwrap();
    assert!(back.ids().iter().eq(data.ids().iter()));
    assert_eq!(back.ids().internal_name("alice"), Some(alice));
    assert_eq!(back.graph.num_edges(), data.graph.num_edges());
    let path = d.join("named.txt");
    save(&data, &path, Format::EdgeList).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.lines().any(|l| l == "alice 10"), "{text}");
    // A name that is no word of text cannot go into an edge list: refused, no file.
    let AnyGraph::Unweighted(graph) = &mut data.graph else {
        panic!("unweighted")
    };
    graph.intern(&[ExternalId::from("two words")]).unwrap();
    let path = d.join("spaced.txt");
    let error = save(&data, &path, Format::EdgeList)
        .unwrap_err()
        .to_string();
    assert!(error.contains("whitespace"), "{error}");
    assert!(!path.exists());
    // The graph itself lost nothing.
    assert_eq!(data.ids().internal_name("alice"), Some(alice));
    assert_eq!(data.graph.num_edges(), 4);
}

/// A named snapshot whose names were damaged (checksums fixed): a repeated name and bytes
/// that are not UTF-8 are refused as corrupt.
#[test]
fn damaged_named_snapshots_are_refused() {
    use packgraph::graph::ExternalId;

    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let source = write(d, "g.txt", b"1 2\n");
    let mut data = load(&source, &options(true)).unwrap();
    let AnyGraph::Unweighted(graph) = &mut data.graph else {
        panic!("unweighted")
    };
    graph
        .intern(&[ExternalId::from("ab"), ExternalId::from("ac")])
        .unwrap();
    let path = d.join("n.pgb");
    save(&data, &path, Format::Binary).unwrap();
    let good = std::fs::read(&path).unwrap();
    let len = good.len();
    for (patch, what) in [(b"b".as_slice(), "repeated"), (b"\xff", "UTF-8")] {
        let mut bytes = good.clone();
        // The last name, "ac": its last byte made `b` (equal to "ab") or invalid UTF-8.
        bytes[len - 1] = patch[0];
        let payload_crc = crc32fast::hash(&bytes[48..]);
        bytes[40..44].copy_from_slice(&payload_crc.to_le_bytes());
        let header_crc = crc32fast::hash(&bytes[..44]);
        bytes[44..48].copy_from_slice(&header_crc.to_le_bytes());
        let damaged = write(d, "damaged.pgb", &bytes);
        let message = fails(&damaged, &LoadOptions::default());
        assert!(message.contains(what), "{what}: {message}");
    }
}

/// A version 1 snapshot of an unweighted, directed graph (byte-coded leaves, written by the
/// build before group-varint leaves, from `golden/store-v1-unweighted.expected.el`) reads
/// back with every edge, and saving it again writes the current version.
#[test]
fn version_1_snapshot_reads_back_and_saves_as_the_current_version() {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let want: BTreeMap<(u64, u64), f64> =
        std::fs::read_to_string(golden.join("store-v1-unweighted.expected.el"))
            .unwrap()
            .lines()
            .map(|line| {
                let mut it = line.split_whitespace().map(|x| x.parse::<u64>().unwrap());
                ((it.next().unwrap(), it.next().unwrap()), 1.0)
            })
            .collect();
    assert_eq!(want.len(), 3051);
    let old = golden.join("snapshot-v1-unweighted.pgb");
    assert_eq!(
        std::fs::read(&old).unwrap()[8],
        1,
        "the golden file is version 1"
    );
    let data = load_default(&old).unwrap();
    assert!(data.graph.is_directed());
    assert_eq!(edge_map(&data), want);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("again.pgb");
    save(&data, &path, Format::Binary).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(
        u32::from_le_bytes(bytes[8..12].try_into().unwrap()),
        packgraph::io::binary::VERSION
    );
    assert_eq!(edge_map(&load_default(&path).unwrap()), want);
}

/// Version 2 snapshots of a weighted graph, directed and undirected (byte-coded map
/// leaves, written by the build before group-varint map leaves from the text that
/// `tests/formats_written.rs` writes), read back as the same text loads now, and saving
/// them again writes the current version.
#[test]
fn version_2_weighted_snapshots_read_back_and_save_as_the_current_version() {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("g.txt");
    let lines: String = (0..300u64)
        .map(|i| {
            let (u, v) = (i * 7 % 100 + 5, (i * 13 + 1) % 97 + 5);
            format!("{u} {v} {}\n", (i % 9) as f64 * 0.25)
        })
        .collect();
    std::fs::write(&text, lines).unwrap();
    for (directed, name) in [(true, "directed"), (false, "undirected")] {
        let options = LoadOptions {
            directed: Some(directed),
            ..LoadOptions::default()
        };
        let want = edge_map(&load(&text, &options).unwrap());
        assert!(want.len() > 200);
        let old = golden.join(format!("snapshot-v2-{name}.pgb"));
        assert_eq!(std::fs::read(&old).unwrap()[8], 2, "{name} is version 2");
        let data = load_default(&old).unwrap();
        assert!(data.graph.is_weighted());
        assert_eq!(data.graph.is_directed(), directed);
        assert_eq!(edge_map(&data), want, "{name}");
        let again = dir.path().join(format!("{name}.pgb"));
        save(&data, &again, Format::Binary).unwrap();
        let bytes = std::fs::read(&again).unwrap();
        assert_eq!(
            u32::from_le_bytes(bytes[8..12].try_into().unwrap()),
            packgraph::io::binary::VERSION
        );
        assert_eq!(
            edge_map(&load_default(&again).unwrap()),
            want,
            "{name} saved again"
        );
    }
}
