"""Running a directory of ParityBench files: one worker process per file, in parallel.

Each file runs in its own worker process (see :mod:`paritybench.worker`), started, capped,
killed and described by the artifact's one runner, :class:`experiments.isolation.Worker`; this
module decides when. A stage is a unit of work as :mod:`experiments.units` defines it, the
experiments' cells being the other kind: each stage has its own time limit, counted from its
start in the file's event log (:class:`experiments.units.TimedUnit`); a stage that hangs is
killed and recorded as ``timeout``, a worker that dies (segfault, killed by the OS) gets its
in-flight stage recorded as ``crash`` (both :func:`experiments.units.unfinished`'s record, the
words of a cell's row); then a new worker continues with the stages left. Nothing a user
program does ends the run.

Results live in the run directory::

    <out>/run.json            the configuration (a rerun must use the same one)
    <out>/files/<file>.jsonl  the event log of each file, written as stages finish
    <out>/logs/<file>.log     what the user programs printed
    <out>/cases.csv, table3.csv, table3.md, failures.md   (paritybench.report)

A rerun into the same directory skips every recorded stage, so an interrupted run resumes
where it stopped. Every stage result carries the build that made it (torch's version, plus a
digest of MagPy's sources for MagPy's stages: :func:`paritybench.compilers.stage_builds`); a
rerun after MagPy changed runs MagPy's stages again and keeps the other compilers' results,
and a file whose text changed runs again, while a run directory of another configuration is
refused. All three are :func:`experiments.units.reuse`'s rule, the one the experiments' cells
resume by.

Workers are forked from a server process that has already imported torch (and warmed up
TorchDynamo), so starting one costs milliseconds instead of seconds.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from experiments.isolation import Ending, Worker
from experiments.units import Reuse, TimedUnit, reuse, unfinished

from .evaluate import RunConfig
from .loader import find_testfiles
from .worker import case_selected, file_digest, read_events, run_file

__all__ = ["FileProgress", "RunOptions", "file_progress", "run"]

_POLL_S = 0.05
#: Settings every result of a run directory shares (the compilers may differ between reruns:
#: each stage is recorded per compiler, and the directory holds the union).
_CONFIG_KEYS = ("backend", "calls", "seed", "no_grad", "rtol", "atol", "train")


class RunConfigMismatch(RuntimeError):
    """The run directory holds results made with another configuration."""


@dataclass
class RunOptions:
    """Where to read programs, where to write results, and how to run them."""

    directory: Path
    out: Path
    config: RunConfig = field(default_factory=RunConfig)
    jobs: int = 1
    limit: int | None = None
    name_filter: str | None = None
    timeout_s: float = 120.0
    memory_gb: float = 8.0
    fresh: bool = False
    builds: dict[str, str] | None = None  # stage -> build; filled by run() when None
    max_restarts: int | None = None  # per file; default: one per stage of the file, plus two
    files: tuple[str, ...] | None = None  # only these files (names): a shard (paritybench.launch)
    prepared: bool = False  # the run directory is prepared (by the driver of the shards)
    suite: str = "paritybench"  # "zoo": generated programs of the transformers zoo (paritybench.zoo)


@dataclass
class FileProgress:
    """What a file's event log says about it."""

    loaded: bool | None = None  # None: never got as far as loading
    cases: list[str] = field(default_factory=list)
    done: dict[str, set[str]] = field(default_factory=dict)
    in_flight: tuple[str, str, float] | None = None  # (case, stage, start time)
    ended: bool = False

    def pending(self, stages: list[str], stem: str, name_filter: str | None) -> list[tuple[str, str]]:
        """The (case, stage) pairs still to run, in order."""
        if self.loaded is False:
            return []
        out = []
        for case in self.cases:
            if case_selected(stem, case, name_filter):
                out.extend((case, s) for s in stages if s not in self.done.get(case, set()))
        return out


def file_progress(events: list[dict[str, Any]], builds: dict[str, str] | None = None) -> FileProgress:
    """Fold an event log into a :class:`FileProgress`.

    With ``builds`` (stage name -> build, :func:`paritybench.compilers.stage_builds`), a stage
    recorded by another build does not count as done."""
    prog = FileProgress()
    open_stage: tuple[str, str, float] | None = None
    for ev in events:
        kind = ev.get("event")
        if kind == "load":
            prog.loaded = bool(ev.get("ok"))
            prog.cases = list(ev.get("cases", []))
            prog.ended = False
            open_stage = None   # a new worker: what the last one had in flight is over
        elif kind == "stage_start":
            open_stage = (ev["case"], ev["stage"], float(ev["t"]))
            prog.ended = False
        elif kind == "stage":
            done = prog.done.setdefault(ev["case"], set())
            if stage_reuse(ev.get("result") or {}, ev["stage"], builds).action == "skip":
                done.add(ev["stage"])
            else:
                done.discard(ev["stage"])
            if open_stage and open_stage[0] == ev["case"]:
                open_stage = None   # (its stage, or the stage an eager replay was for)
        elif kind == "end":
            prog.ended = True
            open_stage = None
    prog.in_flight = open_stage
    return prog


