"""Figures from result files only: ``python -m experiments.plot fig15 results/fig15/smoke-cpu``.

Each experiment's figure is drawn from the run directory's ``summary.csv`` (and ``raw.csv`` for
labels and reasons), never from live measurements, so re-plotting needs no model and no GPU. The
figures follow the paper at its sizes (7 in wide for the full text width, 3.3 in for one column,
7-pt text): speedups over eager on a log scale, bars starting at 1x so slowdowns point down
(Figures 1, 15, 17, 18), a table (Table 2, also written as ``table2.md``) and stacked fractions
(Figure 16).

Every figure and table names a cell that has no plain measurement with the same words
(:mod:`experiments.outcomes`): a run that *fell back to eager* is drawn hatched; one that
*failed*, was *unavailable*, *timed out*, *crashed* or gave a *wrong output* has no bar, only the
word at its place; a compiler with no bar at all is left out of the plot and its legend. The
notes under the figure give the reason for each, as the cell recorded it.

Example (after ``./reproduce.sh fig15`` wrote ``results/fig15/smoke-cpu``)::

    plot("fig15", Path("results/fig15/smoke-cpu"))
    # [PosixPath('results/fig15/smoke-cpu/fig15.png'), PosixPath('results/fig15/smoke-cpu/fig15.pdf')]
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import FixedLocator, NullLocator  # noqa: E402

# Writing a PDF subsets its fonts with fontTools, which logs ~50 INFO lines per figure; a run's log
# (Hydra sets the root logger to INFO) is for the run's progress.
logging.getLogger("fontTools").setLevel(logging.WARNING)

from experiments.markdown import markdown_table  # noqa: E402
from experiments.outcomes import OUTCOMES, outcome, reason, table2_cell  # noqa: E402

#: The paper's widths (USENIX two-column layout), in inches.
TEXT_WIDTH_IN, COLUMN_WIDTH_IN = 7.0, 3.33
FALLBACK_HATCH = "////"
_APPROACHES = {"dynamo": "TorchDynamo", "torchscript": "TorchScript", "torchscript-regions": "TorchScript (auto regions)",
               "lazytensor": "LazyTensor", "magpy": "MagPy"}
_KINDS = {"bs": "batch size", "seqlen": "seq. length", "policy": "policy"}
_STYLE = {"font.size": 7, "axes.titlesize": 7.5, "axes.labelsize": 7, "xtick.labelsize": 6.5,
          "ytick.labelsize": 6.5, "legend.fontsize": 6.5, "hatch.linewidth": 0.6, "pdf.fonttype": 42}


def _labels(raw: pd.DataFrame, column: str) -> dict[str, str]:
    label_col = f"{column}_label"
    if label_col not in raw.columns:
        return {}
    return {k: v for k, v in zip(raw[column], raw[label_col]) if isinstance(v, str)}


def _meta(run_dir: Path) -> dict[str, Any]:
    try:
        return json.loads((run_dir / "meta.json").read_text())
    except (OSError, ValueError):
        return {}


def _meta_line(run_dir: Path, timing: bool = True) -> str:
    meta = _meta(run_dir)
    if not meta:
        return ""
    size = meta.get("config", {}).get("size", {}).get("name", "")
    statistic = _statistic(run_dir, meta) if timing else ""
    return (f"{meta.get('device_name', '')}, size={size}{f', {statistic} of timed calls' if statistic else ''}, "
            f"torch {meta.get('versions', {}).get('torch', '')}")


def _statistic(run_dir: Path, meta: dict[str, Any]) -> str:
    """The statistic the cells' times are: the rows' own ``statistic`` (what was measured, a
    ``statistic=mean`` override included), else the run's effective one recorded in meta.json."""
    try:
        recorded = pd.read_csv(run_dir / "raw.csv", usecols=["statistic"])["statistic"].dropna().unique()
    except (OSError, ValueError):
        recorded = []
    if len(recorded):
        return "/".join(sorted(str(s) for s in recorded))
    config = meta.get("config", {})
    return config.get("statistic") or config.get("size", {}).get("statistic", "")


def _paper(run_dir: Path) -> dict[str, Any]:
    return _meta(run_dir).get("config", {}).get("experiment", {}).get("paper") or {}


def _paper_note(run_dir: Path) -> str:
    """Which figure of the paper this reproduces and how this run's setting differs from it."""
    paper, meta = _paper(run_dir), _meta(run_dir)
    if not paper.get("figure"):
        return ""
    size = meta.get("config", {}).get("size", {}).get("name", "")
    here = f"{meta.get('device_name', '?')}, torch {meta.get('versions', {}).get('torch', '?')}, size={size}"
    smoke = "; at smoke size the numbers show the pipeline works, not the paper's results" if size == "smoke" else ""
    return f"Reproduces the MagPy paper's {paper['figure']} ({paper.get('setting', '')}); this run: {here}{smoke}"


