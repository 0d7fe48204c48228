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


def _ours(frame: "pandas.DataFrame", metric: str, ftl: str) -> float:
    """Our number for an FTL: the geometric mean of NT across workloads, else the mean."""
    values = [v for v in frame.loc[frame["ftl"] == ftl, metric].tolist() if isinstance(v, (int, float))]
    values = [v for v in values if not math.isnan(v)]
    if not values:
        return float("nan")
    if metric == "nt" and all(v > 0 for v in values):
        return math.exp(sum(math.log(v) for v in values) / len(values))
    return sum(values) / len(values)


def _paper_table(frame: "pandas.DataFrame", fig_spec: Mapping[str, Any]) -> str:
    paper = fig_spec.get("paper") or {}
    if not paper:
        return ""
    metric = fig_spec.get("metric") or plot.DEFAULT_METRIC.get(fig_spec["kind"], "nt")
    rows = [[ftl, theirs, _ours(frame, metric, ftl)] for ftl, theirs in paper.items()]
    source = html.escape(fig_spec.get("paper_source") or "the paper")
    how = "geometric mean across workloads" if metric == "nt" else "mean across runs"
    return f"<p>The paper's numbers ({source}) beside ours ({how}):</p>" + _table(
        ["FTL", f"paper {metric}", f"ftlsim {metric}"], rows
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
