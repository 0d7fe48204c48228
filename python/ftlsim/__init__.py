"""ftlsim: fast, faithful trace-driven simulation of NAND-flash SSDs and their FTLs.

    >>> import ftlsim
    >>> result = ftlsim.run({"device": {"overprovisioning": 0.07}}, ftl="pftl", requests=1000)
    >>> result["report"]["write_amplification"]

`run` returns the same object the CLI prints with ``--json``.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterable, Iterator, Mapping, Optional, Union

from . import _ftlsim

__version__ = _ftlsim.__version__

__all__ = ["run", "read_trace", "ftls", "presets", "__version__"]


def run(
    config: Union[Mapping[str, Any], str, os.PathLike, None] = None,
    *,
    trace: Optional[Union[str, os.PathLike]] = None,
    ftl: str = "pftl",
    set: Iterable[str] = (),
    format: Optional[str] = None,
    on_bad_line: Optional[str] = None,
    synthetic: Optional[str] = None,
    requests: Optional[int] = None,
) -> dict:
    """Runs one FTL and returns the result as a dict (the CLI's JSON).

    config: a dict laid out like the TOML configuration (e.g. ``{"preset": "ssd16"}``), or the
        path of a TOML file, or None for the default preset (mlc8g).
    trace: a trace file (any format ``ftlsim list formats`` names, possibly compressed); without
        it, ``synthetic`` (a workload preset such as ``"p000-hm0"`` or a generator spec), else the
        embedded synthetic OLTP-like stream.
    set: ``key=value`` overrides, applied last.
    format: the trace format (detected when None); on_bad_line: ``"error"`` or ``"skip"``.
    requests: requests of a synthetic stream.
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
        format=format,
        on_bad_line=on_bad_line,
        synthetic=synthetic,
        requests=requests,
    )
    return json.loads(out)


def read_trace(
    path: Union[str, os.PathLike],
    *,
    format: Optional[str] = None,
    on_bad_line: Optional[str] = None,
    chunk: int = 65536,
) -> Iterator[Dict[str, Any]]:
    """Streams a trace as chunks of numpy arrays (memory independent of the trace's length).

    Each chunk is a dict with ``arrival_ns``, ``offset_bytes``, ``len_bytes`` and ``line``
    (uint64) and ``kind`` (uint8: 0 read, 1 write, 2 trim), at most ``chunk`` requests long.
    Errors name the file, line and field, as in the CLI.
    """
    import numpy as np

    reader = _ftlsim.read_trace(os.fspath(path), format=format, on_bad_line=on_bad_line, chunk=chunk)
    for arrival, kind, offset, length, line in reader:
        yield {
            "arrival_ns": np.frombuffer(arrival, dtype="<u8"),
            "kind": np.frombuffer(kind, dtype=np.uint8),
            "offset_bytes": np.frombuffer(offset, dtype="<u8"),
            "len_bytes": np.frombuffer(length, dtype="<u8"),
            "line": np.frombuffer(line, dtype="<u8"),
        }


def ftls() -> list:
    """Names of the registered FTLs."""
    return list(_ftlsim.ftl_names())


def presets() -> list:
    """Names of the device presets."""
    return list(_ftlsim.preset_list())
