"""ftlsim: fast, faithful trace-driven simulation of NAND-flash SSDs and their FTLs.

    >>> import ftlsim
    >>> result = ftlsim.run({"device": {"overprovisioning": 0.07}}, ftl="pftl", requests=1000)
    >>> result["report"]["write_amplification"]

`run` returns the same object the CLI prints with ``--json``. Every error is an
:class:`FtlsimError`: a :class:`ConfigError` names the configuration field, a :class:`TraceError`
the file, line and field, anything else is a :class:`SimulationError`.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Union

if TYPE_CHECKING:
    import pandas

from . import _ftlsim

__version__ = _ftlsim.__version__

__all__ = [
    "run",
    "compare",
    "to_frame",
    "read_trace",
    "ftls",
    "presets",
    "FtlsimError",
    "ConfigError",
    "TraceError",
    "SimulationError",
    "__version__",
]


class FtlsimError(Exception):
    """Every error ftlsim raises."""


class ConfigError(FtlsimError, ValueError):
    """An impossible configuration or argument; ``field`` is its dotted name (``device.overprovisioning``)."""

    def __init__(self, message: str, field: Optional[str] = None) -> None:
        super().__init__(message)
        self.field = field


class TraceError(FtlsimError, ValueError):
    """A trace (or other input) ftlsim cannot use: ``file``, and where known ``line`` and ``field``."""

    def __init__(
        self, message: str, file: Optional[str] = None, line: Optional[int] = None, field: Optional[str] = None
    ) -> None:
        super().__init__(message)
        self.file = file
        self.line = line
        self.field = field


class SimulationError(FtlsimError, RuntimeError):
    """A run that failed: the device filled up, or a check caught an FTL bug."""


_FIELD = re.compile(r"field \d+ \(([^)]+)\)")


def _typed(error: Exception) -> FtlsimError:
    kind, message, field, location = error.args
    if kind == "config":
        return ConfigError(message, field=field)
    if kind == "trace":
        file, line = location, None
        head, _, tail = location.rpartition(":")
        if head and tail.isdigit():
            file, line = head, int(tail)
        found = _FIELD.search(message)
        return TraceError(message, file=file, line=line, field=found.group(1) if found else None)
    return SimulationError(message)


@contextlib.contextmanager
def _errors() -> Iterator[None]:
    """Turns the native module's errors into the typed exceptions above."""
    try:
        yield
    except _ftlsim.NativeError as error:
        raise _typed(error) from None


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
    latency_log: Optional[Union[str, os.PathLike]] = None,
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
    latency_log: a CSV file for every request's arrival, start, completion and response time
        (simulated ns), operation, first LPN, pages and bytes (compressed if the name ends in
        .gz, .bz2, .xz or .zst), as ``ftlsim run --latency-log``.
    """
    config_json = None
    config_path = None
    if isinstance(config, Mapping):
        config_json = json.dumps(config)
    elif config is not None:
        config_path = os.fspath(config)
    with _errors():
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
            latency_log=None if latency_log is None else os.fspath(latency_log),
        )
    return json.loads(out)


def compare(
    config: Union[Mapping[str, Any], str, os.PathLike, None] = None,
    *,
    ftls: Optional[Sequence[str]] = None,
    jobs: Optional[int] = None,
    **run_args: Any,
) -> "pandas.DataFrame":
    """Runs several FTLs on the same workload, in parallel, and returns one row per FTL.

    ftls: the FTLs (default: every page-mapped and demand-based one, as ``ftlsim compare``).
    jobs: runs at a time (default: one per CPU; the runs release the GIL).
    run_args: any keyword argument of :func:`run` but ``ftl`` and ``latency_log``.
    The frame is :func:`to_frame`'s, plus ``nt``: the mean response time relative to PFTL's when
    PFTL is among the FTLs (paper 000's normalized response time).
    """
    for refused in ("ftl", "latency_log"):
        if refused in run_args:
            raise ConfigError(f"compare runs several FTLs: {refused} is not one of its arguments", field=refused)
    if ftls is None:
        names = [name for name, family in _ftlsim.ftl_families() if family in ("page-mapped", "demand-based")]
    else:
        names = list(ftls)
    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as pool:
        results = list(pool.map(lambda name: run(config, ftl=name, **run_args), names))
    frame = to_frame(results)
    if "pftl" in names:
        baseline = frame.loc[frame["ftl"] == "pftl", "report.response.mean_us"].iloc[0]
        frame["nt"] = frame["report.response.mean_us"] / baseline
    return frame


def to_frame(results: Union[Mapping[str, Any], Iterable[Mapping[str, Any]]]) -> "pandas.DataFrame":
    """One row per run result (the dicts :func:`run` returns): ``ftl``, ``workload``, the FTL's
    parameters as ``param.<name>`` and every report metric as a dotted column
    (``report.write_amplification``, ``report.response.mean_us``, ...; docs/metrics.md)."""
    import pandas as pd

    if isinstance(results, Mapping):
        results = [results]
    rows: List[Dict[str, Any]] = []
    for result in results:
        row: Dict[str, Any] = {"ftl": result["ftl"], "workload": result["workload"]}
        row.update({f"param.{k}": v for k, v in (result.get("ftl_params") or {}).items()})
        row.update(_flatten(result["report"], "report."))
        rows.append(row)
    return pd.DataFrame(rows)


def _flatten(value: Mapping[str, Any], prefix: str) -> Dict[str, Any]:
    """Nested dicts as one level of dotted keys (lists stay whole)."""
    flat: Dict[str, Any] = {}
    for key, item in value.items():
        if isinstance(item, Mapping):
            flat.update(_flatten(item, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = item
    return flat


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
    Errors name the file, line and field, as in the CLI (a :class:`TraceError`).
    """
    import numpy as np

    with _errors():
        reader = _ftlsim.read_trace(os.fspath(path), format=format, on_bad_line=on_bad_line, chunk=chunk)
    while True:
        with _errors():
            columns = next(reader, None)
        if columns is None:
            return
        arrival, kind, offset, length, line = columns
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
