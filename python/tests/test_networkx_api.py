"""The NetworkX-style methods agree with the array methods and with NetworkX itself on
small random graphs; results as mappings; copies, pickles, attributes, pandas."""

from __future__ import annotations

import copy
import pickle

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import packgraph as pg
from conftest import nx_graphs, without_self_loops

settings.register_profile("ci", max_examples=60, deadline=None)
settings.load_profile("ci")


def edge_set(edges, directed):
    """Edges as a set: ordered pairs when directed, unordered otherwise (weights kept)."""
    if directed:
        return {tuple(e) for e in edges}
    return {(frozenset(e[:2]),) + tuple(e[2:]) for e in edges}


@given(nx_graphs())
def test_reads_agree_with_arrays_and_networkx(G):
    g = pg.from_networkx(G)
    H = without_self_loops(G)
    assert list(g) == list(H.nodes) == g.vertices().tolist()
    assert len(g) == g.number_of_nodes() == H.number_of_nodes()
    assert g.number_of_edges() == H.number_of_edges() == len(g.edges())
    degrees = g.degree()
    for i, v in enumerate(g):
        assert g.has_node(v) and g.index(v) == i
        assert g.degree(v) == degrees[i] == H.degree(v)
        assert set(g.neighbors(v).tolist()) == set(H.neighbors(v))
        if G.is_directed():
            assert set(g.successors(v).tolist()) == set(H.successors(v))
            assert set(g.predecessors(v).tolist()) == set(H.predecessors(v))
        else:
            assert set(g.predecessors(v).tolist()) == set(H.neighbors(v))
    assert not g.has_node(-1) and not g.has_node("absent")
    src, dst = g.edge_arrays()
    assert g.edges() == list(zip(src.tolist(), dst.tolist()))
    assert edge_set(g.edges(), G.is_directed()) == edge_set(H.edges, G.is_directed())
    for u, v in H.edges:
        assert g.number_of_edges(u, v) == 1
    assert nx.utils.graphs_equal(g.to_networkx(), pg.to_networkx(g))
    assert nx.utils.graphs_equal(g.to_networkx(), H)


@given(nx_graphs(weighted=True))
def test_weighted_edges_are_triples(G):
    g = pg.from_networkx(G)
    H = without_self_loops(G)
    if H.number_of_edges() == 0:
        return
    assert all(len(e) == 3 for e in g.edges())
    want = edge_set(H.edges(data="weight"), G.is_directed())
    assert edge_set(g.edges(), G.is_directed()) == want


edit = st.tuples(
    st.sampled_from(["add_edge", "add_edges_from", "remove_edge", "add_node"]),
    st.integers(0, 6),
    st.integers(0, 6),
)


@given(st.booleans(), st.lists(edit, max_size=25))
def test_edits_agree_with_networkx(directed, edits):
    g = pg.Graph(directed=directed)
    G = nx.DiGraph() if directed else nx.Graph()
    for op, u, v in edits:
        if op == "add_edge":
            g.add_edge(u, v)
            G.add_edge(u, v)
        elif op == "add_edges_from":
            g.add_edges_from([(u, v), (v, u + 1)])
            G.add_edges_from([(u, v), (v, u + 1)])
        elif op == "add_node":
            g.add_node(u)
            G.add_node(u)
        elif G.has_edge(u, v) and u != v:
            g.remove_edge(u, v)
            G.remove_edge(u, v)
        else:  # absent, or a self-loop (packgraph stores none)
            with pytest.raises((pg.InputError, pg.VertexNotFoundError)):
                g.remove_edge(u, v)
    G.remove_edges_from(list(nx.selfloop_edges(G)))
    assert set(g) == set(G.nodes)
    assert edge_set(g.edges(), directed) == edge_set(G.edges, directed)


@given(nx_graphs(weighted=True), st.data())
def test_subgraph_matches_networkx(G, data):
    g = pg.from_networkx(G)
    chosen = data.draw(st.sets(st.sampled_from(list(G.nodes))))
    h = g.subgraph(chosen)
    H = without_self_loops(G).subgraph(chosen)
    assert list(h) == [v for v in G.nodes if v in chosen]
    assert (h.directed, h.weighted) == (g.directed, g.weighted)
    assert edge_set(h.edges(), G.is_directed()) == edge_set(
        H.edges(data="weight") if g.weighted else H.edges, G.is_directed()
    )


