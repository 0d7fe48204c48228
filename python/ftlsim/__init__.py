"""ftlsim: fast, faithful trace-driven simulation of NAND-flash SSDs and their FTLs.

    >>> import ftlsim
    >>> result = ftlsim.run({"device": {"overprovisioning": 0.07}}, ftl="pftl", requests=1000)
    >>> result["report"]["write_amplification"]

`run` returns the same object the CLI prints with ``--json``.
"""

from __future__ import annotations

import json
import os
from typing import Any, Iterable, Mapping, Optional, Union

from . import _ftlsim

__version__ = _ftlsim.__version__

__all__ = ["run", "ftls", "presets", "__version__"]


def run(
    config: Union[Mapping[str, Any], str, os.PathLike, None] = None,
    *,
    trace: Optional[Union[str, os.PathLike]] = None,
    ftl: str = "pftl",
    set: Iterable[str] = (),
    requests: Optional[int] = None,
) -> dict:
    """Runs one FTL and returns the result as a dict (the CLI's JSON).

    config: a dict laid out like the TOML configuration (e.g. ``{"preset": "ssd16"}``), or the
        path of a TOML file, or None for the default preset (mlc8g).
    trace: a trace file; without it, the embedded synthetic OLTP-like stream runs.
    set: ``key=value`` overrides, applied last.
    requests: requests of the embedded synthetic stream.
    """
    config_json = None
    config_path = None
    if isinstance(config, Mapping):
        config_json = json.dumps(config)
    elif config is not None:
        config_path = os.fspath(config)
    out = _ftlsim.run_json(
        ftl,
        config_json=config_json,
        config_path=config_path,
        sets=list(set),
        trace=None if trace is None else os.fspath(trace),
        requests=requests,
    )
    return json.loads(out)


def ftls() -> list:
    """Names of the registered FTLs."""
    return list(_ftlsim.ftl_names())


def presets() -> list:
    """Names of the device presets."""
    return list(_ftlsim.preset_list())
