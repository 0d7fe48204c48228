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
