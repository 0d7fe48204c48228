"""ftlsim: fast, faithful trace-driven simulation of NAND-flash SSDs and their FTLs.

    >>> import ftlsim
    >>> result = ftlsim.run({"device": {"overprovisioning": 0.07}}, ftl="pftl", requests=1000)
    >>> result["report"]["write_amplification"]
    >>> frame = ftlsim.sweep(ftls=["pftl", "dftl"], synthetic=["p000-hm0"], requests=20_000,
    ...                      grid={"ftl.dftl.cache_bytes": [8192, 16384]}, jobs=2)

`run` returns the same object the CLI prints with ``--json`` (a dict, with ``to_frame()``);
`compare`, `sweep` and `experiment` return pandas DataFrames, one row per run. Every error is an
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
    "RunResult",
    "compare",
    "sweep",
    "experiment",
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


class RunResult(dict):
    """The result of one run: the dict the CLI prints with ``--json`` (``tool``, ``version``,
    ``ftl``, ``workload``, ``config``, ``report``, ...), plus conversions."""

    def to_dict(self) -> dict:
        """The result as a plain dict."""
        return dict(self)

    def to_frame(self) -> "pandas.DataFrame":
        """The result as a one-row DataFrame (:func:`to_frame`)."""
        return to_frame(self)


def _sets(
    set: Union[Iterable[str], Mapping[str, Any]],
    address_policy: Optional[str] = None,
    time_scale: Optional[float] = None,
    seed: Optional[int] = None,
    precondition: Optional[str] = None,
    preset: Optional[str] = None,
    check: Optional[int] = None,
    power_loss_at: Optional[str] = None,
    max_memory: Optional[int] = None,
) -> List[str]:
    """The overrides of a call as ``key=value`` strings: ``set`` (such strings, or a dict of
    dotted keys) and the keyword shortcuts for the CLI's options."""
    if isinstance(set, Mapping):
        out = [f"{key}={_toml_literal(value)}" for key, value in set.items()]
    elif isinstance(set, str):
        out = [set]
    else:
        out = list(set)
    if check is not None:  # as `ftlsim run --check N`: the invariants every N requests, and the oracle
        out += [f"check.invariants_every={_toml_literal(check)}", "check.oracle=true"]
    for key, value in (
        ("preset", preset),
        ("host.address_policy", address_policy),
        ("host.time_scale", time_scale),
        ("seed", seed),
        ("precondition.mode", precondition),
        ("check.power_loss_at", power_loss_at),
        ("check.max_memory", max_memory),
    ):
        if value is not None:
            out.append(f"{key}={_toml_literal(value)}")
    return out


def _toml_literal(value: Any) -> str:
    """A Python value as a TOML literal (numbers, booleans, strings and lists of them)."""
    return json.dumps(value)


