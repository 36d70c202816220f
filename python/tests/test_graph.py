"""Building, updating and reading graphs; round trips; snapshots; errors."""

from __future__ import annotations


import networkx as nx
import numpy as np
import pytest
import scipy.sparse
from hypothesis import given

import packgraph as pg
from conftest import assert_snapshot_isolated, nx_graphs, without_self_loops


def test_readme_example():
    g = pg.Graph.from_edges([0, 1, 2], [1, 2, 3])
    g.insert_edges([3], [4])
    assert pg.bfs(g, 0).tolist() == [0, 1, 2, 3, 4]
    assert pg.pagerank(g).sum() == pytest.approx(1.0)


def test_reads():
    g = pg.Graph.from_edges([10, 20, 30], [20, 30, 10], directed=True)
    assert (g.num_vertices, g.num_edges, len(g), g.directed, g.weighted) == (3, 3, 3, True, False)
    assert 10 in g and 11 not in g and "x" not in g
    assert g.vertices().tolist() == [10, 20, 30]
    assert g.neighbors(10).tolist() == [20]
    assert g.has_edge(10, 20) and not g.has_edge(20, 10) and not g.has_edge(10, 99)
    assert g.degree().tolist() == [2, 2, 2]
    assert g.out_degree().tolist() == [1, 1, 1]
    src, dst = g.edge_arrays()
    assert sorted(zip(src.tolist(), dst.tolist())) == [(10, 20), (20, 30), (30, 10)]
    assert sorted(g.edges()) == [(10, 20), (20, 30), (30, 10)]
    assert "3 vertices" in repr(g)


def test_updates_and_string_ids():
    g = pg.Graph()
    assert g.insert_edges(["alice", "bob"], ["bob", 7]) == 2
    g.add_vertices(["carol"])
    assert g.vertices().tolist() == ["alice", "bob", 7, "carol"]
    assert g.delete_edges(["alice", "nobody"], ["bob", "alice"]) == 1
    assert g.num_edges == 1 and g.has_edge(7, "bob")


def test_self_loops_make_vertices_but_no_edges():
    g = pg.Graph.from_edges([1, 2], [1, 3])
    assert (g.num_vertices, g.num_edges) == (3, 1)


@given(nx_graphs(weighted=True))
def test_networkx_round_trip(G):
    H = pg.to_networkx(pg.from_networkx(G))
    expected = without_self_loops(G)
    assert list(H.nodes) == list(expected.nodes)
    assert nx.utils.edges_equal(H.edges(data="weight"), expected.edges(data="weight"))


@given(nx_graphs())
def test_numpy_round_trip(G):
    H = without_self_loops(G)
    if H.number_of_edges() == 0:
        return
    src, dst = (np.array(x, dtype=np.int64) for x in zip(*H.edges))
    g = pg.Graph.from_edges(src, dst, directed=G.is_directed())
    s, d = g.edge_arrays()
    got = set(zip(s.tolist(), d.tolist()))
    want = set(zip(src.tolist(), dst.tolist()))
    if not G.is_directed():
        got = {frozenset(e) for e in got}
        want = {frozenset(e) for e in want}
    assert got == want


@given(nx_graphs(weighted=True))
def test_scipy_round_trip(G):
    g = pg.from_networkx(G)
    A = pg.to_scipy(g)
    nodes = g.vertices().tolist()
    B = nx.to_scipy_sparse_array(without_self_loops(G), nodelist=nodes, weight="weight")
    assert (abs(A - B) > 1e-12).nnz == 0
    back = pg.from_scipy(A, directed=G.is_directed(), weighted=g.weighted)
    assert (abs(pg.to_scipy(back) - A) > 1e-12).nnz == 0


def test_from_scipy_keeps_isolated_vertices():
    g = pg.from_scipy(scipy.sparse.csr_array(np.array([[0, 2.0, 0], [2.0, 0, 0], [0, 0, 0]])))
    assert (g.num_vertices, g.num_edges, g.weighted) == (3, 1, True)


def test_write_and_read_back(tmp_path):
    g = pg.Graph.from_edges([5, 6, 7], [6, 7, 5], weights=[1.5, 2.0, 3.0], directed=True)
    for name in ["g.el", "g.pgb"]:
        g.write(tmp_path / name)
        h = pg.read(tmp_path / name, directed=True)
        assert h.vertices().tolist() == [5, 6, 7]
        assert sorted(h.edges()) == sorted(g.edges())
    seen = []
    pg.read(tmp_path / "g.el", progress=seen.append, weighted=False)
    assert pg.read(tmp_path / "g.el", weighted=False).weighted is False


