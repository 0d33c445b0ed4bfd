"""The artifact's words match its numbers (issue 31): captions name the statistic that was plotted,
meta.json the values the cells ran with, Table 2 what each row counts (and the paper's values),
and a cached cell belongs to the code that measured it.

Result directories are written by hand (no model runs), so every test here takes well under a second
except the TorchDynamo ones, which compile a two-line function with the eager backend.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import pytest
import torch

from experiments import plot
from experiments.outcomes import OUTCOMES, outcome, table2_cell
from experiments.plan import make_plan, override_keys
from experiments.results import RunStore

ROOT = Path(__file__).resolve().parent.parent
CONF = ROOT / "experiments" / "conf"
RUNNERS = {"fig15": "inference", "fig16": "breakdown", "fig17": "dynamic", "fig18": "dynamic", "table2": "graphs"}


def _write_run(run_dir: Path, experiment: str, rows: list[dict], meta: dict | None = None) -> None:
    store = RunStore(run_dir)
    for row in rows:
        store.save(row["cell_id"], row)
    store.write_tables(importlib.import_module(f"experiments.runners.{RUNNERS[experiment]}").summarize)
    if meta is not None:
        (run_dir / "meta.json").write_text(json.dumps(meta))


def _meta(**config) -> dict:
    return {"device_name": "Some CPU x2", "versions": {"torch": torch.__version__},
            "config": {"size": {"name": "smoke", "statistic": "median", "repeat": 10}, **config}}


def _texts(fig: plt.Figure) -> str:
    words = [t.get_text() for t in fig.texts]
    for ax in fig.axes:
        words += [ax.get_xlabel(), ax.get_ylabel()] + [t.get_text() for t in ax.texts]
        legend = ax.get_legend()
        if legend is not None:
            words += [t.get_text() for t in legend.get_texts()]
    for legend in fig.legends:
        words += [t.get_text() for t in legend.get_texts()]
    plt.close(fig)
    return "\n".join(" ".join(w.split()) for w in words)  # one line per text, wrapping undone


def _breakdown(model: str, statistic: str) -> dict:
    return {"experiment": "fig16", "model": model, "compiler": "magpy-inductor", "bs": 1, "status": "ok",
            "correct": True, "mean_s": 1.05e-3, "median_s": 0.2e-3, "statistic": statistic,
            "cell_id": f"{model}-{statistic}", "analysis_s": 0.5, "backend_compile_s": 1.5, "monitor_other_s": 0.0,
            "matched_calls": 10, "guard_s": 0.05e-3, "mock_s": 0.15e-3, "fallbacks": 0}


# -- the statistic a caption names is the one plotted -------------------------------------------


@pytest.mark.parametrize("statistic", ["median", "mean"])
def test_fig16_matched_run_plots_the_statistic_its_caption_names(tmp_path: Path, statistic: str) -> None:
    """Panel (b)'s number is the run's statistic of the timed calls (it was the mean under a
    "median" caption), and the caption says which, whatever the size config's default."""
    _write_run(tmp_path, "fig16", [_breakdown("bert", statistic)], _meta())
    summary = pd.read_csv(tmp_path / "summary.csv")
    expected = {"median": 0.2, "mean": 1.05}[statistic]
    assert summary["matched_ms"].item() == pytest.approx(expected)
    with plt.rc_context(plot._STYLE):
        text = _texts(plot.plot_breakdown(tmp_path, "Figure 16"))
    assert f"{statistic} of timed calls" in text and f"{expected:.3g} ms ({statistic})" in text
    other = {"median": "mean", "mean": "median"}[statistic]
    assert f"{other} of timed calls" not in text
    assert "other" not in text.split("\n")  # no legend entry for a part that is nowhere visible


@pytest.mark.parametrize("statistic", ["median", "mean"])
def test_fig16_guard_and_mock_parts_use_the_statistic_of_the_bar(tmp_path: Path, statistic: str) -> None:
    """One slow call weighs on the means of guard and mock time, not on their medians: the parts
    of a median bar are median guard and median mock time, those of a mean bar the means."""
    row = {**_breakdown("bert", statistic), "guard_s": 0.066e-3, "mock_s": 0.871e-3,
           "guard_median_s": 0.02e-3, "mock_median_s": 0.18e-3}
    _write_run(tmp_path, "fig16", [row], _meta())
    summary = pd.read_csv(tmp_path / "summary.csv")
    guard, mock = (0.02, 0.18) if statistic == "median" else (0.066, 0.871)
    assert summary["guard_ms"].item() == pytest.approx(guard)
    assert summary["mock_ms"].item() == pytest.approx(mock)
    assert summary["guard_frac"].item() == pytest.approx(guard / (guard + mock))