def _interpreter_notes(run_dir: Path) -> list[str]:
    """Which compilers' cells ran in another interpreter than the run's (torch_xla's cells run in
    .venv-xla, :func:`experiments.cells.cell_python`), with its versions, from the cells' rows."""
    versions = _meta(run_dir).get("versions", {})
    found: dict[str, list[str]] = {}
    for path in sorted((run_dir / "cells").glob("*/row.json")):
        try:
            row = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        env = (row.get("settings") or {}).get("environment") or {}
        if not env.get("torch") or env.get("torch") == versions.get("torch"):
            continue
        where = ", ".join(f"{name} {env[key]}" for name, key in (("Python", "python"), ("torch", "torch"),
                                                                   ("torch_xla", "torch_xla")) if env.get(key))
        label = row.get("compiler_label") or row.get("compiler") or "?"
        if label not in found.setdefault(where, []):
            found[where].append(label)
    return [f"{', '.join(labels)}: run in their own venv ({where}; torch_xla is built for one torch), the rest "
            f"with torch {versions.get('torch', '?')}" for where, labels in found.items()]


def _model_notes(run_dir: Path, models: list[str]) -> list[str]:
    """The experiment's notes on the models in the figure (``experiment.model_notes``)."""
    notes = _meta(run_dir).get("config", {}).get("experiment", {}).get("model_notes") or {}
    return [notes[m] for m in models if m in notes]


def _experiment_note(run_dir: Path) -> str:
    return _meta(run_dir).get("config", {}).get("experiment", {}).get("note", "") or ""


def _notes(lines: list[str], width_in: float) -> str:
    chars = int(width_in * 72 / (6.2 * 0.52))
    return "\n".join(textwrap.fill(line, chars, subsequent_indent="   ") for line in lines)


def _outcome_notes(rows: pd.DataFrame, group_col: str, labels: dict[str, str],
                   group_labels: dict[str, str], hatched: bool = True) -> list[str]:
    """One note per (outcome, reason): which compiler on which models/workloads, and why."""
    found: dict[tuple[str, str], dict[str, list[str]]] = {}
    everywhere = {g for g in rows[group_col] if g != "GeoMean"}
    for _, row in rows.iterrows():
        what = outcome(row)
        if what is None or row[group_col] == "GeoMean" or row["compiler"] == "eager" and what == OUTCOMES["none"]:
            continue
        found.setdefault((what, reason(row)), {}).setdefault(row["compiler"], []).append(row[group_col])
    notes = []
    for (what, why), by_compiler in found.items():
        parts = []
        for compiler, groups in by_compiler.items():
            groups = list(dict.fromkeys(groups))
            where = "every model" if set(groups) >= everywhere and len(everywhere) > 1 else \
                ", ".join(group_labels.get(g, g) for g in groups)
            parts.append(f"{labels.get(compiler, compiler)} on {where}")
        mark = " (hatched: calls ran the original program, whole or in part)" if what == OUTCOMES["fallback"] and hatched else ""
        notes.append(f"{what}{mark}: {'; '.join(parts)}" + (f" - {why}" if why else ""))
    return sorted(notes)


def _log_speedup_axis(ax: plt.Axes, values: list[float]) -> None:
    """A log-2 speedup axis around 1x with ticks such as 0.25x, 1x, 4x."""
    finite = [v for v in values if v and not math.isnan(v) and v > 0] + [1.0]
    low, high = min(finite), max(finite)
    lo_exp, hi_exp = math.floor(math.log2(low) - 1.2), math.ceil(math.log2(high) + 1.0)  # room for labels
    lo_exp, hi_exp = min(lo_exp, -1), max(hi_exp, 1)
    ax.set_yscale("log", base=2)
    ax.set_ylim(2.0 ** lo_exp, 2.0 ** hi_exp)
    _log_ticks(ax)
    ax.axhline(1.0, color="black", linewidth=0.7)
    ax.grid(axis="y", linewidth=0.3, color="0.85")
    ax.set_axisbelow(True)


def _log_ticks(ax: plt.Axes) -> None:
    """Ticks such as 0.25x, 1x, 4x over the axis' current (power-of-2) limits, at most about 8."""
    lo_exp, hi_exp = (round(math.log2(v)) for v in ax.get_ylim())
    step = max(1, math.ceil((hi_exp - lo_exp) / 7))
    ticks = [2.0 ** e for e in range(lo_exp, hi_exp + 1) if (e % step) == 0]
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_yticklabels([f"{t:.2g}x" for t in ticks])


