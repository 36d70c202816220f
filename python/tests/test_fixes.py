"""What used to go wrong or get stuck: a missing source, Ctrl-C in long kernels, results
read across versions, arrays of the wrong shape, errors naming the wrong ids or no
parameter, and the package's exports."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

import numpy as np
import pytest

import packgraph as pg


def cycle(n: int = 200, directed: bool = True) -> pg.Graph:
    return pg.Graph.from_edges(np.arange(n), (np.arange(n) + 1) % n, directed=directed)


@pytest.mark.parametrize(
    "call",
    [
        lambda g: pg.bfs(g, None),
        lambda g: pg.sssp(g, None),
        lambda g: pg.khop(g, None, 2),
        lambda g: pg.run("bfs", g),
        lambda g: pg.run("sssp", g, source=None),
        lambda g: pg.run("khop", g),
        lambda g: pg.run("bc", g),
    ],
)
def test_a_missing_source_raises(call):
    with pytest.raises(pg.InputError, match="needs a source vertex"):
        call(cycle(5))


def kernel_threads() -> int:
    """Threads of this process running a kernel (Linux names them in /proc)."""
    names = []
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/comm") as comm:
                names.append(comm.read().strip())
        except OSError:
            pass
    return sum(name.startswith("packgraph-kern") for name in names)


@pytest.mark.skipif(sys.platform != "linux", reason="sends SIGINT; counts threads in /proc")
@pytest.mark.parametrize(
    "call",
    [
        lambda g: pg.pagerank(g, max_iter=10**9, tol=0),
        lambda g: pg.cdlp(g, iterations=10**9),
        lambda g: pg.run("pagerank", g, iterations=10**9),
        lambda g: pg.run("cdlp", g, iterations=10**9),
    ],
    ids=["pagerank", "cdlp", "run-pagerank", "run-cdlp"],
)
def test_ctrl_c_stops_iterative_kernels_at_once(call):
    g = cycle()
    # A process started in the background by a non-interactive shell inherits SIGINT
    # ignored, and Python then installs no KeyboardInterrupt handler: install it here, so
    # that the signal below always raises (else the kernel would run its 10**9 iterations).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            call(g)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert time.monotonic() - start < 3
    # The kernel saw the stop flag: its thread ends at the next iteration.
    deadline = time.monotonic() + 3
    while kernel_threads() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert kernel_threads() == 0


def test_betweenness_with_sources_reads_one_version_while_another_thread_inserts():
    g = cycle(50, directed=False)
    stop = threading.Event()

    def writer():
        i = 1000
        while not stop.is_set():
            g.insert_edges([i], [i + 1])
            i += 2

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        for _ in range(100):
            result = pg.betweenness(g, sources=[0, 1, 2])
            assert len(result.array) == len(result.vertices)
            assert result.vertices[:50].tolist() == list(range(50))
    finally:
        stop.set()
        thread.join()


def test_results_and_their_vertices_come_from_one_version():
    g = cycle(10)
    result = pg.bfs(g, 0)
    g.insert_edges([100], [101])
    assert len(result) == len(result.vertices) == 10 and 100 not in result


@pytest.mark.parametrize(
    "call",
    [
        lambda: pg.Graph.from_edges(np.arange(6).reshape(2, 3), np.arange(6).reshape(3, 2)),
        lambda: pg.Graph.from_edges(np.arange(6).reshape(2, 3), np.arange(6).reshape(2, 3)),
        lambda: pg.Graph().insert_edges(np.zeros((1, 2), dtype=np.int64), [1, 2]),
        lambda: pg.Graph(weighted=True).insert_edges([1], [2], np.ones((1, 1))),
        lambda: pg.Graph().add_vertices(np.zeros((2, 2), dtype=np.uint64)),
        lambda: pg.Graph().insert_edges("ab", "cd"),
    ],
)
def test_ids_and_weights_must_be_one_dimensional(call):
    with pytest.raises(pg.InputError):
        call()


def test_errors_name_the_callers_ids():
    g = pg.Graph(weighted=True)
    g.insert_edges([10], [20], [1.0])
    with pytest.raises(pg.InputError) as caught:
        g.insert_edges([30, 10], [20, 40], [1.0, float("nan")])
    assert "10 -> 40" in str(caught.value) and "weights[1]" in str(caught.value)
    with pytest.raises(pg.InputError, match='"a" -> "b"'):
        pg.Graph(weighted=True).insert_edges(["a"], ["b"], [float("inf")])
    assert g.num_edges == 1


def test_an_id_past_64_bits_says_so():
    g = pg.Graph()
    with pytest.raises(pg.InputError, match=r"src\[1\].*2\*\*64"):
        g.insert_edges([1, 2**64], [2, 3])
    with pytest.raises(pg.InputError, match="negative"):
        g.insert_edges([1], [-5])
    g.insert_edges([1], [2**64 - 1])
    assert 2**64 - 1 in g and 2**64 not in g and not g.has_edge(2**64, 1)
    with pytest.raises(pg.VertexNotFoundError):
        pg.bfs(g, 2**64)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda g: pg.pagerank(g, max_iter=-1), "max_iter"),
        (lambda g: pg.cdlp(g, iterations=-1), "iterations"),
        (lambda g: pg.mis(g, seed=-1), "seed"),
        (lambda g: pg.khop(g, 0, -1), "k"),
        (lambda g: pg.run("khop", g, source=0, hops=-1), "hops"),
        (lambda g: pg.run("khop", g, source=0, hops=2**40), "hops"),
        (lambda g: pg.run("pagerank", g, iterations=2**70), "iterations"),
    ],
)
def test_bad_counts_raise_input_error_naming_the_parameter(call, name):
    with pytest.raises(pg.InputError, match=rf"^{name} must be"):
        call(cycle(5))


def test_exports():
    assert callable(pg.run) and callable(pg.algorithms) and callable(pg.open)
    assert "open" not in pg.__all__
    for name in pg.__all__:
        assert hasattr(pg, name), name
    namespace: dict = {}
    exec("from packgraph import *", namespace)
    assert "open" not in namespace and "run" in namespace
    names = {name for name, _ in pg.algorithms()}
    assert {"bfs", "pagerank", "tc", "kcore", "bc"} <= names


def test_run_keeps_arrays_and_takes_both_names():
    g = cycle(6, directed=False)
    assert isinstance(pg.run("bfs", g, source=0), np.ndarray)
    assert np.array_equal(pg.run("triangles", g), pg.run("tc", g))
    assert np.array_equal(pg.run("core_number", g), pg.triangles(g).array * 0 + 2)
    assert np.array_equal(pg.run(g, "bfs", source=0), pg.bfs(g, 0).array)
