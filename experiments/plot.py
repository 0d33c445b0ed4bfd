"""Figures from result files only: ``python -m experiments.plot fig15 results/fig15/smoke-cpu``.

Each experiment's figure is drawn from the run directory's ``summary.csv`` (and ``raw.csv`` for
labels and notes), never from live measurements, so re-plotting needs no model and no GPU. The
figures follow the paper: grouped bars per model normalised to eager with one panel per batch size
(Figures 1, 15, 17, 18), a table (Table 2, also written as ``table2.md``) and stacked fractions
(Figure 16). A missing bar is labelled with the reason: ``n/a`` (a package is not installed),
``err`` (the compiler failed), ``wrong`` (output differs from eager), ``t/o`` or ``crash``; a bar
marked ``fallback`` is a MagPy run that executed (some) calls eagerly.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

_APPROACHES = {"dynamo": "TorchDynamo", "torchscript": "TorchScript", "torchscript-regions": "TorchScript",
               "lazytensor": "LazyTensor", "magpy": "MagPy"}
_MISSING = {"unavailable": "n/a", "error": "err", "timeout": "t/o", "crash": "crash"}


def _labels(raw: pd.DataFrame, column: str) -> dict[str, str]:
    label_col = f"{column}_label"
    if label_col not in raw.columns:
        return {}
    return dict(zip(raw[column], raw[label_col]))


def _why_missing(row: pd.Series) -> str:
    if pd.isna(row["status"]) or row["status"] == "none":
        return "-"
    if row["status"] != "ok":
        return _MISSING.get(row["status"], row["status"])
    if str(row.get("correct")) == "False":
        return "wrong"
    return "n/a"


def _meta_line(run_dir: Path) -> str:
    try:
        meta = json.loads((run_dir / "meta.json").read_text())
    except (OSError, ValueError):
        return ""
    size = meta.get("config", {}).get("size", {}).get("name", "")
    return f"{meta.get('device_name', '')}, size={size}, torch {meta.get('versions', {}).get('torch', '')}"


def _grouped_speedups(ax: plt.Axes, df: pd.DataFrame, groups: list[str], group_col: str,
                      compilers: list[str], labels: dict[str, str], group_labels: dict[str, str],
                      legend: bool = True) -> None:
    """Bars of ``speedup`` per group (x) and compiler (colour), with the reason for each missing bar."""
    from matplotlib.patches import Patch

    width = 0.8 / max(1, len(compilers))
    cmap = plt.get_cmap("tab10")
    handles = []
    top = max([v for v in df["speedup"] if not math.isnan(v)] + [1.0])
    for j, compiler in enumerate(compilers):
        xs, heights = [], []
        for i, group in enumerate(groups):
            match = df[(df[group_col] == group) & (df["compiler"] == compiler)]
            x = i - 0.4 + width * (j + 0.5)
            if match.empty:
                continue
            row = match.iloc[0]
            if math.isnan(row["speedup"]):
                ax.text(x, 0.02 * top, _why_missing(row), rotation=90, ha="center", va="bottom", fontsize=6,
                        color="dimgray")
            else:
                xs.append(x)
                heights.append(row["speedup"])
                if row.get("fallbacks", 0) > 0:  # MagPy ran (part of) the calls eagerly
                    ax.text(x, row["speedup"], " fallback", rotation=90, ha="center", va="bottom", fontsize=6,
                            color="dimgray")
        ax.bar(xs, heights, width, color=cmap(j % 10))
        handles.append(Patch(color=cmap(j % 10), label=labels.get(compiler, compiler)))
    if legend:
        ax.legend(handles=handles, fontsize=7, ncol=min(4, len(handles)), loc="lower left",
                  bbox_to_anchor=(0, 1.0), frameon=False)
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([group_labels.get(g, g) for g in groups], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("speedup over eager")


def plot_speedups(run_dir: Path, title: str) -> plt.Figure:
    """Figures 1 and 15: one panel per batch size, models grouped, one bar per non-eager compiler."""
    summary, raw = _read(run_dir)
    labels, model_labels = _labels(raw, "compiler"), _labels(raw, "model")
    batch_sizes = sorted(int(b) for b in summary["bs"].dropna().unique())
    compilers = [c for c in dict.fromkeys(summary["compiler"]) if c != "eager"]
    models = list(dict.fromkeys(summary["model"]))  # sweep order, GeoMean last
    width = max(6.0, len(models) * (0.4 + 0.12 * len(compilers)) + 2)
    fig, axes = plt.subplots(len(batch_sizes), 1, figsize=(width, 3.6 * len(batch_sizes)), squeeze=False)
    for i, (ax, bs) in enumerate(zip(axes[:, 0], batch_sizes)):
        _grouped_speedups(ax, summary[summary["bs"] == bs], models, "model", compilers, labels, model_labels,
                          legend=i == 0)
        ax.text(0.995, 0.97, f"batch size {bs}", transform=ax.transAxes, ha="right", va="top", fontsize=8)
    fig.suptitle(f"{title}\n{_meta_line(run_dir)}", fontsize=10)
    fig.tight_layout()
    return fig


def plot_dynamic(run_dir: Path, title: str) -> plt.Figure:
    """Figures 17 and 18: workloads (model-kind) grouped, one bar per non-eager compiler."""
    summary, raw = _read(run_dir)
    labels = _labels(raw, "compiler")
    compilers = [c for c in dict.fromkeys(summary["compiler"]) if c != "eager"]
    workloads = list(dict.fromkeys(summary["workload"]))
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(workloads) + 2), 3.6))
    _grouped_speedups(ax, summary, workloads, "workload", compilers, labels, {})
    note = ""
    if "notes" in raw.columns and raw["notes"].notna().any():
        note = "; ".join(sorted({n for n in raw["notes"].dropna() if n}))[:160]
    experiment_note = _experiment_note(run_dir)
    fig.suptitle("\n".join(t for t in (title, experiment_note, _meta_line(run_dir)) if t), fontsize=9)
    if note:
        fig.text(0.01, 0.01, note, fontsize=6, color="dimgray")
    fig.tight_layout(rect=(0, 0.04 if note else 0, 1, 1))
    return fig


def _experiment_note(run_dir: Path) -> str:
    try:
        meta = json.loads((run_dir / "meta.json").read_text())
    except (OSError, ValueError):
        return ""
    return meta.get("config", {}).get("experiment", {}).get("note", "") or ""


def plot_graph_table(run_dir: Path, title: str) -> plt.Figure:
    """Table 2: graph counts, approaches as rows and models as columns (also written as table2.md)."""
    summary, raw = _read(run_dir)
    labels, model_labels = _labels(raw, "compiler"), _labels(raw, "model")
    if "frontend" in raw.columns:  # the paper names the approach, not the (irrelevant) backend
        labels |= {c: _APPROACHES.get(f, labels.get(c, c)) for c, f in zip(raw["compiler"], raw["frontend"])
                   if isinstance(f, str)}
    table = summary.pivot_table(index="compiler", columns="model", values="value", aggfunc="first", sort=False)
    table = table.reindex(index=list(dict.fromkeys(summary["compiler"])), columns=list(dict.fromkeys(summary["model"])))
    table = table.fillna("-")
    row_labels = [labels.get(c, c) for c in table.index]
    col_labels = [model_labels.get(m, m) for m in table.columns]
    markdown = ["| approach | " + " | ".join(col_labels) + " |", "|---" * (len(col_labels) + 1) + "|"]
    markdown += [f"| {r} | " + " | ".join(str(v) for v in values) + " |" for r, values in zip(row_labels, table.values)]
    (run_dir / "table2.md").write_text("\n".join(markdown) + "\n")
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(col_labels) + 2), 0.5 * len(row_labels) + 1.4))
    ax.axis("off")
    grid = ax.table(cellText=table.values, rowLabels=row_labels, colLabels=col_labels, loc="center", cellLoc="center")
    grid.auto_set_font_size(False)
    grid.set_fontsize(8)
    grid.scale(1, 1.4)
    fig.suptitle(f"{title}\n{_meta_line(run_dir)}", fontsize=10)
    return fig


def plot_breakdown(run_dir: Path, title: str) -> plt.Figure:
    """Figure 16: (a) monitor run = analysis + backend compile + other, (b) matched run = guard + mock."""
    summary, raw = _read(run_dir)
    model_labels = _labels(raw, "model")
    ok = summary[summary["status"] == "ok"]
    models = list(dict.fromkeys(summary["model"]))
    fig, (ax_a, ax_b) = plt.subplots(1, 2, figsize=(11, 0.45 * len(models) + 2.4), sharey=True)
    y = range(len(models))
    parts_a = [("analysis_frac", "MagPy analysis (monitored execution, guard/mock generation)", "tab:blue"), ("backend_compile_frac", "backend compile", "tab:orange"),
               ("monitor_other_frac", "other", "tab:gray")]
    parts_b = [("guard_frac", "guard", "tab:green"), ("mock_frac", "mock (incl. compiled graph)", "tab:purple")]
    for ax, parts, total_col, unit in ((ax_a, parts_a, "monitor_s", "s"), (ax_b, parts_b, "matched_ms", "ms")):
        left = [0.0] * len(models)
        for column, label, color in parts:
            widths = []
            for m in models:
                match = ok[ok["model"] == m]
                widths.append(float(match[column].iloc[0]) if not match.empty else 0.0)
            ax.barh(list(y), widths, left=left, label=label, color=color)
            left = [a + b for a, b in zip(left, widths)]
        for i, m in enumerate(models):
            match = summary[summary["model"] == m].iloc[0]
            text = f"{match[total_col]:.3g} {unit}" if match["status"] == "ok" else _why_missing(match)
            ax.text(1.01, i, text, va="center", fontsize=7)
        ax.set_xlim(0, 1.25)
        ax.set_xlabel("fraction of the call")
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, frameon=False)
    ax_a.invert_yaxis()  # first model on top, as in the table
    ax_a.set_yticks(list(y))
    ax_a.set_yticklabels([model_labels.get(m, m) for m in models], fontsize=8)
    ax_a.set_title("(a) monitor run", fontsize=9)
    ax_b.set_title("(b) matched run", fontsize=9)
    fig.suptitle(f"{title}\n{_meta_line(run_dir)}", fontsize=10)
    fig.tight_layout()
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
    return pd.read_csv(summary_path), pd.read_csv(raw_path)


def plot(experiment: str, run_dir: Path) -> list[Path]:
    """Draw ``experiment``'s figure from ``run_dir``'s CSVs into ``<run_dir>/<experiment>.png`` and ``.pdf``."""
    if experiment not in _PLOTTERS:
        raise ValueError(f"no figure for experiment {experiment!r}; valid: {', '.join(_PLOTTERS)}")
    draw, title = _PLOTTERS[experiment]
    run_dir = Path(run_dir)
    fig = draw(run_dir, title)
    paths = [run_dir / f"{experiment}.png", run_dir / f"{experiment}.pdf"]
    for path in paths:
        fig.savefig(path, dpi=150, bbox_inches="tight")
    plt.close(fig)
    return paths


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m experiments.plot EXPERIMENT RUN_DIR``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("experiment", choices=sorted(_PLOTTERS))
    parser.add_argument("run_dir", type=Path)
    args = parser.parse_args(argv)
    for path in plot(args.experiment, args.run_dir):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