#: The least gap (points) between a value label and the top or bottom of its frame.
LABEL_HEADROOM_PT = 3.0


def _fit_labels(ax: plt.Axes) -> None:
    """Widen a log speedup axis, a power of 2 at a time, until every value label written on it
    lies inside its frame with :data:`LABEL_HEADROOM_PT` to spare (a long label under a tiny
    speedup would run into the model names, a GeoMean's ``2.7 (8/8)`` over the tallest bar into
    the frame). Call it once the axes have their final size."""
    renderer = ax.figure.canvas.get_renderer()
    pad = renderer.points_to_pixels(LABEL_HEADROOM_PT)
    for _ in range(8):
        frame = ax.get_window_extent(renderer)
        boxes = [t.get_window_extent(renderer) for t in ax.texts]
        below = any(b.y0 < frame.y0 + pad for b in boxes)
        above = any(b.y1 > frame.y1 - pad for b in boxes)
        if not (below or above):
            return
        lo, hi = ax.get_ylim()
        ax.set_ylim(lo / 2 if below else lo, hi * 2 if above else hi)
        _log_ticks(ax)


def _not_run_notes(df: pd.DataFrame, groups: list[str], group_col: str, compilers: list[str],
                   labels: dict[str, str], group_labels: dict[str, str]) -> list[str]:
    """``not run: X on Quantized`` for each compiler without a row for a model/workload the run has
    (a sweep stopped early: the empty place in the figure says so, and so does a note)."""
    missing: dict[str, list[str]] = {}
    for compiler in compilers:
        for group in groups:
            if group != "GeoMean" and df[(df[group_col] == group) & (df["compiler"] == compiler)].empty:
                missing.setdefault(compiler, []).append(group_labels.get(group, group).replace("\n", " "))
    if not missing:
        return []
    parts = [f"{labels.get(c, c)} on {', '.join(g)}" for c, g in missing.items()]
    return [f"{OUTCOMES['none']}: {'; '.join(parts)} (no result in this run directory)"]


def _grouped_speedups(ax: plt.Axes, df: pd.DataFrame, groups: list[str], group_col: str, compilers: list[str],
                      colors: dict[str, Any], group_labels: dict[str, str], counts: dict[str, str]) -> None:
    """Bars of ``speedup`` from 1x per group (x) and compiler (colour); hatched for a fallback, the
    outcome's word where there is no bar; ``counts[compiler]`` is written on its GeoMean bar."""
    width = 0.84 / max(1, len(compilers))
    _log_speedup_axis(ax, list(df["speedup"]))
    for j, compiler in enumerate(compilers):
        for i, group in enumerate(groups):
            match = df[(df[group_col] == group) & (df["compiler"] == compiler)]
            x = i - 0.42 + width * (j + 0.5)
            if match.empty:
                if group != "GeoMean":
                    ax.text(x, 1.0, f" {OUTCOMES['none']}", rotation=90, ha="center", va="bottom", fontsize=5,
                            color="0.35")
                continue
            row = match.iloc[0]
            value = row["speedup"]
            if value is None or pd.isna(value):
                what = outcome(row) if group != "GeoMean" else "none"
                ax.text(x, 1.0, f" {what or OUTCOMES['no_baseline']}" if what != "none" else "", rotation=90,
                        ha="center", va="bottom", fontsize=5, color="0.35")
                continue
            fallback = outcome(row) == OUTCOMES["fallback"]
            partial = group == "GeoMean" and compiler in counts and _partial(counts[compiler])
            ax.bar(x, value - 1.0, width * 0.92, bottom=1.0,
                   color="white" if fallback or partial else colors[compiler], edgecolor=colors[compiler],
                   linewidth=0.9 if partial else 0.6, hatch=FALLBACK_HATCH if fallback else None)
            text = f"{value:.2g}" + (f" ({counts[compiler]})" if group == "GeoMean" and compiler in counts else "")
            ax.text(x, value * (1.04 if value >= 1 else 0.96), text, rotation=90, ha="center",
                    va="bottom" if value >= 1 else "top", fontsize=4.8, color="0.2")
    if "GeoMean" in groups:
        ax.axvline(groups.index("GeoMean") - 0.5, color="0.5", linewidth=0.5, linestyle=":")
    ax.set_xlim(-0.55, len(groups) - 0.45)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([group_labels.get(g, g) for g in groups])
    ax.tick_params(axis="x", length=0)
    ax.set_ylabel("speedup over eager")


