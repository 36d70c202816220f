"""The LDBC Graphalytics validation graphs of the Rust tests, read through ``pg.read``."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import packgraph as pg

DATA = Path(__file__).resolve().parents[2] / "crates/packgraph/tests/data/graphalytics/example"

pytestmark = pytest.mark.skipif(not DATA.exists(), reason="validation graphs not present")


def reference(name: str, kind: str) -> dict:
    values = {}
    for line in (DATA / f"example-{kind}-{name}").read_text().split("\n"):
        if line.strip():
            vertex, value = line.split()
            values[int(vertex)] = float(value)
    return values


def result(g, values) -> dict:
    return dict(zip(g.vertices().tolist(), values.tolist()))


@pytest.mark.parametrize("kind, source", [("directed", 1), ("undirected", 2)])
def test_example_graphs_reproduce_the_reference_outputs(kind, source):
    g = pg.read(DATA / f"example-{kind}.v", directed=kind == "directed")
    bfs = result(g, pg.bfs(g, source))
    for v, hops in reference("BFS", kind).items():
        assert bfs[v] == (pg.UNREACHED if hops >= 9.2e18 else hops)
    pr = result(g, pg.pagerank(g, max_iter=2, tol=0))
    for v, score in reference("PR", kind).items():
        assert pr[v] == pytest.approx(score, rel=1e-4)
    cdlp = result(g, pg.cdlp(g, iterations=2))
    assert cdlp == {v: int(x) for v, x in reference("CDLP", kind).items()}
    lcc = result(g, pg.lcc(g))
    for v, x in reference("LCC", kind).items():
        assert lcc[v] == pytest.approx(x, abs=1e-6)
    sssp = result(g, pg.sssp(g, source))
    for v, x in reference("SSSP", kind).items():
        assert (math.isinf(sssp[v]) and math.isinf(x)) or sssp[v] == pytest.approx(x, rel=1e-4)
    wcc = result(g, pg.wcc(g))
    expected = reference("WCC", kind)
    pairs = {(wcc[v], expected[v]) for v in expected}
    assert len(pairs) == len({a for a, _ in pairs}) == len({b for _, b in pairs})
