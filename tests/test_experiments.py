"""The experiment harness (experiments/): one tiny sweep end to end, cell isolation, plans, checks.

The model here is a two-layer MLP defined by this test (written to a temporary module and reached
through a test-only ``model=_tiny`` config on Hydra's search path), so the harness is tested
without the benchmark models and without slow graph compilers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest
import torch

from experiments import plot
from experiments.cells import run_cell
from experiments.measure import compare_outputs, time_calls
from experiments.plan import make_plan, override_keys

ROOT = Path(__file__).resolve().parent.parent
CONF = ROOT / "experiments" / "conf"

TINY_MODULE = textwrap.dedent('''
    import os, signal, time
    import torch

    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = torch.nn.Linear(8, 16)
            self.l2 = torch.nn.Linear(16, 4)

        def forward(self, x):
            return self.l2(torch.relu(self.l1(x)))

    def _get_input(batch_size=1, size="smoke", seed=0):
        return [torch.randn(batch_size, 8, generator=torch.Generator().manual_seed(seed))], {}

    def build(name, size="smoke", seed=0):
        torch.manual_seed(seed)
        return Tiny().eval(), _get_input

    def build_segfault(name, size="smoke", seed=0):
        os.kill(os.getpid(), signal.SIGSEGV)

    def build_hang(name, size="smoke", seed=0):
        time.sleep(600)

    def build_hog(name, size="smoke", seed=0):
        hog = bytearray(16 * 2**30)  # past the cell's 3 GiB address-space cap
        return hog

    def build_raise(name, size="smoke", seed=0):
        raise RuntimeError("this model does not build")
''')

TINY_CONFIG = textwrap.dedent('''
    # @package model._tiny
    name: _tiny
    label: Tiny
    builder: tinymodel:build
    kinds: [bs]
''')


MISSING_COMPILER_CONFIG = textwrap.dedent('''
    # @package compiler._missing
    name: _missing
    label: Missing
    frontend: eager
    backend: null
    requires: [a_module_that_is_not_installed]
''')


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding ``tinymodel.py`` and ``conf/model/_tiny.yaml``."""
    root = tmp_path_factory.mktemp("tiny")
    (root / "tinymodel.py").write_text(TINY_MODULE)
    (root / "conf" / "model").mkdir(parents=True)
    (root / "conf" / "model" / "_tiny.yaml").write_text(TINY_CONFIG)
    (root / "conf" / "compiler").mkdir()
    (root / "conf" / "compiler" / "_missing.yaml").write_text(MISSING_COMPILER_CONFIG)
    return root


def _env(tiny: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tiny), str(ROOT), env.get("PYTHONPATH", "")])
    return env


