"""Types of the native module ``packgraph._packgraph`` (re-exported by ``packgraph``)."""

import os
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Union,
    overload,
)

import numpy as np
import numpy.typing as npt
from typing_extensions import final

__all__ = [
    "Error",
    "InputError",
    "VertexNotFoundError",
    "CorruptionError",
    "ConvergenceError",
    "LockedError",
    "Graph",
    "Snapshot",
    "Store",
    "read",
    "create",
    "open",
    "verify",
    "run",
    "pagerank",
    "betweenness_sum",
    "algorithms",
    "__version__",
]

__version__: str

_VertexId = Union[int, str]
_Ids = Union[npt.ArrayLike, Iterable[_VertexId]]
_Attr = Union[int, float, bool, str, None]
_EdgeTuple = Union[
    Tuple[_VertexId, _VertexId],
    Tuple[_VertexId, _VertexId, float],
    Tuple[_VertexId, _VertexId, Mapping[str, Any]],
]

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
    """Stored bytes that do not decode: a damaged snapshot file or data directory.

    Attributes: ``path`` (str or None), the damaged file; ``offset`` (int or None), the
    byte where the damage was found.
    """

    path: Optional[str]
    offset: Optional[int]

class ConvergenceError(Error, RuntimeError):
    """An iterative algorithm did not reach its tolerance within its iteration limit."""