def _partial(count: str) -> bool:
    """Whether a GeoMean's ``k/n`` covers fewer than all n models (drawn hollow)."""
    k, _, n = count.partition("/")
    return k != n


def _legend(fig: plt.Figure, compilers: list[str], colors: dict[str, Any], labels: dict[str, str],
            hatched: bool, width_in: float) -> None:
    handles = [Patch(facecolor=colors[c], edgecolor=colors[c], label=labels.get(c, c)) for c in compilers]
    if hatched:
        handles.append(Patch(facecolor="white", edgecolor="0.3", hatch=FALLBACK_HATCH, label=OUTCOMES["fallback"]))
    ncol = max(1, min(len(handles), int(width_in / 1.05)))
    fig.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=ncol, frameon=False,
               handlelength=1.4, columnspacing=1.2, borderpad=0.2)


def _drawn(df: pd.DataFrame, compilers: list[str]) -> list[str]:
    """The compilers with at least one bar."""
    return [c for c in compilers if df[(df["compiler"] == c) & df["speedup"].notna()].shape[0]]


#: One colour per compiler in every figure (MagPy's in warm colours); others take what is left.
_COLORS = {"dynamo-inductor": "tab:blue", "dynamo-eager": "tab:blue", "magpy-inductor": "tab:orange",
           "magpy-eager": "tab:orange", "torchscript": "tab:green", "torchscript-regions": "tab:green",
           "magpy-torchscript": "tab:olive", "lazytensor-xla": "tab:purple", "dynamo-xla": "tab:cyan",
           "magpy-xla": "tab:red", "fullgraph-inductor": "tab:gray", "fullgraph-xla": "tab:pink"}


def _colors(compilers: list[str]) -> dict[str, Any]:
    spare = [c for c in ("tab:brown", "tab:pink", "tab:gray", "tab:cyan", "tab:olive", "tab:red")
             if c not in {_COLORS.get(k) for k in compilers}]
    colors = {}
    for compiler in compilers:
        colors[compiler] = _COLORS.get(compiler) or (spare.pop(0) if spare else "0.3")
    return colors


def _finish(fig: plt.Figure, title: str, run_dir: Path, notes: list[str], width_in: float,
            extra: str = "", timing: bool = True) -> None:
    notes = [*notes, *_interpreter_notes(run_dir), *filter(None, [_paper_note(run_dir)])]
    head = "\n".join(t for t in (title, extra.strip(), _meta_line(run_dir, timing)) if t)
    top = 1.0
    renderer = fig.canvas.get_renderer()
    for legend in fig.legends:  # the title goes above the figure-level legend
        top = max(top, fig.transFigure.inverted().transform(legend.get_window_extent(renderer))[1][1])
    chars = int(width_in * 72 / (7 * 0.55))
    head = "\n".join(textwrap.fill(line, chars) for line in head.splitlines())
    fig.text(0.0, top + 0.02, head, ha="left", va="bottom", fontsize=7)
    if notes:
        fig.text(0.0, 0.0, _notes(notes, width_in), ha="left", va="top", fontsize=6.2, color="0.25",
                 linespacing=1.25)


def _eager_latency(run_dir: Path, title: str, summary: pd.DataFrame, raw: pd.DataFrame, group_col: str,
                   group_labels: dict[str, str]) -> plt.Figure:
    """Nothing to compare with (only eager ran): eager's latency per model/workload."""
    rows = summary[(summary["compiler"] == "eager") & (summary[group_col] != "GeoMean")]
    groups = list(dict.fromkeys(rows[group_col]))
    statistic = rows["statistic"].dropna().iloc[0] if "statistic" in rows and rows["statistic"].notna().any() else "mean"
    column = f"{statistic}_ms"
    fig, ax = plt.subplots(figsize=(COLUMN_WIDTH_IN, 1.9))
    for i, group in enumerate(groups):
        row = rows[rows[group_col] == group].iloc[0]
        if outcome(row) is None and column in row and not pd.isna(row[column]):
            ax.bar(i, row[column], 0.6, color="0.45")
            ax.text(i, row[column], f"{row[column]:.3g}", ha="center", va="bottom", fontsize=5.5)
        else:
            ax.text(i, 0, f" {outcome(row)}", rotation=90, ha="center", va="bottom", fontsize=5, color="0.35")
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([group_labels.get(g, g) for g in groups])
    ax.set_xlim(-0.75, len(groups) - 0.25)
    ax.set_ylim(0, ax.get_ylim()[1] * 1.15)  # room for the value labels
    ax.set_ylabel(f"eager latency ({statistic}, ms)")
    fig.tight_layout()
    _finish(fig, title, run_dir, ["only eager ran: latency shown, no speedup to compare"], COLUMN_WIDTH_IN)
    return fig


