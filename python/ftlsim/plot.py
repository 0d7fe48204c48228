"""The papers' figure types, drawn with matplotlib from a results DataFrame (the frame
:func:`ftlsim.sweep` and :func:`ftlsim.experiment` return, or ``runs.jsonl`` of a results
directory read with :func:`load`).

Each function returns a ``matplotlib.figure.Figure``. :func:`figures` draws the figures an
experiment spec names (its ``[[figure]]`` tables), and ``python -m ftlsim.plot RESULTS -o DIR``
(what ``ftlsim experiment --plot DIR`` runs) writes them as PNG and SVG.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

if TYPE_CHECKING:
    import matplotlib.figure
    import pandas

#: The cache-access classes of docs/metrics.md, in stacking order, with their labels.
MISS_CLASSES = [
    ("report.cache.hit", "hit"),
    ("report.cache.miss_no_penalty", "miss, no penalty (0R)"),
    ("report.cache.miss_fetch", "miss, one read (1R)"),
    ("report.cache.miss_fetch_two", "miss, two reads (2R)"),
    ("report.cache.miss_writeback", "miss with write-back (RW)"),
]

#: What each figure kind draws when its spec names no metric.
DEFAULT_METRIC = {
    "nt-bars": "nt",
    "cache-sweep": "nt",
    "metric-bars": "report.write_amplification",
}


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    return plt


def load(results: Union[str, os.PathLike]) -> Tuple["pandas.DataFrame", Dict[str, Any]]:
    """A results directory (``ftlsim experiment --out DIR``): its rows and its spec."""
    import pandas as pd

    with open(os.path.join(results, "runs.jsonl")) as f:
        frame = pd.DataFrame.from_records([json.loads(line) for line in f if line.strip()])
    with open(os.path.join(results, "spec.json")) as f:
        spec = json.load(f)
    return frame, spec


def _num(value: Any) -> float:
    """A cell as a number to draw: undefined metrics (None, such as the hit ratio of an FTL
    without a cache) are not drawn."""
    return float("nan") if value is None else float(value)


#: More lines than this get no legend (it would hide the plot); the report's table names them.
MAX_LEGEND = 16


def _width(groups: float) -> float:
    """A figure's width in inches for this many groups of bars: wide enough to tell them
    apart, never wider than a page."""
    return min(14.0, max(6.0, 0.9 * groups + 2))


def _legend(ax: Any) -> None:
    if len(ax.lines) <= MAX_LEGEND:
        ax.legend(fontsize=6, ncol=2)


def _points(frame: "pandas.DataFrame") -> List[str]:
    return [c for c in frame.columns if c.startswith("sweep.")]


def _group_label(row: Mapping[str, Any], points: Sequence[str]) -> str:
    """A workload and sweep point as one x-axis label."""
    parts = [str(row["workload"])] + [f"{p[len('sweep.'):]}={row[p]}" for p in points]
    return "\n".join(parts)


def _grouped_bars(
    frame: "pandas.DataFrame", metric: str, title: str, ylabel: str, paper: Optional[Mapping[str, float]] = None
) -> "matplotlib.figure.Figure":
    """One group of bars per workload (and sweep point), one bar per FTL; the paper's numbers,
    when given per FTL, as a hatched bar at the end of each FTL's series."""
    plt = _pyplot()
    points = _points(frame)
    ftls = list(dict.fromkeys(frame["ftl"]))
    keys = list(dict.fromkeys(_group_label(row, points) for _, row in frame.iterrows()))
    width = 0.8 / max(len(ftls), 1)
    fig, ax = plt.subplots(figsize=(_width(len(keys) * max(len(ftls), 1) ** 0.5), 4.2))
    for i, ftl in enumerate(ftls):
        of_ftl = frame[frame["ftl"] == ftl]
        values = {_group_label(row, points): _num(row[metric]) for _, row in of_ftl.iterrows()}
        xs = [k + (i - (len(ftls) - 1) / 2) * width for k in range(len(keys))]
        ax.bar(xs, [values.get(k, float("nan")) for k in keys], width, label=ftl)
    if paper:
        xs = [len(keys) + (i - (len(ftls) - 1) / 2) * width for i in range(len(ftls))]
        ax.bar(xs, [paper.get(f, float("nan")) for f in ftls], width, hatch="//", fill=False, label="paper")
        keys = keys + ["paper"]
    ax.set_xticks(range(len(keys)))
    ax.set_xticklabels(keys, fontsize=7, rotation=90 if len(keys) > 12 else 0)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=7, ncol=min(len(ftls) + 1, 6))
    fig.tight_layout()
    return fig


