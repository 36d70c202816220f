"""Durable graphs: create, write, close, reopen; snapshots while writing; a writer process
killed with SIGKILL keeps every acknowledged batch; verify; damaged files; the lock."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import packgraph as pg
from conftest import assert_snapshot_isolated


def edge_set(g):
    """Edges of an undirected graph as a set of frozensets of external ids."""
    src, dst = g.edge_arrays()[:2]
    return {frozenset(e) for e in zip(src.tolist(), dst.tolist())}


def test_create_insert_close_reopen_reads_back_every_edge(tmp_path):
    d = tmp_path / "g"
    s = pg.create(d)
    assert (s.num_vertices, s.num_edges, s.last_seq, s.path) == (0, 0, 0, str(d))
    want = set()
    rng = np.random.default_rng(1)
    for _ in range(5):
        src, dst = rng.integers(0, 300, 200), rng.integers(0, 300, 200)
        s.insert_edges(src, dst)
        want |= {frozenset((u, v)) for u, v in zip(src.tolist(), dst.tolist()) if u != v}
    # The first batch made the directory's vertices integers: a name is refused, unapplied.
    with pytest.raises(pg.InputError, match="alice"):
        s.insert_edges([7], ["alice"])
    assert s.insert_edges([7, 301], [301, 302]) == 2
    want |= {frozenset((7, 301)), frozenset((301, 302))}
    gone = next(iter(want))
    assert s.delete_edges([min(gone)], [max(gone)]) == 1
    want.discard(gone)
    s.add_vertices([303])
    assert s.commit() == s.last_seq == s.durable_seq == 8
    n = s.num_vertices
    s.close()
    with pg.open(d) as t:
        assert t.recovery["records_replayed"] == 8 and t.recovery["torn_bytes"] == 0
        assert edge_set(t) == want and t.num_vertices == n and 303 in t
        with pytest.raises(pg.InputError):
            t.add_vertices(["carol"])
        assert t.last_seq == 8
    assert edge_set(pg.read(d)) == want  # the lock-free reader sees the same


def test_a_named_store_holds_names_only(tmp_path):
    with pg.create(tmp_path / "g") as s:
        assert s.insert_edges(["alice"], ["bob"]) == 1
        with pytest.raises(pg.InputError, match="integer"):
            s.insert_edges(["carol"], [5])
        with pytest.raises(pg.InputError, match="whitespace"):
            s.add_vertices(["two words"])
        assert s.num_vertices == 2 and s.last_seq == 1
        assert s.insert_edges(["carol"], ["5"]) == 1


def test_store_reads_like_a_graph_and_runs_algorithms(tmp_path):
    g = pg.Graph.from_edges([0, 1, 2, 3], [1, 2, 3, 0], directed=True)
    with pg.create(tmp_path / "g", source=g) as s:
        assert (s.directed, s.weighted, len(s), s.num_edges) == (True, False, 4, 4)
        assert pg.bfs(s, 0).tolist() == pg.bfs(g, 0).tolist()
        assert np.allclose(pg.pagerank(s), pg.pagerank(g))
        assert s.neighbors(0).tolist() == [1] and s.has_edge(3, 0) and 2 in s
        assert "4 vertices" in repr(s)
    assert repr(s) == "<packgraph.Store (closed)>" and s.closed


def test_create_from_a_file_a_data_directory_and_with_weights(tmp_path):
    path = tmp_path / "g.el"
    path.write_text("1 2\n2 3\n")
    with pg.create(tmp_path / "a", source=path, weighted=True) as a:
        assert a.weighted and a.num_edges == 2
        a.insert_edges([3], [4], weights=[2.5])
    with pg.create(tmp_path / "b", source=str(tmp_path / "a")) as b:
        assert b.weighted and b.num_edges == 3
    with pytest.raises(pg.InputError):
        pg.create(tmp_path / "b")  # not empty
    with pytest.raises(pg.InputError):
        pg.create(tmp_path / "c", source=pg.Graph(), directed=True)
    with pytest.raises(pg.InputError):
        pg.open(tmp_path)  # not a data directory


def test_snapshot_is_isolated_while_another_thread_writes(tmp_path):
    with pg.create(tmp_path / "g", sync="none") as s:
        s.insert_edges(np.arange(1000), np.arange(1, 1001))
        assert_snapshot_isolated(s, batches=30, width=30)
        assert s.num_edges == 1900


def test_threads_share_group_commits(tmp_path):
    d = tmp_path / "g"
    with pg.create(d, sync="group:2") as s:
        assert s.sync_policy == "group:2"

        def writer(t):
            for i in range(20):
                s.insert_edges([t * 1000 + i], [t * 1000 + i + 1])

        threads = [threading.Thread(target=writer, args=(t,)) for t in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert s.commit() == 80
    with pg.open(d) as s:
        assert s.num_edges == 80


CHILD = """
import sys
import packgraph as pg
s = pg.open(sys.argv[1], sync="batch")
batch = s.last_seq  # batch b is sequence number b + 1
while True:
    ids = batch * 100 + __import__("numpy").arange(50)
    s.insert_edges(ids, ids + 50)
    print(s.commit(), flush=True)
    batch += 1
