#!/usr/bin/env python3
"""The README's benchmark figures: SVG plots under docs/plots/ drawn from the JSON Lines
that `packgraph-bench ... --json` printed, saved under docs/plots/data/.

    python3 scripts/plots.py --measure --gap path/to/gapbs   # run the benchmarks, then draw
    python3 scripts/plots.py                                 # draw again from the saved data

`--measure` runs the release `packgraph-bench` (build it first: `cargo build --release`)
on 2 threads at sizes that take a few minutes on two cores:

    packgraph-bench --threads 2 graph --scale 18 --sources 4 [--gap DIR]
        --inputs data/real/soc-Epinions1.lcc.txt.gz,data/real/luxembourg_osm.mtx.gz --json
    packgraph-bench --threads 2 pma --quick --json

the graph suite `--runs` times (default 3: the figures show medians, and the lowest and
highest run as whiskers), the pma suite once, and saves each run's rows as
docs/plots/data/SUITE-N.jsonl, with the command, the time, the commit and the machine's
load in docs/plots/data/meta.json (`--suites graph` or `pma` measures one again). `--gap
DIR` (GAP's built `bfs`, `cc`, `pr` and `bc`; see the README) adds GAP's kernels to the
graph suite, run with OMP_WAIT_POLICY=passive; without it the figures show packgraph and
the CSR only. Every bar and point is a row of those files: nothing is drawn that was not
measured. Needs Python 3.9 or newer and nothing else.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import subprocess
import sys
from html import escape
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLOTS = ROOT / "docs" / "plots"
DATA = PLOTS / "data"
THREADS = 2

GRAPH_ARGS = [
    "graph", "--scale", "18", "--sources", "4",
    "--inputs", "data/real/soc-Epinions1.lcc.txt.gz,data/real/luxembourg_osm.mtx.gz",
]
PMA_ARGS = ["pma", "--quick"]

COLORS = {
    "packgraph": "#1f77b4",
    "csr": "#ff7f0e",
    "gap": "#2ca02c",
    "cpma": "#1f77b4",
    "pma": "#9467bd",
    "btreeset": "#d62728",
    "sorted_vec": "#8c564b",
}
LABELS = {
    "packgraph": "packgraph (dynamic, compressed)",
    "csr": "static CSR (same run)",
    "gap": "GAP reference kernels (same run, on GAP's own graph of the same kind and size)",
    "kronecker": "Kronecker",
    "er": "Erdős–Rényi",
}
FONT = "font-family=\"DejaVu Sans, Arial, sans-serif\""


class Svg:
    """A minimal SVG canvas: text, lines, rectangles and polylines."""

    def __init__(self, width: int, height: int):
        self.width, self.height = width, height
        self.parts: list[str] = []

    def text(self, x, y, s, size=12, anchor="start", weight="normal", fill="#222", rotate=None):
        transform = f' transform="rotate({rotate} {x:.1f} {y:.1f})"' if rotate else ""
        self.parts.append(
            f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
            f'font-weight="{weight}" fill="{fill}" {FONT}{transform}>{escape(str(s))}</text>'
        )

    def line(self, x1, y1, x2, y2, stroke="#222", width=1.0, dash=None):
        d = f' stroke-dasharray="{dash}"' if dash else ""
        self.parts.append(
            f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
            f'stroke="{stroke}" stroke-width="{width}"{d}/>'
        )

    def rect(self, x, y, w, h, fill, title=None):
        tip = f"<title>{escape(title)}</title>" if title else ""
        self.parts.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" fill="{fill}">{tip}</rect>'
        )

    def polyline(self, points, stroke, width=2.0, dash=None):
        d = f' stroke-dasharray="{dash}"' if dash else ""
        pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
        self.parts.append(
            f'<polyline points="{pts}" fill="none" stroke="{stroke}" stroke-width="{width}"{d}/>'
        )
        for x, y in points:
            self.parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{stroke}"/>')

    def save(self, path: Path):
        body = "\n".join(self.parts)
        path.write_text(
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width}" height="{self.height}" '
            f'viewBox="0 0 {self.width} {self.height}">\n'
            f'<rect width="100%" height="100%" fill="white"/>\n{body}\n</svg>\n'
        )
        print(f"wrote {path.relative_to(ROOT)}")


def nice_max(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 times a power of ten at or above `value`."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 1.5, 2, 2.5, 4, 5, 10):
        if step * power >= value:
            return step * power
    return 10 * power


def fmt(value: float) -> str:
    if value == 0:
        return "0"
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    if value >= 0.1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def legend(svg: Svg, x, y, entries):
    for i, (label, color) in enumerate(entries):
        svg.rect(x, y + i * 18 - 10, 12, 12, color)
        svg.text(x + 18, y + i * 18, label, size=12)


def bar_panel(svg, x0, y0, w, h, title, groups, series, ylabel, ref_line=None):
    """Grouped bars: `groups` is [(label, {series: value})]; missing values leave a gap."""
    values = [hi for _, vals in groups for v in vals.values() for hi in ([v[2]] if isinstance(v, tuple) else [v])]
    top = nice_max(max(values) * 1.15)
    svg.text(x0 + w / 2, y0 - 12, title, size=14, anchor="middle", weight="bold")
    for i in range(6):
        v = top * i / 5
        y = y0 + h - h * v / top
        svg.line(x0, y, x0 + w, y, stroke="#ddd")
        svg.text(x0 - 6, y + 4, f"{v:g}", size=11, anchor="end")
    svg.line(x0, y0 + h, x0 + w, y0 + h)
    svg.line(x0, y0, x0, y0 + h)
    svg.text(x0 - 44, y0 + h / 2, ylabel, size=12, anchor="middle", rotate=-90)
    if ref_line is not None:
        y = y0 + h - h * ref_line / top
        svg.line(x0, y, x0 + w, y, stroke="#555", dash="4,3")
    group_w = w / len(groups)
    bar_w = group_w * 0.8 / len(series)
    for g, (label, vals) in enumerate(groups):
        gx = x0 + g * group_w + group_w * 0.1
        for s, name in enumerate(series):
            if name not in vals:
                continue
            v, lo, hi = vals[name] if isinstance(vals[name], tuple) else (vals[name],) * 3
            bh = h * v / top
            bx = gx + s * bar_w
            svg.rect(bx, y0 + h - bh, bar_w - 2, bh, COLORS[name], title=f"{name}: {v:.4g} ({lo:.4g}-{hi:.4g})")
            if hi > lo:
                cx = bx + bar_w / 2 - 1
                svg.line(cx, y0 + h - h * lo / top, cx, y0 + h - h * hi / top, stroke="#222", width=1.2)
                for y in (lo, hi):
                    svg.line(cx - 4, y0 + h - h * y / top, cx + 4, y0 + h - h * y / top, stroke="#222", width=1.2)
            label_at = y0 + h - h * max(v, hi) / top - 4
            svg.text(bx + bar_w / 2 - 1, label_at, fmt(v), size=10, anchor="middle")
        for k, part in enumerate(label.split("\n")):
            svg.text(x0 + g * group_w + group_w / 2, y0 + h + 16 + 14 * k, part, size=11, anchor="middle")


def log_ticks(lo: float, hi: float):
    return [10.0**e for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)]


def line_panel(svg, x0, y0, w, h, title, lines, xlabel, ylabel, ylog=False):
    """`lines` is [(label, color, dash, [(x, y)])] on a log x axis (and log y if `ylog`)."""
    xs = [x for *_, pts in lines for x, _ in pts]
    ys = [y for *_, pts in lines for _, y in pts]
    xt = log_ticks(min(xs), max(xs))
    lx0, lx1 = math.log10(xt[0]), math.log10(xt[-1])
    if ylog:
        yt = log_ticks(min(ys), max(ys))
        ly0, ly1 = math.log10(yt[0]), math.log10(yt[-1])

        def ypos(v):
            return y0 + h - h * (math.log10(v) - ly0) / (ly1 - ly0)
    else:
        top = nice_max(max(ys) * 1.1)
        yt = [top * i / 5 for i in range(6)]

        def ypos(v):
            return y0 + h - h * v / top

    def xpos(v):
        return x0 + w * (math.log10(v) - lx0) / (lx1 - lx0)

    svg.text(x0 + w / 2, y0 - 12, title, size=14, anchor="middle", weight="bold")
    for v in yt:
        svg.line(x0, ypos(v), x0 + w, ypos(v), stroke="#ddd")
        svg.text(x0 - 6, ypos(v) + 4, f"{v:g}", size=11, anchor="end")
    for v in xt:
        svg.line(xpos(v), y0, xpos(v), y0 + h, stroke="#eee")
        svg.text(xpos(v), y0 + h + 16, f"1e{round(math.log10(v))}", size=11, anchor="middle")
    svg.line(x0, y0 + h, x0 + w, y0 + h)
    svg.line(x0, y0, x0, y0 + h)
    svg.text(x0 + w / 2, y0 + h + 36, xlabel, size=12, anchor="middle")
    svg.text(x0 - 50, y0 + h / 2, ylabel, size=12, anchor="middle", rotate=-90)
    for label, color, dash, pts in lines:
        svg.polyline([(xpos(x), ypos(y)) for x, y in sorted(pts)], color, dash=dash)


def read_runs(suite: str) -> list[list[dict]]:
    """The rows of each saved run of `suite` (DATA/SUITE-1.jsonl, SUITE-2.jsonl, ...)."""
    paths = sorted(DATA.glob(f"{suite}-*.jsonl"), key=lambda p: int(p.stem.rsplit("-", 1)[1]))
    if not paths:
        sys.exit(f"plots: no {suite}-N.jsonl in {DATA.relative_to(ROOT)}: run `python3 scripts/plots.py --measure` first")
    return [read_rows(path) for path in paths]


def spread(values):
    """(median, lowest, highest) of the values that are not None, or None if there are none."""
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    middle = len(values) // 2
    median = values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2
    return (median, values[0], values[-1])


def read_rows(path: Path) -> list[dict]:
    rows = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as error:
                sys.exit(f"plots: {path.relative_to(ROOT)}:{number}: not JSON: {error}")
    return rows


def pick(rows, **match):
    return [r for r in rows if all(r.get(k) == v for k, v in match.items())]


def one(rows, **match):
    found = pick(rows, **match)
    return found[0]["value"] if found else None


def caption(svg: Svg, meta: dict, how: str):
    """Two lines at the bottom left: how and when the figure's numbers were measured."""
    lines = [
        f"{meta['threads']} threads, {how}; {meta['machine']}, {meta['date']}, commit {meta['commit']};",
        f"a shared, noisy machine: load average {meta['load_before']:.0f} before the runs, "
        f"{meta['load_after']:.0f} after",
    ]
    for k, line in enumerate(lines):
        svg.text(10, svg.height - 22 + 13 * k, line, size=10, fill="#555")


