"""One self-contained HTML page (no network: styles inline, figures as inline SVG) for one or
more results directories (``ftlsim experiment --out DIR``, ``ftlsim sweep --out DIR``): per
experiment its configuration, a table of its runs, the figures its spec names, the paper's
numbers beside ours where the spec carries them, and the response-time distribution.
``python -m ftlsim.report RESULTS... -o report.html`` is what ``ftlsim report`` runs.
"""

from __future__ import annotations

import argparse
import html
import io
import json
import math
import os
import re
from typing import TYPE_CHECKING, Any, List, Mapping, Optional, Sequence, Union

from . import plot

if TYPE_CHECKING:
    import pandas

#: The columns of the runs table, when present.
TABLE_COLUMNS = [
    ("workload", "workload"),
    ("source", "source"),
    ("ftl", "FTL"),
    ("nt", "NT"),
    ("report.response.mean_us", "mean RT (us)"),
    ("report.response.all.p99_us", "p99 (us)"),
    ("report.write_amplification", "WA"),
    ("report.cache.hit_ratio", "hit ratio"),
    ("report.programs.translation", "trans. writes"),
    ("report.erases.total", "erases"),
]

STYLE = """
body { font-family: sans-serif; margin: 2em auto; max-width: 78em; color: #222; }
h1 { border-bottom: 2px solid #444; } h2 { margin-top: 2em; border-bottom: 1px solid #aaa; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1em; }
td, th { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: right; }
th { background: #eee; } td:first-child, th:first-child { text-align: left; }
figure { margin: 1em 0; } figure svg { max-width: 100%; height: auto; }
figcaption { font-size: 0.85em; color: #555; }
details pre { font-size: 0.8em; background: #f6f6f6; padding: 0.5em; overflow-x: auto; }
"""


