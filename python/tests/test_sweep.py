"""Sweeps and experiments into DataFrames: shapes and columns, typed errors, the results cache
(an interrupted sweep resumes), Ctrl-C, and the Ray backend."""

import _thread
import os
import threading
import time
from pathlib import Path

import pytest

import ftlsim

SMALL = {
    "device": {"overprovisioning": 0.25, "geometry": {"blocks_per_plane": 64, "pages_per_block": 64}},
}
STREAM = "requests=400,read=0.5,addr=uniform,size=8k"
FIXTURES = Path(__file__).parent / "fixtures"


def measured(frame):
    """The columns a run measures (not its wall-clock time, nor whether it came from the cache)."""
    return frame[[c for c in frame.columns if not c.startswith("report.simulation.") and c != "cached"]]


def test_sweep_returns_one_row_per_run_and_a_column_per_parameter_and_metric():
    frame = ftlsim.sweep(
        SMALL,
        ftls=["pftl", "dftl"],
        synthetic=[STREAM],
        grid={"ftl.dftl.cache_bytes": [4096, 8192]},
        seeds=[1, 2],
        jobs=2,
    )
    assert frame.shape[0] == 2 * 2 * 2, "2 FTLs x 2 cache sizes x 2 seeds"
    for column in [
        "experiment", "workload", "source", "sweep.ftl.dftl.cache_bytes", "sweep.seed", "nt", "ftl", "seed",
        "key", "cached", "param.cache_bytes", "report.response.mean_us", "report.write_amplification",
    ]:
        assert column in frame.columns, column
    assert list(frame["ftl"][:2]) == ["pftl", "dftl"]
    assert frame["sweep.ftl.dftl.cache_bytes"].dtype.kind == "i", "swept numbers are numbers"
    assert sorted(set(frame["seed"])) == [1, 2]
    assert (frame.loc[frame["ftl"] == "pftl", "nt"] == 1.0).all()
    dftl = frame[frame["ftl"] == "dftl"]
    assert list(dftl["param.cache_bytes"]) == list(dftl["sweep.ftl.dftl.cache_bytes"])
    assert not frame["cached"].any()


def test_sweep_takes_the_clis_options_by_keyword():
    frame = ftlsim.sweep(
        ftls=["dftl"],
        traces=[FIXTURES / "msr_hm_1.head40.csv.gz"],
        address_policy="fold",
        time_scale=0.5,
        format="msr",
        set={"device.geometry.blocks_per_plane": 64, "device.overprovisioning": 0.25},
        precondition="fill",
    )
    assert frame.shape[0] == 1
    assert frame["workload"].iloc[0] == "msr_hm_1.head40"
    assert frame["source"].iloc[0] == "trace"
    assert frame["report.host.requests"].iloc[0] == 40


def test_experiment_returns_the_specs_runs(tmp_path):
    spec = tmp_path / "e.toml"
    spec.write_text(
        """
name = "e"
preset = "mlc8g"
ftls = ["pftl", "dftl"]
[set]
"device.geometry.blocks_per_plane" = 64
"device.geometry.pages_per_block" = 64
"device.overprovisioning" = 0.25
"host.address_policy" = "fold"
[sweep]
"ftl.*.cache_bytes" = [4096, 8192]
[[workload]]
name = "w"
trace = "missing.csv"
synthetic = "requests=300,read=0.5,addr=uniform,size=8k"
"""
    )
    frame = ftlsim.experiment(spec, jobs=2)
    assert frame.shape[0] == 4
    assert set(frame["source"]) == {"synthetic"}
    assert list(frame["sweep.ftl.*.cache_bytes"]) == [4096, 4096, 8192, 8192]
    short = ftlsim.experiment(spec, requests=100, traces={"w": FIXTURES / "msr_hm_1.head40.csv.gz"})
    assert set(short["source"]) == {"trace"} and set(short["report.host.requests"]) == {40}
    with pytest.raises(ftlsim.ConfigError) as unknown:
        ftlsim.experiment(spec, traces={"nope": FIXTURES / "msr_hm_1.head40.csv.gz"})
    assert "its workloads: w" in str(unknown.value)


def test_errors_of_a_sweep_are_typed(tmp_path):
    with pytest.raises(ftlsim.ConfigError) as bad_config:
        ftlsim.sweep({"device": {"overprovisioning": 2.0}}, ftls=["pftl"], synthetic=[STREAM])
    assert bad_config.value.field == "device.overprovisioning"
    with pytest.raises(ftlsim.ConfigError) as bad_grid:
        ftlsim.sweep(SMALL, ftls=["dftl"], synthetic=[STREAM], grid={"ftl.dftl.cache_bytes": [4096, -1]})
    assert bad_grid.value.field == "ftl.dftl.cache_bytes"
    bad = tmp_path / "bad.csv"
    bad.write_text("128166625932151588,hm,1,Write,0,4096,3126\n128166625932153194,hm,1,Write,-5,16384,1520\n")
    with pytest.raises(ftlsim.TraceError) as bad_trace:
        ftlsim.sweep(SMALL, ftls=["pftl"], traces=[bad], format="msr", address_policy="fold")
    error = bad_trace.value
    assert (error.file, error.line, error.field) == (str(bad), 2, "offset")
    assert isinstance(error, ftlsim.FtlsimError)
    with pytest.raises(ftlsim.ConfigError) as backend:
        ftlsim.sweep(SMALL, ftls=["pftl"], synthetic=[STREAM], backend="spark")
    assert backend.value.field == "backend"