class LockedError(Error, OSError):
    """A data directory that another writer (a Store in this or another process) has open.

    Attributes: ``filename`` (str), the directory.
    """

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
    @property
    def nbytes(self) -> int:
        """Bytes the graph takes in memory: its compressed edge arrays, and its vertex
        index once a read has built it."""
    def __len__(self) -> int:
        """Number of vertices."""
    def __contains__(self, vertex: object, /) -> bool: ...
    def __iter__(self) -> Iterator[_VertexId]:
        """The vertex ids, in the order of ``vertices()``."""
    def has_node(self, vertex: object) -> bool: ...
    def number_of_nodes(self) -> int: ...
    def number_of_edges(
        self, u: Optional[_VertexId] = None, v: Optional[_VertexId] = None
    ) -> int:
        """``num_edges``; with ``u`` and ``v``, 1 if the edge exists, else 0."""
    def vertices(self) -> npt.NDArray[Any]:
        """External ids; index i is the vertex every per-vertex result puts at i.
        int64 (uint64 if an id does not fit, object if some vertex is named by a str)."""
    def index(self, vertex: _VertexId) -> int:
        """The position of ``vertex`` in ``vertices()`` (and in per-vertex arrays); O(1)
        for ids 0..n-1, a map lookup otherwise. Raises VertexNotFoundError."""
    @overload
    def degree(self, vertex: None = None) -> npt.NDArray[np.int64]:
        """Neighbours (undirected) or in + out edges (directed), as networkx's degree:
        of every vertex as an array, or of ``vertex`` (O(1)). Raises VertexNotFoundError."""
    @overload
    def degree(self, vertex: _VertexId) -> int: ...
    def out_degree(self) -> npt.NDArray[np.int64]: ...
    def in_degree(self) -> npt.NDArray[np.int64]: ...
    def neighbors(self, vertex: _VertexId) -> npt.NDArray[Any]:
        """Out-neighbours' ids. Raises VertexNotFoundError."""
    def successors(self, vertex: _VertexId) -> npt.NDArray[Any]:
        """Out-neighbours' ids (``neighbors``). Raises VertexNotFoundError."""
    def predecessors(self, vertex: _VertexId) -> npt.NDArray[Any]:
        """In-neighbours' ids (the neighbours on an undirected graph). Raises
        VertexNotFoundError."""
    def has_edge(self, u: _VertexId, v: _VertexId) -> bool: ...
    def edges(self) -> List[Tuple[Any, ...]]:
        """Every edge as a ``(u, v)`` tuple, ``(u, v, weight)`` when weighted; each
        undirected edge once. ``edge_arrays()`` gives the same as NumPy arrays."""
    def edge_arrays(self) -> Tuple[npt.NDArray[Any], ...]:
        """``(src, dst)``, or ``(src, dst, weights)`` when weighted; each undirected edge once."""
    def vertex_attrs(self) -> List[str]:
        """The names of the vertex attributes."""
    def vertex_attr(self, name: str) -> npt.NDArray[Any]:
        """Attribute ``name`` of every vertex, in the order of ``vertices()`` (None where a
        vertex has none). Raises InputError for an unknown name."""
    def to_networkx(self, weight: str = "weight") -> Any:
        """``packgraph.to_networkx(self, weight)``."""
    def to_pandas(self) -> Any:
        """``packgraph.to_pandas(self)``: the edges as a DataFrame."""
    def subgraph(self, vertices: Iterable[_VertexId]) -> Graph:
        """A new graph of ``vertices`` and the edges among them (with weights and
        attributes). Raises VertexNotFoundError."""
    def copy(self) -> Graph:
        """A new ``Graph`` holding this version (O(1): storage is shared until either
        changes)."""
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
    def add_node(self, vertex: _VertexId) -> None:
        """Adds one vertex (kept if present)."""
    def add_nodes_from(self, vertices: _Ids) -> None:
        """Adds vertices (``add_vertices``)."""
    def add_edge(self, u: _VertexId, v: _VertexId, weight: Optional[float] = None) -> None:
        """Inserts one edge (a batch of one); ``weight`` on a weighted graph."""
    def add_edges_from(self, edges: Iterable[_EdgeTuple]) -> int:
        """Inserts ``(u, v)``, ``(u, v, weight)`` or ``(u, v, {"weight": w})`` tuples as
        one batch (weight 1 where a tuple has none); returns how many were new."""
    def remove_edge(self, u: _VertexId, v: _VertexId) -> None:
        """Deletes one edge. Raises VertexNotFoundError, InputError if there is no such
        edge."""
    def remove_edges_from(self, edges: Iterable[_EdgeTuple]) -> int:
        """Deletes edges as one batch (absent ones are ignored); returns how many went."""
    def set_vertex_attr(
        self, name: str, values: Union[Mapping[Any, _Attr], Sequence[_Attr], npt.ArrayLike]
    ) -> None:
        """Sets attribute ``name`` as one batch: ``values`` maps ids to values, or lists
        one value per vertex in the order of ``vertices()``; None removes a vertex's
        value. Values are ints (64-bit), floats, bools or strs."""
    def snapshot(self) -> Snapshot:
        """The current version, unchanged by later batches; O(1)."""
    def compact(self, *, room: bool = False) -> None:
        """Packs the edge arrays again for analysis, as ``read(..., compact=True)`` loads
        them: the same vertices, edges and attributes in fewer bytes (``nbytes``), for a
        graph that took its updates. ``room=True`` gives the room for updates back. The
        first insert that fills a leaf of a compact graph rebuilds the arrays with room.
        Takes O(edges) time; while it runs, the graph holds both layouts and a copy of one
        array's edges (8 bytes each, 16 weighted). Snapshots taken before keep the old
        layout (and its memory) until they go."""
    def __copy__(self) -> Graph: ...
    def __deepcopy__(self, _memo: Any) -> Graph: ...
    def __reduce__(self) -> Tuple[Any, ...]:
        """Pickles the vertices (in order), edges, weights and vertex attributes."""