"""


def batches_present(g, count):
    """For batches 0..count-1 of CHILD: how many of each one's 50 edges `g` holds."""
    return [sum(g.has_edge(b * 100 + j, b * 100 + j + 50) for j in range(50)) for b in range(count)]


def test_killed_writer_keeps_a_prefix_holding_every_acked_batch(tmp_path):
    d = tmp_path / "g"
    pg.create(d).close()
    rng = random.Random(5)
    acked = 0
    for _ in range(5):
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(d)], stdout=subprocess.PIPE, text=True
        )
        first = child.stdout.readline()  # started writing
        assert first.strip(), "the writer printed no acknowledgement"
        time.sleep(rng.uniform(0.0, 0.25))
        child.send_signal(signal.SIGKILL)
        out, _ = child.communicate()
        lines = (first + out).split("\n")
        # A line cut short by the kill has no newline after it: not an acknowledgement.
        seqs = [int(x) for x in lines[:-1] if x.strip()]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
        acked = max(acked, seqs[-1])
        with pg.open(d) as s:
            count = s.last_seq
            assert count >= acked
            held = batches_present(s, count + 2)
            assert held == [50] * count + [0, 0]  # exactly a prefix of whole batches
            assert s.num_edges == 50 * count
    report = pg.verify(d)
    assert report["num_arcs"] == 2 * 50 * count


def test_verify_a_clean_directory(tmp_path):
    d = tmp_path / "g"
    with pg.create(d, source=pg.Graph.from_edges(np.arange(500), np.arange(1, 501))) as s:
        s.insert_edges([1], [3])
        stats = s.checkpoint()
        assert stats["seq"] == 1 and stats["bytes_written"] > 0
        assert set(stats) == {
            "seq", "delta", "bytes_written", "bytes_reused", "units_written", "units_reused"
        }
        s.insert_edges([1], [4])
    report = pg.verify(d)
    assert report["records"] == 1 and report["torn_bytes"] == 0 and report["packs"] >= 1
    assert (report["num_vertices"], report["num_arcs"]) == (501, 2 * 502)


def flip(path, offset):
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))