def plot_speedups(run_dir: Path, title: str) -> plt.Figure:
    """Figures 1 and 15: one panel per batch size, models grouped, one bar per compiler that has one."""
    summary, raw = _read(run_dir)
    labels, model_labels = _labels(raw, "compiler"), _labels(raw, "model")
    compilers = [c for c in dict.fromkeys(summary["compiler"]) if c != "eager"]
    if not compilers:
        return _eager_latency(run_dir, title, summary, raw, "model", model_labels)
    batch_sizes = sorted(int(b) for b in summary["bs"].dropna().unique())
    models = list(dict.fromkeys(summary["model"]))  # sweep order, GeoMean last
    drawn = _drawn(summary, compilers)
    colors = _colors(drawn)
    hatched = any(outcome(r) == OUTCOMES["fallback"] and not pd.isna(r["speedup"]) for _, r in summary.iterrows())
    fig, axes = plt.subplots(len(batch_sizes), 1, figsize=(TEXT_WIDTH_IN, 1.75 * len(batch_sizes) + 0.35),
                             squeeze=False)
    n_models = len([m for m in models if m != "GeoMean"])
    for ax, bs in zip(axes[:, 0], batch_sizes):
        panel = summary[summary["bs"] == bs]
        geo = panel[panel["model"] == "GeoMean"]
        counts = {r["compiler"]: f"{int(r['n_models'])}/{n_models}" for _, r in geo.iterrows()
                  if "n_models" in r and not pd.isna(r["n_models"])}
        _grouped_speedups(ax, panel, models, "model", drawn, colors, model_labels, counts)
        ax.set_title(f"batch size {bs}", loc="left", pad=2)
    fig.tight_layout(h_pad=0.6)
    for ax in axes[:, 0]:
        _fit_labels(ax)
    _legend(fig, drawn, colors, labels, hatched, TEXT_WIDTH_IN)
    notes = _outcome_notes(summary, "model", labels, model_labels)
    notes += _not_run_notes(summary, models, "model", drawn, labels, model_labels)
    if "GeoMean" in models:
        notes.insert(0, "GeoMean: over the models a compiler ran correctly (fallbacks included); "
                        "k/n on the bar: k of the n models (hollow where k < n: not comparable with the others)")
    notes += _region_notes(raw, model_labels)
    notes += _model_notes(run_dir, models)
    _finish(fig, title, run_dir, notes, TEXT_WIDTH_IN)
    return fig


def _region_notes(raw: pd.DataFrame, model_labels: dict[str, str]) -> list[str]:
    """What TorchScript's automatic regions scripted per model (the cells' ``regions`` and ``notes``):
    ``Bert 6 regions; ResNet the whole model``. A model with no region is a failed cell, its reason
    in the failure notes."""
    if "frontend" not in raw.columns or "torchscript-regions" not in set(raw["frontend"]):
        return []
    parts = []
    for _, row in raw[(raw["frontend"] == "torchscript-regions") & (raw["status"] == "ok")].iterrows():
        label = model_labels.get(row["model"], row["model"])
        count = row.get("regions")
        if pd.isna(count):
            continue
        whole = not (isinstance(row.get("notes"), str) and "region" in row["notes"])
        part = f"{label} the whole model" if whole else f"{label} {int(count)} region{'s' if count != 1 else ''}"
        if part not in parts:
            parts.append(part)
    return [f"{_labels(raw, 'compiler').get('torchscript-regions', 'TorchScript-Regions')}: the whole model where "
            "torch.jit.script accepts it, else its largest submodules that script and return eager's result, "
            "found automatically (the paper annotated its regions by hand); the rest runs eagerly"
            + (f"; scripted: {', '.join(parts)}" if parts else "")]


def _workload_labels(summary: pd.DataFrame, raw: pd.DataFrame) -> dict[str, str]:
    model_labels = _labels(raw, "model")
    return {w: f"{model_labels.get(m, m)}\n{_KINDS.get(k, k)}"
            for w, m, k in zip(summary["workload"], summary["model"], summary["kind"])}


#: The paper's input streams (§8.5), as experiments/conf/experiment/fig17.yaml declares them.
PAPER_STREAM = {"bs_range": [2, 16], "seqlen_range": [32, 256], "seqlen_batch": 8}


def _stream_note(run_dir: Path) -> str | None:
    """A note when the run's input streams differ from the paper's (a cut for a small machine)."""
    stream = _meta(run_dir).get("config", {}).get("experiment", {}).get("stream") or {}
    cut = {k: v for k, v in stream.items() if PAPER_STREAM.get(k) != v}
    if not cut:
        return None
    return "input streams cut from the paper's: " + ", ".join(f"{k} {v} (paper {PAPER_STREAM.get(k)})"
                                                             for k, v in sorted(cut.items()))


