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
from experiments.compare import Tolerance, compare
from experiments.measure import time_calls
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


HANG_CONFIG = textwrap.dedent('''
    # @package model._hang
    name: _hang
    label: Hang
    builder: tinymodel:build_hang
    kinds: []
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
    (root / "conf" / "model" / "_hang.yaml").write_text(HANG_CONFIG)
    (root / "conf" / "compiler").mkdir()
    (root / "conf" / "compiler" / "_missing.yaml").write_text(MISSING_COMPILER_CONFIG)
    return root


def _env(tiny: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tiny), str(ROOT), env.get("PYTHONPATH", "")])
    return env


def _command(tiny: Path, results: Path, *overrides: str) -> list[str]:
    return [sys.executable, "-m", "experiments.run", "experiment=fig15", "model=_tiny",
            "compiler=[eager,magpy-eager,_missing]", "bs=[1,2]", "device=cpu", "size=smoke", "warmup=1", "repeat=3",
            "progress=false", f"hydra.searchpath=[file://{tiny / 'conf'}]", f"results_dir={results}",
            f"hydra.run.dir={results / 'hydra'}", f"hydra.sweep.dir={results / 'sweep'}", *overrides]


def _run(tiny: Path, results: Path, *overrides: str, returncode: int = 0) -> subprocess.CompletedProcess:
    proc = subprocess.run(_command(tiny, results, *overrides), cwd=ROOT, env=_env(tiny), capture_output=True,
                          text=True, timeout=240)
    assert proc.returncode == returncode, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


@pytest.mark.slow
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
    ("tinymodel:build_hang", 4, "timeout", "killed at its 4 s time limit"),
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
    if status in ("timeout", "crash"):  # experiments.units.unfinished: a ParityBench stage's words too
        assert row["error_class"] == status.capitalize()


def test_unavailable_compiler_is_marked_not_measured(tiny: Path, tmp_path: Path) -> None:
    spec = _spec("tinymodel:build", tmp_path)
    spec["compiler"] = {"name": "lazytensor-xla", "frontend": "lazytensor", "backend": "xla",
                        "requires": ["a_module_that_is_not_installed"]}
    row = run_cell(spec, tmp_path / "cell", timeout_s=60, mem_limit_bytes=None, env=_env(tiny))
    assert row["status"] == "unavailable"
    assert row["error"] == "a_module_that_is_not_installed not installed"
    assert "mean_s" not in row


def test_compare_tolerance_per_dtype() -> None:
    tol = Tolerance.from_config({"float32": {"rtol": 1e-3, "atol": 1e-3}, "float16": {"rtol": 1e-2, "atol": 1e-2}})
    ref = {"logits": torch.ones(4), "ids": torch.arange(3)}
    assert compare(ref, {"logits": torch.ones(4) + 5e-4, "ids": torch.arange(3)}, tol)
    wrong = compare(ref, {"logits": torch.ones(4) + 5e-2, "ids": torch.arange(3)}, tol)
    assert wrong.mismatch == "output['logits']: values differ (max abs diff 0.05)"
    assert abs(wrong.max_abs_err - 5e-2) < 1e-6
    assert compare(ref, {"logits": torch.ones(4), "ids": torch.arange(3) + 1}, tol).mismatch == \
        "output['ids']: values differ"
    assert compare((torch.ones(5),), (torch.ones(4),), tol).mismatch == "output[0]: shape (5,) vs (4,)"
    half = torch.ones(4, dtype=torch.float16)
    assert compare(half, half + 5e-3, tol)  # within float16's looser bar
    # atol scales with the output's magnitude: 1e-3 * 1000 allows 0.5 on values near 1000
    assert compare(torch.full((2,), 1000.0), torch.full((2,), 1000.5), tol)
    with pytest.raises(ValueError, match="no tolerance configured for dtype torch.float64"):
        compare(torch.ones(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64), tol)


def test_compare_walks_pytree_containers_and_user_objects() -> None:
    import collections

    from experiments.compare import EXACT

    Pair = collections.namedtuple("Pair", "left right")

    class Box:
        def __init__(self, t):
            self.t = t

    assert compare(Pair(torch.ones(2), 3), Pair(torch.ones(2), 3))
    assert compare(Pair(torch.ones(2), 3), Pair(torch.zeros(2), 3)).mismatch == \
        "output.left: values differ (max abs diff 1)"
    assert compare(Box(torch.ones(1)), Box(torch.ones(1) * 2)).mismatch == \
        "output.__dict__['t']: values differ (max abs diff 1)"
    assert compare([torch.ones(1)], [None]).mismatch == "output[0]: Tensor vs NoneType"
    assert not compare(torch.ones(2), torch.ones(2) + 1e-7, EXACT)
    structural = compare({"a": 1}, {"b": 1})
    assert structural.mismatch == "output: keys ['a'] vs ['b']" and structural.max_abs_err != structural.max_abs_err


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

        # Figure 17's input ranges are settings of the run: a cut changes every cell's identity.
        plan17 = make_plan(compose("config", overrides=["experiment=fig17", "device=cpu", "size=smoke"]), cli_keys=set())
        cut = ["experiment=fig17", "device=cpu", "size=smoke", "experiment.stream.bs_range=[1,4]"]
        plan17_cut = make_plan(compose("config", overrides=cut), cli_keys=override_keys(cut))
        assert plan17.options["stream"]["bs_range"] == [2, 16] and plan17_cut.options["stream"]["bs_range"] == [1, 4]
        assert plan17.settings() != plan17_cut.settings()

        cfg = compose("config", overrides=["experiment=fig15", "device=cpu", "size=smoke", "bs=[0]"])
        with pytest.raises(ValueError, match="bs must be a positive int"):
            make_plan(cfg, cli_keys={"bs"})


def test_flags_go_before_overrides() -> None:
    from experiments.run import overrides_last

    assert overrides_last(["run.py", "experiment=fig15", "-m", "model=a,b", "--cfg", "job"]) == \
        ["run.py", "-m", "--cfg", "job", "experiment=fig15", "model=a,b"]


def test_override_keys() -> None:
    assert override_keys(["+bs=1", "model=[a,b]", "cell.timeout_s=3", "~plot", "hydra/launcher=local"]) == \
        {"bs", "model", "cell", "cell.timeout_s", "plot", "hydra"}


def test_size_overrides_reach_the_plan() -> None:
    """``size.repeat=3`` sets what ``repeat=3`` sets, over the experiment's size plan (fig17's
    smoke plan says n_inputs 8); ``repeat=5 size.repeat=3`` is refused as ambiguous."""
    from hydra import compose, initialize_config_dir

    from experiments.plan import SettingsError

    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        base = ["experiment=fig17", "device=cpu", "size=smoke"]
        assert make_plan(compose("config", overrides=base), cli_keys=set()).n_inputs == 8
        overrides = [*base, "size.warmup=2", "size.repeat=3", "size.n_inputs=5", "size.statistic=mean",
                     "size.timeout_s=60", "size.threads=2"]
        plan = make_plan(compose("config", overrides=overrides), cli_keys=override_keys(overrides))
        assert (plan.warmup, plan.repeat, plan.n_inputs, plan.statistic, plan.timeout_s, plan.threads) == \
            (2, 3, 5, "mean", 60.0, 2)
        overrides = [*base, "repeat=5", "size.repeat=3"]
        with pytest.raises(SettingsError, match=r"repeat=5 and size.repeat=3 disagree"):
            make_plan(compose("config", overrides=overrides), cli_keys=override_keys(overrides))


def test_size_overrides_reach_the_cells_with_device_auto(tiny: Path, tmp_path: Path) -> None:
    """device=auto composes the config again for the device it picks: ``size.*`` overrides stay,
    the cells run with them (row.json, raw.csv) and meta.json records them; the pick is said."""
    command = [c for c in _command(tiny, tmp_path, "compiler=[eager]", "bs=1", "plot=false", "size.warmup=2",
                                   "size.repeat=4")
               if c not in ("device=cpu", "warmup=1", "repeat=3")]
    env = {k: v for k, v in _env(tiny).items() if k != "MAGPY_EXPECT_CUDA"}  # set in the GPU image
    proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    if not torch.cuda.is_available():
        assert f"device=auto: cpu (torch {torch.__version__}" in proc.stderr
    cell = next((tmp_path / "fig15").glob("smoke-*/cells/*/row.json"))
    row = json.loads(cell.read_text())
    assert (row["warmup"], row["repeat"], row["n"]) == (2, 4, 4)
    assert (row["settings"]["warmup"], row["settings"]["repeat"]) == (2, 4)
    meta = json.loads((cell.parent.parent.parent / "meta.json").read_text())
    assert (meta["config"]["size"]["warmup"], meta["config"]["size"]["repeat"]) == (2, 4)


@pytest.mark.parametrize(("override", "message"), [
    ("size.name=paper", "error: size.name cannot be set; choose the size with size=<name> (auto, paper, smoke)"),
    ("size.reapeat=5", "error: unknown setting 'size.reapeat'; valid: size.warmup, size.repeat, size.n_inputs,"),
    ("size.repeat=2", "error: repeat=3 and size.repeat=2 disagree; set one of them"),
])
def test_size_overrides_that_cannot_be_honoured_are_one_line(tiny: Path, tmp_path: Path, override: str,
                                                              message: str) -> None:
    proc = _run(tiny, tmp_path, override, returncode=2)
    assert proc.stderr.strip().startswith(message) and proc.stderr.strip().count("\n") == 0, proc.stderr
    assert not (tmp_path / "fig15").exists()


def test_device_auto_refuses_the_cpu_on_a_machine_meant_for_cuda(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    """A driver too old for torch's CUDA: is_available() is False with only a warning. device=auto
    must not measure the CPU then; device=cuda names torch's reason."""
    import warnings

    from experiments import plan as plan_module
    from experiments.plan import SettingsError, resolve_device

    def too_old() -> bool:
        warnings.warn("CUDA initialization: The NVIDIA driver on your system is too old (found version 11040).\n"
                      "Please update your GPU driver.", stacklevel=1)
        return False

    monkeypatch.setattr(torch.version, "cuda", "13.0")
    monkeypatch.setattr(torch.cuda, "is_available", too_old)
    monkeypatch.delenv("MAGPY_EXPECT_CUDA", raising=False)
    monkeypatch.setattr(plan_module, "NVIDIA_DEVICE_FILES", (str(tmp_path / "nvidia0"),))
    assert resolve_device("auto") == "cpu"  # no sign of a GPU: the CPU is what this machine has
    (tmp_path / "nvidia0").touch()
    with pytest.raises(SettingsError, match=r"device=auto on a machine meant for CUDA \(.*nvidia0\), but torch .* "
                                            r"\(CUDA 13.0\) sees no usable CUDA device: CUDA initialization: The "
                                            r"NVIDIA driver on your system is too old \(found version 11040\).; "
                                            r".*pass device=cpu"):
        resolve_device("auto")
    with pytest.raises(SettingsError, match=r"device=cuda, but .* too old"):
        resolve_device("cuda")
    assert resolve_device("cpu") == "cpu"
    (tmp_path / "nvidia0").unlink()
    monkeypatch.setenv("MAGPY_EXPECT_CUDA", "1")  # the GPU image started without --gpus
    with pytest.raises(SettingsError, match=r"MAGPY_EXPECT_CUDA=1"):
        resolve_device("auto")


# -- results keyed by their settings ---------------------------------------------------------------
def test_a_figures_words_are_not_part_of_its_cells_identity() -> None:
    """Rewording a title or a caption note must not turn measured cells into stale ones."""
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose("config", overrides=["experiment=fig18", "device=cpu", "size=smoke"])
        options = make_plan(cfg, cli_keys=set()).settings()["options"]
    assert cfg.experiment.note and "note" not in options and "title" not in options
    assert options["region"] is True  # a setting that changes the numbers stays




def test_rerun_with_other_settings_refuses_then_force_remeasures(tiny: Path, tmp_path: Path) -> None:
    """A run directory never mixes cells measured with different settings (here: repeat)."""
    proc = _run(tiny, tmp_path, "compiler=[eager]", "progress=true", "plot=false")
    lines = [line for line in proc.stdout.splitlines() if line.startswith(("[1/", "[2/"))]
    assert lines[0].startswith("[1/2] model=_tiny,compiler=eager,bs=1: ok, median ") and "ETA" in lines[0]
    assert lines[1].startswith("[2/2] model=_tiny,compiler=eager,bs=2: ok, median ")

    proc = _run(tiny, tmp_path, "compiler=[eager]", "bs=1", "repeat=2", returncode=2)
    assert proc.stderr.strip().count("\n") == 0 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("error: ") and "repeat: 3 recorded, 2 requested" in proc.stderr
    assert "force=true" in proc.stderr

    # force=true re-measures the requested cell and sets aside the one measured with repeat=3.
    subprocess.run(_command(tiny, tmp_path, "compiler=[eager]", "bs=1", "repeat=2", "force=true", "plot=false"),
                   cwd=ROOT, env=_env(tiny), capture_output=True, text=True, timeout=240, check=True,
                   preexec_fn=lambda: os.umask(0o022))
    run_dir = tmp_path / "fig15" / "smoke-cpu"
    raw = pd.read_csv(run_dir / "raw.csv")
    assert list(zip(raw["bs"], raw["n"], raw["repeat"])) == [(1, 2, 2)]
    assert (run_dir / "cells" / "experiment=fig15,model=_tiny,compiler=eager,bs=2" / "row.superseded.json").exists()
    row = json.loads((run_dir / "cells" / "experiment=fig15,model=_tiny,compiler=eager,bs=1" / "row.json").read_text())
    assert row["settings"]["repeat"] == 2 and row["settings"]["environment"]["torch"] == torch.__version__
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["config"]["repeat"] == 2 and meta["cells"] == {"total": 1, "ok": 1}
    # Results are readable by whoever the umask allows (mkstemp alone would make them 0600).
    for path in (run_dir / "raw.csv", run_dir / "summary.csv", run_dir / "meta.json",
                 run_dir / "cells" / "experiment=fig15,model=_tiny,compiler=eager,bs=1" / "row.json"):
        assert path.stat().st_mode & 0o777 == 0o644, path


def test_multirun_meta_describes_the_whole_run_directory(tiny: Path, tmp_path: Path) -> None:
    """Two jobs of one sweep write one directory; meta.json lists the cells of both."""
    _run(tiny, tmp_path, "-m", "compiler=eager,_missing", "bs=1", "plot=false")
    meta = json.loads((tmp_path / "fig15" / "smoke-cpu" / "meta.json").read_text())
    assert meta["compilers"] == ["_missing", "eager"] and set(meta["config"]["compiler"]) == {"_missing", "eager"}
    assert meta["cells"] == {"total": 2, "ok": 1, "unavailable": 1}


def test_stale_rows_name_what_changed(tmp_path: Path) -> None:
    from experiments.results import RunStore, settings_diff

    store = RunStore(tmp_path)
    run = {"repeat": 3, "statistic": "median", "environment": {"torch": "2.13.0", "git_sha": "a"}}
    store.save("a", {"cell_id": "a", "status": "ok", "settings": {**run, "model": {"name": "a"}}})
    store.save("b", {"cell_id": "b", "status": "ok", "settings": {**run, "model": {"name": "b"}}})
    store.save("old", {"cell_id": "old", "status": "ok"})
    now = {**run, "environment": {"torch": "2.13.0", "git_sha": "b"}}
    stale = store.stale({"a": {**now, "model": {"name": "a"}}}, now)
    assert stale == {"a": ["environment.git_sha: a recorded, b requested"],
                     "b": ["environment.git_sha: a recorded, b requested"],
                     "old": ["settings: not recorded (measured by an older harness)"]}
    assert store.stale({"a": {**run, "model": {"name": "a"}}}, run) == {
        "old": ["settings: not recorded (measured by an older harness)"]}
    assert settings_diff({"model": {"name": "a"}, "repeat": 1}, {"model": {"name": "b"}, "repeat": 1},
                         per_cell=False) == []


# -- one-line errors, Ctrl-C, progress -------------------------------------------------------------


@pytest.mark.parametrize(("overrides", "message"), [
    (["bs=abc"], "bs must be a positive int or a non-empty list of them, got 'abc'"),
    (["statistic=foo"], "statistic must be mean or median, got 'foo'"),
    (["repeat=0"], "repeat must be an int >= 1, got 0"),
    (["warmup=x"], "warmup must be an int >= 0, got 'x'"),
    (["model=[]"], "no model selected"),
    (["experiment=fig17", "model=align"], "fig17 needs dynamic inputs; model 'align' has none"),
])
def test_bad_settings_are_settings_errors(overrides: list[str], message: str) -> None:
    from hydra import compose, initialize_config_dir

    from experiments.plan import SettingsError
    from experiments.runners import dynamic

    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose("config", overrides=["experiment=fig15", "device=cpu", "size=smoke", *overrides])
        with pytest.raises(SettingsError, match=message.replace("[", r"\[").replace("(", r"\(")):
            plan = make_plan(cfg, cli_keys=override_keys(overrides))
            dynamic.cells(plan)


@pytest.mark.parametrize(("override", "message"), [
    ("device=cuda", f"error: device=cuda, but torch {torch.__version__} sees no CUDA device here; "
                    "use device=cpu or device=auto"),
    ("model=nosuch", "error: In 'config': Could not find 'model/nosuch'; available: _hang, _tiny, align, bert,"),
])
def test_bad_settings_on_the_command_line_are_one_line_and_write_nothing(tiny: Path, tmp_path: Path, override: str,
                                                                          message: str) -> None:
    if override == "device=cuda" and torch.cuda.is_available():
        pytest.skip("needs a machine without CUDA")
    proc = _run(tiny, tmp_path, override, returncode=2)
    assert proc.stderr.strip().startswith(message) and proc.stderr.strip().count("\n") == 0, proc.stderr
    assert not (tmp_path / "fig15").exists()


def test_ctrl_c_ends_with_one_line_and_kills_the_cell(tiny: Path, tmp_path: Path) -> None:
    import signal
    import time

    # A test run started in the background (`cmd &` in a script) ignores SIGINT, and a child
    # inherits that: give the run the default disposition, as a terminal's foreground job has.
    proc = subprocess.Popen(_command(tiny, tmp_path, "model=_hang", "compiler=[eager]", "bs=1"), cwd=ROOT,
                            env=_env(tiny), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    cell = tmp_path / "fig15" / "smoke-cpu" / "cells" / "experiment=fig15,model=_hang,compiler=eager,bs=1"
    deadline = time.monotonic() + 240   # a loaded CI machine imports torch slowly
    while not (cell / "log.txt").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert (cell / "log.txt").exists(), "the cell never started"
    time.sleep(2.0)   # the worker is running (and hanging) by now
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        pytest.fail(f"Ctrl-C did not end the run within 180 s; stderr: {err[-2000:]}")
    assert proc.returncode == 130, err
    assert "Traceback" not in err and err.strip().count("\n") == 0
    assert err.startswith("interrupted after 0 of 1 cells") and "the same command resumes" in err


def test_progress_prints_one_line_per_cell_when_not_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    from experiments.run import Progress

    with Progress("fig15", 3, enabled=True, terminal=False, processes=2) as progress:  # dynamo-xla: no process
        progress.finish("experiment=fig15,model=bert,compiler=eager,bs=1",
                        {"status": "ok", "statistic": "median", "median_s": 0.00123, "cell_wall_s": 2.0}, 2.0)
        progress.finish("experiment=fig15,model=bert,compiler=magpy-eager,bs=1",
                        {"status": "ok", "statistic": "median", "median_s": 0.001, "graph_count": 0, "fallbacks": 12,
                         "cell_wall_s": 4.0}, 4.0)
        progress.finish("experiment=fig15,model=bert,compiler=dynamo-xla,bs=1",
                        {"status": "unavailable", "error": "torch_xla not installed"}, 0.0)
    assert capsys.readouterr().out.splitlines() == [
        "[1/3] model=bert,compiler=eager,bs=1: ok, median 1.23 ms (2.0 s; ETA 0:02)",
        "[2/3] model=bert,compiler=magpy-eager,bs=1: ok, median 1 ms, 0 graphs, fell back to eager (12 calls) "
        "(4.0 s; ETA 0:00)",
        "[3/3] model=bert,compiler=dynamo-xla,bs=1: unavailable: torch_xla not installed (0.0 s)",
    ]


def test_the_terminal_bar_counts_down_the_same_eta() -> None:
    """rich's own ETA forgets progress older than 30 s; the bar shows Progress's estimate instead."""
    from experiments.run import Progress, _countdown

    progress = Progress("fig15", 3, enabled=False, processes=3)
    assert progress.seconds_left() is None and _countdown(progress).render(None).plain == "ETA -:--"
    progress.finish("experiment=fig15,model=bert,compiler=eager,bs=1", {"status": "ok", "cell_wall_s": 60.0}, 60.0)
    assert 119 < progress.seconds_left() <= 120   # two cells left at 60 s each
    assert _countdown(progress).render(None).plain in ("ETA 2:00", "ETA 1:59")


def test_a_setting_that_cannot_be_honoured_fails_the_cell() -> None:
    from experiments.compilers import prepare

    with pytest.raises(NotImplementedError, match="torchscript has no dynamic-shape option"):
        prepare({"name": "torchscript", "frontend": "torchscript", "backend": "torchscript"}, torch.nn.Linear(2, 2),
                "cpu", dynamic=True)
    # MagPy lifts sizes with the backends that serve any size; a backend that cannot fails the cell
    with pytest.raises(TypeError, match="dynamic=True needs a backend"):
        prepare({"name": "magpy-ts", "frontend": "magpy", "backend": "torchscript"}, torch.nn.Linear(2, 2), "cpu",
                dynamic=True).fn(torch.randn(1, 2))


# -- figures from result files ---------------------------------------------------------------------


def _write_run(run_dir: Path, experiment: str, raw_rows: list[dict]) -> None:
    import importlib

    from experiments.results import RunStore

    runner = {"fig15": "inference", "fig18": "dynamic", "table2": "graphs", "fig16": "breakdown"}[experiment]
    store = RunStore(run_dir)
    for row in raw_rows:
        store.save(row["cell_id"], row)
    store.write_tables(importlib.import_module(f"experiments.runners.{runner}").summarize)


def _timed(model: str, compiler: str, median_s: float, **extra) -> dict:
    return {"experiment": "fig15", "model": model, "compiler": compiler, "bs": 1, "status": "ok", "correct": True,
            "mean_s": median_s, "median_s": median_s, "statistic": "median", "cell_id": f"{model},{compiler}",
            "model_label": model.title(), "compiler_label": compiler.title(), **extra}


def test_eager_only_runs_plot_eager_latency(tmp_path: Path) -> None:
    _write_run(tmp_path, "fig15", [_timed("bert", "eager", 0.002), _timed("resnet", "eager", 0.004)])
    png = plot.plot("fig15", tmp_path)[0]
    assert png.stat().st_size > 0


def test_figures_mark_fallbacks_and_failures_with_the_same_words(tmp_path: Path) -> None:
    from experiments.outcomes import OUTCOMES, outcome, table2_cell

    nan = float("nan")
    rows = [_timed("bert", "eager", 0.002), _timed("align", "eager", 0.004),
            _timed("bert", "magpy-inductor", 0.001, graph_count=1, fallbacks=0),
            _timed("align", "magpy-inductor", 0.004, graph_count=0, fallbacks=12,
                   break_reasons=f"assigns through a boolean mask ({ROOT}/models/align.py:3 in forward)"),
            _timed("bert", "torchscript", nan, status="error", error="RuntimeError: no"),
            _timed("align", "torchscript", nan, status="error", error="RuntimeError: no"),
            _timed("bert", "dynamo-xla", nan, status="unavailable", error="torch_xla not installed"),
            _timed("align", "dynamo-xla", nan, status="unavailable", error="torch_xla not installed")]
    _write_run(tmp_path, "fig15", rows)
    summary = pd.read_csv(tmp_path / "summary.csv")
    geo = summary[(summary["model"] == "GeoMean") & (summary["compiler"] == "magpy-inductor")]
    assert int(geo["n_models"].item()) == 2
    assert plot.plot("fig15", tmp_path)[0].stat().st_size > 0
    assert [outcome(r) for r in rows] == [None, None, None, OUTCOMES["fallback"], "failed", "failed", "unavailable",
                                          "unavailable"]
    from experiments.plot import _outcome_notes

    notes = _outcome_notes(summary, "model", {"dynamo-xla": "Dynamo-XLA"}, {})
    assert "unavailable: Dynamo-XLA on every model - torch_xla not installed" in notes
    assert any(n.startswith("fell back to eager (hatched") and "(models/align.py:3 in forward)" in n for n in notes)
    assert table2_cell({"status": "ok", "correct": True, "graph_count": 0, "break_reasons": "x"}) == \
        f"0 ({OUTCOMES['fallback']})"
    assert table2_cell({"status": "timeout"}) == "timed out"


def test_dynamo_graphs_are_counted_one_way_in_table2_and_the_timing_runs() -> None:
    """Backend invocations, counted by the same kind of counter (also ParityBench's and models.timing's):
    per call in Table 2, over the cell elsewhere, only for the compilation being measured."""
    from experiments.compilers import prepare
    from experiments.runners._common import compile_counts
    from experiments.runners.graphs import _count_dynamo

    class Split(torch.nn.Module):
        def forward(self, x):
            x = x + 1
            torch._dynamo.graph_break()
            return x * 2

    _, row = _count_dynamo({"compiler": {"backend": "eager"}}, Split(), (torch.ones(2),), {})
    assert row == {"graph_count": 2, "compiled_graphs": 2, "limit_hits": 0}
    compiled = prepare({"name": "dynamo-eager", "frontend": "dynamo", "backend": "eager"}, Split(), "cpu")
    compiled.fn(torch.ones(2))
    torch.compile(torch.cos, backend="eager")(torch.ones(2))  # another compilation in the process: not counted
    compiled.fn(torch.ones(2))
    assert compile_counts({"compiler": {"frontend": "dynamo"}}, compiled) == \
        {"graph_count": 2, "limit_hits": 0, "break_reasons": ""}
    # per call after warm-up: the graphs one more call runs
    assert compile_counts({"compiler": {"frontend": "dynamo"}}, compiled, probe=((torch.ones(2),), {}))["graph_count"] == 2


def test_dynamic_cell_reports_what_magpy_did_after_warm_up() -> None:
    """A Figure 17/18 cell (runner ``dynamic``, smoke size) of MagPy says per cell its monitor runs,
    backend compiles, graphs, splits, rolled loops and conditionals, and the monitor runs and calls
    served eagerly after the first pass (the LSTM's loop is rolled: none after it)."""
    from experiments.runners import dynamic

    spec = {"experiment": "fig18", "runner": "dynamic", "device": "cpu", "size": "smoke", "warmup": 0, "repeat": 1,
            "n_inputs": 3, "seed": 0, "threads": 1, "kind": "seqlen", "dynamic": False, "region": None,
            "tolerance": {"float32": {"rtol": 1e-3, "atol": 1e-3}},
            "model": {"name": "lstm", "builder": "models:build", "dynamic_builder": "models:dynamic_inputs"},
            "compiler": {"name": "magpy-eager", "frontend": "magpy", "backend": "eager", "requires": []},
            "key": {}, "cell_id": "x"}
    row = dynamic.measure(spec)
    assert row["correct"] and len(row["shapes"].split(",")) == 3, row
    assert (row["monitor_runs"], row["fallbacks"], row["splits"], row["conditionals"]) == (2, 0, 0, 0), row
    assert row["loop_regions"] >= 1 and row["backend_compiles"] >= row["graph_count"] > 0, row
    assert row["monitor_runs_after_warmup"] == 0 and row["eager_after_warmup"] == 0, row
    summary = dynamic.summarize(pd.DataFrame([{**row, "model": "lstm", "kind": "seqlen", "compiler": "magpy-eager",
                                               "status": "ok"}]))
    assert {"backend_compiles", "loop_regions", "eager_after_warmup"} <= set(summary.columns)


def test_gpu_estimate_prices_each_cell_from_the_measured_ones() -> None:
    """experiments.estimate (the READMEs' GPU column): a cell costs its compiler's measured cells'
    mean wall time plus the calls the plan adds; an unmeasured compiler takes its backend's; a cell
    needing torch_xla costs nothing (an `unavailable` row)."""
    from types import SimpleNamespace

    from experiments.estimate import cell_cost

    raw = pd.DataFrame([
        {"compiler": "eager", "cell_wall_s": 10.0, "mean_s": 0.01, "first_call_s": 0.0, "warmup": 20, "repeat": 50},
        {"compiler": "eager", "cell_wall_s": 20.0, "mean_s": 0.03, "first_call_s": 0.0, "warmup": 20, "repeat": 50},
        {"compiler": "magpy-inductor", "cell_wall_s": 40.0, "mean_s": 0.01, "first_call_s": 5.0, "warmup": 20,
         "repeat": 50},
    ])
    plan = SimpleNamespace(warmup=100, repeat=100, n_inputs=10, options={})
    eager = {"name": "eager", "frontend": "eager", "backend": None, "requires": []}
    assert cell_cost({"compiler": eager, "key": {"bs": 1}}, raw, plan) == pytest.approx((15 + 130 * 0.02,) * 2)
    low, high = cell_cost({"compiler": eager, "key": {"bs": 16}}, raw, plan)
    assert (low, high) == pytest.approx((15 + 130 * 0.02, 15 + 130 * 0.02 * 16))
    fullgraph = {"name": "fullgraph-inductor", "frontend": "fullgraph", "backend": "inductor", "requires": []}
    assert cell_cost({"compiler": fullgraph, "key": {"bs": 1}}, raw, plan) == pytest.approx((40 + 1.3,) * 2)
    xla = {"name": "magpy-xla", "frontend": "magpy", "backend": "xla", "requires": ["magpy", "torch_xla"]}
    assert cell_cost({"compiler": xla, "key": {"bs": 1}}, raw, plan) == (0.0, 0.0)


def test_fig15s_torchscript_row_runs_the_largest_regions_where_the_model_cannot_be_scripted(tmp_path: Path) -> None:
    """BERT's module cannot be scripted whole (transformers' config has no inspectable source), so
    Figure 15's TorchScript row is torchscript-regions: the cell measures BERT's scripted regions
    (smoke size) and the figure's notes say what was scripted."""
    import matplotlib.pyplot as plt
    from hydra import compose, initialize_config_dir

    from experiments.results import RunStore
    from experiments.runners import inference

    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose("config", overrides=["experiment=fig15", "device=cpu", "size=smoke"])
        names = [c["name"] for c in make_plan(cfg, cli_keys=set()).compilers]
    assert "torchscript-regions" in names and "torchscript" not in names

    compiler = {"name": "torchscript-regions", "label": "TorchScript-Regions", "frontend": "torchscript-regions",
                "backend": None, "requires": []}
    spec = {"experiment": "fig15", "runner": "inference", "device": "cpu", "size": "smoke", "warmup": 1, "repeat": 2,
            "seed": 0, "threads": 1, "tolerance": {"float32": {"rtol": 1e-3, "atol": 1e-3}},
            "model": {"name": "bert", "builder": "models:build"}, "compiler": compiler,
            "key": {"model": "bert", "compiler": "torchscript-regions", "bs": 1}, "cell_id": "x"}
    with pytest.raises(OSError, match="Failed to get source"):
        torch.jit.script(inference.build_program(spec)[0])
    row = inference.measure(spec)
    assert row["correct"] and row["regions"] >= 1 and row["median_s"] > 0, row
    assert "scripted region(s)" in row["notes"]

    base = {"experiment": "fig15", "bs": 1, "status": "ok", "correct": True, "statistic": "median",
            "model_label": "Bert"}
    rows = [{**base, "model": "bert", "compiler": "eager", "frontend": "eager", "median_s": 2 * row["median_s"],
             "mean_s": 2 * row["median_s"], "cell_id": "e"},
            {**base, "model": "bert", "compiler": "torchscript-regions", "compiler_label": "TorchScript-Regions",
             "frontend": "torchscript-regions", "median_s": row["median_s"], "mean_s": row["median_s"],
             "regions": row["regions"], "notes": row["notes"], "cell_id": "t"}]
    store = RunStore(tmp_path)
    for r in rows:
        store.save(r["cell_id"], r)
    store.write_tables(inference.summarize)
    summary = pd.read_csv(tmp_path / "summary.csv")
    assert summary[(summary["model"] == "bert") & (summary["compiler"] == "torchscript-regions")]["speedup"].iloc[0] > 0
    fig = plot.plot_speedups(tmp_path, "Figure 15")
    notes = " ".join(" ".join(t.get_text().split()) for t in fig.texts)
    plt.close(fig)
    assert "TorchScript-Regions: the whole model where torch.jit.script accepts it" in notes
    assert f"scripted: Bert {row['regions']} regions" in notes


def test_first_call_table_gives_the_medians_ratio_and_each_sides_rounds() -> None:
    """benchmarks/first_call.py: the capture ratio is of the medians, to three decimals (0.0999
    and 0.1049 are not both "0.10"), beside each side's lowest and highest capture."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("first_call", ROOT / "benchmarks" / "first_call.py")
    first_call = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(first_call)
    rows = [{"model": "bert", "backend": "eager", "frontend": f, "eager_s": 0.5, "first_s": 0.5 + c, "capture_s": c}
            for f, caps in (("magpy", (0.19, 0.21, 0.26)), ("dynamo", (2.0, 2.1, 2.4))) for c in caps]
    line = first_call.table(rows).splitlines()[-1]
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[6:] == ["0.210 s", "2.100 s", "0.100", "0.190-0.260 s", "2.000-2.400 s"], cells