def nt_bars(
    frame: "pandas.DataFrame", title: str = "Normalized response time", paper: Optional[Mapping[str, float]] = None
) -> "matplotlib.figure.Figure":
    """Normalized response time (t_FTL / t_baseline) per workload and FTL (paper 000 Figure 5.x)."""
    return _grouped_bars(frame, "nt", title, "normalized response time", paper)


def metric_bars(
    frame: "pandas.DataFrame", metric: str, title: str = "", paper: Optional[Mapping[str, float]] = None
) -> "matplotlib.figure.Figure":
    """Any metric column per workload and FTL."""
    return _grouped_bars(frame, metric, title or metric, metric.rsplit(".", 1)[-1].replace("_", " "), paper)


def miss_classes(frame: "pandas.DataFrame", title: str = "Cache accesses by class") -> "matplotlib.figure.Figure":
    """The mapping-cache accesses of each run by class (hit, 0R, 1R, 2R, RW), stacked, as
    fractions of all accesses; runs without a mapping cache are left out."""
    plt = _pyplot()
    runs = frame[frame.get("report.cache.accesses", 0) > 0]
    points = _points(runs)
    labels = [f"{row['ftl']}\n{_group_label(row, points)}" for _, row in runs.iterrows()]
    fig, ax = plt.subplots(figsize=(_width(0.7 * len(labels)), 4.2))
    bottom = [0.0] * len(runs)
    total = runs["report.cache.accesses"].astype(float).tolist()
    for column, label in MISS_CLASSES:
        share = [v / t for v, t in zip(runs[column].astype(float).tolist(), total)]
        ax.bar(range(len(runs)), share, 0.7, bottom=bottom, label=label)
        bottom = [b + s for b, s in zip(bottom, share)]
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, fontsize=6)
    ax.set_ylabel("fraction of cache accesses")
    ax.set_title(title)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def translation_traffic(
    frame: "pandas.DataFrame", title: str = "Translation-page traffic"
) -> "matplotlib.figure.Figure":
    """Translation-page reads (including spare reads) and writes per run."""
    plt = _pyplot()
    points = _points(frame)
    labels = [f"{row['ftl']}\n{_group_label(row, points)}" for _, row in frame.iterrows()]
    reads = (frame["report.reads.translation"] + frame.get("report.spare_reads.translation", 0)).tolist()
    writes = frame["report.programs.translation"].tolist()
    fig, ax = plt.subplots(figsize=(_width(0.7 * len(labels)), 4.2))
    xs = list(range(len(labels)))
    ax.bar([x - 0.2 for x in xs], reads, 0.4, label="translation reads")
    ax.bar([x + 0.2 for x in xs], writes, 0.4, label="translation writes")
    ax.set_xticks(xs)
    ax.set_xticklabels(labels, fontsize=6)
    ax.set_ylabel("flash page operations")
    ax.set_title(title)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def cache_sweep(
    frame: "pandas.DataFrame", x: Optional[str] = None, metric: str = "nt", title: str = ""
) -> "matplotlib.figure.Figure":
    """A metric against a swept parameter (``x``, a ``sweep.<key>`` column or the key itself;
    default: the only swept key), one line per FTL and workload."""
    plt = _pyplot()
    points = _points(frame)
    if x is None:
        if len(points) != 1:
            raise ValueError(f"cache_sweep: name x, one of {points}")
        x = points[0]
    elif not x.startswith("sweep."):
        x = f"sweep.{x}"
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    numeric = all(isinstance(v, (int, float)) for v in frame[x])
    order = list(dict.fromkeys(frame[x]))
    for (ftl, workload), runs in frame.groupby(["ftl", "workload"], sort=False):
        runs = runs.sort_values(x) if numeric else runs
        xs = runs[x].tolist() if numeric else [order.index(v) for v in runs[x]]
        ax.plot(xs, [_num(v) for v in runs[metric]], marker="o", label=f"{ftl} {workload}")
    if numeric:
        ax.set_xscale("log", base=2)
    else:
        ax.set_xticks(range(len(order)))
        ax.set_xticklabels([str(v) for v in order], fontsize=7)
    ax.set_xlabel(x[len("sweep."):])
    ax.set_ylabel(metric)
    ax.set_title(title or f"{metric} against {x[len('sweep.'):]}")
    _legend(ax)
    fig.tight_layout()
    return fig


#: The response-time percentiles every report carries, as (cumulative fraction, column).
PERCENTILES = [
    (0.5, "report.response.all.p50_us"),
    (0.9, "report.response.all.p90_us"),
    (0.99, "report.response.all.p99_us"),
    (0.999, "report.response.all.p999_us"),
    (1.0, "report.response.all.max_us"),
]


