"""``Result``: the per-vertex values of an algorithm with the vertices they belong to."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Dict, Iterator, Optional

import numpy as np

from ._packgraph import VertexNotFoundError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["Result"]


class Result(Mapping):
    """The value of an algorithm at every vertex: a read-only mapping from vertex id to
    value, as NetworkX returns (``dict(pg.pagerank(g))``), backed by NumPy arrays.

    ``array`` holds the values and ``vertices`` the ids, position by position, both of the
    one graph version the algorithm ran on. ``r[v]`` is the value of vertex ``v`` (a Python
    scalar); ``np.asarray(r)`` is ``r.array``; attributes the mapping lacks (``sum``,
    ``tolist``, ``dtype``, ``argmax``...) and arithmetic go to ``array``.
    """

    __slots__ = ("array", "vertices", "_positions")

    def __init__(self, array: np.ndarray, vertices: np.ndarray) -> None:
        if len(array) != len(vertices):
            raise ValueError(f"{len(array)} values for {len(vertices)} vertices")
        self.array = array
        self.vertices = vertices
        self._positions: Optional[Dict[Any, int]] = None

    def index(self, vertex: Any) -> int:
        """The position of ``vertex`` in ``array``; VertexNotFoundError if absent."""
        if self._positions is None:
            self._positions = {v: i for i, v in enumerate(self.vertices.tolist())}
        try:
            return self._positions[vertex]
        except (KeyError, TypeError):
            raise VertexNotFoundError(f"vertex {vertex!r} is not in the result") from None

    def __getitem__(self, vertex: Any) -> Any:
        return self.array[self.index(vertex)].item()

    def __iter__(self) -> Iterator[Any]:
        return iter(self.vertices.tolist())

    def __len__(self) -> int:
        return len(self.array)

    def __contains__(self, vertex: object) -> bool:
        try:
            self.index(vertex)
        except VertexNotFoundError:
            return False
        return True

    def to_dict(self) -> Dict[Any, Any]:
        """``{vertex: value}`` with Python scalars, in vertex order."""
        return dict(zip(self.vertices.tolist(), self.array.tolist()))

    def to_pandas(self, name: Optional[str] = None) -> "pd.Series":
        """A ``pandas.Series`` of the values indexed by vertex id (needs pandas)."""
        import pandas as pd

        return pd.Series(self.array, index=pd.Index(self.vertices, name="vertex"), name=name)

    def __array__(self, dtype: Any = None, copy: Optional[bool] = None) -> np.ndarray:
        if copy:
            return np.array(self.array, dtype=dtype, copy=True)
        return np.asarray(self.array, dtype=dtype)

    def __getattr__(self, name: str) -> Any:
        # Only reached for names the class lacks: the array's methods and attributes.
        if name.startswith("__") or name in Result.__slots__:
            raise AttributeError(name)
        return getattr(self.array, name)

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{v!r}: {x!r}"
            for v, x in zip(self.vertices[:6].tolist(), self.array[:6].tolist())
        )
        more = ", ..." if len(self) > 6 else ""
        return f"<packgraph.Result {len(self)} vertices {{{shown}{more}}}>"

    def __eq__(self, other: object) -> Any:
        if isinstance(other, Result):
            return np.array_equal(self.vertices, other.vertices) and np.array_equal(
                self.array, other.array
            )
        if isinstance(other, Mapping):
            return self.to_dict() == dict(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __getstate__(self) -> Any:
        return (self.array, self.vertices)

    def __setstate__(self, state: Any) -> None:
        self.array, self.vertices = state
        self._positions = None


def _arithmetic(name: str) -> Any:
    def method(self: Result, *args: Any) -> Any:
        args = tuple(a.array if isinstance(a, Result) else a for a in args)
        return getattr(self.array, name)(*args)

    method.__name__ = name
    return method


for _name in (
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
    "__rtruediv__", "__floordiv__", "__rfloordiv__", "__pow__", "__neg__", "__abs__",
    "__lt__", "__le__", "__gt__", "__ge__",
):
    setattr(Result, _name, _arithmetic(_name))
del _name