def test_an_overridden_statistic_reaches_the_figure_and_meta(tmp_path: Path) -> None:
    """``statistic=mean repeat=5`` on smoke (whose defaults are median and 10): the figure says
    mean, and meta.json records 5 and mean, not the defaults beside them."""
    from hydra import compose, initialize_config_dir

    from experiments.run import effective_config

    overrides = ["experiment=fig15", "device=cpu", "size=smoke", "statistic=mean", "repeat=5"]
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose("config", overrides=overrides)
        plan = make_plan(cfg, cli_keys=override_keys(overrides))
    from omegaconf import OmegaConf

    config = effective_config(OmegaConf.to_container(cfg, resolve=True), plan)
    assert cfg.size.repeat == 10 and cfg.size.statistic == "median"
    assert config["size"]["repeat"] == config["repeat"] == 5
    assert config["size"]["statistic"] == config["statistic"] == "mean"
    assert config["size"]["warmup"] == config["warmup"] == cfg.size.warmup and config["bs"] == plan.bs

    rows = [{"experiment": "fig15", "model": "bert", "compiler": c, "bs": 1, "status": "ok", "correct": True,
             "mean_s": t, "median_s": t / 2, "statistic": "mean", "cell_id": c} for c, t in
            (("eager", 2e-3), ("magpy-inductor", 1e-3))]
    _write_run(tmp_path, "fig15", rows, _meta())  # meta's size.statistic: the default, median
    with plt.rc_context(plot._STYLE):
        text = _texts(plot.plot_speedups(tmp_path, "Figure 15"))
    assert "mean of timed calls" in text and "median of timed calls" not in text


# -- Figure 17's subtitle says what ran ------------------------------------------------------------


def _dynamic_row(compiler: str, frontend: str, dynamic: bool, t: float, model: str = "bert", kind: str = "bs") -> dict:
    return {"experiment": "fig17", "model": model, "kind": kind, "compiler": compiler, "status": "ok",
            "correct": True, "mean_s": t, "median_s": t, "statistic": "median", "cell_id": f"{model},{kind},{compiler}",
            "frontend": frontend, "dynamic": dynamic, "compiler_label": compiler.title()}


def test_fig17_subtitle_names_only_the_compilers_that_ran(tmp_path: Path) -> None:
    meta = _meta(experiment={"dynamic": ["dynamo"]})
    _write_run(tmp_path / "a", "fig17", [_dynamic_row("eager", "eager", False, 2e-3),
                                         _dynamic_row("magpy-inductor", "magpy", False, 1e-3)], meta)
    with plt.rc_context(plot._STYLE):
        text = _texts(plot.plot_dynamic(tmp_path / "a", "Figure 17"))
    assert "Magpy-Inductor: default (lifts a size once two calls differed in it)" in text
    assert "Dynamo" not in text

    _write_run(tmp_path / "b", "fig17", [_dynamic_row("eager", "eager", False, 2e-3),
                                         _dynamic_row("dynamo-inductor", "dynamo", True, 1e-3),
                                         _dynamic_row("magpy-inductor", "magpy", False, 1e-3)], meta)
    with plt.rc_context(plot._STYLE):
        text = _texts(plot.plot_dynamic(tmp_path / "b", "Figure 17"))
    assert "Dynamo-Inductor: dynamic=True; Magpy-Inductor: default" in text


# -- Table 2: what each row counts, the paper beside it, recompile limits ------------------------


def _graph_row(model: str, compiler: str, frontend: str, count: int, **extra) -> dict:
    return {"experiment": "table2", "model": model, "compiler": compiler, "frontend": frontend, "bs": 1,
            "status": "ok", "correct": True, "graph_count": count, "cell_id": f"{model},{compiler}", **extra}


