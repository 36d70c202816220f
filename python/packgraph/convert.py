"""Conversions between packgraph graphs and NetworkX graphs and SciPy sparse matrices.

NetworkX and SciPy are imported only when these functions run, so the package itself
needs NumPy alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Union

import numpy as np

from ._packgraph import Graph, InputError, Snapshot, Store

if TYPE_CHECKING:  # pragma: no cover
    import networkx as nx
    import scipy.sparse

__all__ = ["from_networkx", "from_scipy", "to_networkx", "to_scipy"]


def from_networkx(G: "nx.Graph", weight: Optional[str] = "weight") -> Graph:
    """A graph with G's nodes (ints or strings, isolated ones included, in G's order)
    and edges; directed if G is. Weighted when ``weight`` is given and some edge carries
    that attribute (edges without it weigh 1). Parallel edges of a multigraph become one
    edge (the last weight wins). Self-loops are not stored (their nodes are)."""
    nodes = list(G.nodes)
    weighted = weight is not None and any(
        weight in data for _, _, data in G.edges(data=True)
    )
    g = Graph(directed=G.is_directed(), weighted=weighted)
    g.add_vertices(nodes)
    if G.number_of_edges():
        src, dst, data = zip(*G.edges(data=True))
        weights = [d.get(weight, 1.0) for d in data] if weighted else None
        g.insert_edges(list(src), list(dst), weights)
    return g


def to_networkx(g: Union[Graph, Snapshot, Store], weight: str = "weight") -> "nx.Graph":
    """A ``networkx.Graph`` (``DiGraph`` when directed) with the same vertices, in the
    same order, and edges; weights as the ``weight`` attribute of a weighted graph."""
    import networkx as nx

    G = nx.DiGraph() if g.directed else nx.Graph()
    G.add_nodes_from(g.vertices().tolist())
    edges = g.edges()
    if len(edges) == 3:
        src, dst, w = edges
        G.add_weighted_edges_from(zip(src.tolist(), dst.tolist(), w.tolist()), weight=weight)
    else:
        G.add_edges_from(zip(edges[0].tolist(), edges[1].tolist()))
    return G


def from_scipy(
    matrix: Any, directed: bool = False, weighted: Optional[bool] = None
) -> Graph:
    """A graph over vertices ``0..n-1`` (isolated ones included) with an edge ``i -> j``
    for every stored nonzero entry ``(i, j)`` of a square sparse (or dense) matrix.
    Undirected by default (a symmetric matrix gives each edge twice; an entry wins over
    its mirror in the order stored). Weighted when ``weighted`` is true, or when None and
    some entry is not 1."""
    import scipy.sparse

    coo = scipy.sparse.coo_array(matrix)
    rows, cols = coo.shape
    if rows != cols:
        raise InputError(f"an adjacency matrix is square; this one is {rows} x {cols}")
    data = np.asarray(coo.data, dtype=np.float64)
    if weighted is None:
        weighted = bool(np.any(data != 1.0))
    g = Graph(directed=directed, weighted=weighted)
    g.add_vertices(np.arange(rows, dtype=np.int64))
    g.insert_edges(
        np.asarray(coo.row, dtype=np.int64),
        np.asarray(coo.col, dtype=np.int64),
        data if weighted else None,
    )
    return g


def to_scipy(g: Union[Graph, Snapshot, Store]) -> "scipy.sparse.csr_array":
    """The adjacency matrix as a ``scipy.sparse.csr_array`` over positions in
    ``g.vertices()``: entry (i, j) is the edge's weight (1 unweighted); symmetric for an
    undirected graph."""
    import scipy.sparse

    src, dst, w = g._arcs()
    n = g.num_vertices
    return scipy.sparse.csr_array((w, (src, dst)), shape=(n, n))