@final
class Store(_Reads):
    """A durable graph in a data directory (``create``, ``open``): the read methods of
    ``Graph``, and writes that survive crashes.

    Each mutating call is one batch: applied (readers see it at once), appended to the
    write-ahead log as one record, and returned from once that record is durable under
    the sync policy: ``"batch"`` fsyncs the log before the call returns; ``"group:MS"``
    waits for a background fsync that runs every MS milliseconds and covers every batch
    waiting (several threads writing share it); ``"none"`` never fsyncs (a killed process
    keeps its batches, a power cut may lose them). After a crash, reopening gives the
    batches of a prefix that holds every returned call. One ``Store`` writes a directory
    at a time (``LockedError`` otherwise); ``close()`` or the end of a ``with`` block
    releases it. A directory's vertices are all ints or all strs, fixed by the graph it
    was created from or by its first batch that adds vertices: a call adding ids of the
    other kind, or a str holding whitespace, ``#`` or control characters, raises
    InputError and changes nothing.
    """

    def insert_edges(
        self, src: _Ids, dst: _Ids, weights: Optional[npt.ArrayLike] = None
    ) -> int:
        """Inserts edges as one durable batch (new ids become vertices); returns how many
        were new. Raises InputError as ``Graph.insert_edges``, OSError if the log cannot be
        written (the store then takes no more writes: reopen it)."""
    def delete_edges(self, src: _Ids, dst: _Ids) -> int:
        """Deletes edges as one durable batch (absent ones are ignored); returns how many
        went."""
    def add_vertices(self, ids: _Ids) -> None:
        """Adds vertices by id as one durable batch (present ones are kept)."""
    def add_node(self, vertex: _VertexId) -> None:
        """Adds one vertex (kept if present)."""
    def add_nodes_from(self, vertices: _Ids) -> None:
        """Adds vertices (``add_vertices``)."""
    def add_edge(self, u: _VertexId, v: _VertexId, weight: Optional[float] = None) -> None:
        """Inserts one edge (a durable batch of one); ``weight`` on a weighted graph."""
    def add_edges_from(self, edges: Iterable[_EdgeTuple]) -> int:
        """Inserts ``(u, v)``, ``(u, v, weight)`` or ``(u, v, {"weight": w})`` tuples as
        one durable batch (weight 1 where a tuple has none); returns how many were new."""
    def remove_edge(self, u: _VertexId, v: _VertexId) -> None:
        """Deletes one edge. Raises VertexNotFoundError, InputError if there is no such
        edge."""
    def remove_edges_from(self, edges: Iterable[_EdgeTuple]) -> int:
        """Deletes edges as one durable batch (absent ones are ignored); returns how many went."""
    def set_vertex_attr(
        self, name: str, values: Union[Mapping[Any, _Attr], Sequence[_Attr], npt.ArrayLike]
    ) -> None:
        """Sets attribute ``name`` as one durable batch: ``values`` maps ids to values, or lists
        one value per vertex in the order of ``vertices()``; None removes a vertex's
        value. Values are ints (64-bit), floats, bools or strs."""
    def commit(self) -> int:
        """The sequence number of the last batch (counting from 1; 0 before any), returned
        once that batch is durable under the sync policy."""
    def sync(self) -> int:
        """Fsyncs the log now, whatever the policy; returns the last sequence number."""
    def checkpoint(self) -> Dict[str, int]:
        """Writes a checkpoint of the latest version (a delta against the last full one
        when that is smaller) and deletes the log it covers. Returns its statistics:
        ``seq`` (the last batch it includes), ``delta`` (bool), ``bytes_written``,
        ``bytes_reused``, ``units_written``, ``units_reused``."""
    def snapshot(self) -> Snapshot:
        """The current version, unchanged by later batches; O(1)."""
    @property
    def recovery(self) -> Dict[str, float]:
        """What opening found: ``checkpoint_seq``, ``checkpoint_bytes``,
        ``records_replayed``, ``log_bytes``, ``torn_bytes`` (a torn last record cut off
        after a crash), ``checkpoint_seconds``, ``replay_seconds``."""
    @property
    def last_seq(self) -> int:
        """The sequence number of the last batch written (durable or not)."""
    @property
    def durable_seq(self) -> int:
        """The last sequence number known to be durable."""
    @property
    def path(self) -> str:
        """The data directory."""
    @property
    def sync_policy(self) -> str:
        """``batch``, ``group:MS`` or ``none``."""
    @property
    def closed(self) -> bool: ...
    def close(self) -> None:
        """Syncs the log, closes the store and releases the directory (waiting for calls
        other threads are making). Later calls raise InputError; closing again does
        nothing."""
    def __enter__(self) -> Store: ...
    def __exit__(self, *_exc: object) -> None: ...

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
    *,
    compact: bool = False,
) -> Graph:
    """Reads an edge list (optionally gzip), Matrix Market file, Graphalytics dataset,
    packgraph snapshot, or the latest durable state of a data directory (without its lock,
    while a ``Store`` may be writing); ``format`` detected when None.
    ``progress(bytes_read)`` is called while loading. ``compact=True`` packs a file's graph
    for analysis, as ``packgraph run`` does: about a sixth fewer bytes (``nbytes``), the
    same answers; its first insert that fills a leaf rebuilds the edge arrays with room
    for updates. Raises InputError (with path and line), CorruptionError, OSError."""