def test_table2_names_the_automatic_regions_and_carries_the_papers_rows(tmp_path: Path) -> None:
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose("config", overrides=["experiment=table2", "device=cpu", "size=smoke"])
    from omegaconf import OmegaConf

    experiment = OmegaConf.to_container(cfg.experiment, resolve=True)
    rows = [_graph_row("densenet", "dynamo-eager", "dynamo", 59),
            _graph_row("densenet", "torchscript-regions", "torchscript-regions", 357),
            _graph_row("quantized", "dynamo-eager", "dynamo", 62, limit_hits=1,
                       break_reasons="Dynamo hit recompile_limit (8) in 'forward'"),
            _graph_row("quantized", "torchscript-regions", "torchscript-regions", 22)]
    _write_run(tmp_path, "table2", rows, _meta(experiment=experiment))
    plot.plot("table2", tmp_path)
    lines = (tmp_path / "table2.md").read_text().splitlines()
    header = next(line for line in lines if line.startswith("| approach"))
    assert [c.strip() for c in header.strip("|").split("|")] == ["approach", "densenet", "quantized"]
    rows_md = {line.split("|")[1].strip(): [c.strip() for c in line.strip("|").split("|")[1:]]
               for line in lines if line.startswith("|") and not line.startswith(("| approach", "|--", "| --"))}
    assert rows_md["TorchScript (auto regions)"] == ["357", "22"]
    assert rows_md["TorchDynamo"] == ["59", f"62 ({OUTCOMES['fallback']})"]
    # the paper's Table 2, for the models in the table
    assert rows_md["TorchDynamo (paper)"] == ["59", "85"] and rows_md["TorchScript (paper)"] == ["3", "22"]
    assert rows_md["LazyTensor (paper)"] == ["1", "44"] and rows_md["MagPy (paper)"] == ["1", "1"]
    notes = "\n".join(line for line in lines if line.startswith("- "))
    assert "found automatically, counted as entries into them during the call" in notes
    assert "the paper annotated its regions by hand" in notes
    assert "Reproduces the MagPy paper's Table 2 (NVIDIA A100" in notes
    assert "recompile_limit" in notes and "TorchDynamo on quantized" in notes


@pytest.mark.parametrize("experiment", ["fig1", "fig15", "table2", "fig16", "fig17", "fig18"])
def test_every_figure_says_which_paper_figure_it_reproduces_and_in_what_setting(tmp_path: Path,
                                                                              experiment: str) -> None:
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose("config", overrides=[f"experiment={experiment}", "device=cpu", "size=smoke"])
    paper = cfg.experiment.paper
    number = experiment.removeprefix("fig").removeprefix("table")
    assert paper.figure == f"{'Table' if experiment.startswith('table') else 'Figure'} {number}"
    assert "A100" in paper.setting  # the paper's GPU, said beside this run's machine
    (tmp_path / "meta.json").write_text(json.dumps(_meta(experiment=OmegaConf.to_container(cfg.experiment))))
    assert plot._paper_note(tmp_path) == (f"Reproduces the MagPy paper's {paper.figure} ({paper.setting}); this run: "
                                          f"Some CPU x2, torch {torch.__version__}, size=smoke; at smoke size the "
                                          "numbers show the pipeline works, not the paper's results")


def test_a_recompile_limit_is_marked_as_a_fallback_for_every_compiler() -> None:
    dynamo = {"status": "ok", "correct": True, "graph_count": 62, "limit_hits": 2}
    magpy = {"status": "ok", "correct": True, "graph_count": 0, "fallbacks": 12, "break_reasons": "x"}
    assert outcome(dynamo) == outcome(magpy) == OUTCOMES["fallback"]
    assert table2_cell(dynamo) == f"62 ({OUTCOMES['fallback']})" and table2_cell(magpy) == f"0 ({OUTCOMES['fallback']})"
    assert outcome({**dynamo, "limit_hits": 0}) is None and table2_cell({**dynamo, "limit_hits": 0}) == "62"


class _Recompiles(torch.nn.Module):
    """Calls one function with three dtypes in one call: with ``recompile_limit=1`` the third
    compilation of ``scale`` is refused and it runs eagerly from then on."""

    def forward(self, x):
        return sum(_scale(x.to(dtype)).float().sum() for dtype in (torch.float32, torch.float64, torch.int32))


