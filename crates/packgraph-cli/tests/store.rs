//! The durable commands end to end: `create`, `ingest`, `checkpoint`, `verify`, data
//! directories as inputs, and `ingest` killed with SIGKILL at random moments.

mod common;

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{bad, ingest, ok, packgraph, parse_output, path};
use packgraph::graph::{AnyGraph, GraphRead};

/// The binary as a plain process, for piping and killing.
fn spawn_packgraph() -> Command {
    Command::new(env!("CARGO_BIN_EXE_packgraph"))
}

/// The graph's edges in external integer ids, each undirected edge once.
fn edges(graph: &AnyGraph) -> BTreeSet<(u64, u64)> {
    fn of<G: GraphRead>(g: &G, ids: &packgraph::graph::IdMap) -> BTreeSet<(u64, u64)> {
        let mut out = BTreeSet::new();
        for u in 0..g.num_vertices() as u32 {
            g.for_each_out_neighbor(u, |v| {
                let (a, b) = (ids.external(u), ids.external(v));
                out.insert((a.min(b), a.max(b)));
                true
            });
        }
        out
    }
    match graph {
        AnyGraph::Unweighted(g) => of(g, g.ids()),
        AnyGraph::Weighted(g) => of(g, g.ids()),
    }
}

#[test]
fn create_ingest_and_read_back() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = path(tmp.path(), "g");
    let out = ok(&["create", &dir]);
    assert!(
        out.contains("0 vertices, 0 edges (undirected, unweighted)"),
        "{out}"
    );
    let result = ingest(
        &dir,
        "+ 10 20\n+ 20 30\ncommit\n# more\n+ 30 40\n- 10 20\n",
        &[],
    );
    assert!(
        result.status.success(),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    assert_eq!(
        String::from_utf8(result.stdout).unwrap(),
        "acked 1 3\nacked 2 6\n"
    );
    // Every reading command takes the directory.
    let info = ok(&["info", &dir]);
    assert!(info.contains("vertices") && info.contains('4'), "{info}");
    let bfs = ok(&["run", "bfs", "--input", &dir, "--source", "20"]);
    assert!(bfs.contains("40 2"), "{bfs}");
    let graph = packgraph::store::load_any(std::path::Path::new(&dir)).unwrap();
    assert_eq!(edges(&graph), BTreeSet::from([(20, 30), (30, 40)]));
    let out = ok(&["checkpoint", &dir]);
    assert!(out.contains("bytes written"), "{out}");
    let out = ok(&["verify", &dir]);
    assert!(out.contains(": ok:"), "{out}");
    let txt = path(tmp.path(), "g.txt");
    ok(&["convert", &dir, &txt]);
    assert!(std::fs::read_to_string(&txt).unwrap().lines().count() >= 2);
}

#[test]
fn create_from_a_file_and_weighted_batches() {
    let tmp = tempfile::tempdir().unwrap();
    let file = path(tmp.path(), "w.txt");
    std::fs::write(&file, "1 2 0.5\n2 3 1.5\n").unwrap();
    let dir = path(tmp.path(), "w");
    let out = ok(&["create", &dir, "--from", &file, "--directed"]);
    assert!(out.contains("2 edges (directed, weighted)"), "{out}");
    let result = ingest(&dir, "+ 3 1 2.25\n", &["--sync", "group:5"]);
    assert!(result.status.success());
    assert_eq!(String::from_utf8(result.stdout).unwrap(), "acked 1 1\n");
    let sssp = ok(&["run", "sssp", "--input", &dir, "--source", "2"]);
    assert!(sssp.contains("1 3.75"), "{sssp}");
    // A weight for an unweighted directory is a bad line.
    let plain = path(tmp.path(), "plain");
    ok(&["create", &plain]);
    let result = ingest(&plain, "+ 1 2\ncommit\n+ 2 3 9\n+ 3 4\n", &[]);
    assert_eq!(result.status.code(), Some(2));
    assert_eq!(String::from_utf8(result.stdout).unwrap(), "acked 1 2\n");
    // The line of the weight and its value, not the batch's last line.
    let err = String::from_utf8(result.stderr).unwrap();
    assert!(
        err.contains("<stdin>:3: ") && err.contains("unweighted") && err.contains("`9`"),
        "{err}"
    );
}