@given(nx_graphs(), st.data())
def test_results_are_mappings_that_agree_with_run_and_networkx(G, data):
    g = pg.from_networkx(G)
    source = data.draw(st.sampled_from(list(G.nodes)))
    result = pg.bfs(g, source)
    assert np.array_equal(result.array, pg.run("bfs", g, source=source))
    assert result.vertices.tolist() == list(G.nodes)
    expected = nx.single_source_shortest_path_length(G, source)
    assert dict(result) == result.to_dict() == {v: expected.get(v, pg.UNREACHED) for v in G.nodes}
    for v in G.nodes:
        assert result[v] == expected.get(v, pg.UNREACHED)
    ranks = dict(pg.pagerank(g, tol=1e-10, max_iter=10_000))
    assert ranks.keys() == set(G.nodes)
    assert sum(ranks.values()) == pytest.approx(1.0)


def test_result_keeps_array_manners():
    g = pg.Graph.from_edges([0, 1, 2], [1, 2, 3])
    pr = pg.pagerank(g)
    assert pr.sum() == pytest.approx(1.0) and pr.dtype == np.float64
    assert np.allclose(np.asarray(pr), pr.array) and np.allclose(pr * 2, 2 * pr.array)
    assert pg.bfs(g, 0).tolist() == [0, 1, 2, 3]
    assert pr.index(3) == 3 and len(pr) == 4 and 3 in pr and 9 not in pr
    with pytest.raises(KeyError):
        pr[9]
    assert pickle.loads(pickle.dumps(pr)) == pr
    assert "packgraph.Result" in repr(pr)


def test_vertex_attributes_by_dict_and_by_list(tmp_path):
    g = pg.Graph.from_edges([1, 2], [2, 3])
    g.set_vertex_attr("name", {1: "one", 3: "three"})
    g.set_vertex_attr("score", [0.5, 1.5, 2.5])
    assert sorted(g.vertex_attrs()) == ["name", "score"]
    assert g.vertex_attr("name").tolist() == ["one", None, "three"]
    assert g.vertex_attr("score").tolist() == [0.5, 1.5, 2.5]
    g.set_vertex_attr("name", {1: None})
    assert g.vertex_attr("name").tolist() == [None, None, "three"]
    assert g.to_networkx().nodes[2] == {"score": 1.5}
    with pytest.raises(pg.InputError, match="2 values for 3 vertices"):
        g.set_vertex_attr("score", [1, 2])
    with pytest.raises(pg.VertexNotFoundError):
        g.set_vertex_attr("score", {99: 1})
    with pytest.raises(TypeError, match="score"):
        g.set_vertex_attr("score", [1, 2, [3]])
    with pytest.raises(pg.InputError, match="no vertex attribute"):
        g.vertex_attr("missing")
    with pg.create(tmp_path / "d", source=g) as s:
        s.set_vertex_attr("flag", [True, False, True])
    with pg.open(tmp_path / "d") as s:
        assert s.vertex_attr("flag").tolist() == [True, False, True]


@given(nx_graphs(weighted=True))
def test_copy_and_pickle_keep_everything_and_are_independent(G):
    g = pg.from_networkx(G)
    g.set_vertex_attr("i", list(range(len(g))))
    for twin in (g.copy(), copy.copy(g), copy.deepcopy(g), pickle.loads(pickle.dumps(g))):
        assert isinstance(twin, pg.Graph)
        assert list(twin) == list(g) and twin.edges() == g.edges()
        assert (twin.directed, twin.weighted) == (g.directed, g.weighted)
        assert twin.vertex_attr("i").tolist() == list(range(len(g)))
        twin.add_node("new")
        assert "new" in twin and "new" not in g


