"""packgraph: a dynamic-graph engine for Python.

Graphs live in compressed packed memory arrays (in Rust); edges are inserted and deleted
in batches, each batch a new version; snapshots keep a version unchanged while the graph
goes on. Algorithms return ``Result`` objects: a mapping from vertex id to value, as
NetworkX returns (``dict(pg.pagerank(g))``), whose ``array`` and ``vertices`` are NumPy
arrays of one graph version; ``pg.run`` returns the bare array. A ``Store``
(``pg.create``, ``pg.open``) keeps a graph in a directory across crashes: each batch is
durable when its call returns.

>>> import packgraph as pg
>>> g = pg.Graph.from_edges([0, 1, 2], [1, 2, 0])
>>> g.insert_edges([2], [3])
1
>>> pg.bfs(g, 0).to_dict()
{0: 0, 1: 1, 2: 1, 3: 2}
>>> sorted(g.neighbors(2))
[0, 1, 3]
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, List, Optional, Tuple, Union

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
from .convert import (
    from_networkx,
    from_pandas,
    from_scipy,
    to_networkx,
    to_pandas,
    to_scipy,
)
from .result import Result

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
    "Result",
    "UNREACHED",
    "VertexNotFoundError",
    "__version__",
    "algorithms",
    "bc",
    "betweenness",
    "bfs",
    "cdlp",
    "connect",
    "core_number",
    "create",
    "from_networkx",
    "from_pandas",
    "from_scipy",
    "kcore",
    "khop",
    "lcc",
    "mis",
    "pagerank",
    "read",
    "run",
    "shortest_path",
    "sssp",
    "to_networkx",
    "to_pandas",
    "to_scipy",
    "tc",
    "triangles",
    "verify",
    "wcc",
]

# ``open`` is left out of ``__all__`` so that ``from packgraph import *`` keeps the
# builtin; it stays ``pg.open``.

GraphLike = Union[Graph, Snapshot, Store]
VertexId = Union[int, str]

#: Other names of registry algorithms, as the package's functions call them; the
#: registry (``run``, ``algorithms()``, the command line) accepts both.
ALIASES = {"triangles": "tc", "core_number": "kcore", "betweenness": "bc"}

#: The hop count of a vertex that bfs or khop did not reach: 2**63 - 1, as in
#: Graphalytics and in the command line's output.
UNREACHED = np.iinfo(np.int64).max

#: The seed ``mis`` uses by default, the command line's and the registry's.
MIS_SEED = 1


def algorithms() -> List[Tuple[str, str]]:
    """``(name, summary)`` of every algorithm ``run`` knows, then of each alias
    (``ALIASES``)."""
    return _packgraph.algorithms()


def run(
    name: str,
    g: GraphLike,
    *,
    source: Optional[VertexId] = None,
    iterations: Optional[int] = None,
    damping: float = 0.85,
    hops: Optional[int] = None,
    seed: Optional[int] = None,
) -> np.ndarray:
    """Runs registry algorithm ``name`` (``algorithms()``; ``triangles``, ``core_number``
    and ``betweenness`` are accepted for ``tc``, ``kcore`` and ``bc``) with the
    command-line tool's parameters and defaults, and returns the bare per-vertex array,
    aligned with ``g.vertices()`` (take a ``g.snapshot()`` first when another thread
    writes to ``g``). ``source`` is required by bfs, sssp, bc and khop. Ctrl-C
    interrupts it."""
    if isinstance(g, str) and not isinstance(name, str):  # run(g, "bfs"), the native order
        name, g = g, name
    kind = name
    return _packgraph.run(
        g, kind, source=source, iterations=iterations, damping=damping, hops=hops, seed=seed
    )


def _frozen(g: GraphLike) -> Snapshot:
    """One version of ``g``, so that values and vertices come from the same one."""
    if isinstance(g, Snapshot):
        return g
    if isinstance(g, (Graph, Store)):
        return g.snapshot()
    raise TypeError(f"expected a packgraph Graph, Snapshot or Store, not {type(g).__name__}")


def _result(s: Snapshot, values: np.ndarray) -> Result:
    return Result(values, s.vertices())


def _require_source(name: str, source: Any) -> None:
    if source is None:
        raise InputError(f"{name} needs a source vertex: source is None")


def bfs(g: GraphLike, source: VertexId) -> Result:
    """Hops from ``source`` along edge directions; ``UNREACHED`` (2**63 - 1, as in
    Graphalytics) where unreached (int64)."""
    _require_source("bfs", source)
    s = _frozen(g)
    return _result(s, _packgraph.run(s, "bfs", source=source))


def sssp(g: GraphLike, source: VertexId) -> Result:
    """Shortest-path distances from ``source`` by edge weight (1 on an unweighted graph);
    ``inf`` where unreached (float64). Negative weights raise InputError."""
    _require_source("sssp", source)
    s = _frozen(g)
    return _result(s, _packgraph.run(s, "sssp", source=source))


def pagerank(
    g: GraphLike,
    alpha: float = 0.85,
    max_iter: int = 100,
    tol: float = 1e-6,
    weight: Optional[str] = None,
) -> Result:
    """PageRank as ``networkx.pagerank(G, alpha, max_iter=max_iter, tol=tol,
    weight=weight)``: starts from 1/n, spreads the rank of vertices without out-edges
    uniformly, and stops after the first iteration whose L1 change is below ``n * tol``
    (ConvergenceError if ``max_iter`` iterations do not get there). ``tol=0`` runs exactly
    ``max_iter`` iterations (the Graphalytics definition). Scores sum to 1. Ctrl-C
    interrupts it.

    Unweighted by default (NetworkX weighs by ``"weight"`` by default). With ``weight``
    (any name: an edge has one weight) on a weighted graph, a vertex passes its rank on
    in proportion to its out-edges' weights; this form runs in NumPy, not in the engine."""
    s = _frozen(g)
    if weight is None or not s.weighted:
        return _result(s, _packgraph.pagerank(s, alpha=alpha, max_iter=max_iter, tol=tol))
    return _result(s, _weighted_pagerank(s, alpha, max_iter, tol))


