"""Conversions between packgraph graphs and NetworkX graphs, SciPy sparse matrices and
pandas data frames, and the graph methods written in Python (``subgraph``, pickling).

NetworkX, SciPy and pandas are imported only when these functions run, so the package
itself needs NumPy alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Iterable, Optional, Tuple, Union

import numpy as np

from ._packgraph import Graph, InputError, Snapshot, Store

if TYPE_CHECKING:  # pragma: no cover
    import networkx as nx
    import pandas as pd
    import scipy.sparse

__all__ = [
    "from_networkx",
    "from_pandas",
    "from_scipy",
    "subgraph",
    "to_networkx",
    "to_pandas",
    "to_scipy",
]

GraphLike = Union[Graph, Snapshot, Store]


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


def to_networkx(g: GraphLike, weight: str = "weight") -> "nx.Graph":
    """A ``networkx.Graph`` (``DiGraph`` when directed) with the same vertices, in the
    same order, and edges; weights as the ``weight`` attribute of a weighted graph;
    vertex attributes as node attributes (of the vertices that have them). Also the
    method ``g.to_networkx()``."""
    import networkx as nx

    if not isinstance(g, Snapshot):
        g = g.snapshot()
    G = nx.DiGraph() if g.directed else nx.Graph()
    G.add_nodes_from(g.vertices().tolist())
    for name in g.vertex_attrs():
        values = g.vertex_attr(name).tolist()
        nx.set_node_attributes(
            G,
            {v: x for v, x in zip(g.vertices().tolist(), values) if x is not None},
            name,
        )
    edges = g.edge_arrays()
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


def to_scipy(g: GraphLike) -> "scipy.sparse.csr_array":
    """The adjacency matrix as a ``scipy.sparse.csr_array`` over positions in
    ``g.vertices()``: entry (i, j) is the edge's weight (1 unweighted); symmetric for an
    undirected graph."""
    import scipy.sparse

    src, dst, w = g._arcs()
    n = g.num_vertices
    return scipy.sparse.csr_array((w, (src, dst)), shape=(n, n))


def from_pandas(
    df: "pd.DataFrame",
    source: str = "source",
    target: str = "target",
    weight: Optional[str] = None,
    directed: bool = False,
) -> Graph:
    """A graph with an edge ``df[source][i] -> df[target][i]`` per row (ids: ints or
    strs), weighted by column ``weight`` when given
    (``networkx.from_pandas_edgelist``)."""
    for column in (source, target) + ((weight,) if weight is not None else ()):
        if column not in df.columns:
            raise InputError(
                f"the data frame has no column {column!r}; it has {list(df.columns)}"
            )
    weights = None if weight is None else df[weight].to_numpy(dtype=np.float64)
    return Graph.from_edges(
        _ids(df[source].to_numpy()), _ids(df[target].to_numpy()), weights, directed=directed
    )


def _ids(column: np.ndarray) -> Any:
    """A column of ids as ``from_edges`` takes it (object columns as lists)."""
    return column.tolist() if column.dtype == object else column


def to_pandas(g: GraphLike) -> "pd.DataFrame":
    """The edges as a ``pandas.DataFrame`` with columns ``source``, ``target`` (and
    ``weight`` when weighted), each undirected edge once. Also ``g.to_pandas()``."""
    import pandas as pd

    arrays = g.edge_arrays()
    names = ["source", "target", "weight"][: len(arrays)]
    return pd.DataFrame(dict(zip(names, arrays)))


def subgraph(g: GraphLike, vertices: Iterable[Any]) -> Graph:
    """A new graph of ``vertices`` (in the order of ``g.vertices()``) and the edges of
    ``g`` between them, with their weights and vertex attributes
    (``networkx.Graph.subgraph(...).copy()``). Raises VertexNotFoundError for an id that
    is not a vertex. Also ``g.subgraph(vertices)``."""
    s = g if isinstance(g, Snapshot) else g.snapshot()
    wanted = np.zeros(s.num_vertices, dtype=bool)
    for v in vertices:
        wanted[s.index(v)] = True
    all_vertices = s.vertices()
    h = Graph(directed=s.directed, weighted=s.weighted)
    h.add_vertices(all_vertices[wanted].tolist())
    src, dst, w = s._arcs()
    keep = wanted[src] & wanted[dst]
    if not s.directed:
        keep &= src <= dst
    if keep.any():
        h.insert_edges(
            all_vertices[src[keep]].tolist(),
            all_vertices[dst[keep]].tolist(),
            w[keep] if s.weighted else None,
        )
    for name in s.vertex_attrs():
        values = s.vertex_attr(name)[wanted]
        h.set_vertex_attr(name, values.tolist())
    return h


def _state(g: GraphLike) -> Tuple[Any, ...]:
    s = g if isinstance(g, Snapshot) else g.snapshot()
    src, dst, w = s._arcs()
    once = np.ones(len(src), dtype=bool) if s.directed else src <= dst
    attributes: Dict[str, Any] = {
        name: s.vertex_attr(name).tolist() for name in s.vertex_attrs()
    }
    return (
        s.directed,
        s.weighted,
        s.vertices().tolist(),
        src[once],
        dst[once],
        w[once] if s.weighted else None,
        attributes,
    )


def _rebuild(
    directed: bool,
    weighted: bool,
    vertices: list,
    src: np.ndarray,
    dst: np.ndarray,
    weights: Optional[np.ndarray],
    attributes: Dict[str, Any],
) -> Graph:
    """The graph a pickle holds: the same vertices in the same order, edges, weights and
    vertex attributes (not the version count)."""
    g = Graph(directed=directed, weighted=weighted)
    g.add_vertices(vertices)
    if len(src):
        ids = np.empty(len(vertices), dtype=object)
        ids[:] = vertices
        g.insert_edges(ids[src].tolist(), ids[dst].tolist(), weights)
    for name, values in attributes.items():
        g.set_vertex_attr(name, values)
    return g


def _reduce(g: Graph) -> Tuple[Any, Tuple[Any, ...]]:
    """``pickle``'s recipe for ``g``: rebuild from its vertices, edges and attributes."""
    return (_rebuild, _state(g))