def run(
    config: Union[Mapping[str, Any], str, os.PathLike, None] = None,
    *,
    trace: Optional[Union[str, os.PathLike]] = None,
    ftl: str = "pftl",
    set: Union[Iterable[str], Mapping[str, Any]] = (),
    preset: Optional[str] = None,
    format: Optional[str] = None,
    on_bad_line: Optional[str] = None,
    columns: Optional[str] = None,
    out_of_order: Optional[str] = None,
    asu: Optional[Union[str, int]] = None,
    events: Optional[str] = None,
    synthetic: Optional[str] = None,
    requests: Optional[int] = None,
    latency_log: Optional[Union[str, os.PathLike]] = None,
    address_policy: Optional[str] = None,
    time_scale: Optional[float] = None,
    seed: Optional[int] = None,
    precondition: Optional[str] = None,
    check: Optional[int] = None,
    power_loss_at: Optional[str] = None,
    max_memory: Optional[int] = None,
    _stop: Any = None,
) -> RunResult:
    """Runs one FTL and returns its result (a dict: the CLI's JSON, with ``to_frame()``).

    Ctrl-C stops the run within a fraction of a second (``KeyboardInterrupt``).

    config: a dict laid out like the TOML configuration (e.g. ``{"preset": "ssd16"}``), or the
        path of a TOML file, or None for the default preset (mlc8g).
    trace: a trace file (any format ``ftlsim list formats`` names, possibly compressed); without
        it, ``synthetic`` (a workload preset such as ``"p000-hm0"`` or a generator spec), else the
        embedded synthetic OLTP-like stream.
    set: ``key=value`` overrides (strings, or a dict of dotted keys), applied last.
    preset: the device preset (``ftlsim.presets()``; default mlc8g), under ``config``.
    format: the trace format (detected when None); on_bad_line: ``"error"`` or ``"skip"``;
        columns: the generic reader's column mapping, e.g.
        ``"delim=ws,skip=1,time=1:us,op=2,offset=3:sector,size=4:B"`` (implies the generic
        format; docs/formats.md); out_of_order (``"error"``, ``"keep"``, ``"sort[:N]"``), asu
        (``"concat"`` or an ASU number, SPC) and events (blkparse action letters): the CLI's
        trace options of the same names.
    address_policy (``host.address_policy``: ``"error"``, ``"fold"``, ``"scale"``), time_scale
        (``host.time_scale``), seed, precondition (``precondition.mode``: ``"none"``, ``"fill"``,
        ``"age"``): the CLI's options, as keywords.
    check: run the full invariant check every ``check`` requests and check every read against
        the oracle (``--check N``); power_loss_at: ``"N"``, ``"N,M,..."`` or ``"random:K"``
        (``--power-loss-at``); max_memory: the simulator memory a run may take, bytes.
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
            sets=_sets(
                set, address_policy, time_scale, seed, precondition, preset, check, power_loss_at, max_memory
            ),
            trace=None if trace is None else os.fspath(trace),
            format=format,
            on_bad_line=on_bad_line,
            columns=columns,
            out_of_order=out_of_order,
            asu=None if asu is None else str(asu),
            events=events,
            synthetic=synthetic,
            requests=requests,
            latency_log=None if latency_log is None else os.fspath(latency_log),
            stop=_stop,
        )
    return RunResult(json.loads(out))


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
    stop = _ftlsim.StopToken()
    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as pool:
        try:
            results = list(pool.map(lambda name: run(config, ftl=name, _stop=stop, **run_args), names))
        except BaseException:
            stop.set()  # Ctrl-C (or a failed run): the other runs stop within a fraction of a second
            raise
    frame = to_frame(results)
    if "pftl" in names:
        baseline = frame.loc[frame["ftl"] == "pftl", "report.response.mean_us"].iloc[0]
        frame["nt"] = frame["report.response.mean_us"] / baseline
    return frame


PathLike = Union[str, os.PathLike]


def sweep(
    config: Union[Mapping[str, Any], str, os.PathLike, None] = None,
    *,
    ftls: Sequence[str],
    traces: Sequence[PathLike] = (),
    synthetic: Union[str, Sequence[str]] = (),
    grid: Optional[Mapping[str, Sequence[Any]]] = None,
    seeds: Sequence[int] = (),
    set: Union[Iterable[str], Mapping[str, Any]] = (),
    requests: Optional[int] = None,
    format: Optional[str] = None,
    on_bad_line: Optional[str] = None,
    columns: Optional[str] = None,
    address_policy: Optional[str] = None,
    time_scale: Optional[float] = None,
    seed: Optional[int] = None,
    precondition: Optional[str] = None,
    preset: Optional[str] = None,
    baseline: str = "pftl",
    jobs: Optional[int] = None,
    cache: Optional[PathLike] = None,
    backend: str = "local",
) -> "pandas.DataFrame":
    """Runs a grid, FTLs x ``grid`` points x workloads x seeds, and returns one row per run.

    config: a dict laid out like the TOML configuration (or a TOML file's path), applied over
        ``preset`` (default mlc8g) before ``set`` and the keyword shortcuts.
    traces: trace files; synthetic: workload presets or generator specs (one workload each;
        at least one of the two), ``requests`` long. format, on_bad_line, columns: how the
        traces are read, as :func:`run`.
    grid: dotted key -> values, e.g. ``{"ftl.dftl.cache_bytes": [8192, 16384]}``; a key
        ``ftl.*.<param>`` sweeps the parameter of every FTL that has it. seeds: one run per seed.
    jobs: runs at a time (default: one per core); cache: a results directory, so a re-run, or
        a sweep interrupted by Ctrl-C, runs only what is missing; backend: ``"local"`` or
        ``"ray"`` (one Ray task per run on the cluster ``ray.init()`` joined; every node must
        see the trace paths and the cache directory, and have ftlsim installed).
    The frame's columns: ``experiment, workload, source``, ``sweep.<key>`` per swept key,
    ``nt`` (mean response time over ``baseline``'s at the same workload and point), ``ftl``,
    ``trace``, ``preset``, ``seed``, ``version``, ``key`` (the cache key), ``cached``,
    ``param.<name>`` (the FTL's parameters) and ``report.<metric>`` (docs/metrics.md).
    """
    sets = _config_sets(config) + _sets(set, address_policy, time_scale, seed, precondition)
    description = {
        "name": "sweep",
        "preset": preset or "",
        "set": sets,
        "ftls": list(ftls),
        "grid": {key: list(values) for key, values in (grid or {}).items()},
        "seeds": [int(s) for s in seeds],
        "traces": [os.fspath(t) for t in traces],
        "synthetic": [synthetic] if isinstance(synthetic, str) else list(synthetic),
        "format": format,
        "on_bad_line": on_bad_line,
        "columns": columns,
        "requests": requests,
        "baseline": baseline,
    }
    with _errors():
        spec = _ftlsim.sweep_spec(json.dumps(description))
    return _execute(spec, ".", jobs=jobs, cache=cache, backend=backend)


def experiment(
    spec: PathLike,
    *,
    requests: Optional[int] = None,
    traces: Optional[Mapping[str, PathLike]] = None,
    jobs: Optional[int] = None,
    cache: Optional[PathLike] = None,
    backend: str = "local",
) -> "pandas.DataFrame":
    """Runs an experiment spec (``experiments/*.toml``, as ``ftlsim experiment``) and returns one
    row per run, with :func:`sweep`'s columns.

    requests: requests of every synthetic stand-in; traces: workload name -> a trace to replay
    for it instead of what the spec names; jobs, cache, backend: as :func:`sweep`.
    """
    given = [(name, os.fspath(path)) for name, path in (traces or {}).items()]
    with _errors():
        spec_json, base = _ftlsim.load_spec(os.fspath(spec), requests=requests, traces=given)
    return _execute(spec_json, base, jobs=jobs, cache=cache, backend=backend)


def _config_sets(config: Union[Mapping[str, Any], str, os.PathLike, None]) -> List[str]:
    """A configuration (dict or TOML file) as ``key=value`` overrides of its leaves."""
    if config is None:
        return []
    if not isinstance(config, Mapping):
        try:
            import tomllib  # Python 3.11+
        except ImportError:  # pragma: no cover - older Pythons
            import tomli as tomllib  # type: ignore[no-redef]
        path = os.fspath(config)
        try:
            with open(path, "rb") as f:
                config = tomllib.load(f)
        except (OSError, ValueError) as error:
            raise ConfigError(f"{path}: {error}", field="config") from None
    flat = _flatten(config, "")
    preset = flat.pop("preset", None)
    sets = [] if preset is None else [f"preset={_toml_literal(preset)}"]
    return sets + [f"{key}={_toml_literal(value)}" for key, value in flat.items()]


def _execute(
    spec_json: str, base: str, *, jobs: Optional[int], cache: Optional[PathLike], backend: str
) -> "pandas.DataFrame":
    """Runs every run of a spec on a backend and returns the tidy frame."""
    import pandas as pd

    cache_dir = None if cache is None else os.fspath(os.path.abspath(cache))
    if backend == "local":
        with _errors():
            runs = _ftlsim.execute_runs(spec_json, base, jobs=jobs or 0, cache=cache_dir)
    elif backend == "ray":
        from . import _ray

        with _errors():
            size = _ftlsim.plan_size(spec_json, base)
        runs = _ray.execute(spec_json, base, size, cache_dir)
    else:
        raise ConfigError(f"backend {backend!r}: expected 'local' or 'ray'", field="backend")
    runs = sorted(runs, key=lambda r: r[0])
    with _errors():
        rows = _ftlsim.tidy_rows(spec_json, [(key, run) for _, key, _, run in runs])
    records = [json.loads(line) for line in rows.splitlines()]
    for record, (_, _, cached, _) in zip(records, runs):
        record["cached"] = cached
    frame = pd.DataFrame.from_records(records)
    if "cached" in frame.columns:  # next to the other identity columns
        frame.insert(list(frame.columns).index("key") + 1, "cached", frame.pop("cached"))
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
    columns: Optional[str] = None,
    chunk: int = 65536,
) -> Iterator[Dict[str, Any]]:
    """Streams a trace as chunks of numpy arrays (memory independent of the trace's length).

    Each chunk is a dict with ``arrival_ns``, ``offset_bytes``, ``len_bytes`` and ``line``
    (uint64) and ``kind`` (uint8: 0 read, 1 write, 2 trim), at most ``chunk`` requests long.
    Errors name the file, line and field, as in the CLI (a :class:`TraceError`). columns: the
    generic reader's column mapping, as :func:`run`.
    """
    import numpy as np

    with _errors():
        reader = _ftlsim.read_trace(
            os.fspath(path), format=format, on_bad_line=on_bad_line, chunk=chunk, columns=columns
        )
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