def stage_reuse(result: dict[str, Any], stage: str, builds: dict[str, str] | None) -> Reuse:
    """Whether a recorded stage result is kept (``skip``) or made again (``rerun``): its identity is
    the build that made it, where ``builds`` names one for the stage."""
    wanted = {"build": builds[stage]} if builds and stage in builds else {}
    return reuse(result, {"build": result.get("build")} if wanted else {}, wanted, on_change="rerun")


class _FileJob:
    """One file's worker process and the bookkeeping to restart it."""

    def __init__(self, path: Path, out: Path, opts: RunOptions, stages: list[str]) -> None:
        self.path = path
        self.stem = path.stem
        self.events_path = out / "files" / f"{self.stem}.jsonl"
        self.log_path = out / "logs" / f"{self.stem}.log"
        self.opts = opts
        self.stages = stages
        self.worker: Worker | None = None
        self.unit: TimedUnit | None = None  # the worker and its stage in flight
        self.restarts = 0
        self.began = time.perf_counter()

    def progress(self) -> FileProgress:
        return file_progress(read_events(self.events_path), self.opts.builds)

    def finished(self) -> bool:
        prog = self.progress()
        if prog.loaded is False:
            return True
        return prog.loaded is True and not prog.pending(self.stages, self.stem, self.opts.name_filter)

    def changed_since_recorded(self) -> bool:
        """True when the event log was made from a different version of the file."""
        loads = [e for e in read_events(self.events_path) if e.get("event") == "load" and "sha1" in e]
        if not loads:
            return False
        return reuse(loads[-1], {"sha1": loads[-1]["sha1"]}, {"sha1": file_digest(self.path)},
                     on_change="rerun").action == "rerun"

    def start(self, ctx: mp.context.BaseContext) -> None:
        prog = self.progress()
        args = (str(self.path), str(self.events_path), self.opts.config.as_json(),
                {case: sorted(stages) for case, stages in prog.done.items()}, self.opts.name_filter,
                self.opts.builds or {})
        self.worker = Worker.call(ctx, run_file, args, log_path=self.log_path, name=f"paritybench:{self.stem}",
                                  mem_limit_bytes=int(self.opts.memory_gb * 2**30))
        self.unit = TimedUnit(self.worker, self.opts.timeout_s, started=self.unit_started)

    def unit_started(self) -> float:
        """When the stage in flight started (its ``stage_start`` event); before the file loaded,
        when the worker started; between stages, at the last event."""
        assert self.unit is not None
        prog = self.progress()
        if prog.in_flight is not None:
            return prog.in_flight[2]
        if prog.loaded is not None:
            return max(self.unit.worker_started, _last_event_time(self.events_path))
        return self.unit.worker_started

    def record_death(self, ending: Ending) -> None:
        """The worker is gone without finishing: blame its in-flight stage (or its loading)."""
        events = read_events(self.events_path)
        prog = file_progress(events, self.opts.builds)
        how = ending.status
        if prog.ended and how == "crash":
            return
        from .worker import EventLog

        log = EventLog(self.events_path)
        try:
            record = unfinished(ending)
            if prog.loaded is None:
                log.write({"event": "load", "ok": False, "error_class": record["error_class"], "error": record["error"]})
                return
            pending = prog.pending(self.stages, self.stem, self.opts.name_filter)
            if not pending:
                return
            case, stage = pending[0]
            if prog.in_flight is not None:
                flight_case, flight_stage, _ = prog.in_flight
                if flight_stage not in prog.done.get(flight_case, set()):
                    case, stage = flight_case, flight_stage
                else:
                    # An eager replay (the reference for a stage still to run): blame that stage.
                    case, stage = next((p for p in pending if p[0] == flight_case), pending[0])
            result = {**record, **self._build(stage)}
            log.write({"event": "stage", "case": case, "stage": stage, "result": result})
            if stage == "eager":
                for name in self.stages[1:]:
                    if name not in prog.done.get(case, set()):
                        skipped = {"status": "not_run", "error_class": "", "error": f"eager {how}", **self._build(name)}
                        log.write({"event": "stage", "case": case, "stage": name, "result": skipped})
        finally:
            log.close()

    def _build(self, stage: str) -> dict[str, str]:
        build = (self.opts.builds or {}).get(stage)
        return {"build": build} if build is not None else {}