def plot_dynamic(run_dir: Path, title: str) -> plt.Figure:
    """Figures 17 and 18: workloads (model x kind of dynamic input) grouped, one bar per compiler."""
    summary, raw = _read(run_dir)
    labels = _labels(raw, "compiler")
    group_labels = _workload_labels(summary, raw)
    compilers = [c for c in dict.fromkeys(summary["compiler"]) if c != "eager"]
    if not compilers:
        return _eager_latency(run_dir, title, summary, raw, "workload", group_labels)
    workloads = list(dict.fromkeys(summary["workload"]))
    drawn = _drawn(summary, compilers)
    colors = _colors(drawn)
    hatched = any(outcome(r) == OUTCOMES["fallback"] and not pd.isna(r["speedup"]) for _, r in summary.iterrows())
    width = COLUMN_WIDTH_IN if len(workloads) * max(1, len(drawn)) <= 8 else TEXT_WIDTH_IN
    fig, ax = plt.subplots(figsize=(width, 2.0))
    _grouped_speedups(ax, summary, workloads, "workload", drawn, colors, group_labels, {})
    fig.tight_layout()
    _fit_labels(ax)
    _legend(fig, drawn, colors, labels, hatched, width)
    one_line = {w: g.replace("\n", " ") for w, g in group_labels.items()}
    # How compilers met new shapes and the experiment's note go under the figure: the title stays short.
    shapes = _shape_handling(raw, labels, run_dir)
    notes = [n for n in (shapes and f"new input shapes: {shapes}", _experiment_note(run_dir), _stream_note(run_dir)) if n]
    notes += _outcome_notes(summary, "workload", labels, one_line)
    notes += _not_run_notes(summary, workloads, "workload", drawn, labels, one_line)
    if "notes" in raw.columns:
        notes += sorted({f"{labels.get(c, c)}: {n}" for c, n in zip(raw["compiler"], raw["notes"])
                         if isinstance(n, str) and n})
    _finish(fig, title, run_dir, notes, width)
    return fig


def _shape_handling(raw: pd.DataFrame, labels: dict[str, str], run_dir: Path) -> str:
    """How each compiler that ran met new input shapes, from the rows (``dynamic``: compiled with
    ``dynamic=True``), e.g. ``Dynamo-Inductor: dynamic=True; MagPy-Inductor: default (...)``.

    Empty unless the run is about dynamic shapes (a row compiled with ``dynamic=True`` or the
    experiment's ``dynamic`` list names a frontend: Figure 17), so that a caption never names a
    compiler that did not run nor a setting it did not use."""
    ran = raw[(raw["compiler"] != "eager") & (raw["status"] != "unavailable")]
    if ran.empty:
        return ""
    if "dynamic" in ran.columns:
        dynamic = {c: str(d) == "True" for c, d in zip(ran["compiler"], ran["dynamic"])}
    else:  # rows written before they said so: the run's experiment.dynamic
        frontends = _meta(run_dir).get("config", {}).get("experiment", {}).get("dynamic") or []
        dynamic = {c: f in frontends for c, f in zip(ran["compiler"], ran.get("frontend", ran["compiler"]))}
    if not any(dynamic.values()) and not _meta(run_dir).get("config", {}).get("experiment", {}).get("dynamic"):
        return ""
    frontends = dict(zip(raw["compiler"], raw["frontend"])) if "frontend" in raw.columns else {}
    parts = []
    for compiler, lifted in dynamic.items():
        if lifted:
            how = "dynamic=True"
        elif frontends.get(compiler) == "magpy":
            how = "default (lifts a size once two calls differed in it)"
        else:
            how = "static shapes (a new shape compiles again)"
        parts.append(f"{labels.get(compiler, compiler)}: {how}")
    return "; ".join(parts)