def _svg(fig: Any) -> str:
    """A figure as inline SVG markup (its XML prologue dropped)."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg")
    plot._pyplot().close(fig)
    text = buffer.getvalue()
    # The metadata block (creator, date) changes with every drawing and shows nothing.
    return re.sub(r"<metadata>.*?</metadata>", "", text[text.index("<svg") :], flags=re.DOTALL)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.4g}"
    return html.escape(str(value))


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_cell(v)}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _runs_table(frame: "pandas.DataFrame") -> str:
    columns = [(c, label) for c, label in TABLE_COLUMNS if c in frame.columns]
    points = [c for c in frame.columns if c.startswith("sweep.")]
    columns[1:1] = [(p, p[len("sweep.") :]) for p in points]
    rows = [[row[c] for c, _ in columns] for _, row in frame.iterrows()]
    return _table([label for _, label in columns], rows)


def _selected(frame: "pandas.DataFrame", selector: str) -> "pandas.DataFrame":
    """The runs a paper key names: ``PART@PART...``, each part an FTL, the value of a swept key
    (a sweep point's label or number) or the start of workload names (``Financial``)."""
    points = [c for c in frame.columns if c.startswith("sweep.")]
    mask = frame["ftl"] == frame["ftl"]
    for part in selector.split("@"):
        match = (frame["ftl"] == part) | frame["workload"].astype(str).str.startswith(part)
        for column in points:
            match |= frame[column].astype(str) == part
        mask &= match
    return frame[mask]


def _values(runs: "pandas.DataFrame", metric: str) -> "pandas.Series":
    """A metric column, or the ratio of two (``A / B``); undefined values dropped."""
    import pandas as pd

    if "/" in metric:
        top, bottom = (_values(runs, m.strip()) for m in metric.split("/"))
        values = top / bottom
    else:
        values = pd.to_numeric(runs[metric], errors="coerce") if metric in runs.columns else pd.Series(dtype=float)
    return values.replace([math.inf, -math.inf], math.nan).dropna()


def _mean(values: Sequence[float], geometric: bool) -> float:
    if not values:
        return float("nan")
    if geometric and all(v > 0 for v in values):
        return math.exp(sum(math.log(v) for v in values) / len(values))
    return sum(values) / len(values)


def _ours(frame: "pandas.DataFrame", metric: str, key: str, relative_to: Optional[str] = None) -> float:
    """Our number for a paper key: the geometric mean of NT across workloads, else the mean;
    with ``relative_to``, the mean across workloads of the per-workload ratio to those runs, as a
    percent change."""
    runs = _selected(frame, key)
    if relative_to is None:
        return _mean(_values(runs, metric).tolist(), metric == "nt")
    base = _selected(frame, relative_to)
    ratios = []
    for workload in dict.fromkeys(runs["workload"]):
        ours = _values(runs[runs["workload"] == workload], metric).tolist()
        theirs = _values(base[base["workload"] == workload], metric).tolist()
        if ours and theirs and _mean(theirs, False) != 0:
            ratios.append(_mean(ours, False) / _mean(theirs, False))
    return (_mean(ratios, metric == "nt") - 1) * 100


def _paper_table(frame: "pandas.DataFrame", fig_spec: Mapping[str, Any]) -> str:
    paper = fig_spec.get("paper") or {}
    if not paper:
        return ""
    frame = plot.of_workloads(frame, fig_spec)
    metric = (
        fig_spec.get("paper_metric") or fig_spec.get("metric") or plot.DEFAULT_METRIC.get(fig_spec["kind"], "nt")
    )
    default_base = fig_spec.get("paper_relative_to")
    rows = []
    for key, theirs in paper.items():
        # "KEY vs BASE": a percent change against BASE (default: paper_relative_to).
        selector, _, base = key.partition(" vs ")
        rows.append([key, theirs, _ours(frame, metric, selector, base or default_base)])
    source = html.escape(fig_spec.get("paper_source") or "the paper")
    relative = default_base or any(" vs " in key for key in paper)
    if relative:
        against = f" {default_base}" if default_base else " the key's base"
        how = f"% change against{against}, mean across workloads of the per-workload ratio"
        heading = f"% change of {metric}"
    else:
        how = "geometric mean across workloads" if metric == "nt" else "mean across runs"
        heading = metric
    if fig_spec.get("workloads"):
        how += f", workloads {fig_spec['workloads']}"
    return f"<p>The paper's numbers ({source}) beside ours ({html.escape(how)}):</p>" + _table(
        ["key", f"paper {heading}", f"ftlsim {heading}"], rows
    )


def section(results: Union[str, os.PathLike]) -> str:
    """The HTML of one results directory."""
    frame, spec = plot.load(results)
    name = html.escape(spec.get("name", os.path.basename(os.fspath(results))))
    parts = [f"<h2 id='{name}'>{name}</h2>", f"<p>{html.escape(spec.get('description', ''))}</p>"]
    sources = sorted(set(frame["source"])) if "source" in frame.columns else []
    parts.append(
        f"<p>{len(frame)} runs; workloads from {html.escape(', '.join(sources))}; "
        f"ftlsim {html.escape(str(frame['version'].iloc[0]) if 'version' in frame.columns else '?')}.</p>"
    )
    parts.append(
        "<details><summary>Configuration (the experiment spec)</summary><pre>"
        + html.escape(json.dumps(spec, indent=2))
        + "</pre></details>"
    )
    parts.append(_runs_table(frame))
    figure_specs = list(spec.get("figure", [])) or [{"kind": "nt-bars", "title": "Normalized response time"}]
    if not any(f["kind"] == "latency-cdf" for f in figure_specs):
        figure_specs.append({"kind": "latency-cdf", "title": "Response-time distribution (percentiles)"})
    for n, fig_spec in enumerate(figure_specs, start=1):
        title = html.escape(fig_spec.get("title") or fig_spec["kind"])
        parts.append(
            f"<figure class='ftlsim-figure' data-kind='{fig_spec['kind']}'>{_svg(plot.figure(frame, fig_spec))}"
            f"<figcaption>Figure {n}: {title}</figcaption></figure>"
        )
        parts.append(_paper_table(frame, fig_spec))
    return "\n".join(parts)


def render(results: Sequence[Union[str, os.PathLike]], title: str = "ftlsim report") -> str:
    """The whole page."""
    sections = [section(r) for r in results]
    names = [html.escape(plot.load(r)[1].get("name", "")) for r in results]
    toc = "<ul>" + "".join(f"<li><a href='#{n}'>{n}</a></li>" for n in names) + "</ul>"
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>"
        f"<h1>{html.escape(title)}</h1>{toc}" + "\n".join(sections) + "</body></html>\n"
    )


def write(results: Sequence[Union[str, os.PathLike]], out: Union[str, os.PathLike]) -> None:
    """Writes the page for ``results`` to ``out``."""
    page = render(results)
    with open(out, "w", encoding="utf-8") as f:
        f.write(page)


def main(argv: Optional[List[str]] = None) -> None:
    """The command line: ``python -m ftlsim.report RESULTS... -o FILE``."""
    parser = argparse.ArgumentParser(prog="python -m ftlsim.report", description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", help="results directories (ftlsim experiment --out DIR)")
    parser.add_argument("-o", "--out", default="report.html", help="the HTML file to write")
    args = parser.parse_args(argv)
    write(args.results, args.out)
    print(args.out)


if __name__ == "__main__":
    main()