#[test]
fn operations_of_a_batch_take_effect_in_line_order() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = path(tmp.path(), "g");
    ok(&["create", &dir]);
    let result = ingest(
        &dir,
        "+ 1 2\n- 1 2\n+ 2 3\n- 3 2\n+ 3 4\ncommit\n- 5 6\n+ 5 6\n+ 7 7\n+ 8 8\n",
        &[],
    );
    assert!(result.status.success());
    assert_eq!(
        String::from_utf8(result.stdout).unwrap(),
        "acked 1 6\nacked 2 10\n"
    );
    // Self-loops are not stored, and said so (stdout stays `acked SEQ LINE`).
    let err = String::from_utf8(result.stderr).unwrap();
    assert!(
        err.contains("line 10 (record 2) has 2 self-loops, not stored"),
        "{err}"
    );
    let graph = packgraph::store::load_any(std::path::Path::new(&dir)).unwrap();
    assert_eq!(edges(&graph), BTreeSet::from([(3, 4), (5, 6)]));
    // The log replays to the same graph (no checkpoint was written since).
    let bfs = parse_output(&ok(&["run", "bfs", "--input", &dir, "--source", "3"]));
    assert_eq!(bfs[&4], "1");
    assert_ne!(bfs[&2], "1");
}

#[test]
fn bad_text_and_batches_past_the_limit_name_their_line() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = path(tmp.path(), "g");
    ok(&["create", &dir]);
    let mut child = spawn_packgraph()
        .args(["ingest", &dir])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"+ 1 2\ncommit\n+ 2 \xff\n")
        .unwrap();
    let result = child.wait_with_output().unwrap();
    assert_eq!(result.status.code(), Some(2));
    assert_eq!(String::from_utf8(result.stdout).unwrap(), "acked 1 2\n");
    let err = String::from_utf8(result.stderr).unwrap();
    assert!(
        err.contains("<stdin>:3: ") && err.contains("UTF-8"),
        "{err}"
    );

    let result = ingest(
        &dir,
        "+ 1 2\n+ 2 3\ncommit\n+ 3 4\n+ 4 5\n+ 5 6\n",
        &["--max-batch-ops", "2"],
    );
    assert_eq!(result.status.code(), Some(2));
    assert_eq!(String::from_utf8(result.stdout).unwrap(), "acked 2 3\n");
    let err = String::from_utf8(result.stderr).unwrap();
    assert!(
        err.contains("<stdin>:6: a batch holds at most 2 operations"),
        "{err}"
    );

    let long = format!("+ 1 {}\n", "9".repeat(2 << 20));
    let result = ingest(&dir, &long, &[]);
    assert_eq!(result.status.code(), Some(2));
    let err = String::from_utf8(result.stderr).unwrap();
    assert!(
        err.contains("<stdin>:1: a line may hold at most 1048576 bytes"),
        "{err}"
    );
    assert!(err.len() < 1000, "the message quotes the line's start only");
}

#[test]
fn a_bad_line_keeps_earlier_batches_and_applies_nothing_of_its_own() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = path(tmp.path(), "g");
    ok(&["create", &dir]);
    let result = ingest(&dir, "+ 1 2\ncommit\n+ 2 3\n+ 3\n+ 4 5\n", &[]);
    assert_eq!(result.status.code(), Some(2));
    assert_eq!(String::from_utf8(result.stdout).unwrap(), "acked 1 2\n");
    let err = String::from_utf8(result.stderr).unwrap();
    assert!(err.contains("<stdin>:4") && err.contains("+ 3"), "{err}");
    let graph = packgraph::store::load_any(std::path::Path::new(&dir)).unwrap();
    assert_eq!(edges(&graph), BTreeSet::from([(1, 2)]));
    // Bad arguments and bad places.
    let err = bad(&["ingest", &dir, "--sync", "sometimes"]);
    assert!(err.contains("sync policy"), "{err}");
    let err = bad(&[
        "ingest",
        &path(tmp.path(), "nothing"),
        "--updates",
        &path(tmp.path(), "x"),
    ]);
    assert!(
        err.contains("no such data directory") || err.contains("no MANIFEST"),
        "{err}"
    );
    let file = path(tmp.path(), "notes.txt");
    std::fs::write(&file, "x").unwrap();
    let err = bad(&["create", tmp.path().to_str().unwrap()]);
    assert!(err.contains("not empty"), "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
}

