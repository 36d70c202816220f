//! `packgraph upgrade DIR`: a format 3 directory (the golden one of the core crate) is
//! rewritten in the current format and reads back the same; a current one is left alone;
//! no directory, or a damaged one, is refused with exit 2 or 3 and nothing written.

mod common;

use std::path::Path;

use common::{bad, ok, packgraph};
use packgraph::graph::{GraphRead, WeightedGraph};
use packgraph::store::{self, STORE_FORMAT_VERSION};

fn golden_v3() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../packgraph/tests/golden/store-v3")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

fn arcs(g: &WeightedGraph) -> Vec<(u64, u64)> {
    g.out_array().iter().collect()
}

#[test]
fn an_old_directory_is_rewritten_and_reads_back_the_same() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("g");
    copy_dir(&golden_v3(), &dir);
    let want: WeightedGraph = store::load_graph(&dir).unwrap();
    let text = dir.to_str().unwrap();
    let out = ok(&["upgrade", text]);
    assert!(
        out.contains(&format!("upgraded from format 3 to {STORE_FORMAT_VERSION}")),
        "{out}"
    );
    assert_eq!(store::format_version(&dir).unwrap(), STORE_FORMAT_VERSION);
    let got: WeightedGraph = store::load_graph(&dir).unwrap();
    assert_eq!(arcs(&got), arcs(&want));
    assert_eq!(got.ids(), want.ids());
    assert_eq!(got.num_vertices(), want.num_vertices());
    ok(&["verify", text]);
    let out = ok(&["upgrade", text]);
    assert!(out.contains("nothing to do"), "{out}");
}

#[test]
fn no_directory_exits_2_and_a_damaged_one_exits_3() {
    let tmp = tempfile::tempdir().unwrap();
    let err = bad(&["upgrade", tmp.path().to_str().unwrap()]);
    assert!(err.contains("no MANIFEST"), "{err}");
    let dir = tmp.path().join("g");
    copy_dir(&golden_v3(), &dir);
    let manifest = dir.join("MANIFEST");
    let mut bytes = std::fs::read(&manifest).unwrap();
    bytes[20] ^= 0x40;
    std::fs::write(&manifest, &bytes).unwrap();
    let output = packgraph()
        .args(["upgrade", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3));
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("MANIFEST"), "{err}");
    assert_eq!(std::fs::read(&manifest).unwrap(), bytes);
}
