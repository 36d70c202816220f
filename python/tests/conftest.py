"""Shared Hypothesis strategies: small random NetworkX graphs and their packgraph twins."""

from __future__ import annotations

import networkx as nx
from hypothesis import strategies as st


@st.composite
def nx_graphs(draw, weighted: bool = False, directed=None, max_vertices: int = 10):
    """A small graph whose vertex ids are not dense (7, 10, 13, ...), with isolated
    vertices and self-loops possible; weights in [0.5, 10] when ``weighted``."""
    n = draw(st.integers(1, max_vertices))
    if directed is None:
        directed = draw(st.booleans())
    ids = [7 + 3 * i for i in range(n)]
    pairs = draw(
        st.lists(st.tuples(st.sampled_from(ids), st.sampled_from(ids)), max_size=3 * n)
    )
    G = nx.DiGraph() if directed else nx.Graph()
    G.add_nodes_from(ids)
    for u, v in pairs:
        if weighted:
            G.add_edge(u, v, weight=draw(st.floats(0.5, 10.0)))
        else:
            G.add_edge(u, v)
    return G


def without_self_loops(G):
    """packgraph stores no self-loops (their vertices stay): the graph it holds."""
    H = G.copy()
    H.remove_edges_from(list(nx.selfloop_edges(H)))
    return H


def by_id(g, values):
    """A per-vertex array as a dict keyed by external id."""
    return dict(zip(g.vertices().tolist(), values.tolist()))