def _weighted_pagerank(s: Snapshot, alpha: float, max_iter: int, tol: float) -> np.ndarray:
    """NetworkX's weighted power iteration over the arcs of ``s`` (both directions of an
    undirected edge)."""
    for name, value in (("max_iter", max_iter),):
        if not isinstance(value, (int, np.integer)) or value < 0:
            raise InputError(f"{name} must be an int >= 0, not {value!r}")
    if not 0.0 <= alpha <= 1.0:
        raise InputError(f"alpha must be in [0, 1], not {alpha!r}")
    if not (np.isfinite(tol) and tol >= 0):
        raise InputError(f"tol must be a finite number >= 0, not {tol!r}")
    n = s.num_vertices
    if n == 0:
        return np.zeros(0)
    src, dst, w = s._arcs()
    out = np.bincount(src, weights=w, minlength=n)
    dangling = out == 0
    share = w / np.where(dangling, 1.0, out)[src]
    x = np.full(n, 1.0 / n)
    for _ in range(max_iter):
        previous = x
        spread = np.bincount(dst, weights=previous[src] * share, minlength=n)
        x = alpha * (spread + previous[dangling].sum() / n) + (1.0 - alpha) / n
        if tol > 0 and np.abs(x - previous).sum() < n * tol:
            return x
    if tol > 0:
        raise ConvergenceError(
            f"pagerank did not converge to tol={tol} within max_iter={max_iter} iterations"
        )
    return x


def wcc(g: GraphLike) -> Result:
    """Weakly connected components: a label per vertex (the external id of the component's
    first vertex); equal labels mean the same component."""
    s = _frozen(g)
    return _result(s, _packgraph.run(s, "wcc"))


def cdlp(g: GraphLike, iterations: int = 10) -> Result:
    """Community labels after ``iterations`` rounds of synchronous label propagation
    (LDBC Graphalytics CDLP); labels are external ids. Ctrl-C interrupts it."""
    s = _frozen(g)
    return _result(s, _packgraph.run(s, "cdlp", iterations=iterations))


def lcc(g: GraphLike) -> Result:
    """Local clustering coefficient (float64). On an undirected graph equal to
    ``networkx.clustering(G)``; on a directed graph the Graphalytics definition (arcs
    among the neighbours, in and out together, over d(d-1)), not NetworkX's directed one."""
    s = _frozen(g)
    return _result(s, _packgraph.run(s, "lcc"))


def triangles(g: GraphLike) -> Result:
    """Triangles through each vertex on the undirected view (``networkx.triangles``)."""
    s = _frozen(g)
    return _result(s, _packgraph.run(s, "tc"))


def core_number(g: GraphLike) -> Result:
    """Core number of each vertex on the undirected view (``networkx.core_number``)."""
    s = _frozen(g)
    return _result(s, _packgraph.run(s, "kcore"))


def mis(g: GraphLike, seed: int = MIS_SEED) -> Result:
    """A maximal independent set, deterministic for ``seed`` (default ``MIS_SEED``, 1, as
    on the command line): True for its members."""
    s = _frozen(g)
    return _result(s, _packgraph.run(s, "mis", seed=seed).astype(bool))


def khop(g: GraphLike, source: VertexId, k: int) -> Result:
    """Hops from ``source`` for vertices within ``k`` hops along edge directions,
    ``UNREACHED`` beyond (``networkx.single_source_shortest_path_length(G, source,
    cutoff=k)``)."""
    _require_source("khop", source)
    if isinstance(k, int) and k < 0:
        raise InputError(f"k must be >= 0, not {k}")
    s = _frozen(g)
    return _result(s, _packgraph.run(s, "khop", source=source, hops=k))