def create(
    dir: Union[str, os.PathLike[str]],
    *,
    directed: Optional[bool] = None,
    weighted: Optional[bool] = None,
    source: Union[Graph, Snapshot, Store, str, os.PathLike[str], None] = None,
    sync: str = "batch",
) -> Store:
    """Creates data directory ``dir`` (made if missing; it must be empty) holding
    ``source`` (a graph, or a file or data directory to read as ``read`` does) or an empty
    graph, writes its first checkpoint and opens it. ``directed`` and ``weighted`` default
    to the source's, and to False without one. ``sync``: ``"batch"``, ``"group:MS"`` (1 to
    60000) or ``"none"``. Raises InputError (a bad sync policy, a directory that is not
    empty), OSError."""

def open(dir: Union[str, os.PathLike[str]], *, sync: str = "batch") -> Store:
    """Opens data directory ``dir``: loads its checkpoint, replays the log after it
    (cutting a torn last record a crash left) and takes its lock. Raises LockedError (a
    Store has it open), CorruptionError (naming the damaged file and byte offset),
    InputError (not a data directory, a bad sync policy, another format version),
    OSError."""

def verify(dir: Union[str, os.PathLike[str]]) -> Dict[str, int]:
    """Checks every file of data directory ``dir`` without changing it or taking its lock:
    each pack's units (checksums, hashes), the checkpoint's arrays, each log record.
    Returns ``packs``, ``units``, ``records`` (log records after the checkpoint),
    ``torn_bytes`` (a torn last record, not damage), ``stray_packs`` (packs of a checkpoint
    that never finished, not damage), ``num_vertices``, ``num_arcs``.
    Raises CorruptionError for damage, InputError (not a data directory, another format
    version), OSError."""

def run(
    graph: Union[Graph, Snapshot, Store],
    name: str,
    source: Optional[_VertexId] = None,
    iterations: Optional[int] = None,
    damping: float = 0.85,
    hops: Optional[int] = None,
    seed: Optional[int] = None,
) -> npt.NDArray[Any]:
    """Runs an algorithm of the registry by name (see ``algorithms()``); the registry's
    defaults where None (hops 2, seed 1). InputError for a missing source of bfs, sssp,
    bc or khop, or a negative count, naming it. Ctrl-C interrupts it."""

def pagerank(
    graph: Union[Graph, Snapshot, Store],
    alpha: float = 0.85,
    max_iter: Optional[int] = None,
    tol: float = 1e-6,
) -> npt.NDArray[np.float64]:
    """PageRank with NetworkX's stopping rule; ``max_iter`` 100 when None. Ctrl-C
    interrupts it."""
def betweenness_sum(
    graph: Union[Graph, Snapshot, Store],
    sources: Optional[Sequence[_VertexId]] = None,
    progress: Optional[Callable[[int, int], Any]] = None,
) -> Tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """Unscaled betweenness sums over ``sources`` and whether each vertex is a source,
    of one version."""
def algorithms() -> list[tuple[str, str]]:
    """``(name, summary)`` of every algorithm of the registry."""
