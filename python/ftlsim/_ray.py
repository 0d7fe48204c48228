"""The Ray backend of :func:`ftlsim.sweep` and :func:`ftlsim.experiment`: one Ray task per run.

Each task runs one run of the plan through the same executor and results cache as the local
backend and returns it as JSON; the caller orders the runs by their place in the plan and
computes NT and the rows as the local backend does, so both give the same frame. Every node
must have ftlsim installed and see the trace paths (and the cache directory, when one is given).
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

Run = Tuple[int, str, bool, str]


def _one_run(spec_json: str, base: str, index: int, cache: Optional[str]) -> Run:
    from . import _ftlsim, _errors

    with _errors():
        (run,) = _ftlsim.execute_runs(spec_json, base, jobs=1, cache=cache, only=[index])
    return run


def execute(spec_json: str, base: str, size: int, cache: Optional[str]) -> List[Run]:
    """Every run of the plan, as Ray tasks on the cluster ``ray.init()`` joined (a local one
    if none was)."""
    try:
        import ray
    except ImportError:
        from . import ConfigError

        raise ConfigError("backend 'ray' needs Ray: pip install 'ftlsim[ray]'", field="backend") from None
    if not ray.is_initialized():
        ray.init()
    task: Any = ray.remote(num_cpus=1)(_one_run)
    pending = [task.remote(spec_json, base, index, cache) for index in range(size)]
    try:
        return list(ray.get(pending))
    except BaseException:
        for ref in pending:  # Ctrl-C or a failed run: stop the rest
            ray.cancel(ref, force=True)
        raise
