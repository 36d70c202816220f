"""A client of ``packgraph serve`` over HTTP, in the standard library only (``urllib``).

>>> import packgraph as pg                                    # doctest: +SKIP
>>> g = pg.connect("http://127.0.0.1:7700")                  # doctest: +SKIP
>>> g.insert_edges([1, 2], [2, 3])                           # doctest: +SKIP
>>> g.run("bfs", source=1)                                   # doctest: +SKIP
{1: 0, 2: 1, 3: 2}
>>> with g.snapshot() as s:                                  # doctest: +SKIP
...     s.run("pagerank", iterations=10)

Vertex ids are integers or strings, as the server's directory holds them. ``run`` returns
a ``dict`` from vertex id to value (``None`` for a vertex not reached), the same values
``packgraph run`` and the local API compute. Errors the server answers raise
:class:`ServerError` (with the HTTP status and the server's message); an unknown vertex or
version raises :class:`ServerVertexNotFoundError` (also a ``KeyError``), a bad argument
:class:`ServerInputError` (also a ``ValueError``).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from contextlib import contextmanager
from typing import Any, Dict, Iterable, Iterator, List, Optional, Union

VertexId = Union[int, str]

__all__ = [
    "Client",
    "ClientSnapshot",
    "ServerError",
    "ServerInputError",
    "ServerVertexNotFoundError",
    "connect",
]


class ServerError(Exception):
    """An error answer of the server: ``status`` (HTTP) and ``body`` (its JSON object)."""

    def __init__(self, status: int, body: Dict[str, Any]) -> None:
        super().__init__(f"{status}: {body.get('error', body)}")
        self.status = status
        self.body = body


class ServerInputError(ServerError, ValueError):
    """A request the server refused as bad input (400, 413, 415)."""


class ServerVertexNotFoundError(ServerError, KeyError):
    """A vertex, version or route the server does not have (404)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return Exception.__str__(self)


def _raise_for(status: int, payload: bytes) -> None:
    try:
        body = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        body = {"error": payload.decode("utf-8", "replace")}
    if not isinstance(body, dict):
        body = {"error": str(body)}
    if status == 404:
        raise ServerVertexNotFoundError(status, body)
    if status in (400, 413, 415):
        raise ServerInputError(status, body)
    raise ServerError(status, body)


