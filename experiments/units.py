"""A unit of work, as both kinds of measurement see it: when its recorded result may be kept, and
how a unit that overran its time limit or lost its worker is recorded.

The experiments' unit is a cell (``results/<experiment>/<run-id>/cells/<id>/row.json``,
:mod:`experiments.run`); ParityBench's is a stage of a test case (a ``stage`` event in
``files/<file>.jsonl``, :mod:`paritybench.runner`). Both keep finished units, so an interrupted
run resumes, and both must never keep a result made by other code or other settings. One rule
decides, :func:`reuse`:

* no result yet: ``run``;
* a result whose *identity* (the settings it was measured with, and a digest of the sources it
  ran, :func:`source_digest`) differs from the one requested: the caller's ``on_change`` policy,
  ``rerun`` (ParityBench: a stage of an older MagPy is measured again) or ``refuse`` (a cell
  directory never mixes settings; the run stops and names the changes);
* ``force``, or a failed result when failures are retried: ``rerun``; else ``skip``.

A unit runs in an isolated :class:`~experiments.isolation.Worker` and has ``limit_s`` seconds from
its start (:class:`TimedUnit`; several units may share one worker, each with its own start). Past
the limit the worker's session is killed; a worker that ends without the unit's result crashed.
Either way the unit's record is :func:`unfinished`'s, in the same words for cells and stages.

    >>> reuse({"status": "ok"}, {"repeat": 5}, {"repeat": 5}, on_change="refuse")
    Reuse(action='skip', changes=())
    >>> reuse({"status": "ok"}, {"repeat": 5}, {"repeat": 20}, on_change="refuse")
    Reuse(action='refuse', changes=('repeat: 5 recorded, 20 requested',))
    >>> unfinished(Ending(-11))["error"]
    'worker exited with signal SIGSEGV before finishing'
"""

from __future__ import annotations

import hashlib
import importlib.util
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from experiments.isolation import Ending, Worker

__all__ = ["Reuse", "TimedUnit", "identity_changes", "reuse", "source_digest", "unfinished"]

Action = Literal["skip", "run", "rerun", "refuse"]


def source_digest(packages: Iterable[str], exclude: Iterable[str] = ()) -> str:
    """SHA-1 over the sources (``.py`` and ``.c``, by path) of the importable ``packages``.

    Content, not a git commit: a run from an exported snapshot or from uncommitted edits still
    tells which code made its results. ``exclude`` lists ``package/relative/path`` files left out.
    The one digest of the artifact: ParityBench's stages (:func:`paritybench.compilers.stage_builds`)
    and the experiments' cells (:func:`experiments.results.environment`) both put it in their identity.

        >>> source_digest(["magpy"]) == source_digest(["magpy"])
        True
    """
    digest, skip = hashlib.sha1(), set(exclude)
    folders = tuple(e for e in skip if e.endswith("/"))   # (`package/folder/`: everything under it)
    for package in packages:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            digest.update(f"{package}: unavailable\0".encode())
            continue
        root = Path(next(iter(spec.submodule_search_locations)))
        for path in sorted(p for p in root.rglob("*") if p.suffix in (".py", ".c") and "__pycache__" not in p.parts):
            name = f"{package}/{path.relative_to(root)}"
            if name not in skip and not name.startswith(folders):
                digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


#: The code whose change can change a measured number: the compiler, the benchmark programs, the
#: runners with their comparator, isolation and measurement, ParityBench's runner, stubs, loader
#: and compiler adapters. Not the drawing of figures and tables, nor ParityBench's own programs
#: (each case's file is part of that case's identity).
MEASURED_SOURCES = ("magpy", "models", "experiments", "paritybench")
NOT_MEASURED = ("experiments/plot.py", "experiments/markdown.py", "paritybench/corpus/")