#[test]
fn a_second_writer_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = path(tmp.path(), "g");
    ok(&["create", &dir]);
    let mut first = spawn_packgraph()
        .args(["ingest", &dir])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = first.stdin.take().unwrap();
    stdin.write_all(b"+ 1 2\ncommit\n").unwrap();
    stdin.flush().unwrap();
    // Wait for the first batch's ack: the first writer holds the lock.
    let mut lines = BufReader::new(first.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "acked 1 2");
    // A locked directory is the user's to sort out: exit 2, said once; removing the lock
    // file does not let a second writer in.
    for remove_lock in [false, true] {
        if remove_lock {
            std::fs::remove_file(std::path::Path::new(&dir).join("LOCK")).unwrap();
        }
        let second = ingest(&dir, "+ 5 6\n", &[]);
        let err = String::from_utf8(second.stderr).unwrap();
        assert_eq!(second.status.code(), Some(2), "{err}");
        assert_eq!(err.matches("another process").count(), 1, "{err}");
        let second = packgraph().args(["checkpoint", &dir]).output().unwrap();
        assert_eq!(second.status.code(), Some(2));
    }
    // Readers are not writers.
    ok(&["info", &dir]);
    drop(stdin);
    assert!(first.wait().unwrap().success());
}

#[test]
fn verify_names_damage_and_exits_3() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = path(tmp.path(), "g");
    ok(&["create", &dir]);
    let updates: String = (0..200)
        .map(|i| format!("+ {i} {}\n", i * 7 % 200 + 1))
        .collect();
    assert!(ingest(&dir, &updates, &[]).status.success());
    ok(&["checkpoint", &dir]);
    assert!(ingest(&dir, "+ 500 501\ncommit\n+ 501 502\n", &[])
        .status
        .success());
    for name in std::fs::read_dir(&dir).unwrap() {
        let name = name.unwrap().file_name().into_string().unwrap();
        if name == "LOCK" {
            continue;
        }
        let file = std::path::Path::new(&dir).join(&name);
        let original = std::fs::read(&file).unwrap();
        let mut damaged = original.clone();
        damaged[original.len() / 3] ^= 0x40;
        std::fs::write(&file, &damaged).unwrap();
        let output = packgraph().args(["verify", &dir]).output().unwrap();
        let err = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(3), "{name}: {err}");
        assert!(err.contains(&name), "{name}: {err}");
        // Truncated: damage, except that a log cut short is what a crash leaves, which
        // verify reports as a torn tail, and a high-water mark cut after its header reads
        // as an append a crash cut short (an earlier entry, still true).
        std::fs::write(&file, &original[..original.len() / 2]).unwrap();
        let output = packgraph().args(["verify", &dir]).output().unwrap();
        let out = String::from_utf8_lossy(&output.stdout);
        if name == "LOGMARK" {
            assert!(matches!(output.status.code(), Some(0 | 3)), "{name}: {out}");
        } else if name.ends_with(".wal") {
            assert!(
                output.status.code() == Some(3) || out.contains("torn"),
                "{name}: {out}"
            );
        } else {
            assert_eq!(output.status.code(), Some(3), "{name} truncated");
        }
        std::fs::write(&file, &original).unwrap();
    }
    let out = ok(&["verify", &dir]);
    assert!(out.contains(": ok:"), "{out}");
}