def _run(tiny: Path, results: Path, *overrides: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "experiments.run", "experiment=fig15", "model=_tiny",
               "compiler=[eager,magpy-eager,_missing]", "bs=[1,2]", "device=cpu", "size=smoke", "warmup=1", "repeat=3",
               "progress=false", f"hydra.searchpath=[file://{tiny / 'conf'}]", f"results_dir={results}",
               f"hydra.run.dir={results / 'hydra'}", *overrides]
    proc = subprocess.run(command, cwd=ROOT, env=_env(tiny), capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def test_tiny_sweep_end_to_end(tiny: Path, tmp_path: Path) -> None:
    """eager and magpy-eager on the tiny model at two batch sizes: rows, summary, meta, figure, resume."""
    _run(tiny, tmp_path)
    run_dir = tmp_path / "fig15" / "smoke-cpu"
    raw = pd.read_csv(run_dir / "raw.csv")
    assert sorted(zip(raw["compiler"], raw["bs"])) == [("_missing", 1), ("_missing", 2), ("eager", 1), ("eager", 2),
                                                        ("magpy-eager", 1), ("magpy-eager", 2)]
    missing = raw[raw["compiler"] == "_missing"]
    assert (missing["status"] == "unavailable").all() and missing["mean_s"].isna().all()
    assert (missing["error"] == "a_module_that_is_not_installed not installed").all()
    raw = raw[raw["compiler"] != "_missing"]
    assert (raw["status"] == "ok").all(), raw[["compiler", "status", "error"]].to_string()
    assert raw["correct"].all()
    assert (raw["mean_s"] > 0).all() and (raw["n"] == 3).all()
    assert (raw["min_s"] <= raw["mean_s"]).all() and (raw["mean_s"] <= raw["max_s"]).all()

    summary = pd.read_csv(run_dir / "summary.csv")
    eager = summary[(summary["compiler"] == "eager") & (summary["model"] == "_tiny")]
    assert (eager["speedup"] == 1.0).all()
    magpy_rows = summary[(summary["compiler"] == "magpy-eager") & (summary["model"] == "_tiny")]
    assert (raw["statistic"] == "median").all()  # the smoke size's statistic
    for _, row in magpy_rows.iterrows():
        expected = raw[(raw["compiler"] == "eager") & (raw["bs"] == row["bs"])]["median_s"].item() / \
            raw[(raw["compiler"] == "magpy-eager") & (raw["bs"] == row["bs"])]["median_s"].item()
        assert row["speedup"] == pytest.approx(expected)
    assert set(summary[summary["model"] == "GeoMean"]["compiler"]) == {"eager", "magpy-eager", "_missing"}
    assert summary[summary["compiler"] == "_missing"]["speedup"].isna().all()

    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["versions"]["torch"] == torch.__version__
    assert meta["device"] == "cpu" and meta["config"]["size"]["name"] == "smoke"
    assert (run_dir / "fig15.png").stat().st_size > 0 and (run_dir / "fig15.pdf").stat().st_size > 0

    # Re-running skips finished cells; force=true measures them again.
    stamps = {p: p.stat().st_mtime_ns for p in run_dir.glob("cells/*/row.json")}
    proc = _run(tiny, tmp_path)
    assert "6 cells, 0 to run" in proc.stdout + proc.stderr
    assert {p: p.stat().st_mtime_ns for p in run_dir.glob("cells/*/row.json")} == stamps
    proc = _run(tiny, tmp_path, "force=true", "compiler=[eager]", "bs=1", "plot=false")
    assert "1 cells, 1 to run" in proc.stdout + proc.stderr

    # The figure is re-drawn from the CSVs alone.
    (run_dir / "fig15.png").unlink()
    assert plot.plot("fig15", run_dir)[0].exists()


def _spec(tiny_builder: str, tmp_path: Path) -> dict:
    return {
        "experiment": "fig15", "runner": "inference", "device": "cpu", "size": "smoke", "warmup": 1, "repeat": 2,
        "n_inputs": 2, "seed": 0, "threads": 1,
        "tolerance": {"float32": {"rtol": 1e-3, "atol": 1e-3}},
        "model": {"name": "_tiny", "builder": tiny_builder},
        "compiler": {"name": "eager", "frontend": "eager", "backend": None, "requires": []},
        "key": {"experiment": "fig15", "model": "_tiny", "compiler": "eager", "bs": 1}, "cell_id": "x",
    }


@pytest.mark.parametrize(("builder", "timeout_s", "status", "message"), [
    ("tinymodel:build_segfault", 60, "crash", "signal SIGSEGV"),
    ("tinymodel:build_hang", 4, "timeout", "4 s limit"),
    ("tinymodel:build_hog", 60, "error", "MemoryError"),
    ("tinymodel:build_raise", 60, "error", "RuntimeError: this model does not build"),
])
def test_failing_cell_becomes_a_row(tiny: Path, tmp_path: Path, builder: str, timeout_s: float, status: str,
                                    message: str) -> None:
    """A cell that crashes, hangs, runs out of memory or raises still yields one row saying why."""
    row = run_cell(_spec(builder, tmp_path), tmp_path / "cell", timeout_s=timeout_s, mem_limit_bytes=3 * 2**30,
                   env=_env(tiny))
    assert row["status"] == status
    assert message in row["error"]
    assert (tmp_path / "cell" / "log.txt").exists()


def test_unavailable_compiler_is_marked_not_measured(tiny: Path, tmp_path: Path) -> None:
    spec = _spec("tinymodel:build", tmp_path)
    spec["compiler"] = {"name": "lazytensor-xla", "frontend": "lazytensor", "backend": "xla",
                        "requires": ["a_module_that_is_not_installed"]}
    row = run_cell(spec, tmp_path / "cell", timeout_s=60, mem_limit_bytes=None, env=_env(tiny))
    assert row["status"] == "unavailable"
    assert row["error"] == "a_module_that_is_not_installed not installed"
    assert "mean_s" not in row


def test_compare_outputs_tolerance_per_dtype() -> None:
    tol = {"float32": {"rtol": 1e-3, "atol": 1e-3}, "float16": {"rtol": 1e-2, "atol": 1e-2}}
    ref = {"logits": torch.ones(4), "ids": torch.arange(3)}
    assert compare_outputs({"logits": torch.ones(4) + 5e-4, "ids": torch.arange(3)}, ref, tol)[0]
    assert not compare_outputs({"logits": torch.ones(4) + 5e-2, "ids": torch.arange(3)}, ref, tol)[0]
    assert not compare_outputs({"logits": torch.ones(4), "ids": torch.arange(3) + 1}, ref, tol)[0]
    assert not compare_outputs((torch.ones(4),), (torch.ones(5),), tol)[0]
    half = torch.ones(4, dtype=torch.float16)
    assert compare_outputs(half + 5e-3, half, tol)[0]  # within float16's looser bar
    with pytest.raises(ValueError, match="no tolerance configured for dtype torch.float64"):
        compare_outputs(torch.ones(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64), tol)


def test_time_calls_statistics() -> None:
    calls = []
    stats = time_calls(lambda x: calls.append(x), [((1,), {}), ((2,), {})], warmup=2, repeat=3, sync=lambda: None)
    assert calls == [1, 2, 1, 2, 1] and stats["n"] == 3
    assert stats["min_s"] <= stats["median_s"] <= stats["max_s"]
    with pytest.raises(ValueError, match="repeat"):
        time_calls(lambda: None, [((), {})], warmup=0, repeat=0, sync=lambda: None)


def test_plan_uses_size_plan_unless_command_line_sets_the_key() -> None:
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose("config", overrides=["experiment=fig15", "device=cpu", "size=smoke"])
        plan = make_plan(cfg, cli_keys=set())
        assert [c["name"] for c in plan.compilers] == list(cfg.compiler)  # the paper's eight
        assert len(plan.models) == 8 and plan.run_id == "smoke-cpu"
        assert plan.bs == list(cfg.experiment.plan.smoke.bs) != list(cfg.experiment.plan.paper.bs)
        assert plan.warmup == cfg.size.warmup and plan.repeat == cfg.size.repeat and plan.threads == 1

        # An experiment's size plan may keep a subset of the selected compilers and models.
        overrides = ["experiment=fig15", "device=cpu", "size=paper", "+experiment.plan.paper.compilers=[eager]",
                     "+experiment.plan.paper.models=[bert,resnet]"]
        plan = make_plan(compose("config", overrides=overrides), cli_keys=override_keys(overrides))
        assert [c["name"] for c in plan.compilers] == ["eager"] and plan.bs == [1, 16]
        assert [m["name"] for m in plan.models] == ["bert", "resnet"] and plan.statistic == "mean"

        overrides = ["experiment=fig15", "device=cpu", "size=smoke", "compiler=[eager,lazytensor-xla]", "bs=[4]",
                     "model=bert", "repeat=7"]
        cfg = compose("config", overrides=overrides)
        plan = make_plan(cfg, cli_keys=override_keys(overrides))
        assert [c["name"] for c in plan.compilers] == ["eager", "lazytensor-xla"]
        assert [m["name"] for m in plan.models] == ["bert"] and plan.bs == [4] and plan.repeat == 7

        cfg = compose("config", overrides=["experiment=fig15", "device=cpu", "size=smoke", "bs=[0]"])
        with pytest.raises(ValueError, match="bs must be a positive int"):
            make_plan(cfg, cli_keys={"bs"})


def test_flags_go_before_overrides() -> None:
    from experiments.run import overrides_last

    assert overrides_last(["run.py", "experiment=fig15", "-m", "model=a,b", "--cfg", "job"]) == \
        ["run.py", "-m", "--cfg", "job", "experiment=fig15", "model=a,b"]


def test_override_keys() -> None:
    assert override_keys(["+bs=1", "model=[a,b]", "cell.timeout_s=3", "~plot", "hydra/launcher=local"]) == \
        {"bs", "model", "cell", "plot", "hydra"}