def test_a_compact_read_holds_the_same_graph_in_fewer_bytes(tmp_path):
    rng = np.random.default_rng(7)
    src, dst = rng.integers(0, 2_000, size=(2, 40_000))
    pg.Graph.from_edges(src, dst).write(tmp_path / "g.el")
    roomy = pg.read(tmp_path / "g.el")
    compact = pg.read(tmp_path / "g.el", compact=True)
    assert sorted(compact.edges()) == sorted(roomy.edges())
    assert pg.pagerank(compact).tolist() == pytest.approx(pg.pagerank(roomy).tolist())
    assert compact.nbytes < 0.9 * roomy.nbytes
    # It takes updates like any graph (the first full leaf makes room).
    assert compact.insert_edges(list(range(500)), list(range(1, 501))) > 0
    assert compact.has_edge(0, 1) and compact.num_edges > roomy.num_edges


def test_compact_packs_a_graph_that_took_updates_and_room_gives_the_space_back():
    rng = np.random.default_rng(11)
    g = pg.Graph(weighted=True)
    for _ in range(4):
        src, dst = rng.integers(0, 3_000, size=(2, 10_000))
        g.insert_edges(src, dst, rng.random(10_000))
    g.set_vertex_attr("rank", {0: 1, 7: 2})
    before = g.snapshot()
    edges, roomy = sorted(before.edges()), before.nbytes
    g.compact()
    assert sorted(g.edges()) == edges
    assert g.vertices().tolist() == before.vertices().tolist()
    assert g.vertex_attr("rank").tolist() == before.vertex_attr("rank").tolist()
    packed = g.nbytes
    assert packed < 0.9 * roomy
    # The snapshot taken before keeps its version; answers agree on both.
    assert before.nbytes == roomy
    assert pg.sssp(g, 0).tolist() == pytest.approx(pg.sssp(before, 0).tolist())
    g.compact(room=True)
    assert sorted(g.edges()) == edges and g.nbytes > 1.1 * packed
    # Updates go on as before, on either layout.
    g.compact()
    assert g.insert_edges([3_001], [3_002], [0.5]) == 1
    assert g.has_edge(3_001, 3_002) and g.num_edges == len(edges) + 1


def test_snapshot_is_isolated_while_another_thread_inserts():
    g = pg.Graph.from_edges(np.arange(1000), np.arange(1, 1001))
    assert_snapshot_isolated(g, batches=50, width=100)
    assert g.num_edges > 1000


def test_input_error_names_file_and_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("1 2\n2 x\n")
    with pytest.raises(pg.InputError) as caught:
        pg.read(path)
    assert isinstance(caught.value, ValueError)
    assert caught.value.path == str(path) and caught.value.line == 2
    assert "bad.txt:2" in str(caught.value)


def test_input_errors_from_arguments():
    g = pg.Graph()
    with pytest.raises(pg.InputError):
        g.insert_edges([1], [2], weights=[1.0])  # an unweighted graph
    with pytest.raises(pg.InputError):
        pg.Graph(weighted=True).insert_edges([1], [2], weights=[float("nan")])
    with pytest.raises(pg.InputError):
        g.insert_edges([-1], [2])
    with pytest.raises(pg.InputError):
        g.insert_edges([1, 2], [2])
    with pytest.raises(pg.InputError):
        pg.read("x", format="nope")
    with pytest.raises(TypeError):
        g.insert_edges([1.5], [2])


def test_vertex_not_found():
    g = pg.Graph.from_edges([1], [2])
    with pytest.raises(pg.VertexNotFoundError) as caught:
        pg.bfs(g, 99)
    assert isinstance(caught.value, KeyError) and "99" in str(caught.value)
    with pytest.raises(KeyError):
        g.neighbors("nobody")


def test_corruption_error(tmp_path):
    path = tmp_path / "g.pgb"
    pg.Graph.from_edges(np.arange(100), np.arange(1, 101)).write(path)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(pg.CorruptionError):
        pg.read(path)


def test_os_errors_keep_their_python_types(tmp_path):
    with pytest.raises(FileNotFoundError):
        pg.read(tmp_path / "missing.txt")


def test_convergence_error():
    g = pg.Graph.from_edges([0, 1, 2], [1, 2, 0], directed=True)
    g.insert_edges([0], [2])
    with pytest.raises(pg.ConvergenceError):
        pg.pagerank(g, max_iter=1, tol=1e-15)
