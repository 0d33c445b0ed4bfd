"""Sharding a ParityBench run over a cluster: one submitit job per shard, one run directory.

    python -m paritybench run --dir D --launcher slurm --shards 16 [--partition P] [--job-timeout-min M]
    python -m paritybench run --dir D --launcher local --shards 2     # submitit's local executor

The driver writes the run directory's ``run.json`` once, splits the files not yet finished into
``shards`` groups (round robin over the sorted names) and submits one job per group; each job
runs :func:`paritybench.runner.run` on its files, into the same directory (each file has its own
event log, so shards never write the same file). The driver waits for the jobs, then the command
writes the tables from every file's log, as after a local run. Running the same command again
resumes: finished files are skipped, the rest is submitted again, and the tables are merged from
all the logs. Job ids are kept in ``<out>/launcher.json`` and submitit's files in ``<out>/submitit/``;
a rerun refuses to start while Slurm jobs of an earlier submission still run (two workers would
write one file's log).
"""
from __future__ import annotations

import dataclasses
import json
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .loader import find_testfiles
from .runner import RunOptions, _FileJob, prepare_out, run

LAUNCHERS = ("local", "slurm")


@dataclass
class LaunchOptions:
    """How to shard a run: the submitit executor and what each job asks for."""

    launcher: str = "local"
    shards: int = 2
    partition: str | None = None
    timeout_min: int = 600
    mem_gb: float = 32.0


def shards_of(names: list[str], n: int) -> list[list[str]]:
    """``names`` split into at most ``n`` non-empty groups, round robin (file sizes vary by name)."""
    groups = [names[k::n] for k in range(max(1, n))]
    return [g for g in groups if g]


def run_shard(opts: RunOptions) -> str:
    """One job's work: its files, into the shared run directory (prepared by the driver)."""
    return str(run(opts))


def launch(opts: RunOptions, lo: LaunchOptions, say: Callable[[str], None] | None = None) -> Path:
    """Submit one job per shard of the unfinished files, wait for them; return the run directory."""
    say = say or (lambda line: print(line, file=sys.stderr, flush=True))
    if lo.launcher not in LAUNCHERS:
        raise ValueError(f"unknown launcher {lo.launcher!r}; choose from {', '.join(LAUNCHERS)}")
    if lo.shards < 1:
        raise ValueError(f"shards must be at least 1, got {lo.shards}")
    try:
        import submitit
    except ImportError:
        raise ValueError("--launcher needs submitit (pip install submitit)") from None
    files = find_testfiles(opts.directory)
    if not files:
        raise FileNotFoundError(f"no test_*.py files in {opts.directory}")
    if opts.limit is not None:
        files = files[: opts.limit]
    prepare_out(opts)
    if opts.builds is None:
        from .compilers import stage_builds

        opts.builds = stage_builds(list(opts.config.compilers))
    _refuse_if_running(opts.out, submitit)
    stages = ["eager", *opts.config.compilers]
    todo = [p.name for p in files if not _FileJob(p, opts.out, opts, stages).finished()]
    say(f"[paritybench] {len(files)} files, {len(files) - len(todo)} already finished, {len(todo)} to run "
        f"in {min(lo.shards, len(todo))} {lo.launcher} jobs")
    if not todo:
        return opts.out
    folder = opts.out / "submitit"
    if lo.launcher == "local":
        executor = submitit.LocalExecutor(folder=folder)
        executor.update_parameters(timeout_min=lo.timeout_min)
    else:
        if shutil.which("sbatch") is None:
            raise ValueError("--launcher slurm: no sbatch on PATH (not a Slurm login node)")
        executor = submitit.SlurmExecutor(folder=folder)
        params = dict(time=lo.timeout_min, cpus_per_task=opts.jobs, mem=f"{int(lo.mem_gb)}G", ntasks_per_node=1)
        if lo.partition:
            params["partition"] = lo.partition
        executor.update_parameters(**params)
    groups = shards_of(todo, lo.shards)
    jobs = [executor.submit(run_shard, dataclasses.replace(opts, files=tuple(g), prepared=True)) for g in groups]
    (opts.out / "launcher.json").write_text(json.dumps(
        {"launcher": lo.launcher, "jobs": [j.job_id for j in jobs], "shards": [len(g) for g in groups]}, indent=2) + "\n")
    say(f"[paritybench] submitted {len(jobs)} jobs: {', '.join(j.job_id for j in jobs)} (logs: {folder})")
    failed = 0
    for job, group in zip(jobs, groups):
        try:
            job.result()
            say(f"[paritybench] job {job.job_id} done ({len(group)} files)")
        except Exception as exc:  # noqa: BLE001 - a lost job: its files stay unfinished, a rerun resumes them
            failed += 1
            say(f"[paritybench] job {job.job_id} failed ({type(exc).__name__}: {str(exc).splitlines()[0][:200]}); "
                "its unfinished files run again on the next run")
    if failed:
        say(f"[paritybench] {failed} of {len(jobs)} jobs failed: the same command resumes them")
    return opts.out


def _refuse_if_running(out: Path, submitit) -> None:
    """Slurm jobs of an earlier submission still running would share files' logs with new ones."""
    meta_path = out / "launcher.json"
    if not meta_path.exists():
        return
    meta = json.loads(meta_path.read_text())
    if meta.get("launcher") != "slurm":
        return   # (a local job ends with the driver that started it)
    running = [jid for jid in meta.get("jobs", [])
               if not submitit.SlurmJob(folder=out / "submitit", job_id=jid).done()]
    if running:
        raise ValueError(f"Slurm jobs {', '.join(running)} of an earlier submission still run into {out}; "
                         "wait for them (or scancel them) and run again")