def test_an_interrupted_sweep_resumes_and_runs_only_the_rest(tmp_path):
    good = FIXTURES / "msr_hm_1.head40.csv.gz"
    bad = tmp_path / "later.csv"
    bad.write_text("128166625932151588,hm,1,Write,0,4096,3126\n128166625932153194,hm,1,Write,-5,16384,1520\n")
    args = dict(ftls=["pftl", "dftl"], traces=[good, bad], format="msr", address_policy="fold", cache=tmp_path / "cache")
    # The runs on the second trace fail at its bad line: the sweep stops after the first trace's.
    with pytest.raises(ftlsim.TraceError):
        ftlsim.sweep(SMALL, jobs=1, **args)
    assert len(list((tmp_path / "cache").glob("*.json"))) == 2
    bad.write_text("128166625932151588,hm,1,Write,0,4096,3126\n128166625932153194,hm,1,Read,0,4096,1520\n")
    resumed = ftlsim.sweep(SMALL, jobs=2, **args)
    assert list(resumed["cached"]) == [True, True, False, False], "only the runs never finished run again"
    again = ftlsim.sweep(SMALL, jobs=2, **args)
    assert again["cached"].all()
    assert measured(again).equals(measured(resumed))
    fresh = ftlsim.sweep(SMALL, jobs=1, **{**args, "cache": None})
    pd = pytest.importorskip("pandas")
    pd.testing.assert_frame_equal(measured(fresh), measured(resumed), check_exact=True)


def test_ctrl_c_stops_a_run_within_a_second():
    timer = threading.Timer(0.5, _thread.interrupt_main)
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            # Far longer than the test: only the interrupt ends it.
            ftlsim.run(SMALL, synthetic="requests=100000000,read=0.5,addr=uniform,size=8k")
    finally:
        timer.cancel()
    assert time.monotonic() - started < 1.5


def test_ctrl_c_stops_a_sweep_within_a_second():
    timer = threading.Timer(0.5, _thread.interrupt_main)
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            ftlsim.sweep(SMALL, ftls=["pftl", "dftl"], synthetic=["requests=100000000,read=0.5,addr=uniform,size=8k"], jobs=2)
    finally:
        timer.cancel()
    assert time.monotonic() - started < 1.5


def test_run_result_converts_to_a_dict_and_a_frame():
    result = ftlsim.run(SMALL, requests=300, seed=7, address_policy="fold")
    assert isinstance(result, ftlsim.RunResult) and isinstance(result, dict)
    assert result["config"]["seed"] == 7 and result["config"]["host"]["address_policy"] == "fold"
    assert type(result.to_dict()) is dict and result.to_dict() == result
    frame = result.to_frame()
    assert frame.shape[0] == 1 and frame["report.host.requests"].iloc[0] == 300


def test_the_ray_backend_gives_the_local_backends_frame(tmp_path):
    if os.environ.get("FTLSIM_REQUIRE_RAY") == "1":
        import ray
    else:
        ray = pytest.importorskip("ray", reason="the Ray extra is not installed (pip install '.[ray]')")
    args = dict(
        ftls=["pftl", "dftl"], synthetic=[STREAM], grid={"ftl.dftl.cache_bytes": [4096, 8192]}, seeds=[3]
    )
    local = ftlsim.sweep(SMALL, jobs=2, **args)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        remote = ftlsim.sweep(SMALL, backend="ray", **args)
        cached = ftlsim.sweep(SMALL, backend="ray", cache=tmp_path / "cache", **args)
        resumed = ftlsim.sweep(SMALL, backend="ray", cache=tmp_path / "cache", **args)
    finally:
        ray.shutdown()
    pd = pytest.importorskip("pandas")
    pd.testing.assert_frame_equal(measured(remote), measured(local), check_exact=True)
    pd.testing.assert_frame_equal(measured(cached), measured(local), check_exact=True)
    # (PFTL runs once per cache size with one configuration: a key both of its runs share.)
    assert resumed["cached"].all() and not cached.loc[cached["ftl"] == "dftl", "cached"].any()


def test_sweep_reads_generic_csv_traces_with_columns(tmp_path):
    from test_run import generic_copy_of_the_msr_fixture

    path, mapping = generic_copy_of_the_msr_fixture(tmp_path)
    fold = {"host.address_policy": "fold"}
    frame = ftlsim.sweep(ftls=["pftl", "dftl"], traces=[path], columns=mapping, set=fold, jobs=1)
    assert list(frame["ftl"]) == ["pftl", "dftl"] and set(frame["source"]) == {"trace"}
    msr = ftlsim.run({"host": {"address_policy": "fold"}}, trace=FIXTURES / "msr_hm_1.head40.csv.gz", ftl="dftl")
    assert frame.loc[1, "report.response.mean_us"] == msr["report"]["response"]["mean_us"]
    with pytest.raises(ftlsim.ConfigError) as bad:
        ftlsim.sweep(ftls=["pftl"], traces=[path], columns="op=2,offset=x,size=1", set=fold)
    assert "columns" in bad.value.field
    with pytest.raises(ftlsim.TraceError) as misread:
        ftlsim.sweep(ftls=["pftl"], traces=[path], columns=mapping.replace("write=Write", "write=W"), set=fold)
    assert (misread.value.line, misread.value.field) == (2, "op")
