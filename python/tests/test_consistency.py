"""The package and the command-line tool agree: algorithm names, defaults, the value of
unreached vertices; and graphs with string ids are written to text with their names."""

import numpy as np
import pytest

import packgraph as pg


def path_graph():
    return pg.Graph.from_edges([1, 2, 7], [2, 3, 8])


def test_both_names_of_an_algorithm_run_the_same():
    g = pg.Graph.from_edges([1, 2, 3, 3], [2, 3, 1, 4])
    assert pg.tc is pg.triangles and pg.kcore is pg.core_number and pg.bc is pg.betweenness
    for short, long in [("tc", "triangles"), ("kcore", "core_number")]:
        assert np.array_equal(pg.run(short, g), pg.run(long, g))
    assert np.array_equal(pg.run("bc", g, source=1), pg.run("betweenness", g, source=1))
    names = [name for name, _ in pg.algorithms()]
    for name in ["tc", "triangles", "kcore", "core_number", "bc", "betweenness"]:
        assert name in names
    with pytest.raises(pg.InputError, match="did you mean pagerank"):
        pg.run("pagernk", g)


def test_unreached_vertices_read_the_graphalytics_value():
    g = path_graph()
    assert pg.UNREACHED == 9223372036854775807
    hops = pg.bfs(g, 1)
    assert hops[7] == hops[8] == pg.UNREACHED and hops[3] == 2
    assert hops.array.dtype == np.int64
    assert pg.khop(g, 1, 1)[3] == pg.UNREACHED
    assert pg.run("bfs", g, source=1)[g.index(8)] == pg.UNREACHED
    assert np.isinf(pg.sssp(g, 1)[7])
    assert pg.shortest_path(g, 1, 3) == [1, 2, 3]


def test_mis_defaults_to_the_command_lines_seed():
    g = pg.Graph.from_edges(np.arange(50), (np.arange(50) * 7 + 3) % 50)
    assert pg.MIS_SEED == 1
    assert np.array_equal(pg.mis(g).array, pg.mis(g, seed=1).array)
    assert np.array_equal(pg.mis(g).array, pg.run("mis", g).astype(bool))


def test_graphs_with_string_ids_are_written_to_text_with_their_names(tmp_path):
    g = pg.Graph.from_edges(["alice", "bob"], ["bob", "carol"], weights=[0.5, 2.0])
    g.add_node("dave")
    path = tmp_path / "social.txt"
    g.write(path)
    lines = path.read_text().splitlines()
    assert lines[0] == "# packgraph edge list: 4 vertices, 2 edges, undirected, weighted"
    assert "# isolated vertices: dave" in lines
    edges = sorted(line for line in lines if not line.startswith("#"))
    assert edges == ["alice bob 0.5", "bob carol 2"]
    # A name that is no single word cannot be written, and nothing is left behind.
    bad = pg.Graph.from_edges(["two words"], ["x"])
    with pytest.raises(pg.InputError, match="word"):
        bad.write(tmp_path / "bad.txt")
    assert not (tmp_path / "bad.txt").exists()
    # Graphalytics holds integers only.
    with pytest.raises(pg.InputError, match="named"):
        g.write(tmp_path / "social.v")