def plot_kernels(runs, meta):
    """Kernel times relative to the CSR in the same run (CSR = 1), per dataset: the median
    over the runs of each run's ratio, with the lowest and highest as whiskers."""
    runs = [pick(rows, threads=meta["threads"]) for rows in runs]
    rows = runs[0]
    ops = [("bfs", "BFS"), ("pagerank", "PageRank\n(10 it.)"), ("wcc", "WCC"), ("bc", "BC\n(1 source)"), ("sssp", "SSSP")]
    datasets = [d for d in ("kronecker", "er") if pick(rows, dataset=d, op="bfs")]
    series = [s for s in ("packgraph", "csr", "gap") if pick(rows, structure=s, op="bfs")]
    svg = Svg(460 * len(datasets) + 60, 510)
    scale = pick(rows, dataset="kronecker", op="bfs")[0]["param"]
    svg.text(svg.width / 2, 24, f"Kernel time relative to a static CSR (lower is better), scale {scale}",
             size=15, anchor="middle", weight="bold")
    for d, dataset in enumerate(datasets):
        groups = []
        for op, label in ops:
            csr = spread(one(r, dataset=dataset, structure="csr", op=op) for r in runs)
            if csr is None:
                continue
            vals = {}
            for s in series:
                ratio = spread(
                    one(r, dataset=dataset, structure=s, op=op) / one(r, dataset=dataset, structure="csr", op=op)
                    for r in runs
                    if one(r, dataset=dataset, structure=s, op=op) is not None
                )
                if ratio is not None:
                    vals[s] = ratio
            groups.append((f"{label}\nCSR {csr[0] * 1e3:.0f} ms", vals))
        bar_panel(svg, 70 + d * 460, 70, 380, 290, LABELS[dataset], groups, series,
                  "time / CSR time", ref_line=1.0)
    legend(svg, 70, 420, [(LABELS[s], COLORS[s]) for s in series])
    caption(svg, meta, f"median of {len(runs)} runs, each ratio within its run (whiskers: lowest and highest)")
    svg.save(PLOTS / "graph-kernels.svg")