#[test]
fn a_damaged_last_record_exits_3_until_recover_cuts_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = path(tmp.path(), "g");
    ok(&["create", &dir]);
    let out = ingest(&dir, "+ 1 2\ncommit\n+ 2 3\ncommit\n+ 3 4\n", &[]);
    assert!(out.status.success());
    let wal = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "wal"))
        .unwrap();
    let mut bytes = std::fs::read(&wal).unwrap();
    let at = bytes.len() - 7;
    bytes[at] ^= 0x08;
    std::fs::write(&wal, &bytes).unwrap();
    for args in [vec!["verify", &dir], vec!["recover", &dir]] {
        let output = packgraph().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(3), "{args:?}: {err}");
        assert!(err.contains("--truncate-damaged-tail"), "{err}");
    }
    let out = ok(&["recover", &dir, "--truncate-damaged-tail"]);
    assert!(out.contains("record 3") && out.contains("is lost"), "{out}");
    let out = ok(&["verify", &dir]);
    assert!(out.contains(": ok:"), "{out}");
    let out = ok(&["recover", &dir]);
    assert!(out.contains("nothing lost"), "{out}");
}

/// xorshift.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// `ingest` is killed with SIGKILL at random moments while it streams batches; after every
/// kill the directory holds exactly a prefix of the batches that contains every
/// acknowledged one, and never part of a batch. `PACKGRAPH_CRASH_KILLS` sets the number of
/// kills (default 50).
#[test]
fn ingest_survives_kill_9_at_random_moments() {
    let kills: usize = std::env::var("PACKGRAPH_CRASH_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let tmp = tempfile::tempdir().unwrap();
    let dir = path(tmp.path(), "g");
    ok(&["create", &dir]);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut current: BTreeSet<(u64, u64)> = BTreeSet::new();
    let mut total_acked = 0;
    for kill in 0..kills {
        // The batches of this round and the states after each.
        let mut states = vec![current.clone()];
        let mut text = String::new();
        let mut state = current.clone();
        for _ in 0..200 {
            // Within a batch the operations take effect in line order.
            for _ in 0..1 + rng.below(30) {
                if !state.is_empty() && rng.below(4) == 0 {
                    let nth = rng.below(state.len() as u64) as usize;
                    let (u, v) = *state.iter().nth(nth).unwrap();
                    text.push_str(&format!("- {u} {v}\n"));
                    state.remove(&(u, v));
                } else {
                    let (u, v) = (rng.below(300), rng.below(300));
                    text.push_str(&format!("+ {u} {v}\n"));
                    if u != v {
                        state.insert((u.min(v), u.max(v)));
                    }
                }
            }
            text.push_str("commit\n");
            states.push(state.clone());
        }
        let sync = ["batch", "group:2", "batch"][kill % 3];
        let mut child = spawn_packgraph()
            .args(["ingest", &dir, "--sync", sync])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let feeder = std::thread::spawn(move || {
            let _ = stdin.write_all(text.as_bytes()); // fails once the child is killed
        });
        let stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
                .filter_map(|line| line.split(' ').nth(1)?.parse::<usize>().ok())
                .collect::<Vec<_>>()
        });
        std::thread::sleep(Duration::from_micros(rng.below(60_000)));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let _ = feeder.join();
        let acks = reader.join().unwrap();
        // Sequence numbers continue across rounds: count this round's acknowledgements.
        let acked = acks.len();
        let graph = packgraph::store::load_any(std::path::Path::new(&dir)).unwrap();
        let got = edges(&graph);
        let k = states
            .iter()
            .rposition(|s| *s == got)
            .unwrap_or_else(|| panic!("kill {kill}: the directory holds no prefix of the batches"));
        assert!(
            (acked..states.len()).any(|j| states[j] == got),
            "kill {kill}: recovered {k} batches but {acked} were acknowledged"
        );
        total_acked += acked;
        current = got;
    }
    assert!(
        total_acked > 0,
        "no batch was ever acknowledged before a kill"
    );
    let out = ok(&["verify", &dir]);
    assert!(out.contains(": ok:"), "{out}");
}

