"""A paper-size subset of the artifact that fits in ten minutes on one GPU: ``./reproduce.sh gpu-quick``.

GPU machines are lent to this project now and then, for about fifteen minutes, bare each time. This
runs, in order of value, until a wall-clock budget is spent:

1. Figure 15 (end-to-end inference, batch size 1) for the paper's eight models with eager,
   TorchDynamo-Inductor and MagPy-Inductor;
2. Table 2's graph counts for the same models (TorchDynamo and MagPy, backend eager);
3. Figure 16's breakdown (monitor run vs backend compile, guard vs mock) for the same models.

Each model is one ``python -m experiments.run`` invocation into the run directory
``<results>/<experiment>/gpu-quick-<device>/`` (the usual settings checks apply), with the cell
timeout cut to what is left of the budget; a step that cannot start in the time left is listed as
skipped. Timing uses ``warmup`` and ``repeat`` below (the paper: 100 and 100), the mean as the
statistic, as the paper-size config says.

One loan rarely covers the plan, so a call continues where the last one stopped: ``steps.json``
(written after every step) says which steps finished, and those are not run again; a step that was
stopped or skipped runs again and its finished cells are kept. On a GPU the run directories live
in the tracked ``results/gpu/<card>/runs/``: commit the folder after a call and the next loan, on a
bare machine with a copy of the working tree, picks up from there.

At the end the summaries are gathered into ``results/gpu/<card>/`` (``README.md`` with the card,
versions and every table; the summary CSVs; the figures), the folder the top-level README's "GPU,
paper size" column points to; ``results/gpu/`` is tracked by git, so a session commits it.

``--device cpu`` runs the same plan on the CPU at smoke size (the dry run CI exercises, with
``--backend eager`` to keep it short); its results go to ``results/gpu-dry-run/`` (not tracked).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: The models of the plan (paper size on a GPU): fig15's eight, in order of value.
MODELS = ["bert", "resnet", "quantized", "densenet", "monodepth", "tridentnet", "deberta", "align"]
#: Models whose compile takes minutes at paper size (DeBERTa's TorchDynamo-Inductor compile alone
#: took 116 s on an H100; ALIGN holds two encoders): planned last.
COSTLY = {"deberta", "align"}


@dataclass
class Step:
    """One ``experiments.run`` invocation: an experiment for one model with some compilers."""

    experiment: str
    model: str
    compilers: list[str]
    status: str = "pending"
    seconds: float = 0.0
    note: str = ""
    extra: list[str] = field(default_factory=list)

    def label(self) -> str:
        return f"{self.experiment} {self.model} [{', '.join(self.compilers)}]"


def plan(models: list[str], backend: str) -> list[Step]:
    """The steps in the order they run (most valuable first)."""
    compiled = [f"dynamo-{backend}", f"magpy-{backend}"]
    # DeBERTa's TorchDynamo-Inductor compile alone took 116 s on an H100: the costly models go last,
    # after the cheap steps (graph counts; fig16 reuses fig15's Inductor cache) of the others.
    costly = [m for m in models if m in COSTLY]
    cheap = [m for m in models if m not in COSTLY]
    steps = [Step("fig15", m, ["eager", *compiled]) for m in cheap]
    steps += [Step("table2", m, ["dynamo-eager", "magpy-eager"]) for m in models]
    steps += [Step("fig16", m, [f"magpy-{backend}"]) for m in cheap]
    steps += [Step("fig15", m, ["eager", *compiled]) for m in costly]
    steps += [Step("fig16", m, [f"magpy-{backend}"]) for m in costly]
    return steps


def resume(steps: list[Step], recorded: list[dict]) -> int:
    """Mark the steps an earlier call finished (``steps.json``'s ``ok`` entries) as done; how many."""
    done = {r["experiment"] + "/" + r["model"] + "/" + ",".join(r["compilers"]): r
            for r in recorded if r.get("status") == "ok"}
    n = 0
    for step in steps:
        r = done.get(f"{step.experiment}/{step.model}/{','.join(step.compilers)}")
        if r is not None:
            step.status, step.seconds, step.note = "ok", r.get("seconds", 0.0), "finished in an earlier call"
            n += 1
    return n


def card_name(device: str) -> str:
    """The GPU's name (``NVIDIA H100 80GB HBM3``), or the CPU's for a dry run."""
    if device == "cuda":
        import torch

        return torch.cuda.get_device_name(0)
    return f"cpu dry run ({platform.machine()}, {os.cpu_count()} cores)"


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def run_step(step: Step, *, device: str, size: str, run_id: str, warmup: int, repeat: int,
             deadline: float, min_step_s: float, python: str, results: Path) -> None:
    """Run ``step`` as a child process; it gets at most what is left until ``deadline``."""
    left = deadline - time.monotonic()
    if left < min_step_s:
        step.status, step.note = "skipped", f"budget: {left:.0f} s left, a step needs {min_step_s:.0f} s"
        return
    args = [python, "-m", "experiments.run", f"experiment={step.experiment}", f"model=[{step.model}]",
            f"compiler=[{','.join(step.compilers)}]", "bs=[1]", f"device={device}", f"size={size}",
            f"run_id={run_id}", f"warmup={warmup}", f"repeat={repeat}", f"cell.timeout_s={int(max(left - 5, 10))}",
            f"results_dir={results}", "plot=false", *step.extra]
    print(f"[gpu-quick] {step.label()} ({left:.0f} s left)", flush=True)
    start = time.monotonic()
    # Its own session: at the deadline the whole tree (the cell process too) gets Ctrl-C, which the
    # runner answers by keeping the finished cells.
    proc = subprocess.Popen(args, cwd=ROOT, start_new_session=True)
    try:
        rc = proc.wait(timeout=max(left, 1))
    except subprocess.TimeoutExpired:
        rc = _stop(proc)
        step.note = "stopped at the budget's end"
    except KeyboardInterrupt:
        # (its own session sees no Ctrl-C from the terminal: it is passed on, and the tree ends
        # with this process, not after it)
        _stop(proc)
        raise
    step.seconds = time.monotonic() - start
    step.status = "ok" if rc == 0 else f"exit {rc}"


def _stop(proc: subprocess.Popen) -> int:
    """Ctrl-C to the step's whole process tree (the runner keeps its finished cells), then a kill
    if it has not ended within 20 s; its exit status."""
    os.killpg(proc.pid, signal.SIGINT)
    try:
        return proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        return proc.wait()


def gather(steps: list[Step], *, device: str, run_id: str, out: Path, card: str, budget_s: float,
           wall_s: float, warmup: int, repeat: int, size: str, results: Path) -> Path:
    """Copy each experiment's tables and figures into ``out`` and write its README.md."""
    out.mkdir(parents=True, exist_ok=True)
    env = _environment(steps, run_id, results)
    lines = [f"# gpu-quick on {card}", "",
             f"`./reproduce.sh gpu-quick` ({'paper' if size == 'paper' else size} size, device {device}): "
             f"{wall_s:.0f} s of a {budget_s:.0f} s budget.", "",
             "| | |", "| --- | --- |",
             f"| device | {card} |",
             f"| torch | {env.get('torch', '?')} |",
             f"| Python | {env.get('python', '?')} |",
             f"| MagPy commit | {env.get('commit', '?')} |",
             f"| date (UTC) | {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} |",
             f"| timing | batch size 1, {warmup} warm-up calls then the mean of {repeat} timed calls "
             f"(paper: 100 and 100) |", "",
             "## Steps", "", "| step | status | seconds | note |", "| --- | --- | ---: | --- |"]
    lines += [f"| {s.label()} | {s.status} | {s.seconds:.0f} | {s.note} |" for s in steps]
    for experiment in dict.fromkeys(s.experiment for s in steps):
        run_dir = results / experiment / run_id
        summary, raw = run_dir / "summary.csv", run_dir / "raw.csv"
        lines += ["", f"## {experiment}", ""]
        if not summary.exists():
            lines.append("no cell finished")
            continue
        shutil.copy(summary, out / f"{experiment}-summary.csv")
        if raw.exists():
            shutil.copy(raw, out / f"{experiment}-raw.csv")
        lines += _markdown(summary)
        failed = _failures(raw)
        if failed:
            lines += ["", "Cells that did not finish:", ""] + [f"- {f}" for f in failed]
    (out / "README.md").write_text("\n".join(lines) + "\n")
    return out


def _environment(steps: list[Step], run_id: str, results: Path) -> dict[str, str]:
    """torch, Python and commit as the cells recorded them (meta.json of the first run directory)."""
    for experiment in dict.fromkeys(s.experiment for s in steps):
        meta = results / experiment / run_id / "meta.json"
        if meta.exists():
            m = json.loads(meta.read_text())
            sha = (m.get("git_sha") or "unknown")[:10] + (" + uncommitted changes" if m.get("git_dirty") else "")
            return {"torch": (m.get("versions") or {}).get("torch", "?"), "python": m.get("python", "?"),
                    "commit": sha}
    return {}


def _markdown(path: Path) -> list[str]:
    with path.open() as f:
        rows = list(csv.reader(f))
    if not rows:
        return ["(empty)"]
    head, body = rows[0], rows[1:]
    return ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)] + \
           ["| " + " | ".join(_short(v) for v in r) + " |" for r in body]