def plot_memory(runs, meta):
    """Bytes per stored edge, packgraph (flat index included) against the CSR (the same in
    every run: the first run's)."""
    rows = runs[0]
    datasets = []
    for r in pick(rows, structure="csr", op="size"):
        if r["dataset"] not in datasets:
            datasets.append(r["dataset"])
    groups = []
    for dataset in datasets:
        name = LABELS.get(dataset, Path(dataset).name.split(".")[0])
        vals = {s: one(rows, dataset=dataset, structure=s, op="size") for s in ("packgraph", "csr")}
        groups.append((name, {k: v for k, v in vals.items() if v is not None}))
    svg = Svg(620, 430)
    svg.text(310, 24, "Bytes per stored edge (lower is better)", size=15, anchor="middle", weight="bold")
    bar_panel(svg, 70, 60, 520, 260, "", groups, ["packgraph", "csr"], "bytes / edge")
    legend(svg, 70, 370, [("packgraph (vertex index included)", COLORS["packgraph"]), (LABELS["csr"], COLORS["csr"])])
    caption(svg, meta, "sizes (the same in every run)")
    svg.save(PLOTS / "graph-memory.svg")


def plot_updates(runs, meta):
    """Edge batch update throughput by batch size (an undirected edge counts twice): the
    median over the runs."""
    rows = runs[0]
    lines = []
    for op, label, dash in (("insert_edges", "inserts", None), ("delete_edges", "deletes", "6,4")):
        sizes = sorted({r["param"] for r in pick(rows, structure="packgraph", op=op)})
        pts = [(size, spread(one(r, structure="packgraph", op=op, param=size, threads=meta["threads"])
                             for r in runs)[0] / 1e6) for size in sizes]
        if pts:
            lines.append((label, COLORS["packgraph"], dash, pts))
    svg = Svg(620, 430)
    scale = pick(rows, dataset="kronecker", op="bfs")[0]["param"]
    line_panel(svg, 80, 50, 440, 270, f"Edge batches into Kronecker scale {scale} (higher is better)",
               lines, "batch size (edges)", "million updates / s")
    legend(svg, 90, 375, [("inserts", COLORS["packgraph"])])
    svg.line(250, 370, 262, 370, stroke=COLORS["packgraph"], width=2, dash="6,4")
    svg.text(268, 375, "deletes")
    caption(svg, meta, f"median of {len(runs)} runs")
    svg.save(PLOTS / "graph-updates.svg")