def betweenness(
    g: GraphLike,
    sources: Optional[Iterable[VertexId]] = None,
    normalized: bool = True,
    *,
    progress: Optional[Callable[[int, int], Any]] = None,
) -> Result:
    """Betweenness centrality of every vertex (unweighted shortest paths, Brandes).

    With ``sources=None``, equal to ``networkx.betweenness_centrality(G,
    normalized=normalized)``. With ``sources``, the sum over those sources scaled as
    NetworkX scales a sample of ``k = len(sources)`` sources
    (``betweenness_centrality(G, k=...)`` when its sample is these sources).
    ``progress(done, total)`` is called after each source; Ctrl-C stops between sources.
    """
    s = _frozen(g)
    source_list = None if sources is None else list(sources)
    raw, is_source = _packgraph.betweenness_sum(s, source_list, progress)
    n = len(raw)
    big_n = n - 1  # pairs (s, t) with t != v: endpoints are not counted
    if big_n < 2:
        return _result(s, raw)
    correction = 1 if s.directed else 2
    if source_list is None:
        if normalized:
            return _result(s, raw / (big_n * (big_n - 1)))
        return _result(s, raw / correction)
    k = int(is_source.sum())
    if normalized:
        scale_source = 1 / ((k - 1) * (big_n - 1)) if k > 1 else np.nan
        scale_other = 1 / (k * (big_n - 1)) if k else np.nan
    else:
        scale_source = big_n / ((k - 1) * correction) if k > 1 else np.nan
        scale_other = big_n / (k * correction) if k else np.nan
    return _result(s, np.where(is_source, raw * scale_source, raw * scale_other))


#: The registry's names for the same functions, as ``packgraph run`` takes them.
tc = triangles
kcore = core_number
bc = betweenness


def shortest_path(
    g: GraphLike, source: VertexId, target: VertexId, weighted: Optional[bool] = None
) -> List[Any]:
    """A shortest path from ``source`` to ``target`` as a list of ids, both ends included
    (``networkx.shortest_path(G, source, target, weight=...)``): fewest edges, or least
    total weight when ``weighted`` (the default on a weighted graph). Of several shortest
    paths, any one. Raises VertexNotFoundError, and Error if ``target`` cannot be reached.
    """
    _require_source("shortest_path", source)
    s = _frozen(g)
    weighted = s.weighted if weighted is None else weighted
    start, end = s.index(source), s.index(target)
    src, dst, w = s._arcs()
    if weighted:
        dist = _packgraph.run(s, "sssp", source=source)
        reached = np.isfinite(dist)
        step = w
    else:
        hops = _packgraph.run(s, "bfs", source=source)
        reached = hops != UNREACHED
        dist = np.where(reached, hops, -1).astype(np.float64)
        step = np.ones(len(src))
    if not reached[end]:
        raise Error(f"no path from {source!r} to {target!r}")
    # Arcs on some shortest path: the distance grows by exactly the arc's weight. The
    # distances are sums of the same weights in the same order, so equality is exact;
    # isclose only guards against a different summation order.
    tight = reached[src] & np.isclose(dist[src] + step, dist[dst], rtol=1e-12, atol=0.0)
    if not np.any(tight & (step == 0)):
        # Distances grow along every tight arc: one parent each leads back to the source.
        tight &= dist[src] < dist[dst]
        parent = np.full(s.num_vertices, -1, dtype=np.int64)
        parent[dst[tight]] = src[tight]
    else:
        # Zero-weight arcs can close cycles among tight arcs: search them from the source.
        parent = _tight_tree(start, src[tight], dst[tight], s.num_vertices)
    path = [end]
    while path[-1] != start:
        previous = int(parent[path[-1]])
        if previous < 0 or len(path) > s.num_vertices:
            raise Error(
                f"internal error in packgraph (please report): no parent on the path to "
                f"{target!r}"
            )
        path.append(previous)
    vertices = s.vertices()
    return [vertices[i].item() if hasattr(vertices[i], "item") else vertices[i] for i in reversed(path)]


def _tight_tree(start: int, src: np.ndarray, dst: np.ndarray, n: int) -> np.ndarray:
    """Parents of a breadth-first tree from ``start`` over the arcs ``src[i] -> dst[i]``
    (-1 where not reached)."""
    order = np.argsort(src, kind="stable")
    src, dst = src[order], dst[order]
    begin = np.searchsorted(src, np.arange(n + 1))
    parent = np.full(n, -1, dtype=np.int64)
    parent[start] = start
    frontier = [start]
    while frontier:
        following = []
        for u in frontier:
            for v in dst[begin[u] : begin[u + 1]].tolist():
                if parent[v] < 0:
                    parent[v] = u
                    following.append(v)
        frontier = following
    return parent