def test_a_flipped_byte_in_a_pack_is_corruption(tmp_path):
    d = tmp_path / "g"
    pg.create(d, source=pg.Graph.from_edges(np.arange(3000), np.arange(1, 3001))).close()
    (pack,) = list(d.glob("*.pack"))
    flip(pack, pack.stat().st_size // 2)
    with pytest.raises(pg.CorruptionError) as caught:
        pg.verify(d)
    assert caught.value.path == str(pack) and pack.name in str(caught.value)
    with pytest.raises(pg.CorruptionError):
        pg.open(d)


def test_a_flipped_byte_in_the_log_is_corruption(tmp_path):
    d = tmp_path / "g"
    with pg.create(d) as s:
        for i in range(3):
            s.insert_edges([i], [i + 1])
    (log,) = list(d.glob("*.wal"))
    flip(log, 24 + 20)  # inside the first record (the segment header is 24 bytes)
    with pytest.raises(pg.CorruptionError) as caught:
        pg.verify(d)
    assert log.name in str(caught.value) and caught.value.offset is not None
    with pytest.raises(pg.CorruptionError):
        pg.open(d)


def test_a_torn_last_record_is_cut_not_reported(tmp_path):
    d = tmp_path / "g"
    with pg.create(d) as s:
        s.insert_edges([1], [2])
    (log,) = list(d.glob("*.wal"))
    with open(log, "ab") as f:
        # A record header a crash cut short (zeros after the last nonzero byte would read
        # as space the log zeroed ahead, not as bytes of the record).
        f.write(b"WR\x01\x00\x40\x00\x07")
    assert pg.verify(d)["torn_bytes"] == 7
    with pg.open(d) as s:
        assert s.recovery["torn_bytes"] == 7 and s.num_edges == 1


def test_opening_an_open_directory_is_a_clear_error(tmp_path):
    d = tmp_path / "g"
    s = pg.create(d)
    with pytest.raises(pg.LockedError) as caught:
        pg.open(d)
    assert isinstance(caught.value, OSError) and isinstance(caught.value, pg.Error)
    assert caught.value.filename == str(d) and "open for writing elsewhere" in str(caught.value)
    other = subprocess.run(
        [sys.executable, "-c", f"import packgraph as pg; pg.open({str(d)!r})"],
        check=False,
        capture_output=True,
        text=True,
    )
    assert other.returncode != 0 and "LockedError" in other.stderr
    s.close()
    s.close()  # a second close does nothing
    with pytest.raises(pg.InputError, match="closed"):
        s.insert_edges([1], [2])
    with pg.open(d) as again:
        assert again.num_vertices == 0


@pytest.mark.parametrize("sync", ["sometimes", "group:0", "group:x", ""])
def test_bad_sync_policy(tmp_path, sync):
    with pytest.raises(pg.InputError) as caught:
        pg.create(tmp_path / "g", sync=sync)
    assert isinstance(caught.value, ValueError)
    assert not (tmp_path / "g").exists()
    pg.create(tmp_path / "h").close()
    with pytest.raises(ValueError):
        pg.open(tmp_path / "h", sync=sync)


def test_bad_batches_change_nothing(tmp_path):
    d = tmp_path / "g"
    with pg.create(d) as s:
        s.insert_edges([1], [2])
        with pytest.raises(pg.InputError):
            s.insert_edges([1], [3], weights=[1.0])  # unweighted
        with pytest.raises(pg.InputError):
            s.insert_edges([-1], [3])
        assert (s.last_seq, s.num_edges) == (1, 1)
        s.insert_edges(np.array([4, 5]), np.array([5, 6]))
    with pg.open(d) as s:
        assert edge_set(s) == {frozenset((1, 2)), frozenset((4, 5)), frozenset((5, 6))}


def test_store_dir_accepts_path_objects(tmp_path):
    d = Path(tmp_path) / "g"
    with pg.create(os.fspath(d)) as s:
        s.insert_edges([1], [2])
    assert pg.open(d).num_edges == 1


def test_networkx_style_edits_are_durable_batches(tmp_path):
    d = tmp_path / "nx"
    with pg.create(d, weighted=True) as s:
        s.add_edge("a", "b", weight=2.0)
        assert s.last_seq == 1
        assert s.add_edges_from([("b", "c", 1.0), ("c", "d", {"weight": 4.0})]) == 2
        assert s.last_seq == 2
        s.remove_edge("a", "b")
        s.add_node("lonely")
        assert s.number_of_edges() == 2 and s.degree("c") == 2
    with pg.open(d) as s:
        assert s.last_seq == 4
        assert sorted(s.edges()) == [("b", "c", 1.0), ("c", "d", 4.0)]
        assert list(s) == ["a", "b", "c", "d", "lonely"]
        copy = s.copy()
    assert isinstance(copy, pg.Graph) and copy.edges() == [("b", "c", 1.0), ("c", "d", 4.0)]