def measured_digest() -> str:
    """The one source identity of every measured cell: the experiments' cells
    (:func:`experiments.results.environment`) and ParityBench's stages
    (:func:`paritybench.compilers.stage_builds`) both carry it."""
    return source_digest(MEASURED_SOURCES, NOT_MEASURED)


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flat(v, f"{prefix}{k}."))
        return out
    return {prefix.rstrip("."): value}


def identity_changes(recorded: Mapping[str, Any] | None, wanted: Mapping[str, Any],
                     ignore: Iterable[str] = ()) -> list[str]:
    """How a recorded identity differs from the wanted one: ``["repeat: 20 recorded, 5 requested", ...]``
    (nested keys dotted: ``environment.source``); top-level keys in ``ignore`` are left out.
    A result recorded without an identity (by an older harness) differs by that alone."""
    if recorded is None:
        return ["settings: not recorded (measured by an older harness)"]
    skip = set(ignore)
    old = _flat({k: v for k, v in recorded.items() if k not in skip})
    new = _flat({k: v for k, v in wanted.items() if k not in skip})
    return [f"{k}: {old.get(k, '(none)')} recorded, {new.get(k, '(none)')} requested"
            for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]


@dataclass(frozen=True)
class Reuse:
    """What to do with a unit's recorded result, and (for ``rerun``/``refuse`` of a changed
    identity) what changed."""

    action: Action
    changes: tuple[str, ...] = ()


def reuse(result: Mapping[str, Any] | None, recorded: Mapping[str, Any] | None, wanted: Mapping[str, Any], *,
          on_change: Literal["rerun", "refuse"], force: bool = False, retry_failed: bool = False) -> Reuse:
    """The one resume rule (see the module docstring): ``result`` is the unit's recorded result
    (None: none yet), ``recorded`` the identity it was made with, ``wanted`` this run's."""
    if result is None:
        return Reuse("run")
    if force:
        return Reuse("rerun")
    changes = identity_changes(recorded, wanted)
    if changes:
        return Reuse(on_change, tuple(changes))
    if retry_failed and result.get("status") != "ok":
        return Reuse("rerun")
    return Reuse("skip")


def unfinished(ending: Ending, log_tail: str = "") -> dict[str, str]:
    """The record of a unit whose worker ended without its result: ``status`` ``timeout`` or
    ``crash``, ``error_class`` (the same word, capitalised) and ``error`` (how the worker ended;
    for a crash, the end of its log when given)."""
    message = str(ending) if ending.status == "timeout" else f"{ending} before finishing"
    if log_tail and ending.status == "crash":
        message += f"; log tail: {log_tail}"
    return {"status": ending.status, "error_class": ending.status.capitalize(), "error": message}


class TimedUnit:
    """The unit of work running in ``worker`` and its time limit.

    ``started`` says when the unit in flight started (``time.time()`` seconds); by default, when
    the worker started (one unit per worker). A worker running several units in turn passes a
    function reading its progress, so each unit gets the whole limit."""

    def __init__(self, worker: Worker, limit_s: float, started: Callable[[], float] | None = None) -> None:
        self.worker = worker
        self.limit_s = limit_s
        self.worker_started = time.time()
        self._started = started

    def started(self) -> float:
        """When the unit in flight started."""
        return self._started() if self._started is not None else self.worker_started

    def poll(self, now: float | None = None) -> Ending | None:
        """None while the worker runs within the limit; else how it ended (past the limit its
        session is killed first)."""
        if not self.worker.alive():
            return self.worker.stop()
        if (time.time() if now is None else now) - self.started() > self.limit_s:
            return self.worker.stop(self.limit_s)
        return None

    def wait(self) -> Ending:
        """Block until a unit that has its worker to itself ends or runs out of time (Ctrl-C kills
        the worker's session and goes on). A worker of several units is :meth:`poll`-ed instead."""
        if self._started is not None:
            raise ValueError("TimedUnit.wait: a worker of several units is polled, not waited for")
        return self.worker.wait(self.limit_s)