def plot_graph_table(run_dir: Path, title: str) -> plt.Figure:
    """Table 2: graph counts, approaches as rows and models as columns (also written as table2.md)."""
    summary, raw = _read(run_dir)
    labels, model_labels = _labels(raw, "compiler"), _labels(raw, "model")
    if "frontend" in raw.columns:  # the paper names the approach, not the (irrelevant) backend
        labels |= {c: _APPROACHES.get(f, labels.get(c, c)) for c, f in zip(raw["compiler"], raw["frontend"])
                   if isinstance(f, str)}
    summary = summary.copy()
    summary["value"] = summary.apply(table2_cell, axis=1)
    table = summary.pivot_table(index="compiler", columns="model", values="value", aggfunc="first", sort=False)
    table = table.reindex(index=list(dict.fromkeys(summary["compiler"])), columns=list(dict.fromkeys(summary["model"])))
    table = table.fillna("-")
    row_labels = [labels.get(c, c) for c in table.index]
    col_labels = [model_labels.get(m, m) for m in table.columns]
    notes = _outcome_notes(summary.assign(fallbacks=[1 if v.endswith(f"({OUTCOMES['fallback']})") else 0
                                                     for v in summary["value"]]),
                           "model", labels, model_labels, hatched=False)
    notes.insert(0, "Graphs per call, counted on a call after a warm-up call. TorchDynamo: the distinct graphs it "
                    "compiled that the call runs (a frame past its recompile limit runs eagerly: fell back to eager)")
    if "frontend" in raw.columns and "torchscript-regions" in set(raw["frontend"]):
        notes.insert(1, "TorchScript (auto regions): the largest submodules torch.jit.script accepts, found "
                        "automatically, counted as entries into them during the call (a region the call enters "
                        "three times counts three; Figure 15's note gives the number of regions); the paper "
                        "annotated its regions by hand, so its counts can be smaller")
    if "frontend" in raw.columns and "lazytensor" in set(raw["frontend"]):
        notes.insert(1, "LazyTensor: the graphs XLA's metrics report for the call (CachedCompile + UncachedCompile: "
                        "every graph LazyTensor hands XLA is compiled or found in its cache); the call ends at one "
                        "mark_step, whose graph is the rest of the trace, and every graph before it is a sync where "
                        "the program read a tensor's value")
    values = [list(v) for v in table.values]
    paper = _paper(run_dir)
    for approach, counts in (paper.get("rows") or {}).items():  # the paper's values beside ours
        row_labels.append(f"{_APPROACHES.get(approach, approach)} (paper)")
        values.append([str(counts.get(m, "-")) for m in table.columns])
    if paper.get("rows"):
        notes.append(f"(paper) rows: the values of the MagPy paper's {paper.get('figure', 'Table 2')}")
    markdown = [markdown_table([[r, *v] for r, v in zip(row_labels, values)], ["approach", *col_labels])]
    markdown += [""] + [f"- {n}" for n in [*notes, *_interpreter_notes(run_dir), _paper_note(run_dir)] if n]
    (run_dir / "table2.md").write_text("\n".join(markdown) + "\n")
    cells = [["\n".join(textwrap.wrap(str(v).replace(" (", "\n("), 12, break_long_words=False,
                                       replace_whitespace=False)) for v in row] for row in values]
    lines = [max(c.count("\n") + 1 for c in row) for row in cells]
    row_in = 0.17
    fig, ax = plt.subplots(figsize=(TEXT_WIDTH_IN, row_in * (sum(lines) + 1) + 0.1))
    ax.axis("off")
    grid = ax.table(cellText=cells, rowLabels=row_labels, colLabels=col_labels, loc="upper left",
                    cellLoc="center", bbox=(0.13, 0, 0.87, 1))
    grid.auto_set_font_size(False)
    grid.set_fontsize(6.5)
    total = sum(lines) + 1
    for (r, _), cell in grid.get_celld().items():
        cell.set_linewidth(0.4)
        cell.set_height((lines[r - 1] if r > 0 else 1) / total)
        if r > 0 and row_labels[r - 1].endswith("(paper)"):  # the paper's values: grey, set apart from ours
            cell.get_text().set_color("0.4")
            cell.set_facecolor("0.95")
    _finish(fig, title, run_dir, notes, TEXT_WIDTH_IN, timing=False)
    return fig


