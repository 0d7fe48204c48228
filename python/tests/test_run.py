import json
import subprocess

import pytest

import ftlsim


SMALL = {
    "device": {"overprovisioning": 0.25, "geometry": {"blocks_per_plane": 64, "pages_per_block": 64}},
}


def test_run_returns_the_cli_json_shape():
    result = ftlsim.run(SMALL, ftl="pftl", requests=2000)
    assert result["tool"] == "ftlsim"
    assert result["ftl"] == "pftl"
    assert result["version"] == ftlsim.__version__
    report = result["report"]
    assert report["host"]["requests"] == 2000
    assert report["programs"]["host"] == report["host"]["pages_written"]
    assert result["config"]["device"]["geometry"]["blocks_per_plane"] == 64


def test_run_is_deterministic():
    a = ftlsim.run(SMALL, requests=500)
    b = ftlsim.run(SMALL, requests=500)
    a["report"].pop("simulation")
    b["report"].pop("simulation")
    assert a["report"] == b["report"]


def test_toml_path_and_overrides(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text("[device]\noverprovisioning = 0.25\n[device.geometry]\nblocks_per_plane = 64\npages_per_block = 64\n")
    result = ftlsim.run(path, set=["gc.policy=cost-benefit"], requests=300)
    assert result["config"]["gc"]["policy"] == "cost-benefit"


def test_bad_config_names_the_field():
    with pytest.raises(ValueError, match="device.overprovisioning"):
        ftlsim.run({"device": {"overprovisioning": 2.0}}, requests=10)


def test_unknown_ftl_is_rejected():
    with pytest.raises(ValueError, match="unknown FTL"):
        ftlsim.run(SMALL, ftl="nope", requests=10)


def test_lists():
    assert "pftl" in ftlsim.ftls()
    assert "mlc8g" in ftlsim.presets()


FIXTURES = __import__("pathlib").Path(__file__).parent / "fixtures"


def test_read_trace_yields_numpy_chunks():
    np = pytest.importorskip("numpy")
    chunks = list(ftlsim.read_trace(FIXTURES / "msr_hm_1.head40.csv.gz", chunk=16))
    assert [len(c["line"]) for c in chunks] == [16, 16, 8]
    first = chunks[0]
    assert first["arrival_ns"].dtype == np.uint64 and first["kind"].dtype == np.uint8
    # First line: 128166625932151588,hm,1,Write,371077120,49152,3126 (times rebased to 0).
    assert first["arrival_ns"][0] == 0
    assert first["kind"][0] == 1
    assert first["offset_bytes"][0] == 371077120
    assert first["len_bytes"][0] == 49152
    assert list(first["line"][:3]) == [1, 2, 3]


def test_read_trace_errors_name_the_file_and_line(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("128166625932151588,hm,1,Write,371077120,49152,3126\n128166625932153194,hm,1,Write,-5,16384,1520\n")
    with pytest.raises(ValueError, match=r"bad.csv:2: field"):
        list(ftlsim.read_trace(bad, format="msr"))


def test_run_on_a_trace_and_on_a_stand_in():
    result = ftlsim.run(
        {"host": {"address_policy": "fold"}}, trace=FIXTURES / "msr_hm_1.head40.csv.gz", ftl="dftl"
    )
    assert result["report"]["host"]["requests"] == 40
    assert result["workload"].endswith("msr_hm_1.head40.csv.gz")
    stand_in = ftlsim.run(SMALL, synthetic="p000-hm0", requests=300)
    assert stand_in["report"]["host"]["requests"] == 300


def test_errors_are_typed_and_name_what_is_wrong(tmp_path):
    with pytest.raises(ftlsim.ConfigError) as bad_config:
        ftlsim.run({"device": {"overprovisioning": 2.0}}, requests=10)
    assert bad_config.value.field == "device.overprovisioning"
    assert isinstance(bad_config.value, ftlsim.FtlsimError) and isinstance(bad_config.value, ValueError)
    with pytest.raises(ftlsim.ConfigError) as bad_format:
        ftlsim.run(SMALL, trace=FIXTURES / "msr_hm_1.head40.csv.gz", format="nope")
    assert bad_format.value.field == "format"

    bad = tmp_path / "bad.csv"
    bad.write_text("128166625932151588,hm,1,Write,0,4096,3126\n128166625932153194,hm,1,Write,-5,16384,1520\n")
    for call in (lambda: list(ftlsim.read_trace(bad, format="msr")), lambda: ftlsim.run(SMALL, trace=bad, format="msr")):
        with pytest.raises(ftlsim.TraceError) as bad_trace:
            call()
        error = bad_trace.value
        assert (error.file, error.line, error.field) == (str(bad), 2, "offset"), (error, error.file, error.line, error.field)

    with pytest.raises(ftlsim.ConfigError) as unknown:
        ftlsim.run(SMALL, ftl="nope", requests=10)
    assert unknown.value.field == "ftl"
    # A failed run (the device full, an FTL bug caught by a check) is neither of the above.
    failed = ftlsim._typed(ftlsim._ftlsim.NativeError("simulation", "device full", None, None))
    assert isinstance(failed, ftlsim.SimulationError) and isinstance(failed, ftlsim.FtlsimError)


def test_latency_log_has_a_row_per_request(tmp_path):
    import csv

    path = tmp_path / "latencies.csv"
    result = ftlsim.run(SMALL, requests=1500, latency_log=path)
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == result["report"]["host"]["requests"] == 1500
    mean_us = sum(int(r["response_ns"]) for r in rows) / len(rows) / 1000
    assert mean_us == pytest.approx(result["report"]["response"]["mean_us"], rel=1e-12)
    assert {r["op"] for r in rows} <= {"read", "write", "trim"}


def test_compare_returns_a_frame_with_one_row_per_ftl_and_nt():
    frame = ftlsim.compare(SMALL, ftls=["pftl", "dftl", "tpftl"], requests=800, jobs=2)
    assert list(frame["ftl"]) == ["pftl", "dftl", "tpftl"]
    for column in ["workload", "report.write_amplification", "report.response.mean_us", "param.cache_bytes", "nt"]:
        assert column in frame.columns, column
    assert frame.loc[frame["ftl"] == "pftl", "nt"].iloc[0] == 1.0
    one_at_a_time = ftlsim.compare(SMALL, ftls=["pftl", "dftl", "tpftl"], requests=800, jobs=1)
    measured = [c for c in frame.columns if not c.startswith("report.simulation.")]
    assert frame[measured].equals(one_at_a_time[measured]), "same rows whatever the parallelism"
    with pytest.raises(ftlsim.ConfigError):
        ftlsim.compare(SMALL, ftl="pftl")


def test_to_frame_of_one_run():
    frame = ftlsim.to_frame(ftlsim.run(SMALL, requests=300))
    assert frame.shape[0] == 1 and frame["report.host.requests"].iloc[0] == 300


def generic_copy_of_the_msr_fixture(tmp_path):
    """The MSR fixture rewritten as a generic CSV with a header and its columns reordered
    (size, op, offset, time), and the mapping that reads it."""
    import gzip

    path = tmp_path / "generic.csv"
    with gzip.open(FIXTURES / "msr_hm_1.head40.csv.gz", "rt") as f:
        rows = [line.strip().split(",") for line in f if line.strip()]
    # Times from the first request's (as the MSR reader rebases them), small enough to be exact.
    first = int(rows[0][0])
    path.write_text("size,op,offset,ticks\n" + "".join(f"{r[5]},{r[3]},{r[4]},{int(r[0]) - first}\n" for r in rows))
    return path, "delim=comma,skip=1,time=4:ticks,op=2,offset=3:B,size=1:B,read=Read,write=Write"


def measured_report(result):
    report = dict(result["report"])
    report.pop("simulation")
    return report


def test_columns_reads_a_generic_csv_as_the_cli_does(tmp_path):
    path, mapping = generic_copy_of_the_msr_fixture(tmp_path)
    fold = {"host": {"address_policy": "fold"}}
    msr = ftlsim.run(fold, trace=FIXTURES / "msr_hm_1.head40.csv.gz", ftl="dftl")
    generic = ftlsim.run(fold, trace=path, columns=mapping, ftl="dftl")
    assert generic["report"]["host"]["requests"] == 40
    assert measured_report(generic) == measured_report(msr), "the same requests, whatever the layout"
    frame = ftlsim.compare(fold, trace=path, columns=mapping, ftls=["pftl", "dftl"], jobs=1)
    assert list(frame["ftl"]) == ["pftl", "dftl"]
    assert frame.loc[1, "report.response.mean_us"] == msr["report"]["response"]["mean_us"]
    chunks = list(ftlsim.read_trace(path, columns=mapping))
    assert list(chunks[0]["len_bytes"][:1]) == [49152]


def test_a_bad_column_mapping_is_a_config_error_and_a_mapping_that_misreads_a_trace_error(tmp_path):
    path, mapping = generic_copy_of_the_msr_fixture(tmp_path)
    with pytest.raises(ftlsim.ConfigError, match="offset") as unreadable:
        ftlsim.run(SMALL, trace=path, columns="op=2,offset=x,size=1")
    assert unreadable.value.field == "columns"
    # Opcodes the mapping does not know: the first data line (after the header) is refused.
    with pytest.raises(ftlsim.TraceError) as misread:
        ftlsim.run(SMALL, trace=path, columns=mapping.replace("read=Read,write=Write", "read=R,write=W"))
    error = misread.value
    assert (error.file, error.line, error.field) == (str(path), 2, "op"), (error, error.file, error.line, error.field)
    with pytest.raises(ftlsim.ConfigError) as no_mapping:
        ftlsim.run(SMALL, trace=path, format="generic")
    assert no_mapping.value.field == "trace.columns"


def test_every_run_option_of_the_cli_is_a_keyword():
    result = ftlsim.run(
        SMALL, preset="mlc8g", requests=600, seed=3, check=200, power_loss_at="300", max_memory=1 << 30,
        out_of_order="keep", asu="concat", events="D",
    )
    check = result["config"]["check"]
    assert (check["invariants_every"], check["oracle"], check["power_loss_at"], check["max_memory"]) == (
        200, True, "300", 1 << 30,
    )
    assert result["config"]["seed"] == 3
    assert result["report"]["recovery"]["events"] == 1
    with pytest.raises(ftlsim.ConfigError) as bad:
        ftlsim.run(SMALL, requests=10, out_of_order="sometimes")
    assert bad.value.field == "out_of_order"
    with pytest.raises(ftlsim.ConfigError) as bad:
        ftlsim.run(SMALL, trace=FIXTURES / "msr_hm_1.head40.csv.gz", events="d")
    assert bad.value.field == "trace.events"