def latency_cdf(
    frame: Optional["pandas.DataFrame"] = None,
    logs: Sequence[Union[str, os.PathLike]] = (),
    title: str = "Response-time distribution",
) -> "matplotlib.figure.Figure":
    """Response-time CDFs: one step line per run of ``frame`` through its percentiles (p50,
    p90, p99, p99.9, max), and one full CDF per latency log (``ftlsim run --latency-log``)."""
    import numpy as np
    import pandas as pd

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    if frame is not None:
        points = _points(frame)
        for _, row in frame.iterrows():
            label = f"{row['ftl']} {_group_label(row, points)}".replace("\n", " ")
            ax.plot([_num(row[c]) for _, c in PERCENTILES], [p for p, _ in PERCENTILES], marker="o", label=label)
    for log in logs:
        response = np.sort(pd.read_csv(log, usecols=["response_ns"])["response_ns"].to_numpy() / 1000.0)
        ax.plot(response, np.arange(1, len(response) + 1) / len(response), label=os.path.basename(os.fspath(log)))
    ax.set_xscale("log")
    ax.set_xlabel("response time (us)")
    ax.set_ylabel("cumulative fraction of requests")
    ax.set_title(title)
    _legend(ax)
    fig.tight_layout()
    return fig


def of_workloads(frame: "pandas.DataFrame", spec: Mapping[str, Any]) -> "pandas.DataFrame":
    """The runs a figure draws: those of the workloads whose names contain its ``workloads``."""
    part = spec.get("workloads")
    return frame if not part else frame[frame["workload"].astype(str).str.contains(part, regex=False)]


def figure(frame: "pandas.DataFrame", spec: Mapping[str, Any]) -> "matplotlib.figure.Figure":
    """The figure one ``[[figure]]`` table of an experiment spec describes."""
    kind = spec["kind"]
    title = spec.get("title") or ""
    metric = spec.get("metric") or DEFAULT_METRIC.get(kind)
    frame = of_workloads(frame, spec)
    # The paper's numbers are drawn beside ours when they are of the drawn metric, per FTL; the
    # others (changes against a reference, another metric, a sweep point) are in the report's
    # table only.
    paper = spec.get("paper") or None
    if spec.get("paper_relative_to") or spec.get("paper_metric") or any(" vs " in k or "@" in k for k in paper or {}):
        paper = None
    if kind == "nt-bars":
        return _grouped_bars(frame, metric, title or "Normalized response time", "normalized response time", paper)
    if kind == "metric-bars":
        return metric_bars(frame, metric, title, paper)
    if kind == "miss-classes":
        return miss_classes(frame, title or "Cache accesses by class")
    if kind == "translation-traffic":
        return translation_traffic(frame, title or "Translation-page traffic")
    if kind == "cache-sweep":
        return cache_sweep(frame, spec.get("x"), metric, title)
    if kind == "latency-cdf":
        return latency_cdf(frame, title=title or "Response-time distribution")
    raise ValueError(f"unknown figure kind {kind!r}")


def figures(frame: "pandas.DataFrame", spec: Mapping[str, Any]) -> List[Tuple[str, "matplotlib.figure.Figure"]]:
    """Every figure the spec names, as (file stem, figure): ``<experiment>-<n>-<kind>``."""
    return [
        (f"{spec['name']}-{n}-{fig_spec['kind']}", figure(frame, fig_spec))
        for n, fig_spec in enumerate(spec.get("figure", []), start=1)
    ]


def save_all(results: Union[str, os.PathLike], out: Union[str, os.PathLike]) -> List[str]:
    """Draws the figures a results directory's spec names into ``out`` as PNG and SVG; returns
    the files written."""
    plt = _pyplot()
    frame, spec = load(results)
    os.makedirs(out, exist_ok=True)
    written = []
    for stem, fig in figures(frame, spec):
        for extension in ("png", "svg"):
            path = os.path.join(out, f"{stem}.{extension}")
            fig.savefig(path, dpi=110)
            written.append(path)
        plt.close(fig)
    return written


def main(argv: Optional[Sequence[str]] = None) -> None:
    """The command line: ``python -m ftlsim.plot RESULTS -o DIR``."""
    parser = argparse.ArgumentParser(prog="python -m ftlsim.plot", description=__doc__.split("\n\n")[0])
    parser.add_argument("results", help="a results directory (ftlsim experiment --out DIR)")
    parser.add_argument("-o", "--out", required=True, help="where the PNG and SVG files go")
    args = parser.parse_args(argv)
    for path in save_all(args.results, args.out):
        print(path)


if __name__ == "__main__":
    main()