def plot_breakdown(run_dir: Path, title: str) -> plt.Figure:
    """Figure 16: (a) monitor run = analysis + backend compile + other, (b) matched run = guard + mock."""
    summary, raw = _read(run_dir)
    model_labels, labels = _labels(raw, "model"), _labels(raw, "compiler")
    models = list(dict.fromkeys(summary["model"]))
    fig, (ax_a, ax_b) = plt.subplots(1, 2, figsize=(TEXT_WIDTH_IN, 0.17 * len(models) + 0.75), sharey=True)
    y = list(range(len(models)))
    parts_a = [("analysis_frac", "MagPy analysis", "tab:blue"), ("backend_compile_frac", "backend compile", "tab:orange"),
               ("monitor_other_frac", "other", "0.65")]
    parts_b = [("guard_frac", "guard", "tab:green"), ("mock_frac", "mock (incl. compiled graph)", "tab:purple")]
    statistic = _statistic(run_dir, _meta(run_dir)) or "mean"
    for ax, parts, total_col, unit, name in ((ax_a, parts_a, "monitor_s", "s", "(a) monitor run (first call)"),
                                             (ax_b, parts_b, "matched_ms", f"ms ({statistic})",
                                              "(b) matched run")):
        rows = [summary[summary["model"] == m].iloc[0] for m in models]
        left = [0.0] * len(models)
        for column, label, color in parts:
            widths = [float(r[column]) if column in r and not pd.isna(r[column]) else 0.0 for r in rows]
            # a part that is nowhere visible (under 0.5% of every call) stays out of the legend
            ax.barh(y, widths, left=left, label=label if max(widths, default=0) >= 0.005 else None, color=color,
                    height=0.7)
            left = [a + b for a, b in zip(left, widths)]
        for i, r in enumerate(rows):
            if total_col in r and not pd.isna(r[total_col]):
                text = f"{r[total_col]:.3g} {unit}" + (" (wrong output)" if outcome(r) == OUTCOMES["wrong"] else "")
            else:
                text = outcome(r) or OUTCOMES["none"]
            ax.text(1.02, i, text, va="center", fontsize=5.5)
        ax.set_xlim(0, 1.42)
        ax.set_xticks([0, 0.25, 0.5, 0.75, 1.0])
        ax.set_xlabel(f"{name}: fraction of the call")
        ax.legend(fontsize=6, loc="lower center", bbox_to_anchor=(0.36, 1.0), ncol=len(parts), frameon=False,
                  handlelength=1.2, columnspacing=0.8)
    ax_a.invert_yaxis()  # first model on top, as in the table
    ax_a.set_yticks(y)
    ax_a.set_yticklabels([model_labels.get(m, m) for m in models])
    fig.tight_layout(w_pad=1.0)
    notes = _outcome_notes(summary, "model", labels, model_labels, hatched=False)
    notes.insert(0, f"(b): the number is the {statistic} time of a timed call; the fractions are the {statistic} "
                    "guard vs mock time per matched call, from MagPy's profile counters (profile=True)")
    notes += _model_notes(run_dir, models)
    _finish(fig, title, run_dir, notes, TEXT_WIDTH_IN)
    return fig


_PLOTTERS: dict[str, tuple[Callable[[Path, str], plt.Figure], str]] = {
    "fig1": (plot_speedups, "Figure 1: power of graph instantiation"),
    "fig15": (plot_speedups, "Figure 15: end-to-end inference"),
    "table2": (plot_graph_table, "Table 2: number of exported operator graphs"),
    "fig16": (plot_breakdown, "Figure 16: time breakdown of execution"),
    "fig17": (plot_dynamic, "Figure 17: inference with dynamic shapes"),
    "fig18": (plot_dynamic, "Figure 18: inference with dynamic control flow"),
}


def _read(run_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    summary_path, raw_path = run_dir / "summary.csv", run_dir / "raw.csv"
    if not summary_path.exists() or not raw_path.exists():
        raise FileNotFoundError(f"{run_dir} has no summary.csv/raw.csv: run the experiment first")
    summary, raw = pd.read_csv(summary_path), pd.read_csv(raw_path)
    missing = [c for c in ("break_reasons", "mismatch", "error") if c in raw.columns and c not in summary.columns]
    keys = [c for c in ("model", "kind", "compiler", "bs") if c in summary.columns and c in raw.columns]
    if missing and keys and not summary.empty:  # a summary written before it carried the reasons
        summary = summary.merge(raw[keys + missing].drop_duplicates(keys), on=keys, how="left")
    return summary, raw


def plot(experiment: str, run_dir: Path) -> list[Path]:
    """Draw ``experiment``'s figure from ``run_dir``'s CSVs into ``<run_dir>/<experiment>.png`` and ``.pdf``."""
    if experiment not in _PLOTTERS:
        raise ValueError(f"no figure for experiment {experiment!r}; valid: {', '.join(_PLOTTERS)}")
    draw, title = _PLOTTERS[experiment]
    run_dir = Path(run_dir)
    with plt.rc_context(_STYLE):
        fig = draw(run_dir, title)
        paths = [run_dir / f"{experiment}.png", run_dir / f"{experiment}.pdf"]
        for path in paths:
            fig.savefig(path, dpi=250, bbox_inches="tight", pad_inches=0.03)
    plt.close(fig)
    return paths


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m experiments.plot EXPERIMENT RUN_DIR``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("experiment", choices=sorted(_PLOTTERS))
    parser.add_argument("run_dir", type=Path)
    args = parser.parse_args(argv)
    try:
        paths = plot(args.experiment, args.run_dir)
    except FileNotFoundError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for path in paths:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
