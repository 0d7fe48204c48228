"""Figures and the HTML report: every shipped experiment's figures are drawn, `ftlsim experiment
--plot` writes PNG and SVG, `ftlsim report` writes a self-contained page that headless Chromium
renders with every figure visible."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ftlsim
import ftlsim.plot
import ftlsim.report

ROOT = Path(__file__).resolve().parents[2]
SPEC = """
name = "small"
description = "two FTLs, two cache sizes"
preset = "mlc8g"
ftls = ["pftl", "dftl"]
[set]
"device.geometry.blocks_per_plane" = 64
"device.geometry.pages_per_block" = 64
"device.overprovisioning" = 0.25
[sweep]
"ftl.*.cache_bytes" = [4096, 8192]
[[workload]]
name = "uniform"
synthetic = "requests=400,read=0.5,addr=uniform,size=8k"
[[workload]]
name = "skewed"
synthetic = "requests=400,read=0.3,addr=hotcold:0.8:0.2,size=8k"

[[figure]]
kind = "nt-bars"
title = "NT"
paper = { dftl = 1.5 }
paper_source = "a made-up figure"
[[figure]]
kind = "cache-sweep"
metric = "report.cache.hit_ratio"
[[figure]]
kind = "miss-classes"
[[figure]]
kind = "translation-traffic"
[[figure]]
kind = "latency-cdf"
"""


def ftlsim_bin():
    path = os.environ.get("FTLSIM_BIN")
    if path is None:
        path = ROOT / "target" / "debug" / "ftlsim"
        if not path.exists():
            pytest.skip("no ftlsim binary: build it (cargo build) or set FTLSIM_BIN")
    return str(path)


def cli(*args):
    env = dict(os.environ, FTLSIM_PYTHON=sys.executable)
    out = subprocess.run([ftlsim_bin(), *map(str, args)], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout


def drawn(fig):
    """Whether a figure shows data: bars, lines or collections on some axes."""
    return any(ax.patches or ax.lines or ax.collections for ax in fig.axes)


@pytest.mark.parametrize("spec", sorted((ROOT / "experiments").glob("*.toml")), ids=lambda p: p.stem)
def test_every_shipped_experiment_produces_its_figures(spec):
    spec_json, base = ftlsim._ftlsim.load_spec(str(spec), requests=300)
    plan = json.loads(spec_json)
    assert plan.get("figure"), f"{spec.name} names no figure"
    # For time: the first workload, two values of each swept key, an empty device to start
    # from. Every figure still gets every FTL and more than one point.
    # (and the first of those a figure restricts itself to).
    names = [w["name"] for w in plan["workload"]]
    keep = {0} | {next(i for i, n in enumerate(names) if f["workloads"] in n) for f in plan["figure"] if f.get("workloads")}
    plan["workload"] = [w for i, w in enumerate(plan["workload"]) if i in keep]
    plan["sweep"] = {key: values[:2] for key, values in plan.get("sweep", {}).items()}
    # (The spec's other starting-state settings go: they do not apply to an empty device.)
    plan["set"] = {key: value for key, value in plan["set"].items() if not key.startswith("precondition.")}
    plan["set"].update({"precondition.mode": "none", "precondition.fill_fraction": 1.0})
    frame = ftlsim._execute(json.dumps(plan), base, jobs=None, cache=None, backend="local")
    figures = ftlsim.plot.figures(frame, plan)
    assert len(figures) == len(plan["figure"])
    for stem, fig in figures:
        assert stem.startswith(plan["name"]) and drawn(fig), stem
        ftlsim.plot._pyplot().close(fig)


def test_experiment_plot_writes_png_and_svg(tmp_path):
    spec = tmp_path / "small.toml"
    spec.write_text(SPEC)
    cli("experiment", spec, "--plot", tmp_path / "figures", "--quiet")
    files = sorted(p.name for p in (tmp_path / "figures").iterdir() if p.suffix in (".png", ".svg"))
    kinds = ["nt-bars", "cache-sweep", "miss-classes", "translation-traffic", "latency-cdf"]
    assert files == sorted(f"small-{n}-{k}.{e}" for n, k in enumerate(kinds, 1) for e in ("png", "svg"))
    assert (tmp_path / "figures" / "runs.jsonl").exists(), "the results go beside the figures without --out"


def test_the_report_is_one_self_contained_page_with_every_figure(tmp_path):
    spec = tmp_path / "small.toml"
    spec.write_text(SPEC)
    cli("experiment", spec, "--out", tmp_path / "results", "--quiet")
    cli("report", tmp_path / "results", "-o", tmp_path / "report.html")
    page = (tmp_path / "report.html").read_text()
    assert page.count("<figure class='ftlsim-figure'") == 5
    assert page.count("<svg") >= 5
    for external in ('src="http', "src='http", 'href="http', "href='http", "url(http", "@import", "<link"):
        assert external not in page, external
    assert "<metadata>" not in page
    assert "a made-up figure" in page and "paper nt" in page, "the paper's numbers beside ours"
    assert "uniform" in page and "skewed" in page


def test_the_papers_numbers_by_sweep_point_as_changes_and_as_ratios_of_columns():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(
        {
            "workload": ["a-SLC", "a-SLC", "b-SLC", "b-SLC", "c-MLC", "c-MLC"],
            "ftl": ["pftl"] * 6,
            "sweep.config": ["FIFO", "RPS"] * 3,
            "report.read_us": [100.0, 50.0, 200.0, 150.0, 10.0, 10.0],
            "report.hits": [1, 3, 2, 2, 0, 0],
            "report.accesses": [4, 4, 4, 4, 0, 0],
        }
    )
    # RPS against FIFO on each SLC workload: -50% and -25%, so -37.5% on average.
    slc = frame[frame["workload"].str.contains("SLC")]
    assert ftlsim.report._ours(slc, "report.read_us", "RPS", relative_to="FIFO") == pytest.approx(-37.5)
    assert ftlsim.report._ours(frame, "report.read_us", "pftl@RPS") == pytest.approx(70.0)
    # A ratio of two columns (0/0 on the MLC workload is undefined and left out).
    assert ftlsim.report._ours(frame, "report.hits / report.accesses", "RPS") == pytest.approx(0.625)
    spec = {
        "kind": "metric-bars", "metric": "report.read_us", "workloads": "SLC",
        "paper": {"RPS": -38.8}, "paper_relative_to": "FIFO", "paper_source": "Fig. 3.2",
    }
    table = ftlsim.report._paper_table(frame, spec)
    assert "Fig. 3.2" in table and "-38.8" in table and "-37.5" in table and "against FIFO" in table
    assert drawn(ftlsim.plot.figure(frame, spec))
    # A base per key; a part may name the start of workload names.
    spec = {"kind": "metric-bars", "metric": "report.read_us", "paper": {"RPS@a vs FIFO": -50.0, "RPS@b vs FIFO": -25.0}}
    table = ftlsim.report._paper_table(frame, spec)
    assert "-50" in table and "-25" in table and "% change" in table


def test_a_missing_results_directory_is_an_error(tmp_path):
    env = dict(os.environ, FTLSIM_PYTHON=sys.executable)
    out = subprocess.run(
        [ftlsim_bin(), "report", str(tmp_path / "nowhere"), "-o", str(tmp_path / "r.html")],
        capture_output=True, text=True, env=env,
    )
    assert out.returncode == 2 and "report failed" in out.stderr, out.stderr


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    pytest.skip("headless Chromium is not installed (scripts/test.sh installs Debian's chromium when it can)")


def test_the_report_renders_in_headless_chromium_with_every_figure_visible(tmp_path):
    browser = chromium()
    spec = tmp_path / "small.toml"
    spec.write_text(SPEC)
    cli("experiment", spec, "--out", tmp_path / "results", "--quiet")
    cli("report", tmp_path / "results", "-o", tmp_path / "report.html")
    # Each figure's rendered box, measured by the browser after layout.
    probe = tmp_path / "probe.html"
    page = (tmp_path / "report.html").read_text()
    script = (
        "<script>window.onload=function(){var r=[];document.querySelectorAll('figure svg').forEach(function(s)"
        "{var b=s.getBoundingClientRect();r.push(Math.round(b.width)+'x'+Math.round(b.height));});"
        "document.body.setAttribute('data-boxes',r.join(' '));};</script>"
    )
    probe.write_text(page.replace("</body>", script + "</body>"))
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--window-size=1280,4000"]
    dom = subprocess.run(
        [browser, *flags, "--virtual-time-budget=5000", "--dump-dom", probe.as_uri()],
        capture_output=True, text=True, timeout=120,
    ).stdout
    boxes = dom.split("data-boxes=\"", 1)[1].split("\"", 1)[0].split()
    assert len(boxes) == 5, dom[:500]
    for box in boxes:
        width, height = map(int, box.split("x"))
        assert width > 200 and height > 150, boxes
    shot = tmp_path / "report.png"
    subprocess.run([browser, *flags, f"--screenshot={shot}", (tmp_path / "report.html").as_uri()],
                   capture_output=True, timeout=120)
    image = pytest.importorskip("matplotlib.image").imread(shot)
    assert image.shape[0] > 1000 and (image[..., :3] < 0.5).mean() > 0.01, "the page shows drawn content"