def test_string_ids_pickle():
    g = pg.Graph()
    g.add_edges_from([("a", "b"), ("b", 7)])
    h = pickle.loads(pickle.dumps(g))
    assert list(h) == ["a", "b", 7] and h.edges() == g.edges()


def test_add_edges_from_takes_weights_as_numbers_or_dicts():
    g = pg.Graph(weighted=True, directed=True)
    assert g.add_edges_from([(1, 2, 0.5), (2, 3, {"weight": 2.0}), (3, 1)]) == 3
    assert sorted(g.edges()) == [(1, 2, 0.5), (2, 3, 2.0), (3, 1, 1.0)]
    g.add_edge(4, 5, weight=3.0)
    assert g.has_edge(4, 5) and g.remove_edges_from([(4, 5), (9, 9)]) == 1
    with pytest.raises(pg.InputError, match=r"edges\[0\]"):
        g.add_edges_from([(1, 2, 3, 4)])
    with pytest.raises(pg.InputError):
        pg.Graph().add_edge(1, 2, weight=2.0)  # unweighted


def test_pandas_round_trip():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": ["x", "y", "z"], "b": ["y", "z", "x"], "w": [1.0, 2.0, 3.0]})
    g = pg.from_pandas(df, "a", "b", weight="w", directed=True)
    assert sorted(g.edges()) == [("x", "y", 1.0), ("y", "z", 2.0), ("z", "x", 3.0)]
    out = g.to_pandas()
    assert list(out.columns) == ["source", "target", "weight"]
    assert out.equals(pg.to_pandas(g)) and len(out) == 3
    ints = pg.from_pandas(pd.DataFrame({"source": [1, 2], "target": [2, 3]}))
    assert sorted(ints.edges()) == [(1, 2), (2, 3)]
    with pytest.raises(pg.InputError, match="no column 'nope'"):
        pg.from_pandas(df, "a", "nope")
    series = pg.pagerank(g).to_pandas(name="pagerank")
    assert series.index.tolist() == ["x", "y", "z"] and series.name == "pagerank"


@given(nx_graphs(weighted=True), st.booleans(), st.data())
def test_shortest_path_is_a_shortest_path_as_networkx_finds(G, weighted, data):
    g = pg.from_networkx(G)
    H = without_self_loops(G)
    source = data.draw(st.sampled_from(list(G.nodes)))
    target = data.draw(st.sampled_from(list(G.nodes)))
    weight = "weight" if weighted else None
    if not nx.has_path(H, source, target):
        with pytest.raises(pg.Error, match="no path"):
            pg.shortest_path(g, source, target, weighted=weighted)
        return
    path = pg.shortest_path(g, source, target, weighted=weighted)
    assert path[0] == source and path[-1] == target
    assert all(H.has_edge(u, v) for u, v in zip(path, path[1:]))
    length = nx.path_weight(H, path, weight) if weighted else len(path) - 1
    want = nx.shortest_path_length(H, source, target, weight=weight)
    assert length == pytest.approx(want, rel=1e-9)


def test_shortest_path_on_string_ids_and_errors():
    g = pg.Graph(directed=True)
    g.add_edges_from([("a", "b"), ("b", "c"), ("a", "c"), ("c", "d")])
    assert pg.shortest_path(g, "a", "d") == ["a", "c", "d"]
    assert pg.shortest_path(g, "a", "a") == ["a"]
    with pytest.raises(pg.Error, match="no path"):
        pg.shortest_path(g, "d", "a")
    with pytest.raises(pg.VertexNotFoundError):
        pg.shortest_path(g, "a", "zz")
    with pytest.raises(pg.InputError):
        pg.shortest_path(g, None, "a")


def test_shortest_path_through_zero_weights():
    g = pg.Graph(weighted=True)
    g.add_edges_from([(1, 2, 0.0), (2, 3, 0.0), (3, 1, 0.0), (3, 4, 1.0), (1, 4, 2.0)])
    path = pg.shortest_path(g, 1, 4)
    assert path[0] == 1 and path[-1] == 4 and len(path) == len(set(path))
    assert sum(w for u, v, w in g.edges() if {u, v} in [set(p) for p in zip(path, path[1:])]) == 1.0