/// Batches already read are applied in groups (one version each): still one record and
/// one `acked SEQ LINE` per batch, in order, a bad batch ending the run with the earlier
/// ones kept; and a batch on a pipe whose writer waits for its ack is acknowledged without
/// more input, under group sync too.
#[test]
fn grouped_batches_keep_their_records_and_acks() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = path(tmp.path(), "g");
    ok(&["create", &dir]);
    let mut input = String::new();
    let mut expected = String::new();
    for i in 0..300u64 {
        input.push_str(&format!("+ {i} {}\ncommit\n", i + 1));
        expected.push_str(&format!("acked {} {}\n", i + 1, 2 * i + 2));
    }
    input.push_str("+ 1000 1001\n+ 5 6 7\ncommit\n+ 900 901\n");
    let result = ingest(&dir, &input, &["--sync", "group:2"]);
    assert_eq!(result.status.code(), Some(2));
    assert_eq!(String::from_utf8(result.stdout).unwrap(), expected);
    let err = String::from_utf8(result.stderr).unwrap();
    assert!(
        err.contains("<stdin>:602: ") && err.contains("`7`"),
        "{err}"
    );
    let graph = packgraph::store::load_any(std::path::Path::new(&dir)).unwrap();
    let path_edges: BTreeSet<(u64, u64)> = (0..300).map(|i| (i, i + 1)).collect();
    assert_eq!(edges(&graph), path_edges);
    let out = ok(&["verify", &dir]);
    assert!(out.contains("300 log records"), "{out}");

    let mut child = spawn_packgraph()
        .args(["ingest", &dir, "--sync", "group:2"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"+ 1000 1001\ncommit\n").unwrap();
    stdin.flush().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let _ = send.send(line.unwrap());
        }
    });
    let ack = receive.recv_timeout(Duration::from_secs(30));
    drop(stdin);
    assert_eq!(ack.as_deref(), Ok("acked 301 2"));
    assert!(child.wait().unwrap().success());
}

/// The units of a pack file in store format 3 or later: (kind, payload offset, length).
fn pack_units(bytes: &[u8]) -> Vec<(u8, usize, usize)> {
    // A 40-byte header; per unit a kind byte, 7 zero bytes, the length (u64), the hash
    // (u128), the payload and a CRC-32C; a 20-byte trailer.
    let (mut at, mut units) = (40, Vec::new());
    while at + 20 < bytes.len() {
        let len = u64::from_le_bytes(bytes[at + 8..at + 16].try_into().unwrap()) as usize;
        units.push((bytes[at], at + 32, len));
        at += 32 + len + 4;
    }
    units
}

#[test]
fn a_damaged_id_subtree_unit_exits_3_naming_its_pack() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = path(tmp.path(), "g");
    ok(&["create", &dir, "--ids", "name"]);
    // Enough vertices that the checkpoint is a new base (a delta holds the ids otherwise).
    let updates: String = (0..12_000)
        .map(|i| format!("+ n{i} n{}\n", (i * 7 + 1) % 12_000))
        .collect();
    assert!(ingest(&dir, &updates, &[]).status.success());
    ok(&["checkpoint", &dir]);
    let mut damaged = None;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let file = entry.unwrap().path();
        if !file.to_string_lossy().ends_with(".pack") {
            continue;
        }
        let mut bytes = std::fs::read(&file).unwrap();
        // Kind 8: the external ids of a run of vertices.
        let subtrees: Vec<_> = pack_units(&bytes)
            .into_iter()
            .filter(|u| u.0 == 8)
            .collect();
        if subtrees.len() < 2 {
            continue;
        }
        let (_, at, len) = subtrees[1];
        bytes[at + len / 2] ^= 0x20;
        std::fs::write(&file, bytes).unwrap();
        damaged = Some(file.file_name().unwrap().to_string_lossy().into_owned());
    }
    let name = damaged.expect("a pack of id subtree units");
    // `verify` finds the pack's own checksum broken first; opening the directory reads
    // only the units the manifest names, and finds the unit's.
    for (command, what) in [("verify", "CRC-32C"), ("checkpoint", "IdSubtree unit")] {
        let output = packgraph().args([command, &dir]).output().unwrap();
        let err = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(3), "{command}: {err}");
        assert!(
            err.contains(&name) && err.contains(what),
            "{command}: {err}"
        );
    }
}
