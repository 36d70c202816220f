"""packgraph: a dynamic-graph engine for Python.

Graphs live in compressed packed memory arrays (in Rust); edges are inserted and deleted
in batches, each batch a new version; snapshots keep a version unchanged while the graph
goes on. Per-vertex results are NumPy arrays aligned with ``g.vertices()``. A ``Store``
(``pg.create``, ``pg.open``) keeps a graph in a directory across crashes: each batch is
durable when its call returns.

>>> import packgraph as pg
>>> g = pg.Graph.from_edges([0, 1, 2], [1, 2, 0])
>>> g.insert_edges([2], [3])
1
>>> pg.bfs(g, 0).tolist()
[0, 1, 1, 2]
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional, Union

import numpy as np

from . import _packgraph
from ._packgraph import (
    ConvergenceError,
    CorruptionError,
    Error,
    Graph,
    InputError,
    LockedError,
    Snapshot,
    Store,
    VertexNotFoundError,
    create,
    open,
    read,
    verify,
)
from .client import Client, ServerError, ServerInputError, ServerVertexNotFoundError, connect
from .convert import from_networkx, from_scipy, to_networkx, to_scipy

__version__: str = _packgraph.__version__

__all__ = [
    "Client",
    "ConvergenceError",
    "CorruptionError",
    "Error",
    "Graph",
    "InputError",
    "LockedError",
    "ServerError",
    "ServerInputError",
    "ServerVertexNotFoundError",
    "Snapshot",
    "Store",
    "VertexNotFoundError",
    "__version__",
    "betweenness",
    "bfs",
    "cdlp",
    "connect",
    "core_number",
    "create",
    "from_networkx",
    "from_scipy",
    "khop",
    "lcc",
    "mis",
    "open",
    "pagerank",
    "read",
    "sssp",
    "to_networkx",
    "to_scipy",
    "triangles",
    "verify",
    "wcc",
]

GraphLike = Union[Graph, Snapshot, Store]
VertexId = Union[int, str]


def bfs(g: GraphLike, source: VertexId) -> np.ndarray:
    """Hops from ``source`` along edge directions; -1 where unreached (int64)."""
    return _packgraph.run(g, "bfs", source=source)


def sssp(g: GraphLike, source: VertexId) -> np.ndarray:
    """Shortest-path distances from ``source`` by edge weight (1 on an unweighted graph);
    ``inf`` where unreached (float64). Negative weights raise InputError."""
    return _packgraph.run(g, "sssp", source=source)


def pagerank(
    g: GraphLike, alpha: float = 0.85, max_iter: int = 100, tol: float = 1e-6
) -> np.ndarray:
    """PageRank as ``networkx.pagerank(G, alpha, max_iter=max_iter, tol=tol, weight=None)``:
    starts from 1/n, spreads the rank of vertices without out-edges uniformly, and stops
    after the first iteration whose L1 change is below ``n * tol`` (ConvergenceError if
    ``max_iter`` iterations do not get there). ``tol=0`` runs exactly ``max_iter``
    iterations (the Graphalytics definition). Scores sum to 1."""
    return _packgraph.pagerank(g, alpha=alpha, max_iter=max_iter, tol=tol)


def wcc(g: GraphLike) -> np.ndarray:
    """Weakly connected components: a label per vertex (the external id of the component's
    first vertex); equal labels mean the same component."""
    return _packgraph.run(g, "wcc")


def cdlp(g: GraphLike, iterations: int = 10) -> np.ndarray:
    """Community labels after ``iterations`` rounds of synchronous label propagation
    (LDBC Graphalytics CDLP); labels are external ids."""
    return _packgraph.run(g, "cdlp", iterations=iterations)


def lcc(g: GraphLike) -> np.ndarray:
    """Local clustering coefficient (float64). On an undirected graph equal to
    ``networkx.clustering(G)``; on a directed graph the Graphalytics definition (arcs
    among the neighbours, in and out together, over d(d-1)), not NetworkX's directed one."""
    return _packgraph.run(g, "lcc")


def triangles(g: GraphLike) -> np.ndarray:
    """Triangles through each vertex on the undirected view (``networkx.triangles``)."""
    return _packgraph.run(g, "tc")


def core_number(g: GraphLike) -> np.ndarray:
    """Core number of each vertex on the undirected view (``networkx.core_number``)."""
    return _packgraph.run(g, "kcore")


def mis(g: GraphLike, seed: int = 0) -> np.ndarray:
    """A maximal independent set, deterministic for ``seed``: True for its members."""
    return _packgraph.run(g, "mis", seed=seed).astype(bool)


def khop(g: GraphLike, source: VertexId, k: int) -> np.ndarray:
    """Hops from ``source`` for vertices within ``k`` hops along edge directions, -1
    beyond (``networkx.single_source_shortest_path_length(G, source, cutoff=k)``)."""
    if k < 0:
        raise InputError(f"k must be >= 0, not {k}")
    return _packgraph.run(g, "khop", source=source, hops=k)


def betweenness(
    g: GraphLike,
    sources: Optional[Iterable[VertexId]] = None,
    normalized: bool = True,
    *,
    progress: Optional[Callable[[int, int], Any]] = None,
) -> np.ndarray:
    """Betweenness centrality of every vertex (unweighted shortest paths, Brandes).

    With ``sources=None``, equal to ``networkx.betweenness_centrality(G,
    normalized=normalized)``. With ``sources``, the sum over those sources scaled as
    NetworkX scales a sample of ``k = len(sources)`` sources
    (``betweenness_centrality(G, k=...)`` when its sample is these sources).
    ``progress(done, total)`` is called after each source; Ctrl-C stops between sources.
    """
    source_list = None if sources is None else list(sources)
    raw = _packgraph.betweenness_sum(g, source_list, progress)
    n = len(raw)
    big_n = n - 1  # pairs (s, t) with t != v: endpoints are not counted
    if big_n < 2:
        return raw
    directed = g.directed
    correction = 1 if directed else 2
    if source_list is None:
        if normalized:
            return raw / (big_n * (big_n - 1))
        return raw / correction
    k = len(set(source_list))
    positions = np.isin(g.vertices(), np.asarray(source_list, dtype=g.vertices().dtype))
    if normalized:
        scale_source = 1 / ((k - 1) * (big_n - 1)) if k > 1 else np.nan
        scale_other = 1 / (k * (big_n - 1))
    else:
        scale_source = big_n / ((k - 1) * correction) if k > 1 else np.nan
        scale_other = big_n / (k * correction)
    return np.where(positions, raw * scale_source, raw * scale_other)
