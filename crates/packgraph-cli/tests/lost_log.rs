//! A log cut back after acknowledged batches: every command that opens the directory
//! refuses it (exit 3, naming the log file and both record numbers) until
//! `packgraph recover DIR --accept-lost-log` accepts the loss, naming the lost batches; the
//! next batches are numbered after them.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{ingest, ok, path};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_packgraph"))
        .args(args)
        .output()
        .unwrap()
}

fn segments(dir: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "wal"))
        .collect();
    out.sort();
    out
}

/// Two checkpoints, then batches 11 to 14 in the active segment; returns its path and
/// its length after batch 11.
fn two_checkpoints_then_four(dir: &str) -> (PathBuf, u64) {
    ok(&["create", dir]);
    let batches = |range: std::ops::Range<u32>| -> String {
        range
            .map(|i| format!("+ {i} {}\ncommit\n", i + 1))
            .collect()
    };
    assert!(ingest(dir, &batches(1..6), &[]).status.success());
    ok(&["checkpoint", dir]);
    assert!(ingest(dir, &batches(6..11), &[]).status.success());
    ok(&["checkpoint", dir]);
    let out = ingest(dir, &batches(11..12), &[]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "acked 11 2\n");
    let active = segments(dir).pop().unwrap();
    let after_eleven = std::fs::metadata(&active).unwrap().len();
    let out = ingest(dir, &batches(12..15), &[]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("acked 14 6"));
    (active, after_eleven)
}

#[test]
fn a_log_cut_back_is_refused_until_the_loss_is_accepted() {
    for (cut, kept) in [("zero", 10), ("header", 10), ("record", 11), ("delete", 10)] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = path(tmp.path(), "g");
        let (active, after_eleven) = two_checkpoints_then_four(&dir);
        match cut {
            "zero" => std::fs::write(&active, b"").unwrap(),
            "header" => {
                let bytes = std::fs::read(&active).unwrap();
                std::fs::write(&active, &bytes[..40]).unwrap();
            }
            "record" => {
                let bytes = std::fs::read(&active).unwrap();
                std::fs::write(&active, &bytes[..after_eleven as usize]).unwrap();
            }
            _ => std::fs::remove_file(&active).unwrap(),
        }
        let name = active.file_name().unwrap().to_string_lossy().into_owned();
        for args in [
            vec!["verify", dir.as_str()],
            vec!["checkpoint", dir.as_str()],
            vec!["recover", dir.as_str()],
        ] {
            let out = run(&args);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(3), "{cut} {args:?}: {err}");
            if cut != "delete" {
                assert!(
                    err.contains(&name)
                        && err.contains(&format!("ends at record {kept}"))
                        && err.contains("up to 14")
                        && err.contains("--accept-lost-log"),
                    "{cut} {args:?}: {err}"
                );
            }
        }
        let out = ingest(&dir, "+ 100 101\n", &[]);
        assert_eq!(out.status.code(), Some(3), "{cut}: ingest");
        assert!(out.stdout.is_empty(), "{cut}: ingest acknowledged");
        let out = ok(&["recover", &dir, "--accept-lost-log"]);
        assert!(
            out.contains(&format!("batches {} to 14", kept + 1))
                && out.contains("are lost")
                && out.contains("numbered from 15"),
            "{cut}: {out}"
        );
        // Sequence numbers go on after the lost ones; the directory is clean.
        let out = ingest(&dir, "+ 100 101\n", &[]);
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "acked 15 1\n",
            "{cut}"
        );
        let out = ok(&["verify", &dir]);
        assert!(
            out.contains(": ok:") && out.contains("up to 15"),
            "{cut}: {out}"
        );
        let info = ok(&["info", &dir]);
        assert!(
            info.lines()
                .any(|l| l == format!("edges       {}", kept + 1)),
            "{cut}: {info}"
        );
        let out = ok(&["recover", &dir]);
        assert!(out.contains("nothing lost"), "{cut}: {out}");
    }
}

#[test]
fn a_directory_without_a_mark_still_opens() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = path(tmp.path(), "g");
    ok(&["create", &dir]);
    assert!(ingest(&dir, "+ 1 2\n", &[]).status.success());
    std::fs::remove_file(Path::new(&dir).join("LOGMARK")).unwrap();
    let out = ok(&["verify", &dir]);
    assert!(out.contains("no high-water mark"), "{out}");
    let out = ingest(&dir, "+ 2 3\n", &[]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "acked 2 1\n");
    let out = ok(&["verify", &dir]);
    assert!(out.contains("up to 2"), "{out}");
}