def _last_event_time(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except FileNotFoundError:
        return 0.0


def _context() -> mp.context.BaseContext:
    """A forkserver whose server has torch imported: forked workers start warm."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if "forkserver" in mp.get_all_start_methods():
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(["paritybench._preload"])
        return ctx
    return mp.get_context("spawn")


def refuse_foreign(opts: RunOptions) -> None:
    """Raise :class:`RunConfigMismatch` when ``opts.out`` cannot take this run: it is a file, or it
    holds results of another configuration or of another suite of programs (changes nothing)."""
    out = opts.out
    if out.exists() and not out.is_dir():
        raise RunConfigMismatch(f"--out names {out}, which is a file, not a run directory")
    meta_path = out / "run.json"
    if opts.fresh or not meta_path.exists():
        return
    meta = json.loads(meta_path.read_text())
    if meta.get("suite", "paritybench") != opts.suite:
        raise RunConfigMismatch(f"{out} holds a run of the {meta.get('suite', 'paritybench')} programs, not of the "
                                f"{opts.suite}; pass --fresh to discard it or choose another --out / --run-id")
    wanted = {k: opts.config.as_json()[k] for k in _CONFIG_KEYS}
    # (a run directory from before a setting existed holds its default)
    have = {k: meta.get("config", {}).get(k, getattr(RunConfig, k, None)) for k in _CONFIG_KEYS}
    verdict = reuse(meta, have, wanted, on_change="refuse")
    if verdict.action == "refuse":  # said as the experiments say it
        raise RunConfigMismatch(
            f"{out} holds results of another configuration ({'; '.join(verdict.changes)}); "
            "pass --fresh to discard them or choose another --out / --run-id"
        )


def prepare_out(opts: RunOptions) -> None:
    """Create (or, with ``fresh``, clear) the run directory; refuse a foreign configuration."""
    refuse_foreign(opts)
    out = opts.out
    if opts.fresh and out.exists():
        for sub in ("files", "logs"):
            shutil.rmtree(out / sub, ignore_errors=True)
        for name in ("run.json", "cases.csv", "table3.csv", "table3.md", "failures.md"):
            (out / name).unlink(missing_ok=True)
    (out / "files").mkdir(parents=True, exist_ok=True)
    (out / "logs").mkdir(parents=True, exist_ok=True)
    wanted = {k: opts.config.as_json()[k] for k in _CONFIG_KEYS}
    meta_path = out / "run.json"
    compilers = list(opts.config.compilers)
    if meta_path.exists():
        recorded = json.loads(meta_path.read_text()).get("config", {}).get("compilers", [])
        order = ("magpy", "dynamo", "torchscript")
        compilers = sorted(set(recorded) | set(compilers), key=lambda c: (order.index(c) if c in order else 9, c))
    wanted["compilers"] = compilers
    meta = {"config": wanted, "directory": str(opts.directory), "suite": opts.suite, "python": sys.version.split()[0]}
    meta.update(_versions())
    meta_path.write_text(json.dumps(meta, indent=2) + "\n")


def _versions() -> dict[str, str]:
    import torch

    out = {"torch": torch.__version__}
    transformers = sys.modules.get("transformers")   # (a zoo run imported it; others need not pay for it)
    if transformers is not None:
        out["transformers"] = getattr(transformers, "__version__", "unknown")
    try:
        import magpy

        out["magpy"] = getattr(magpy, "__version__", "unknown")
    except Exception as exc:  # noqa: BLE001 - recorded, the run goes on
        out["magpy"] = f"unavailable ({type(exc).__name__})"
    return out


def run(opts: RunOptions, progress: Callable[[str], None] | None = None) -> Path:
    """Run every selected stage of every file not yet finished; return the run directory."""
    say = progress or (lambda line: print(line, file=sys.stderr, flush=True))
    if opts.jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {opts.jobs}")
    if opts.timeout_s <= 0:
        raise ValueError(f"timeout must be positive, got {opts.timeout_s}")
    if opts.limit is not None and opts.limit < 1:
        raise ValueError(f"limit must be at least 1, got {opts.limit}")
    files = find_testfiles(opts.directory)
    if not files:
        raise FileNotFoundError(f"no test_*.py files in {opts.directory}")
    if opts.limit is not None:
        files = files[: opts.limit]
    if opts.files is not None:
        files = [p for p in files if p.name in set(opts.files)]
    if not opts.prepared:
        prepare_out(opts)
    if opts.builds is None:
        from .compilers import stage_builds

        opts.builds = stage_builds(list(opts.config.compilers))
    stages = ["eager", *opts.config.compilers]
    jobs = [_FileJob(p, opts.out, opts, stages) for p in files]
    for job in jobs:
        if job.changed_since_recorded():
            say(f"[paritybench] {job.stem} changed since its results were recorded: running it again")
            job.events_path.unlink()
    stale = sum(_stale_stages(job) for job in jobs)
    if stale:
        say(f"[paritybench] {stale} recorded stages were made by another build ({_builds_line(opts.builds)}): running them again")
    queue = [j for j in jobs if not j.finished()]
    skipped = len(jobs) - len(queue)
    say(f"[paritybench] {len(jobs)} files, {skipped} already finished, {len(queue)} to run, jobs={opts.jobs}")
    if not queue:
        return opts.out

    ctx = _context()
    active: list[_FileJob] = []
    finished = skipped
    started = time.perf_counter()
    try:
        while queue or active:
            while queue and len(active) < opts.jobs:
                job = queue.pop(0)
                job.start(ctx)
                active.append(job)
            time.sleep(_POLL_S)
            now = time.time()
            for job in list(active):
                assert job.unit is not None
                ending = job.unit.poll(now)
                if ending is None:
                    continue
                job.record_death(ending)   # (a worker that ended after its "end" event: nothing to record)
                limit = opts.max_restarts if opts.max_restarts is not None else _stage_count(job) + 2
                if not job.finished() and job.restarts < limit:
                    job.restarts += 1
                    job.start(ctx)
                    continue
                if not job.finished():
                    _give_up(job)
                active.remove(job)
                finished += 1
                left = len(jobs) - finished
                eta = (time.perf_counter() - started) / (finished - skipped) * left if left else 0.0
                say(f"[{finished}/{len(jobs)}] {job.stem}: {_summary(job)} ({time.perf_counter() - job.began:.1f}s"
                    + (f"; ETA {eta / 60:.0f} min" if eta >= 90 else f"; ETA {eta:.0f} s" if left else "") + ")")
    finally:  # Ctrl-C (or SIGTERM, see paritybench.cli) ends the run: kill what still runs
        for job in active:
            if job.worker is not None:
                job.worker.stop()
    return opts.out


def _stage_count(job: _FileJob) -> int:
    prog = job.progress()
    return max(len(prog.cases), 1) * len(job.stages)


def _give_up(job: _FileJob) -> None:
    """Too many restarts: record every stage left as a crash so the file counts as done."""
    from .worker import EventLog

    prog = job.progress()
    log = EventLog(job.events_path)
    try:
        if prog.loaded is None:
            log.write({"event": "load", "ok": False, "error_class": "Crash", "error": "worker kept dying before loading"})
            return
        for case, stage in prog.pending(job.stages, job.stem, job.opts.name_filter):
            result = {"status": "crash", "error_class": "Crash", "error": "gave up after repeated worker deaths",
                      **job._build(stage)}
            log.write({"event": "stage", "case": case, "stage": stage, "result": result})
    finally:
        log.close()


def _stale_stages(job: _FileJob) -> int:
    """Recorded stages of ``job`` that the current builds would run again."""
    recorded = {(e["case"], e["stage"]): e.get("result") or {}
                for e in read_events(job.events_path) if e.get("event") == "stage"}
    return sum(1 for (_, stage), result in recorded.items() if stage_reuse(result, stage, job.opts.builds).action != "skip")


def _builds_line(builds: dict[str, str] | None) -> str:
    return "; ".join(f"{k}: {v}" for k, v in (builds or {}).items() if k != "eager")


def _summary(job: _FileJob) -> str:
    events = read_events(job.events_path)
    load = next((e for e in events if e.get("event") == "load"), None)
    if load is None or not load.get("ok"):
        what = f"{load.get('error_class')}: {load.get('error')}" if load else "no load event"
        return f"did not load ({what[:120]})"
    last = {(e["case"], e["stage"]): e["result"] for e in events if e.get("event") == "stage"}
    ok: dict[str, int] = {}
    total: dict[str, int] = {}
    for (_, stage), result in last.items():
        total[stage] = total.get(stage, 0) + 1
        ok[stage] = ok.get(stage, 0) + (result.get("status") == "ok")
    if not total:
        return "no selected cases"
    return ", ".join(f"{s} {ok.get(s, 0)}/{total[s]}" for s in job.stages if s in total)
