"""Types of the native module ``packgraph._packgraph`` (re-exported by ``packgraph``)."""

import os
from typing import Any, Callable, Iterable, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt
from typing_extensions import final

__all__ = [
    "Error",
    "InputError",
    "VertexNotFoundError",
    "CorruptionError",
    "ConvergenceError",
    "Graph",
    "Snapshot",
    "read",
    "run",
    "pagerank",
    "betweenness_sum",
    "algorithms",
    "__version__",
]

__version__: str

_VertexId = Union[int, str]
_Ids = Union[npt.ArrayLike, Iterable[_VertexId]]

class Error(Exception):
    """Base class of the errors packgraph raises."""

class InputError(Error, ValueError):
    """Input the caller can fix: a malformed file line, a bad value or argument.

    Attributes: ``path`` (str or None), the file; ``line`` (int or None), its line, from 1.
    """

    path: Optional[str]
    line: Optional[int]

class VertexNotFoundError(Error, KeyError):
    """A vertex id that is not in the graph."""

class CorruptionError(Error):
    """Stored bytes that do not decode (a damaged snapshot file)."""

class ConvergenceError(Error, RuntimeError):
    """An iterative algorithm did not reach its tolerance within its iteration limit."""

class _Reads:
    @property
    def num_vertices(self) -> int:
        """Number of vertices."""
    @property
    def num_edges(self) -> int:
        """Number of edges (an undirected edge counts once; self-loops are not stored)."""
    @property
    def directed(self) -> bool: ...
    @property
    def weighted(self) -> bool: ...
    @property
    def version(self) -> int:
        """Batches applied when this version was made."""
    def __len__(self) -> int: ...
    def __contains__(self, vertex: object, /) -> bool: ...
    def vertices(self) -> npt.NDArray[Any]:
        """External ids; index i is the vertex every per-vertex result puts at i.
        int64 (uint64 if an id does not fit, object if some vertex is named by a str)."""
    def degree(self) -> npt.NDArray[np.int64]:
        """Neighbours (undirected) or in + out edges (directed), as networkx's degree."""
    def out_degree(self) -> npt.NDArray[np.int64]: ...
    def in_degree(self) -> npt.NDArray[np.int64]: ...
    def neighbors(self, vertex: _VertexId) -> npt.NDArray[Any]:
        """Out-neighbours' ids. Raises VertexNotFoundError."""
    def has_edge(self, u: _VertexId, v: _VertexId) -> bool: ...
    def edges(self) -> Tuple[npt.NDArray[Any], ...]:
        """``(src, dst)``, or ``(src, dst, weights)`` when weighted; each undirected edge once."""
    def _arcs(
        self,
    ) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64]]: ...
    def write(self, path: Union[str, os.PathLike[str]], format: Optional[str] = None) -> None:
        """Writes the graph: ``edgelist``, ``graphalytics`` or ``binary`` (.pgb); by
        default chosen from the extension. Raises InputError, OSError."""

@final
class Graph(_Reads):
    """A dynamic graph: vertices named by ints or strs; each batch is one new version."""

    def __new__(cls, directed: bool = False, weighted: bool = False) -> Graph: ...
    @staticmethod
    def from_edges(
        src: _Ids, dst: _Ids, weights: Optional[npt.ArrayLike] = None, directed: bool = False
    ) -> Graph:
        """A graph of edges ``src[i] -> dst[i]`` (weighted if ``weights``); vertices are
        numbered by rank of their ids when all are ints. Raises InputError."""
    def insert_edges(
        self, src: _Ids, dst: _Ids, weights: Optional[npt.ArrayLike] = None
    ) -> int:
        """Inserts edges as one batch (new ids become vertices); returns how many were new.
        Raises InputError (weights on an unweighted graph, NaN, negative ids)."""
    def delete_edges(self, src: _Ids, dst: _Ids) -> int:
        """Deletes edges as one batch (absent ones are ignored); returns how many went."""
    def add_vertices(self, ids: _Ids) -> None:
        """Adds vertices by id (present ones are kept)."""
    def snapshot(self) -> Snapshot:
        """The current version, unchanged by later batches; O(1)."""

@final
class Snapshot(_Reads):
    """One immutable graph version; safe to share between threads."""

    def snapshot(self) -> Snapshot: ...
    def __enter__(self) -> Snapshot: ...
    def __exit__(self, *_exc: object) -> None: ...
    def release(self) -> None:
        """Drops the version now; later reads raise Error."""

def read(
    path: Union[str, os.PathLike[str]],
    format: Optional[str] = None,
    directed: Optional[bool] = None,
    weighted: Optional[bool] = None,
    progress: Optional[Callable[[int], Any]] = None,
) -> Graph:
    """Reads an edge list (optionally gzip), Matrix Market file, Graphalytics dataset or
    packgraph snapshot; ``format`` detected when None. ``progress(bytes_read)`` is called
    while loading. Raises InputError (with path and line), CorruptionError, OSError."""

def run(
    graph: Union[Graph, Snapshot],
    name: str,
    source: Optional[_VertexId] = None,
    iterations: Optional[int] = None,
    damping: float = 0.85,
    hops: int = 2,
    seed: int = 1,
) -> npt.NDArray[Any]:
    """Runs an algorithm of the registry by name (see ``algorithms()``)."""

def pagerank(
    graph: Union[Graph, Snapshot], alpha: float = 0.85, max_iter: int = 100, tol: float = 1e-6
) -> npt.NDArray[np.float64]: ...
def betweenness_sum(
    graph: Union[Graph, Snapshot],
    sources: Optional[Sequence[_VertexId]] = None,
    progress: Optional[Callable[[int, int], Any]] = None,
) -> npt.NDArray[np.float64]: ...
def algorithms() -> list[tuple[str, str]]:
    """``(name, summary)`` of every algorithm of the registry."""
