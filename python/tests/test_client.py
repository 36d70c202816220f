"""The HTTP client (``pg.connect``) against a real ``packgraph serve``.

The server is the ``packgraph`` binary: ``$PACKGRAPH_BIN``, else the workspace's
``target/debug/packgraph`` or ``target/release/packgraph`` (``cargo build -p packgraph-cli``
makes it; CI's ``cargo test --workspace`` runs first), else ``packgraph`` on the PATH. Without
one these tests are skipped, saying so.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
from pathlib import Path
from typing import Iterator, List, Optional

import packgraph as pg
import pytest

ROOT = Path(__file__).resolve().parents[2]


def find_binary() -> Optional[str]:
    candidates = [os.environ.get("PACKGRAPH_BIN")]
    candidates += [str(ROOT / "target" / kind / "packgraph") for kind in ("debug", "release")]
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("packgraph")


BINARY = find_binary()
pytestmark = pytest.mark.skipif(
    BINARY is None,
    reason="no packgraph binary: build it (cargo build -p packgraph-cli) or set PACKGRAPH_BIN",
)


class Server:
    """``packgraph serve ARGS`` on a free loopback port; ``url`` once it listens."""

    def __init__(self, args: List[str]) -> None:
        assert BINARY is not None
        self.process = subprocess.Popen(
            [BINARY, "--threads", "2", "serve", "--listen", "127.0.0.1:0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        line: List[str] = []
        reader = threading.Thread(target=lambda: line.append(self.process.stdout.readline()))
        reader.start()
        reader.join(timeout=60)
        first = line[0] if line else ""
        if not first.startswith("listening on "):
            self.process.kill()
            raise RuntimeError(f"serve did not start: {first!r} {self.process.stderr.read()}")
        self.url = first.split()[-1]

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=30)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    s = Server([str(tmp_path / "g"), "--create", "--directed"])
    yield s
    assert s.stop() == 0


def test_edges_in_queries_out(server: Server) -> None:
    g = pg.connect(server.url)
    assert g.graph_info()["edges"] == 0
    ack = g.insert_edges([1, 2, 3], [2, 3, 1])
    assert ack == {"seq": 1, "version": 1}
    assert g.neighbors(1) == [2]
    assert g.run("bfs", source=1) == {1: 0, 2: 1, 3: 2}
    g.delete_edges([3], [1])
    assert g.graph_info() == {
        "vertices": 3,
        "edges": 2,
        "directed": True,
        "weighted": False,
        "version": 2,
    }
    ranks = g.run("pagerank", iterations=5, damping=0.85)
    assert set(ranks) == {1, 2, 3} and all(r > 0 for r in ranks.values())
    assert g.run("bfs", source=3) == {1: None, 2: None, 3: 0}
    assert g.vertex(2) == {"id": 2, "out_degree": 1, "in_degree": 1, "out": [3], "in": [1]}


def test_names_and_mistakes(server: Server) -> None:
    g = pg.connect(server.url)
    g.insert_edges(["alice", "bob"], ["bob", "carol"])
    assert g.run("wcc") == {"alice": "alice", "bob": "alice", "carol": "alice"}
    assert g.neighbors("bob") == ["carol"]
    with pytest.raises(KeyError):
        g.neighbors("nobody")
    with pytest.raises(pg.ServerVertexNotFoundError):
        g.run("bfs", source="nobody")
    with pytest.raises(ValueError, match="unknown algorithm"):
        g.run("dijkstra")
    with pytest.raises(pg.ServerInputError, match="unknown parameter"):
        g.run("bfs", depth=3)
    with pytest.raises(pg.ServerInputError, match="unweighted"):
        g.insert_edges([1], [2], weights=[2.0])
    with pytest.raises(ValueError):
        g.insert_edges([1, 2], [3])
    assert g.graph_info()["edges"] == 2
    acks = g.ingest("+ x y\ncommit\n+ y z\n")
    # Each batch its own seq; batches the server applies as one group share its version.
    assert [a["seq"] for a in acks] == [2, 3]
    assert 2 <= acks[0]["version"] <= acks[1]["version"] == g.graph_info()["version"]
    assert g.neighbors("y") == ["z"]


def test_a_snapshot_keeps_its_version(server: Server) -> None:
    g = pg.connect(server.url)
    g.insert_edges([1], [2])
    with g.snapshot() as s:
        g.insert_edges([2], [3])
        assert s.run("bfs", source=1) == {1: 0, 2: 1}
        assert g.run("bfs", source=1) == {1: 0, 2: 1, 3: 2}
        version = s.version
    with pytest.raises(KeyError):
        g.run("bfs", source=1, version=version)
    assert "packgraph_pinned_versions 0" in g.metrics()
    assert g.checkpoint()["bytes_written"] > 0


def test_a_token_is_sent_and_required(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("py-secret\n")
    s = Server(["--demo", "--scale", "5", "--token-file", str(token)])
    try:
        with pytest.raises(pg.ServerError) as refused:
            pg.connect(s.url).graph_info()
        assert refused.value.status == 401
        g = pg.connect(s.url, token="py-secret")
        assert g.graph_info()["vertices"] == 32
        assert "py-secret" not in repr(g)
    finally:
        assert s.stop() == 0


def test_weighted_graphs_take_weights(tmp_path: Path) -> None:
    s = Server([str(tmp_path / "w"), "--create", "--weighted"])
    try:
        g = pg.connect(s.url)
        g.insert_edges([1, 2], [2, 3], weights=[0.5, 2.0])
        assert g.vertex(2)["out"] == [[1, 0.5], [3, 2.0]]
        assert g.neighbors(2) == [1, 3]
        assert g.run("sssp", source=1) == {1: 0.0, 2: 0.5, 3: 2.5}
    finally:
        assert s.stop() == 0