class Client:
    """A connection to one server (see :func:`connect`)."""

    def __init__(self, url: str, token: Optional[str] = None, *, timeout: float = 60.0) -> None:
        self.url = url.rstrip("/")
        self._token = token
        self.timeout = timeout

    def __repr__(self) -> str:
        return f"Client({self.url!r})"  # the token is a secret: never shown

    def _request(
        self,
        method: str,
        path: str,
        *,
        body: Optional[bytes] = None,
        content_type: Optional[str] = None,
        params: Optional[Dict[str, Any]] = None,
    ) -> bytes:
        url = self.url + path
        if params:
            url += "?" + urllib.parse.urlencode(params)
        request = urllib.request.Request(url, data=body, method=method)
        request.add_header("Accept", "application/json")
        if content_type is not None:
            request.add_header("Content-Type", content_type)
        if self._token is not None:
            request.add_header("Authorization", f"Bearer {self._token}")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return response.read()
        except urllib.error.HTTPError as e:
            _raise_for(e.code, e.read())
            raise  # unreachable: _raise_for always raises

    def _json(self, method: str, path: str, **kwargs: Any) -> Any:
        return json.loads(self._request(method, path, **kwargs).decode("utf-8"))

    def graph_info(self) -> Dict[str, Any]:
        """``{"vertices", "edges", "directed", "weighted", "version"}`` of the latest version."""
        return self._json("GET", "/graph")

    def health(self) -> Dict[str, Any]:
        """``{"status", "version", "durable_seq"}``."""
        return self._json("GET", "/health")

    def _updates(self, body: Dict[str, List[List[Any]]]) -> List[Dict[str, int]]:
        data = json.dumps(body).encode("utf-8")
        answer = self._json("POST", "/updates", body=data, content_type="application/json")
        return answer["acked"]

    def insert_edges(
        self,
        sources: Iterable[VertexId],
        targets: Iterable[VertexId],
        weights: Optional[Iterable[float]] = None,
    ) -> Dict[str, int]:
        """Inserts the edges ``sources[i] -> targets[i]`` (with ``weights[i]`` on a weighted
        graph) as one batch; returns ``{"seq", "version"}`` once it is durable."""
        sources, targets = list(sources), list(targets)
        if len(sources) != len(targets):
            raise ValueError(f"{len(sources)} sources but {len(targets)} targets")
        if weights is None:
            items = [[_id(u), _id(v)] for u, v in zip(sources, targets)]
        else:
            weights = [float(w) for w in weights]
            if len(weights) != len(sources):
                raise ValueError(f"{len(sources)} edges but {len(weights)} weights")
            items = [[_id(u), _id(v), w] for u, v, w in zip(sources, targets, weights)]
        acked = self._updates({"insert": items})
        return acked[0] if acked else self._unchanged()

    def delete_edges(
        self, sources: Iterable[VertexId], targets: Iterable[VertexId]
    ) -> Dict[str, int]:
        """Deletes the edges ``sources[i] -> targets[i]`` as one batch (absent edges and
        unknown vertices are ignored); returns ``{"seq", "version"}`` once durable."""
        sources, targets = list(sources), list(targets)
        if len(sources) != len(targets):
            raise ValueError(f"{len(sources)} sources but {len(targets)} targets")
        acked = self._updates({"delete": [[_id(u), _id(v)] for u, v in zip(sources, targets)]})
        return acked[0] if acked else self._unchanged()

    def _unchanged(self) -> Dict[str, int]:
        health = self.health()
        return {"seq": health["durable_seq"], "version": health["version"]}

    def ingest(self, text: str) -> List[Dict[str, int]]:
        """Sends update batches in the ``ingest`` line format; the acknowledgements."""
        answer = self._json(
            "POST", "/updates", body=text.encode("utf-8"), content_type="text/plain"
        )
        return answer["acked"]

    def vertex(self, vertex: VertexId, *, version: Optional[int] = None) -> Dict[str, Any]:
        """The server's answer for one vertex: degrees, ``out`` (and ``in`` when directed)."""
        params = None if version is None else {"version": version}
        path = "/vertices/" + urllib.parse.quote(str(vertex), safe="")
        return self._json("GET", path, params=params)

    def neighbors(self, vertex: VertexId, *, version: Optional[int] = None) -> List[VertexId]:
        """The out-neighbors of ``vertex`` (their ids, weights left out)."""
        out = self.vertex(vertex, version=version)["out"]
        return [n[0] if isinstance(n, list) else n for n in out]

    def run(self, algorithm: str, *, version: Optional[int] = None, **params: Any) -> Dict[VertexId, Any]:
        """Runs ``algorithm`` (``bfs``, ``pagerank``, ``wcc``, ...) with its parameters
        (``source=``, ``iterations=``, ``damping=``, ``hops=``, ``seed=``); a dict from vertex
        id to value, ``None`` for a vertex not reached."""
        query = {k: v for k, v in params.items() if v is not None}
        if version is not None:
            query["version"] = version
        path = "/run/" + urllib.parse.quote(algorithm, safe="")
        answer = self._json("GET", path, params=query)
        return {_key(k): v for k, v in answer["values"].items()}

    def pin(self) -> int:
        """Pins the latest version; its number (release it with :meth:`release`)."""
        return int(self._json("POST", "/snapshots", body=b"")["version"])

    def release(self, version: int) -> None:
        """Releases one pin of ``version``."""
        self._json("DELETE", f"/snapshots/{int(version)}")

    @contextmanager
    def snapshot(self) -> Iterator["ClientSnapshot"]:
        """A context manager pinning the latest version while the block runs."""
        version = self.pin()
        try:
            yield ClientSnapshot(self, version)
        finally:
            self.release(version)

    def checkpoint(self) -> Dict[str, Any]:
        """Writes a checkpoint now; ``{"bytes_written", "bytes_reused", ...}``."""
        return self._json("POST", "/checkpoint", body=b"")

    def metrics(self) -> str:
        """The Prometheus text of ``/metrics``."""
        return self._request("GET", "/metrics").decode("utf-8")


class ClientSnapshot:
    """One pinned version: reads see it however the graph goes on."""

    def __init__(self, client: Client, version: int) -> None:
        self.client = client
        self.version = version

    def __repr__(self) -> str:
        return f"ClientSnapshot(version={self.version})"

    def run(self, algorithm: str, **params: Any) -> Dict[VertexId, Any]:
        """As :meth:`Client.run`, on this version."""
        return self.client.run(algorithm, version=self.version, **params)

    def neighbors(self, vertex: VertexId) -> List[VertexId]:
        """As :meth:`Client.neighbors`, on this version."""
        return self.client.neighbors(vertex, version=self.version)


def _id(vertex: Any) -> VertexId:
    if isinstance(vertex, bool) or not isinstance(vertex, (int, str)):
        # NumPy integers and the like.
        try:
            return int(vertex)
        except (TypeError, ValueError):
            raise TypeError(f"a vertex id is an int or a str, not {vertex!r}") from None
    return vertex


def _key(text: str) -> VertexId:
    return int(text) if text.isdigit() else text


def connect(url: str, token: Optional[str] = None, *, timeout: float = 60.0) -> Client:
    """A client of the ``packgraph serve`` at ``url`` (``http://HOST:PORT``), sending
    ``token`` as a bearer token when given."""
    return Client(url, token, timeout=timeout)
