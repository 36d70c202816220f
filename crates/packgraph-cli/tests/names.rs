//! Vertex ids end to end: the README's durable-graph example run verbatim, a data
//! directory's id kind (fixed at `create`, or by its first batch) refusing stray tokens,
//! and named vertices through `run --source`, `run` output, `convert` and `info`.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::{bad, ingest, ok, path};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Ingests `updates`, expecting exit 2 after acknowledging `acked`; returns stderr.
fn refused(dir: &str, updates: &str, acked: &str) -> String {
    let out = ingest(dir, updates, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), acked);
    text(&out.stderr)
}

fn accepted(dir: &str, updates: &str) -> String {
    let out = ingest(dir, updates, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

/// The lines of the README's "Durable graphs" shell example.
fn readme_example() -> Vec<String> {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    let section = readme
        .split("\n## Durable graphs\n")
        .nth(1)
        .expect("the README has a Durable graphs section");
    let block = section
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("the section starts with a sh block");
    block.lines().map(str::to_string).collect()
}

/// Runs one line of shell in `cwd` with the built `packgraph` first on the PATH.
fn shell(line: &str, cwd: &Path) -> Output {
    let bin = Path::new(env!("CARGO_BIN_EXE_packgraph")).parent().unwrap();
    let path = std::env::join_paths(std::iter::once(bin.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    Command::new("sh")
        .args(["-c", line])
        .current_dir(cwd)
        .env("PATH", path)
        .output()
        .unwrap()
}

#[test]
fn the_readme_durable_example_runs_verbatim() {
    let lines = readme_example();
    let find = |start: &str| {
        lines
            .iter()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("no README line starts with {start:?}: {lines:?}"))
            .clone()
    };
    let tmp = tempfile::tempdir().unwrap();
    let run = |start: &str| {
        let line = find(start);
        let out = shell(&line, tmp.path());
        assert!(out.status.success(), "{line}: {}", text(&out.stderr));
        text(&out.stdout)
    };
    let created = run("packgraph create social ");
    assert!(created.contains("created social: 0 vertices"), "{created}");
    // The acknowledgements the README shows under the ingest line, as comments.
    let acked = run("printf '+ alice bob");
    let shown: String = lines
        .iter()
        .filter_map(|l| l.strip_prefix("# acked "))
        .map(|l| format!("acked {}\n", l.split("  ").next().unwrap().trim()))
        .collect();
    assert_eq!(acked, shown);
    assert_eq!(acked, "acked 1 3\nacked 2 4\n");
    let bfs = run("packgraph run bfs --input social --source bob");
    // `- alice bob` took alice's only edge: she is unreached.
    assert_eq!(bfs, "alice 9223372036854775807\nbob 0\ncarol 1\n");
    let checkpoint = run("packgraph checkpoint social");
    assert!(
        checkpoint.starts_with("checkpoint of social at record 2"),
        "{checkpoint}"
    );
    let verify = run("packgraph verify social");
    assert!(
        verify.contains("social: ok") && verify.contains("3 vertices"),
        "{verify}"
    );
}

#[test]
fn a_stray_token_cannot_poison_an_integer_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = path(tmp.path(), "g");
    let created = ok(&["create", &dir]);
    assert!(created.contains("as the first batch has them"), "{created}");
    assert_eq!(accepted(&dir, "+ 1 2\ncommit\n"), "acked 1 2\n");
    // Each stray token: exit 2 naming line and value; its batch is not applied.
    for (updates, line, value) in [
        ("+ 3 4\n+ 5 x7y\n", 2, "x7y"),
        ("+ 3 4\n- -5 1\n", 2, "-5"),
        ("+ 18446744073709551616 1\n", 1, "18446744073709551616"),
        ("+ +5 1\n", 1, "+5"),
    ] {
        let error = refused(&dir, updates, "");
        assert!(
            error.contains(&format!("<stdin>:{line}: not an integer vertex id"))
                && error.contains(&format!("`{value}`")),
            "{updates:?}: {error}"
        );
    }
    // The directory holds only the first batch, and everything still reads it.
    let verify = ok(&["verify", &dir]);
    assert!(verify.contains("2 vertices, 2 arcs"), "{verify}");
    assert_eq!(
        ok(&["run", "bfs", "--input", &dir, "--source", "2"]),
        "1 1\n2 0\n"
    );
    let converted = path(tmp.path(), "g.txt");
    ok(&["convert", &dir, &converted]);
    // After a checkpoint and a reopen the kind still holds (read from the graph's ids).
    ok(&["checkpoint", &dir]);
    let error = refused(&dir, "+ alice bob\n", "");
    assert!(error.contains("`alice`"), "{error}");
    // A name given to --source of an integer graph is refused, not looked up.
    let error = bad(&["run", "bfs", "--input", &dir, "--source", "bob"]);
    assert!(
        error.contains("--source bob") && error.contains("integers"),
        "{error}"
    );

    // A directory made from a file takes integer ids from the start.
    let from = path(tmp.path(), "g.txt");
    let dir = path(tmp.path(), "from-file");
    let created = ok(&["create", &dir, "--from", &from]);
    assert!(created.contains("vertex ids: integers"), "{created}");
    let error = refused(&dir, "+ 7 8\ncommit\n+ alice 1\n", "acked 1 2\n");
    assert!(
        error.contains("<stdin>:3:") && error.contains("`alice`"),
        "{error}"
    );
}

#[test]
fn the_id_kind_is_fixed_at_create() {
    let tmp = tempfile::tempdir().unwrap();
    let file = path(tmp.path(), "g.txt");
    std::fs::write(&file, "1 2\n2 3\n").unwrap();
    // Graph files hold integers: --ids name cannot start from one.
    let target = path(tmp.path(), "named-from-file");
    let error = bad(&["create", &target, "--from", &file, "--ids", "name"]);
    assert!(
        error.contains("--ids name") && error.contains("integers"),
        "{error}"
    );
    assert!(!Path::new(&target).join("MANIFEST").exists());
    let error = bad(&["create", &path(tmp.path(), "x"), "--ids", "names"]);
    assert!(error.contains("int, name"), "{error}");

    // An empty integer directory refuses a named first batch.
    let ints = path(tmp.path(), "ints");
    ok(&["create", &ints, "--ids", "int"]);
    let error = refused(&ints, "+ alice bob\n", "");
    assert!(
        error.contains("<stdin>:1:") && error.contains("`alice`"),
        "{error}"
    );

    // A named directory reads every token as a name, digits included.
    let names = path(tmp.path(), "names");
    let created = ok(&["create", &names, "--ids", "name"]);
    assert!(created.contains("vertex ids: names"), "{created}");
    assert_eq!(accepted(&names, "+ 5 6\n+ 6 007\n"), "acked 1 2\n");
    assert_eq!(
        ok(&["run", "bfs", "--input", &names, "--source", "007"]),
        "007 0\n5 2\n6 1\n"
    );
    // A token that cannot be a name (a control character) is refused at its line.
    let error = refused(&names, "+ a b\n+ a\u{1}b c\n", "");
    assert!(
        error.contains("<stdin>:2:") && error.contains("control"),
        "{error}"
    );

    // A first batch fixes an unset directory's kind: names here, so integers are names.
    let first = path(tmp.path(), "first");
    ok(&["create", &first]);
    assert_eq!(accepted(&first, "+ alice 1\n"), "acked 1 1\n");
    ok(&["checkpoint", &first]);
    assert_eq!(accepted(&first, "+ 1 bob\n"), "acked 2 1\n");
    let verify = ok(&["verify", &first]);
    assert!(verify.contains("3 vertices"), "{verify}");
}

#[test]
fn named_vertices_run_and_convert() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = path(tmp.path(), "social");
    ok(&["create", &dir, "--directed"]);
    accepted(&dir, "+ carol alice\n+ alice bob\n+ bob dave\n");
    // Output lines in names, sorted by name; --source by name; labels as names.
    assert_eq!(
        ok(&["run", "bfs", "--input", &dir, "--source", "alice"]),
        "alice 0\nbob 1\ncarol 9223372036854775807\ndave 2\n"
    );
    let wcc = ok(&["run", "wcc", "--input", &dir]);
    let labels: Vec<&str> = wcc.lines().map(|l| l.split(' ').nth(1).unwrap()).collect();
    assert!(labels.iter().all(|l| *l == labels[0]), "{wcc}");
    assert!(
        ["alice", "bob", "carol", "dave"].contains(&labels[0]),
        "{wcc}"
    );
    let error = bad(&["run", "bfs", "--input", &dir, "--source", "erin"]);
    assert!(error.contains("--source erin: not a vertex"), "{error}");
    let info = ok(&["info", &dir]);
    assert!(info.contains("vertices    4"), "{info}");

    // An edge list writes the names.
    let el = path(tmp.path(), "social.txt");
    ok(&["convert", &dir, &el]);
    let written = std::fs::read_to_string(&el).unwrap();
    let mut edges: Vec<&str> = written.lines().filter(|l| !l.starts_with('#')).collect();
    edges.sort_unstable();
    assert_eq!(edges, ["alice bob", "bob dave", "carol alice"]);

    // A snapshot keeps them: it runs by name and writes the same bytes again.
    let pgb = path(tmp.path(), "social.pgb");
    ok(&["convert", &dir, &pgb]);
    assert_eq!(
        ok(&["run", "bfs", "--input", &pgb, "--source", "alice"]),
        "alice 0\nbob 1\ncarol 9223372036854775807\ndave 2\n"
    );
    let again = path(tmp.path(), "again.pgb");
    ok(&["convert", &pgb, &again]);
    assert_eq!(std::fs::read(&pgb).unwrap(), std::fs::read(&again).unwrap());
    // A directory created from the snapshot is named, and takes named updates.
    let copy = path(tmp.path(), "copy");
    let created = ok(&["create", &copy, "--from", &pgb]);
    assert!(created.contains("vertex ids: names"), "{created}");
    assert_eq!(accepted(&copy, "+ dave 42\n"), "acked 1 1\n");

    // Graphalytics holds integers only: refused, and no file appears.
    let v = path(tmp.path(), "social.v");
    let error = bad(&["convert", &dir, &v]);
    assert!(
        error.contains("Graphalytics") && error.contains("named"),
        "{error}"
    );
    assert!(!Path::new(&v).exists());
}

/// A directory a stray token mixed before kinds were kept is usable again: `run` and
/// `convert` take it, and its integer vertices keep taking integer updates.
#[test]
fn a_directory_poisoned_before_kinds_were_kept_is_usable() {
    use packgraph::graph::{ExternalId, Graph, Update};
    use packgraph::store::{Store, StoreOptions};

    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("old");
    let mut graph: Graph = Graph::new(false);
    let mut update = Update::new();
    update
        .add_vertices([
            ExternalId::Int(1),
            ExternalId::Int(2),
            ExternalId::from("x7y"),
        ])
        .insert_edges(&[(0, 1), (1, 2)]);
    graph.apply(&update).unwrap();
    drop(Store::create(&dir, StoreOptions::default(), graph).unwrap());
    let dir = dir.display().to_string();
    assert_eq!(
        ok(&["run", "bfs", "--input", &dir, "--source", "x7y"]),
        "1 2\n2 1\nx7y 0\n"
    );
    let el = path(tmp.path(), "old.txt");
    ok(&["convert", &dir, &el]);
    let written = std::fs::read_to_string(&el).unwrap();
    assert!(
        written.contains("1 2\n") && written.contains("2 x7y\n"),
        "{written}"
    );
    // The first batch of an opening fixes the kind for it: integers here.
    let error = refused(&dir, "+ 1 3\ncommit\n+ 3 y\n", "acked 1 2\n");
    assert!(
        error.contains("<stdin>:3:") && error.contains("`y`"),
        "{error}"
    );
    assert_eq!(
        ok(&["run", "bfs", "--input", &dir, "--source", "3"]),
        "1 1\n2 2\n3 0\nx7y 3\n"
    );
}
