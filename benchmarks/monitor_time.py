"""Monitor-run time of a model on each CPython, side by side.

    python benchmarks/monitor_time.py [--model bert] [--size paper] [--repeat 2]
    python benchmarks/monitor_time.py --pythons .venv/bin/python .venv-3.12/bin/python ...
    python benchmarks/monitor_time.py --base e950c65 --models bert resnet [--rounds 3]

One interpreter: times an eager call, then the first call of ``magpy.compile(model,
backend="eager")`` after a fresh ``magpy.reset()``: its monitor run (``stats.analysis_time_s``:
the program under capture plus building the record's guard and mock) and the whole call (plus
the "eager" backend), and prints one JSON line.
With ``--pythons``, runs itself under each interpreter in turn and prints a table.
With ``--base REV``, compares this checkout with commit REV (a temporary git worktree) under this
interpreter: each round runs one fresh process per model and tree, alternating the trees, and the
table gives the median monitor run of each tree and their ratio (this tree / REV). Both trees are
measured in the same run, so a busy machine slows both alike.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def measure(model_name: str, size: str, repeat: int, root: Path = ROOT) -> dict:
    sys.path.insert(0, str(root))
    import torch

    import magpy
    from experiments.measure import timed_call

    torch.set_num_threads(1)
    mod = importlib.import_module(f"models.{model_name}")
    model = mod.get_model(size=size).eval()
    args, kwargs = mod.get_input(size=size)
    eager, first, monitor = [], [], []
    with torch.no_grad():
        model(*args, **kwargs)   # warm up the allocator and lazy imports
        for _ in range(repeat):
            eager.append(timed_call(model, args, kwargs)[1])
            magpy.reset()
            cm = magpy.compile(model, backend="eager")
            first.append(timed_call(cm, args, kwargs)[1])
            st = magpy.stats(cm)
            monitor.append(st.analysis_time_s)
            assert st.monitor_runs == 1, st
    return {"python": sys.version.split()[0], "model": model_name, "size": size,
            "graphs": st.graph_count, "breaks": st.break_reasons[:1],
            "eager_s": statistics.median(eager), "first_call_s": statistics.median(first),
            "monitor_s": statistics.median(monitor)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="bert")
    p.add_argument("--size", default="paper", choices=["paper", "smoke"])
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--pythons", nargs="+", help="interpreters to compare (each needs torch and the project)")
    p.add_argument("--base", help="a commit to compare this checkout with (same interpreter)")
    p.add_argument("--models", nargs="+", default=["bert", "resnet"], help="models for --base")
    p.add_argument("--rounds", type=int, default=3, help="alternating rounds for --base")
    p.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    opts = p.parse_args()
    if opts.base:
        compare_with(opts.base, opts.models, opts.size, opts.rounds)
        return
    if not opts.pythons:
        print(json.dumps(measure(opts.model, opts.size, opts.repeat, opts.root)), flush=True)
        return
    rows = []
    for py in opts.pythons:
        out = subprocess.run([py, __file__, "--model", opts.model, "--size", opts.size, "--repeat", str(opts.repeat)],
                             capture_output=True, text=True)
        if out.returncode != 0:
            print(f"{py}: failed\n{out.stderr[-2000:]}", file=sys.stderr)
            continue
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"{opts.model} ({opts.size}), one thread, median of {opts.repeat}:")
    print(f"{'python':>8} {'graphs':>6} {'eager call':>11} {'monitor run':>12} {'first call':>11} {'run/eager':>10}")
    for r in rows:
        print(f"{r['python']:>8} {r['graphs']:>6} {r['eager_s'] * 1e3:>9.1f}ms {r['monitor_s']:>10.2f} s "
              f"{r['first_call_s']:>9.2f} s {r['monitor_s'] / r['eager_s']:>10.1f}")
        if r["breaks"]:
            print(f"         break: {r['breaks'][0]}")


def compare_with(base: str, models: list[str], size: str, rounds: int) -> None:
    """Monitor-run time of this checkout vs commit ``base``, alternating fresh processes."""
    import shutil
    import tempfile

    where = Path(tempfile.mkdtemp(prefix="magpy-base-")) / "tree"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(where), base], check=True)
    try:
        for so in (ROOT / "magpy").glob("_speedups*.so"):  # the guard fast path, as in this checkout
            shutil.copy(so, where / "magpy" / so.name)
        trees = {"base": where, "this": ROOT}
        times: dict[tuple[str, str], list[float]] = {}
        for _ in range(rounds):
            for model in models:
                for name, tree in trees.items():
                    out = subprocess.run([sys.executable, __file__, "--model", model, "--size", size, "--repeat", "1",
                                          "--root", str(tree)], capture_output=True, text=True, cwd=tree,
                                         env={**os.environ, "PYTHONPATH": str(tree)})
                    if out.returncode != 0:
                        sys.exit(f"{name} tree, {model}: failed\n{out.stderr[-2000:]}")
                    row = json.loads(out.stdout.strip().splitlines()[-1])
                    times.setdefault((model, name), []).append(row["monitor_s"])
        print(f"monitor run ({size}, one thread), median of {rounds} fresh processes per tree, trees alternating:")
        print(f"{'model':>10} {base[:10]:>12} {'this tree':>12} {'this/base':>10}")
        for model in models:
            b, t = statistics.median(times[(model, "base")]), statistics.median(times[(model, "this")])
            print(f"{model:>10} {b:>10.3f} s {t:>10.3f} s {t / b:>10.2f}")
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(where)], check=False)


if __name__ == "__main__":
    main()
