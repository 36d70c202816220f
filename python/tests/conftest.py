"""Shared Hypothesis strategies: small random NetworkX graphs and their packgraph twins."""

from __future__ import annotations

import threading

import networkx as nx
import numpy as np
import packgraph as pg
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


def assert_snapshot_isolated(target, batches: int, width: int) -> None:
    """Holds a snapshot of ``target`` (a Graph or Store holding the path 0 → 1 → … → 1000)
    while another thread inserts ``batches`` batches of ``width`` edges into it, and checks
    on the snapshot, the whole time, that nothing it shows changes."""
    with target.snapshot() as snap:
        before = pg.bfs(snap, 0)
        done = threading.Event()

        def writer():
            for i in range(batches):
                start = i * width
                target.insert_edges(
                    np.arange(start, start + width), np.arange(5000, 5000 + width)
                )
            done.set()

        thread = threading.Thread(target=writer)
        thread.start()
        while not done.is_set():
            assert snap.num_edges == 1000
            assert np.array_equal(pg.bfs(snap, 0), before)
        thread.join()
        assert snap.num_edges == 1000
