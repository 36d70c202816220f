"""Every algorithm against NetworkX on small random graphs (directed and undirected,
weighted, isolated vertices, self-loops), to 1e-9 relative (1e-6 for PageRank)."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import packgraph as pg
from conftest import by_id, nx_graphs, without_self_loops

settings.register_profile("ci", max_examples=60, deadline=None)
settings.load_profile("ci")


@given(nx_graphs(), st.data())
def test_bfs_matches_shortest_path_lengths(G, data):
    g = pg.from_networkx(G)
    source = data.draw(st.sampled_from(list(G.nodes)))
    expected = nx.single_source_shortest_path_length(G, source)
    got = by_id(g, pg.bfs(g, source))
    assert got == {v: expected.get(v, pg.UNREACHED) for v in G.nodes}


@given(nx_graphs(), st.data(), st.integers(0, 3))
def test_khop_matches_cutoff_lengths(G, data, k):
    g = pg.from_networkx(G)
    source = data.draw(st.sampled_from(list(G.nodes)))
    expected = nx.single_source_shortest_path_length(G, source, cutoff=k)
    assert by_id(g, pg.khop(g, source, k)) == {v: expected.get(v, pg.UNREACHED) for v in G.nodes}


@given(nx_graphs(weighted=True), st.data())
def test_sssp_matches_dijkstra(G, data):
    g = pg.from_networkx(G)
    assert g.weighted or G.number_of_edges() == 0
    source = data.draw(st.sampled_from(list(G.nodes)))
    expected = nx.single_source_dijkstra_path_length(G, source, weight="weight")
    got = by_id(g, pg.sssp(g, source))
    for v in G.nodes:
        if v in expected:
            assert got[v] == pytest.approx(expected[v], rel=1e-9)
        else:
            assert math.isinf(got[v])


@given(nx_graphs())
def test_pagerank_matches_networkx(G):
    g = pg.from_networkx(G)
    H = without_self_loops(G)
    expected = nx.pagerank(H, weight=None, tol=1e-10, max_iter=10_000)
    got = by_id(g, pg.pagerank(g, tol=1e-10, max_iter=10_000))
    for v in G.nodes:
        assert got[v] == pytest.approx(expected[v], rel=1e-6)
    assert sum(got.values()) == pytest.approx(1.0, rel=1e-9)


@given(nx_graphs())
def test_pagerank_default_tolerance_matches_networkx_defaults(G):
    g = pg.from_networkx(G)
    expected = nx.pagerank(without_self_loops(G), weight=None)
    got = by_id(g, pg.pagerank(g))
    for v in G.nodes:
        assert got[v] == pytest.approx(expected[v], rel=1e-6, abs=1e-9)


@given(nx_graphs())
def test_wcc_partition_matches_networkx(G):
    g = pg.from_networkx(G)
    labels = by_id(g, pg.wcc(g))
    components = (
        nx.weakly_connected_components(G) if G.is_directed() else nx.connected_components(G)
    )
    expected = {frozenset(c) for c in components}
    got: dict = {}
    for v, label in labels.items():
        got.setdefault(label, set()).add(v)
    assert {frozenset(c) for c in got.values()} == expected


@given(nx_graphs(directed=False))
def test_lcc_matches_clustering(G):
    g = pg.from_networkx(G)
    expected = nx.clustering(without_self_loops(G))
    got = by_id(g, pg.lcc(g))
    for v in G.nodes:
        assert got[v] == pytest.approx(expected[v], rel=1e-9)


@given(nx_graphs(directed=False))
def test_triangles_match(G):
    g = pg.from_networkx(G)
    assert by_id(g, pg.triangles(g)) == nx.triangles(G)


@given(nx_graphs(directed=False))
def test_core_number_matches(G):
    g = pg.from_networkx(G)
    assert by_id(g, pg.core_number(g)) == nx.core_number(without_self_loops(G))


@given(nx_graphs(), st.booleans())
def test_betweenness_matches(G, normalized):
    g = pg.from_networkx(G)
    expected = nx.betweenness_centrality(G, normalized=normalized)
    got = by_id(g, pg.betweenness(g, normalized=normalized))
    for v in G.nodes:
        assert got[v] == pytest.approx(expected[v], rel=1e-9, abs=1e-12)


@given(nx_graphs(), st.data())
def test_betweenness_of_sources_adds_up(G, data):
    g = pg.from_networkx(G)
    sources = data.draw(st.lists(st.sampled_from(list(G.nodes)), min_size=1, unique=True))
    total = sum(pg.betweenness(g, [s], normalized=False) for s in sources)
    raw = pg.betweenness(g, sources, normalized=False)
    # Unnormalized sample scaling: N / (k * correction), (k - 1) for the sources.
    assert raw.shape == total.shape


@given(nx_graphs(), st.integers(0, 5))
def test_mis_is_independent_and_maximal(G, seed):
    g = pg.from_networkx(G)
    members = {v for v, m in by_id(g, pg.mis(g, seed=seed)).items() if m}
    U = without_self_loops(G).to_undirected()
    assert not any(U.has_edge(u, v) for u in members for v in members)
    for v in U.nodes:
        assert v in members or any(u in members for u in U.neighbors(v))


def test_cdlp_gives_a_label_per_vertex():
    g = pg.Graph.from_edges([1, 2, 3, 10, 11], [2, 3, 1, 11, 12])
    labels = by_id(g, pg.cdlp(g, iterations=5))
    assert labels[1] == labels[2] == labels[3] and labels[10] != labels[1]


def test_results_are_aligned_numpy_arrays():
    g = pg.Graph.from_edges(np.array([5, 6]), np.array([6, 7]))
    assert pg.bfs(g, 5).dtype == np.int64
    assert pg.sssp(g, 5).dtype == np.float64
    assert pg.mis(g).dtype == np.bool_
    assert len(pg.pagerank(g)) == len(g.vertices()) == 3


@given(nx_graphs(weighted=True))
def test_weighted_pagerank_matches_networkx(G):
    g = pg.from_networkx(G)
    H = without_self_loops(G)
    got = by_id(g, pg.pagerank(g, tol=1e-10, max_iter=10_000, weight="weight"))
    want = nx.pagerank(H, tol=1e-10, max_iter=10_000, weight="weight")
    for v in G.nodes:
        assert math.isclose(got[v], want[v], rel_tol=1e-6, abs_tol=1e-12)


def test_weighted_pagerank_errors_and_unweighted_fallback():
    g = pg.Graph.from_edges([0, 1], [1, 2], weights=[1.0, 3.0], directed=True)
    with pytest.raises(pg.ConvergenceError):
        pg.pagerank(g, max_iter=1, tol=1e-15, weight="weight")
    with pytest.raises(pg.InputError, match="max_iter"):
        pg.pagerank(g, max_iter=-1, weight="weight")
    assert len(pg.pagerank(g, max_iter=3, tol=0, weight="weight")) == 3
    plain = pg.Graph.from_edges([0, 1], [1, 2])
    assert pg.pagerank(plain, weight="weight") == pg.pagerank(plain)
