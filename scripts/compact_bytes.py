#!/usr/bin/env python3
"""What `g.compact()` saves on a graph that took its updates, from Python.

    RAYON_NUM_THREADS=2 python3 scripts/compact_bytes.py [SCALE]   # default 18

Inserts a uniform random graph of 2^SCALE vertices and 16 x 2^SCALE edges in 16 batches
(seed 5), then prints `nbytes` per arc (edge arrays and the vertex index, built by a BFS
before each reading) after the batches, after `g.compact()` and after
`g.compact(room=True)`, with each call's time. Needs the packgraph package installed
(`pip install .`) and NumPy.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import packgraph as pg


def main() -> None:
    scale = int(sys.argv[1]) if len(sys.argv) > 1 else 18
    rng = np.random.default_rng(5)
    n = 1 << scale
    m = 16 * n
    src = np.array_split(rng.integers(0, n, m), 16)
    dst = np.array_split(rng.integers(0, n, m), 16)
    g = pg.Graph()
    started = time.perf_counter()
    for s, d in zip(src, dst):
        g.insert_edges(s, d)
    inserted = time.perf_counter() - started

    def measure(step):
        started = time.perf_counter()
        step()
        took = time.perf_counter() - started
        pg.bfs(g, 0)  # builds the vertex index, which nbytes counts
        return g.nbytes, took

    batches, _ = measure(lambda: None)
    compact, compact_s = measure(g.compact)
    room, room_s = measure(lambda: g.compact(room=True))
    arcs = 2 * g.num_edges
    print(f"scale {scale}: {g.num_vertices} vertices, {arcs} arcs, 16 batches in {inserted:.2f} s")
    print(f"after the batches: {batches / arcs:.2f} bytes per arc")
    print(f"g.compact(): {compact / arcs:.2f} bytes per arc in {compact_s:.3f} s")
    print(f"g.compact(room=True): {room / arcs:.2f} bytes per arc in {room_s:.3f} s")


if __name__ == "__main__":
    main()