def _scale(x):
    x = x * 2
    torch._dynamo.graph_break()  # _scale is a frame of its own, compiled once per dtype
    return x + 1


def test_dynamos_graph_count_is_per_call_after_warm_up_and_notes_the_recompile_limit() -> None:
    from experiments.runners.graphs import _count_dynamo

    x = torch.ones(3)
    with torch._dynamo.config.patch(recompile_limit=1):
        out, row = _count_dynamo({"compiler": {"backend": "eager"}}, _Recompiles(), (x,), {})
        _, again = _count_dynamo({"compiler": {"backend": "eager"}}, _Recompiles(), (x,), {})
    assert out == _Recompiles()(x)
    assert row["limit_hits"] == 1 and "recompile_limit (1)" in row["break_reasons"] and "_scale" in row["break_reasons"]
    # forward's graph and _scale's float32 one; float64's went past the limit and runs eagerly
    assert row["graph_count"] == again["graph_count"] == row["compiled_graphs"] == 2


# -- cached numbers belong to the code that made them ----------------------------------------------


def test_a_cells_identity_changes_with_an_edit_of_the_code_it_ran(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """An uncommitted edit (same git commit) makes the cells measured before it stale: the rerun
    refuses with a line naming the change instead of reusing them."""
    from experiments import results

    package = tmp_path / "src" / "artpkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "lstm.py").write_text("LAYERS = 10\n")
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    monkeypatch.setattr(results, "MEASURED_SOURCES", ("artpkg",))
    monkeypatch.setattr(results, "_git", lambda args: "same-commit")
    monkeypatch.setattr(results, "device_name", lambda device: "cpu x2")

    before = results.environment("cpu")
    store = RunStore(tmp_path / "run")
    run = {"repeat": 3}
    store.save("a", {"cell_id": "a", "status": "ok", "settings": {**run, "environment": before}})
    assert store.stale({"a": {**run, "environment": before}}, {**run, "environment": before}) == {}

    (package / "lstm.py").write_text("LAYERS = 11\n")
    after = results.environment("cpu")
    assert after["git_sha"] == before["git_sha"] and after["source"] != before["source"]
    stale = store.stale({"a": {**run, "environment": after}}, {**run, "environment": after})
    assert stale == {"a": [f"environment.source: {before['source']} recorded, {after['source']} requested"]}
    # the figure-drawing code is not part of a cell's identity
    assert "experiments/plot.py" in results._NOT_MEASURED


def test_torch_xla_is_in_the_identity_of_xla_cells_only(tmp_path: Path) -> None:
    """Installing torch_xla (in .venv-xla or here) changes no eager or Inductor cell's identity: a
    smoke run measured before it is resumed, its eager cells kept; an XLA cell's identity carries
    torch_xla's version, and its `unavailable` row is measured now rather than refusing the run."""
    from experiments.results import cell_settings

    eager = {"name": "eager", "frontend": "eager", "requires": []}
    inductor = {"name": "magpy-inductor", "frontend": "magpy", "backend": "inductor", "requires": ["magpy"]}
    xla = {"name": "lazytensor-xla", "frontend": "lazytensor", "requires": ["torch_xla"]}
    here = {"python": "3.11.9", "torch": "2.13.0", "transformers": "4.57.1", "source": "abc"}
    before, after = {**here, "torch_xla": None}, {**here, "torch_xla": "2.9.0"}
    xla_venv = {**here, "torch": "2.9.0", "torch_xla": "2.9.0"}
    run = {"repeat": 10}

    def spec(compiler: dict) -> dict:
        return {"cell_id": compiler["name"], "key": {"compiler": compiler["name"]}, "compiler": compiler}

    # the identity: torch_xla's version for the XLA cell only
    assert "torch_xla" not in cell_settings(spec(eager), run, after)["environment"]
    assert cell_settings(spec(eager), run, after) == cell_settings(spec(eager), run, before)
    assert cell_settings(spec(xla), run, xla_venv)["environment"]["torch_xla"] == "2.9.0"
    assert cell_settings(spec(xla), run, xla_venv) != cell_settings(spec(xla), run, before)

    # a run directory written before torch_xla was there (rows recorded `torch_xla: None` for every cell)
    store = RunStore(tmp_path / "run")
    old = {c["name"]: {**run, "compiler": c, "environment": before} for c in (eager, inductor, xla)}
    for name, settings in old.items():
        status = "unavailable" if name == "lazytensor-xla" else "ok"
        store.save(name, {"cell_id": name, "compiler": name, "status": status, "settings": settings})
    wanted = {"eager": cell_settings(spec(eager), run, after),
              "magpy-inductor": cell_settings(spec(inductor), run, after),
              "lazytensor-xla": cell_settings(spec(xla), run, xla_venv)}
    assert store.stale(wanted, {**run, "environment": after}) == {}
    assert store.reuse("eager", wanted["eager"]).action == "skip"
    assert store.reuse("magpy-inductor", wanted["magpy-inductor"]).action == "skip"
    assert store.reuse("lazytensor-xla", wanted["lazytensor-xla"]).action == "rerun"
    # eager's cells alone requested: the others are compared on their own environment
    assert store.stale({"eager": wanted["eager"]}, {**run, "environment": after}) == {}
    # a measured XLA row is refused when torch_xla changes; a measured eager row when torch does
    store.save("lazytensor-xla", {"cell_id": "lazytensor-xla", "status": "ok",
                                  "settings": cell_settings(spec(xla), run, xla_venv)})
    newer_xla = cell_settings(spec(xla), run, {**xla_venv, "torch_xla": "2.10.0"})
    assert store.stale({"lazytensor-xla": newer_xla}, {**run, "environment": after}) == {
        "lazytensor-xla": ["environment.torch_xla: 2.9.0 recorded, 2.10.0 requested"]}
    newer_torch = cell_settings(spec(eager), run, {**after, "torch": "2.14.0"})
    assert store.stale({"eager": newer_torch}, {**run, "environment": {**after, "torch": "2.14.0"}})["eager"] == [
        "environment.torch: 2.13.0 recorded, 2.14.0 requested"]


def test_source_digest_is_shared_with_paritybench() -> None:
    """One identity for the figures' cells and Table 3's stages, over every file that can change a
    number: the comparator and ParityBench's runner and stubs too, not the corpus or the plots."""
    from experiments.units import MEASURED_SOURCES, NOT_MEASURED, measured_digest
    from paritybench.compilers import stage_builds

    builds = stage_builds(["magpy", "dynamo"])
    assert set(builds.values()) == {f"torch {torch.__version__}; sources {measured_digest()}"}
    assert {"magpy", "experiments", "paritybench"} <= set(MEASURED_SOURCES)
    assert "paritybench/corpus/" in NOT_MEASURED and "experiments/plot.py" in NOT_MEASURED


def test_an_edit_of_the_comparator_changes_the_measured_identity(tmp_path: Path, monkeypatch) -> None:
    from experiments import units

    pkg = tmp_path / "harnesspkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "compare.py").write_text("TOL = 1\n")
    (pkg / "corpus").mkdir()
    (pkg / "corpus" / "case.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    before = units.source_digest(["harnesspkg"], ["harnesspkg/corpus/"])
    (pkg / "corpus" / "case.py").write_text("X = 2\n")
    assert units.source_digest(["harnesspkg"], ["harnesspkg/corpus/"]) == before
    (pkg / "compare.py").write_text("TOL = 2\n")
    assert units.source_digest(["harnesspkg"], ["harnesspkg/corpus/"]) != before


def test_meta_git_dirty_describes_the_cells_not_the_tree_at_write_time(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.save("a", {"cell_id": "a", "status": "ok", "git_dirty": False})
    store.write_meta({}, "cpu")
    assert json.loads((tmp_path / "meta.json").read_text())["git_dirty"] is False
    store.save("b", {"cell_id": "b", "status": "ok", "git_dirty": True})
    store.write_meta({}, "cpu")
    assert json.loads((tmp_path / "meta.json").read_text())["git_dirty"] is True


def test_align_under_inductor_gets_its_note_on_the_timing_figures(tmp_path: Path) -> None:
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    for experiment in ("fig1", "fig15", "fig16"):
        with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
            cfg = compose("config", overrides=[f"experiment={experiment}", "device=cpu", "size=smoke"])
        assert "align" in cfg.experiment.model_notes
        assert "model_notes" not in make_plan(cfg, cli_keys=set()).settings()["options"]  # words, not a setting
    meta = _meta(experiment=OmegaConf.to_container(cfg.experiment, resolve=True))
    _write_run(tmp_path / "with", "fig16", [_breakdown("align", "median")], meta)
    _write_run(tmp_path / "without", "fig16", [_breakdown("bert", "median")], meta)
    with plt.rc_context(plot._STYLE):
        assert "ALIGN with TorchInductor is 70-100x slower" in _texts(plot.plot_breakdown(tmp_path / "with", "F"))
        assert "ALIGN" not in _texts(plot.plot_breakdown(tmp_path / "without", "F"))


# -- newcomer paths: one-line errors ----------------------------------------------------------------


def _experiments_run(tmp_path: Path, *overrides: str):
    command = [sys.executable, "-m", "experiments.run", "experiment=fig15", "device=cpu", "size=smoke",
               "progress=false", "plot=false", f"hydra.run.dir={tmp_path / 'hydra'}", *overrides]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=240,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.parametrize(("overrides", "message"), [
    (["results_dir=/proc/nope", "model=bert", "compiler=[eager]"],
     "error: results_dir=/proc/nope: cannot create /proc/nope/fig15/smoke-cpu ("),
    (["model=[bert,nosuch]"], "error: no model config 'nosuch' (experiments/conf/model/nosuch.yaml); available: "
                              "align, bert, blockdrop,"),
    (["reapeat=5", "model=bert"], "error: unknown setting 'reapeat'; valid: bs, cell, compiler,"),
    (["+reapeat=5", "model=bert"], "error: unknown setting 'reapeat' (in '+reapeat=5'): the run reads no such key"),
    (["+experiment.reapeat=5", "model=bert"], "error: unknown setting 'experiment.reapeat': the run reads no such "
                                              "key; valid: experiment.name, experiment.runner,"),
    (["+experiment.plan.smoke.reapeat=5", "model=bert"],
     "error: unknown setting 'experiment.plan.smoke.reapeat': the run reads no such key; valid: "
     "experiment.plan.smoke.bs, experiment.plan.smoke.models,"),
    (["+cell.timout_s=4", "model=bert"], "error: unknown setting 'cell.timout_s' (in '+cell.timout_s=4'): the run "
                                         "reads no such key; valid: cell.timeout_s, cell.mem_limit_gb, cell.threads"),
])
def test_bad_input_is_one_error_line(tmp_path: Path, overrides: list[str], message: str) -> None:
    proc = _experiments_run(tmp_path, *overrides)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stderr.startswith(message) and proc.stderr.strip().count("\n") == 0, proc.stderr[-2000:]


def test_demo_refuses_an_unknown_backend_in_one_line_and_summarizes_guards() -> None:
    from magpy.demo import GUARDS_SHOWN, summarized

    proc = subprocess.run([sys.executable, "-m", "magpy.demo", "--backend", "nosuch"], cwd=ROOT, capture_output=True,
                          text=True, timeout=240, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 2 and proc.stderr.startswith("error: unknown backend 'nosuch'; known: ")
    assert proc.stderr.strip().count("\n") == 0 and not proc.stdout

    class Report:
        guards = "\n".join(f"guard {i}" for i in range(40))

        def __str__(self):
            return "Graph count: 1\nGuards:\n" + "\n".join("  " + g for g in self.guards.splitlines())

    text = summarized(Report())
    assert text.splitlines()[1].startswith(f"Guards (40, the first {GUARDS_SHOWN} shown; --all-guards prints all")
    assert text.splitlines()[-1] == f"  ... {40 - GUARDS_SHOWN} more" and "guard 39" not in text
    assert summarized(Report(), every_guard=True) == str(Report())


def test_identity_guard_text_names_the_object() -> None:
    import types

    from magpy.guards import IdGuard
    from magpy.source import ConstSource

    def describe(obj) -> str:
        guard = IdGuard.__new__(IdGuard)  # only what describe() reads
        guard.obj, guard.source = obj, ConstSource(value=None, label="x")
        return guard.describe()

    linear = torch.nn.Linear(1, 1)
    assert describe(torch.nn.functional).startswith("x is <module torch.nn.functional at 0x")
    assert describe(_scale.__code__).startswith("x is <code _scale at 0x")
    assert describe(linear).startswith("x is <Linear at 0x") and describe(_scale).startswith("x is <function _scale at")
    assert "  at" not in describe(types.SimpleNamespace())


def test_a_geomean_over_fewer_models_is_drawn_hollow(tmp_path: Path) -> None:
    def row(model, compiler, t, **extra):
        return {"experiment": "fig15", "model": model, "compiler": compiler, "bs": 1, "status": "ok", "correct": True,
                "mean_s": t, "median_s": t, "statistic": "median", "cell_id": f"{model},{compiler}", **extra}

    rows = [row("bert", "eager", 2e-3), row("resnet", "eager", 2e-3), row("bert", "magpy-eager", 1e-3),
            row("resnet", "magpy-eager", 1e-3), row("bert", "torchscript", 1e-3),
            row("resnet", "torchscript", float("nan"), status="error", error="RuntimeError: no")]
    _write_run(tmp_path, "fig15", rows, _meta())
    with plt.rc_context(plot._STYLE):
        fig = plot.plot_speedups(tmp_path, "Figure 15")
    faces = {round(p.get_x() + p.get_width() / 2, 2): p.get_facecolor()[:3] for p in fig.axes[0].patches}
    plt.close(fig)
    geo = sorted(x for x in faces if x > 1.5)  # the GeoMean group is the third, at x = 2
    assert len(geo) == 2
    magpy_face, torchscript_face = faces[geo[0]], faces[geo[1]]
    assert magpy_face != (1.0, 1.0, 1.0) and torchscript_face == (1.0, 1.0, 1.0)  # 2/2 filled, 1/2 hollow


# -- figure polish: labels inside the frame, short titles, cells not run ---------------------------


def _fig15_rows(models: list[str], value: dict[tuple[str, str], float]) -> list[dict]:
    def row(model, compiler, t, **extra):
        return {"experiment": "fig15", "model": model, "compiler": compiler, "bs": 1, "status": "ok", "correct": True,
                "mean_s": t, "median_s": t, "statistic": "median", "cell_id": f"{model},{compiler}", **extra}

    rows = []
    for m in models:
        rows.append(row(m, "eager", 1e-2))
        for compiler in ("dynamo-inductor", "torchscript"):
            if (m, compiler) in value:
                speedup = value[(m, compiler)]
                rows.append(row(m, compiler, 1e-2 / speedup) if speedup else
                            row(m, compiler, float("nan"), status="error", error="RuntimeError: no"))
    return rows


def test_value_labels_stay_inside_the_frame(tmp_path: Path) -> None:
    """A 0.0092x label under its bar must not run into the model names, nor a GeoMean's '4.6 (1/8)'
    over the tallest bar into or out of the frame: every label keeps plot.LABEL_HEADROOM_PT from it."""
    models = ["align", "bert", "deberta", "densenet", "monodepth", "quantized", "resnet", "tridentnet"]
    value = {(m, "dynamo-inductor"): 0.0092 if m == "align" else 1.3 for m in models}
    value |= {(m, "torchscript"): 4.6 if m == "bert" else None for m in models}
    _write_run(tmp_path, "fig15", _fig15_rows(models, value), _meta())
    with plt.rc_context(plot._STYLE):
        fig = plot.plot_speedups(tmp_path, "Figure 15")
        renderer = fig.canvas.get_renderer()
        ax = fig.axes[0]
        frame = ax.get_window_extent(renderer)
        labels = {t.get_text(): t.get_window_extent(renderer) for t in ax.texts}
        pad = renderer.points_to_pixels(plot.LABEL_HEADROOM_PT) - 0.5
    plt.close(fig)
    assert {"0.0092", "4.6 (1/8)"} <= set(labels)
    touching = [text for text, box in labels.items() if box.y0 < frame.y0 + pad or box.y1 > frame.y1 - pad]
    assert not touching, touching


@pytest.mark.parametrize("geomean", [2.3, 2.5, 3.0, 3.5, 5.5])
def test_a_geomean_label_does_not_touch_the_top_of_the_frame(tmp_path: Path, geomean: float) -> None:
    """'2.3 (2/2)' over the tallest bar of an axis reaching down to ALIGN's 0.025x keeps its headroom
    (2.3 and 3.0 touched the frame when labels only had to stay inside it)."""
    models = ["align", "bert"]
    value = {("align", "dynamo-inductor"): 0.025, ("bert", "dynamo-inductor"): 1.3}
    value |= {(m, "torchscript"): geomean for m in models}
    _write_run(tmp_path, "fig15", _fig15_rows(models, value), _meta())
    with plt.rc_context(plot._STYLE):
        fig = plot.plot_speedups(tmp_path, "Figure 15")
        renderer = fig.canvas.get_renderer()
        ax = fig.axes[0]
        top = ax.get_window_extent(renderer).y1
        gaps = {t.get_text(): top - t.get_window_extent(renderer).y1 for t in ax.texts}
        pad = renderer.points_to_pixels(plot.LABEL_HEADROOM_PT) - 0.5
    plt.close(fig)
    assert f"{geomean:.2g} (2/2)" in gaps
    assert min(gaps.values()) >= pad, gaps


def test_a_model_a_compiler_did_not_run_says_so(tmp_path: Path) -> None:
    value = {("bert", "dynamo-inductor"): 2.0}  # quantized: eager only (a sweep stopped early)
    _write_run(tmp_path, "fig15", _fig15_rows(["quantized", "bert"], value), _meta())
    with plt.rc_context(plot._STYLE):
        fig = plot.plot_speedups(tmp_path, "Figure 15")
        words = [t.get_text().strip() for t in fig.axes[0].texts]
        text = _texts(fig)
    assert "not run" in words
    assert "not run: dynamo-inductor on quantized (no result in this run directory)" in text


def test_fig18_title_is_short_and_its_notes_go_under_the_figure(tmp_path: Path) -> None:
    note = "graph compiler: the one in each name (by default TorchInductor; the paper used Cocktailer for MagPy's)"
    meta = _meta(experiment={"dynamic": [], "note": note, "paper": {"figure": "Figure 18", "setting": "A100"}})
    rows = []
    for model, kind in (("lstm", "seqlen"), ("blockdrop", "policy")):
        rows += [_dynamic_row("eager", "eager", False, 2e-3, model=model, kind=kind),
                 _dynamic_row("magpy-inductor", "magpy", False, 1e-3, model=model, kind=kind)]
    _write_run(tmp_path, "fig18", rows, meta)
    with plt.rc_context(plot._STYLE):
        fig = plot.plot_dynamic(tmp_path, "Figure 18: inference with dynamic control flow")
        head = max(fig.texts, key=lambda t: t.get_position()[1]).get_text()
        text = _texts(fig)
    assert head.count("\n") <= 2, head  # title and the run's line, wrapped at column width
    assert note in text and "Cocktailer" not in head


def test_fig17_says_when_its_input_streams_are_cut(tmp_path) -> None:
    """A paper-size run on a small machine cuts Figure 17's batch/length ranges; the figure says so."""
    import json

    from experiments import plot

    def note(stream):
        (tmp_path / "meta.json").write_text(json.dumps({"config": {"experiment": {"stream": stream}}}))
        return plot._stream_note(tmp_path)

    assert note(dict(plot.PAPER_STREAM)) is None
    text = note({**plot.PAPER_STREAM, "bs_range": [1, 4], "seqlen_batch": 1})
    assert text == "input streams cut from the paper's: bs_range [1, 4] (paper [2, 16]), seqlen_batch 1 (paper 8)"


def test_a_reason_names_the_projects_files_relative_to_the_checkout_that_measured_it() -> None:
    """A committed run redrawn in another checkout writes the same notes (its figure is reproducible)."""
    row = {"status": "error", "error": "limit in 'f' (/elsewhere/chk/models/quantized.py:218); "
                                       "/usr/lib/python3.11/site-packages/torch/nn/x.py:3"}
    assert outcome(row) == OUTCOMES["error"]
    from experiments.outcomes import reason

    assert reason(row) == "limit in 'f' (models/quantized.py:218); /usr/lib/python3.11/site-packages/torch/nn/x.py:3"