def plot_pma(rows, meta):
    """Batch inserts into a set of keys by batch size: CPMA against the baselines."""
    names = {"cpma": "CPMA (compressed)", "pma": "PMA (uncompressed)", "btreeset": "BTreeSet",
             "sorted_vec": "sorted Vec (merged)"}
    lines = []
    for s, label in names.items():
        pts = [(r["param"], r["value"] / 1e6)
               for r in pick(rows, structure=s, op="insert_batch", threads=meta["threads"])]
        if pts:
            lines.append((label, COLORS[s], None, pts))
    svg = Svg(620, 480)
    line_panel(svg, 80, 50, 440, 270, "Batch inserts into a set of 1e6 random keys (higher is better)", lines,
               "batch size (keys)", "million inserts / s (log)", ylog=True)
    legend(svg, 90, 375, [(label, color) for label, color, _, _ in lines])
    caption(svg, meta, "one run")
    svg.save(PLOTS / "pma-batch.svg")


def measure(gap: str | None, suites: list[str], runs: int):
    """Runs each suite, saving its rows as DATA/SUITE.jsonl and how it ran in DATA/meta.json."""
    bench = ROOT / "target" / "release" / "packgraph-bench"
    if not bench.exists():
        sys.exit(f"plots: {bench.relative_to(ROOT)} not found: build it with `cargo build --release`")
    DATA.mkdir(parents=True, exist_ok=True)
    commands = {"graph": GRAPH_ARGS + (["--gap", gap] if gap else []), "pma": PMA_ARGS}
    meta_path = DATA / "meta.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    # GAP's OpenMP threads sleep while they wait instead of spinning: on a machine shared
    # with other work, spinning threads steal the cores their peers need.
    env = dict(os.environ, OMP_WAIT_POLICY="passive")
    for suite in suites:
        argv = [str(bench), "--threads", str(THREADS), *commands[suite], "--json"]
        load_before = os.getloadavg()[0]
        started = datetime.datetime.now(datetime.timezone.utc)
        count = runs if suite == "graph" else 1
        for old in DATA.glob(f"{suite}-*.jsonl"):
            old.unlink()
        for run in range(1, count + 1):
            print(f"run {run} of {count}:", " ".join(argv[1:]), file=sys.stderr, flush=True)
            out = subprocess.run(argv, cwd=ROOT, stdout=subprocess.PIPE, env=env, check=False)
            if out.returncode != 0:
                sys.exit(f"plots: packgraph-bench {suite} exited {out.returncode}")
            (DATA / f"{suite}-{run}.jsonl").write_bytes(out.stdout)
        entry = {
            "runs": count,
            "command": " ".join(["packgraph-bench", *argv[1:]]),
            "date": started.strftime("%Y-%m-%d %H:%M UTC"),
            "commit": commit.stdout.strip() or "unknown",
            "threads": THREADS,
            "machine": f"{os.cpu_count()} cores",
            "load_before": load_before,
            "load_after": os.getloadavg()[0],
        }
        if suite == "graph" and gap:
            out = subprocess.run(["git", "-C", gap, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
            entry["gap_commit"] = out.stdout.strip() or "unknown"
            entry["env"] = "OMP_WAIT_POLICY=passive"
        meta[suite] = entry
        meta_path.write_text(json.dumps(meta, indent=2) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--measure", action="store_true", help="run the benchmarks first (minutes)")
    parser.add_argument("--gap", metavar="DIR", help="GAP's built binaries, for the GAP rows")
    parser.add_argument("--runs", type=int, default=3, help="with --measure: runs of the graph suite (default 3)")
    parser.add_argument("--suites", default="graph,pma",
                        help="with --measure: which suites to run again (default: graph,pma)")
    args = parser.parse_args()
    suites = [s for s in args.suites.split(",") if s]
    if any(s not in ("graph", "pma") for s in suites):
        parser.error(f"--suites {args.suites}: the suites are graph and pma")
    if args.gap and not args.measure:
        parser.error("--gap only applies with --measure")
    if args.measure:
        if args.runs < 1:
            parser.error("--runs must be at least 1")
        measure(args.gap, suites, args.runs)
    meta_path = DATA / "meta.json"
    if not meta_path.exists():
        sys.exit("plots: docs/plots/data/meta.json not found: run `python3 scripts/plots.py --measure` first")
    meta = json.loads(meta_path.read_text())
    graph = read_runs("graph")
    plot_kernels(graph, meta["graph"])
    plot_memory(graph, meta["graph"])
    plot_updates(graph, meta["graph"])
    plot_pma(read_runs("pma")[0], meta["pma"])


if __name__ == "__main__":
    main()
