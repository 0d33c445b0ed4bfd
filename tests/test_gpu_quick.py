"""``./reproduce.sh gpu-quick``: its plan, its budget, and its CPU dry run end to end.

The GPU run itself needs a GPU machine (results/gpu/<card>/ holds the runs made on one); here the same
driver runs its plan on the CPU at smoke size with backend eager, one model, and must write every
table and the summary.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from experiments import gpu_quick


def test_plan_covers_fig15s_eight_models():
    assert sorted(gpu_quick.MODELS) == ["align", "bert", "deberta", "densenet", "monodepth", "quantized", "resnet",
                                        "tridentnet"]


def test_plan_runs_fig15_first_and_costly_models_last():
    steps = gpu_quick.plan(["bert", "deberta", "resnet"], "inductor")
    labels = [(s.experiment, s.model) for s in steps]
    assert labels[0] == ("fig15", "bert")
    assert labels.index(("table2", "deberta")) < labels.index(("fig15", "deberta"))
    assert labels[-2:] == [("fig15", "deberta"), ("fig16", "deberta")]
    assert steps[0].compilers == ["eager", "dynamo-inductor", "magpy-inductor"]
    assert {s.experiment for s in steps} == {"fig15", "table2", "fig16"}


def test_a_step_past_the_budget_is_skipped_not_run(tmp_path):
    step = gpu_quick.Step("fig15", "bert", ["eager"])
    gpu_quick.run_step(step, device="cpu", size="smoke", run_id="x", warmup=1, repeat=1,
                       deadline=time.monotonic() + 3, min_step_s=5, python="/nonexistent/python",
                       results=tmp_path)
    assert step.status == "skipped" and "budget" in step.note


@pytest.mark.slow
def test_cpu_dry_run_stopped_by_its_budget_continues_in_the_next_call_and_writes_every_table(tmp_path):
    """A loan ends mid-plan: the first call's budget stops it after its first step; the second call
    runs only what is left and the summary covers both calls."""
    out = tmp_path / "summary"

    def call(budget_s: int, *more: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "experiments.gpu_quick", "--device", "cpu", "--backend", "eager",
                               "--models", "quantized", "--budget-s", str(budget_s), "--results-dir",
                               str(tmp_path / "results"), "--out", str(out), *more],
                              capture_output=True, text=True, timeout=600)

    # (a step needs all but a second of the budget to start: the first one starts, the next cannot
    # however fast the first ran, and the first has the whole budget however slow the machine is)
    first = call(400, "--min-step-s", "399")
    assert first.returncode == 1, first.stdout[-3000:] + first.stderr[-3000:]
    after_first = [s["status"] for s in json.loads((out / "steps.json").read_text())]
    assert after_first[0] == "ok" and "ok" in after_first and after_first != ["ok"] * 3, after_first
    assert "run it again to continue" in first.stdout
    second = call(400)
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
    steps = json.loads((out / "steps.json").read_text())
    assert [s["status"] for s in steps] == ["ok"] * 3
    assert [s["note"] == "finished in an earlier call" for s in steps] == [a == "ok" for a in after_first]
    assert second.stdout.count("[gpu-quick] fig15") == 0
    readme = (out / "README.md").read_text()
    for experiment in ("fig15", "table2", "fig16"):
        assert f"## {experiment}" in readme
        assert (out / f"{experiment}-summary.csv").exists()
    assert "magpy-eager" in readme and "no cell finished" not in readme


def test_without_a_gpu_it_names_the_dry_run_flag_instead_of_starting_one(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.fail("this test expects a machine without a GPU (as CI is)")
    proc = subprocess.run([sys.executable, "-m", "experiments.gpu_quick", "--results-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "--device cpu" in proc.stderr and "no GPU" in proc.stderr
    assert not any(tmp_path.iterdir())   # (nothing ran)


def test_ctrl_c_stops_every_child_and_says_one_line(tmp_path):
    import os
    import signal

    proc = subprocess.Popen([sys.executable, "-m", "experiments.gpu_quick", "--device", "cpu", "--backend", "eager",
                             "--models", "quantized", "--budget-s", "400", "--results-dir", str(tmp_path / "results"),
                             "--out", str(tmp_path / "summary")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    # (as from a terminal: a test run started in the background, `pytest &`, hands its children
    # SIGINT ignored, and Python then never turns Ctrl-C into KeyboardInterrupt)
    seen = []
    for line in proc.stdout:   # (until the first step starts: it prints the time left)
        seen.append(line)
        if "s left)" in line:
            break
    time.sleep(3)   # (its child process is running by now)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    out = "".join(seen) + out
    assert proc.returncode == 130, out[-2000:] + err[-2000:]
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("[gpu-quick] interrupted")
    marker = f"results_dir={tmp_path / 'results'}".encode()
    left = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    if marker in fh.read():
                        left.append(entry)
            except OSError:
                pass   # (a process that ended meanwhile)
    assert left == [], "a step's process outlived gpu-quick"