def _short(value: str) -> str:
    try:
        number = float(value)
    except ValueError:
        return value.replace("|", "/")[:120]
    return f"{number:.4g}"


def _failures(raw: Path) -> list[str]:
    if not raw.exists():
        return []
    with raw.open() as f:
        return [f"{r.get('model')} {r.get('compiler')}: {r.get('status')}: {(r.get('error') or '')[:300]}"
                for r in csv.DictReader(f) if r.get("status") != "ok"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="reproduce.sh gpu-quick", description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", choices=["cuda", "cpu"], default=None,
                        help="cuda (paper size) or cpu (the dry run at smoke size); default: cuda if torch sees a GPU")
    parser.add_argument("--budget-s", type=float, default=540.0, help="wall-clock budget for every step (default 540)")
    parser.add_argument("--min-step-s", type=float, default=None,
                        help="a step starts only with this much of the budget left (default 20 on cuda, 5 on cpu)")
    parser.add_argument("--models", default=",".join(MODELS), help=f"comma-separated (default {','.join(MODELS)})")
    parser.add_argument("--backend", default="inductor", choices=["inductor", "eager"],
                        help="the compiled backend of fig15/fig16 (eager: a quick logic check)")
    parser.add_argument("--warmup", type=int, default=None, help="warm-up calls (default 20 on cuda, 2 on cpu)")
    parser.add_argument("--repeat", type=int, default=None, help="timed calls (default 50 on cuda, 5 on cpu)")
    parser.add_argument("--results-dir", type=Path, default=None,
                        help="where the experiments' run directories go (default: results/gpu/<card>/runs on "
                             "a GPU, tracked so that the next call resumes; results/ on the CPU)")
    parser.add_argument("--gather-only", action="store_true",
                        help="only rebuild the summary from the run directories (and the steps.json) already there")
    parser.add_argument("--card", default=None, help="the card's name for --gather-only (default: this machine's)")
    parser.add_argument("--out", type=Path, default=None,
                        help="where the summary goes (default results/gpu/<card> on cuda, results/gpu-dry-run on cpu)")
    args = parser.parse_args(argv)
    start = time.monotonic()
    from experiments.plan import SettingsError, describe_device, resolve_device

    try:  # as experiments.run's device=auto: never the CPU on a machine meant for CUDA
        device = args.device if args.gather_only else resolve_device(args.device or "auto")
        device = device or resolve_device("auto")
    except SettingsError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.device is None and device != "cuda" and not args.gather_only:
        print("error: torch sees no GPU here, and gpu-quick measures the paper size on one; "
              "`./reproduce.sh gpu-quick --device cpu` runs the same plan at smoke size on the CPU (a dry run)",
              file=sys.stderr)
        return 2
    if args.device is None:
        print(f"[gpu-quick] device: {describe_device(device)}", flush=True)
    size = "paper" if device == "cuda" else "smoke"
    warmup = args.warmup if args.warmup is not None else (20 if device == "cuda" else 2)
    repeat = args.repeat if args.repeat is not None else (50 if device == "cuda" else 5)
    min_step_s = args.min_step_s if args.min_step_s is not None else (20.0 if device == "cuda" else 5.0)
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    card = args.card or card_name(device)
    run_id = f"gpu-quick-{device}"
    out = args.out or (ROOT / "results" / ("gpu" if device == "cuda" else "gpu-dry-run") / slug(card))
    results = (args.results_dir or (out / "runs" if device == "cuda" else ROOT / "results")).resolve()
    deadline = start + args.budget_s
    steps = plan(models, args.backend)
    recorded = json.loads((out / "steps.json").read_text()) if (out / "steps.json").exists() else []
    if args.gather_only:
        steps = [Step(**r) for r in recorded] or steps
        wall = sum(s.seconds for s in steps)
        gather(steps, device=device, run_id=run_id, out=out, card=card, budget_s=args.budget_s, wall_s=wall,
               warmup=warmup, repeat=repeat, size=size, results=results)
        print(f"[gpu-quick] summary: {out / 'README.md'}", flush=True)
        return 0
    earlier = resume(steps, recorded)
    print(f"[gpu-quick] {card}: {len(steps)} steps ({earlier} finished in earlier calls), "
          f"budget {args.budget_s:.0f} s, size {size}", flush=True)
    out.mkdir(parents=True, exist_ok=True)

    def save() -> None:
        (out / "steps.json").write_text(json.dumps([s.__dict__ for s in steps], indent=1) + "\n")

    try:
        for step in steps:
            if step.status == "ok":
                continue
            run_step(step, device=device, size=size, run_id=run_id, warmup=warmup, repeat=repeat, deadline=deadline,
                     min_step_s=min_step_s, python=sys.executable, results=results)
            save()
    except KeyboardInterrupt:
        save()
        done = sum(s.status == "ok" for s in steps)
        print(f"[gpu-quick] interrupted: {done} of {len(steps)} steps finished (their cells are kept; "
              "run it again to continue, or `--gather-only` for the summary of what ran)", file=sys.stderr, flush=True)
        return 130
    where = gather(steps, device=device, run_id=run_id, out=out, card=card, budget_s=args.budget_s,
                   wall_s=time.monotonic() - start, warmup=warmup, repeat=repeat, size=size, results=results)
    save()
    left = sum(s.status != "ok" for s in steps)
    print(f"[gpu-quick] summary: {where / 'README.md'}"
          + (f" ({left} steps left: run it again to continue)" if left else ""), flush=True)
    return 0 if not left else 1


if __name__ == "__main__":
    sys.exit(main())
