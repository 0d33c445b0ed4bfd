"""Turning a run directory's event logs into Table 3 and its companions.

Reads ``<out>/files/*.jsonl`` (see :mod:`paritybench.worker`) and writes

* ``cases.csv``: one row per test case, every compiler's status, graph count, error and time;
* ``table3.csv`` / ``table3.md``: the paper's table (cases, static cases, failed cases and
  fail rate per compiler) with the paper's own values beside ours, and what was set apart and why;
* ``coverage.csv``: every eager-runnable case counted for every compiler (one graph and
  correct, correct with several graphs, ran eagerly, wrong, raised), and projects whose every
  case is one graph and correct: the table nobody's classification can shrink;
* ``failures.md``: per compiler, the most common failure reasons on static cases, each with
  a count and an example ``file::class``.

How a case is classified (paper §8.3):

``eager_failed``     the eager run raised, hung or crashed: set apart
``nondeterministic`` two eager runs from the same seed disagree: set apart
``dynamic``          MagPy detected dynamic behaviour: set apart from the static cases
``static``           everything else; the cases Table 3's fail rates are computed over
``unclassified``     MagPy was not among the compilers, so nothing decides static vs dynamic
"""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from experiments.markdown import cell, markdown_table

from .worker import read_events

__all__ = ["CASE_COLUMNS", "Table3", "case_rows", "family_of", "reason_key", "summarize", "write_reports"]

COMPILER_TITLES = {"magpy": "MagPy", "dynamo": "TorchDynamo", "torchscript": "TorchScript"}
_PAPER_ORDER = ("torchscript", "dynamo", "magpy")
_PER_COMPILER = ("status", "graphs", "error_class", "error", "where", "time_s")

CASE_COLUMNS = [
    "file",
    "class",
    "kind",
    "expected",
    "features",
    "eager_status",
    "eager_error",
    "eager_time_s",
    *[f"{c}_{f}" for c in ("magpy", "dynamo", "torchscript") for f in _PER_COMPILER],
    "magpy_dynamic_reason",
    "magpy_records",
    "magpy_break_reasons",
    "stubs_used",
]
TABLE3_COLUMNS = ["cases", "static_cases", "compiler", "failed_cases", "fail_rate", "source"]

#: The MagPy paper's Table 3 (§8.3), written beside ours: 1421 ParityBench cases that ran in eager
#: mode, 1191 of them static by the authors' hand classification; PyTorch 2.0.1, TorchScript via
#: ``torch.jit.script``, TorchDynamo with ``fullgraph=True``.
PAPER_TABLE3 = {"cases": 1421, "static_cases": 1191, "failed": {"torchscript": 769, "dynamo": 272, "magpy": 79},
                "fail_rate": {"torchscript": 0.645, "dynamo": 0.228, "magpy": 0.066}}  # as printed (769/1191 = 64.57%)
PAPER_SETTING = ("the MagPy paper's Table 3: 1421 cases of the original ParityBench (static by hand "
                 "classification), PyTorch 2.0.1, TorchScript via torch.jit.script, TorchDynamo with fullgraph=True")


def case_rows(out: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """(case rows, files that failed to load, the run's run.json) from a run directory."""
    meta = json.loads((out / "run.json").read_text()) if (out / "run.json").exists() else {}
    compilers = meta.get("config", {}).get("compilers", list(COMPILER_TITLES))
    rows: list[dict[str, Any]] = []
    load_failures: list[dict[str, Any]] = []
    for path in sorted((out / "files").glob("*.jsonl")):
        events = read_events(path)
        loads = [e for e in events if e.get("event") == "load"]
        if not loads:
            continue
        load = loads[-1]
        if not load.get("ok"):
            load_failures.append({"file": path.stem, "error_class": load.get("error_class", ""), "error": load.get("error", "")})
            continue
        expected = load.get("expected") or {}
        stages: dict[str, dict[str, dict[str, Any]]] = {}
        for e in events:
            if e.get("event") == "stage":
                stages.setdefault(e["case"], {})[e["stage"]] = e["result"]
        for case in load.get("cases", []):
            if case in stages and "eager" in stages[case]:
                rows.append(_row(path.stem, case, stages[case], expected.get(case), compilers))
    return rows, load_failures, meta


def _row(file: str, case: str, stages: dict[str, dict[str, Any]], declared: dict[str, Any] | None, compilers: list[str]) -> dict[str, Any]:
    eager = stages["eager"]
    row: dict[str, Any] = {c: "" for c in CASE_COLUMNS}
    row.update(file=file, **{"class": case})
    if declared is not None:
        row["expected"] = "dynamic" if declared.get("dynamic") else "static"
        row["features"] = " ".join(declared.get("features", []))
    row["eager_status"] = eager.get("status", "")
    row["eager_error"] = _one_line(f"{eager.get('error_class', '')}: {eager.get('error', '')}") if eager.get("status") != "ok" else ""
    row["eager_time_s"] = _seconds(eager.get("time_s"))
    stubs: dict[str, set[str]] = {}
    for name in ("magpy", "dynamo", "torchscript"):
        result = stages.get(name)
        if result is None:
            row[f"{name}_status"] = "not_run"
            continue
        row[f"{name}_status"] = result.get("status", "")
        row[f"{name}_graphs"] = "" if result.get("graphs") is None else result["graphs"]
        row[f"{name}_error_class"] = result.get("error_class", "") if result.get("status") != "ok" else ""
        row[f"{name}_error"] = _one_line(result.get("error", "")) if result.get("status") != "ok" else ""
        row[f"{name}_where"] = result.get("where", "")
        row[f"{name}_time_s"] = _seconds(result.get("time_s"))
        for mod, paths in (result.get("stubs_used") or {}).items():
            stubs.setdefault(mod, set()).update(paths)
    for mod, paths in (eager.get("stubs_used") or {}).items():
        stubs.setdefault(mod, set()).update(paths)
    magpy = stages.get("magpy", {})
    row["magpy_dynamic_reason"] = _one_line(magpy.get("dynamic_reason", "")) if magpy.get("dynamic") else ""
    row["magpy_records"] = "" if magpy.get("stats_records") is None else magpy["stats_records"]
    row["magpy_break_reasons"] = _one_line(" | ".join(magpy.get("break_reasons") or []))
    row["stubs_used"] = "; ".join(f"{m}: {', '.join(sorted(p))}" for m, p in sorted(stubs.items()))

    if eager.get("status") == "nondeterministic":
        row["kind"] = "nondeterministic"
    elif eager.get("status") != "ok":
        row["kind"] = "eager_failed"
    elif "magpy" not in compilers:
        row["kind"] = "unclassified"
    elif magpy.get("dynamic"):
        row["kind"] = "dynamic"
    else:
        row["kind"] = "static"
    return row


def _one_line(text: str) -> str:
    return " ".join(str(text).split())[:400]


def _seconds(value: Any) -> str:
    return "" if value is None else f"{float(value):.3f}"


@dataclass
class Table3:
    """The counts behind the paper's Table 3 for one run."""

    cases: int  # eager ok and deterministic
    static_cases: int
    dynamic_cases: int
    unclassified_cases: int
    eager_failed: int
    nondeterministic: int
    files: int
    files_failed_to_load: int
    compilers: list[str]
    failed: dict[str, int]
    statuses: dict[str, Counter[str]]
    counted_over: str  # "static" or "unclassified"
    # Every eager-runnable case (static, dynamic or unclassified), for every compiler alike.
    all_statuses: dict[str, Counter[str]] | None = None
    projects: int = 0
    projects_passing: dict[str, int] | None = None

    def fail_rate(self, compiler: str) -> float:
        base = self.static_cases if self.counted_over == "static" else self.unclassified_cases
        return self.failed[compiler] / base if base else 0.0


_VALID_KINDS = ("static", "dynamic", "unclassified")

# How each status reads in the every-case table: (column, statuses).
_OUTCOME_COLUMNS = (
    ("one graph, correct", ("ok",)),
    ("correct, several graphs", ("graph_break",)),
    ("ran eagerly", ("fallback",)),
    ("wrong", ("wrong",)),
    ("raised", ("error",)),
    ("timeout / crash", ("timeout", "crash", "harness_error")),
)
COVERAGE_COLUMNS = ["compiler", "cases", *[c for c, _ in _OUTCOME_COLUMNS], "projects", "projects_all_one_graph_correct"]


def summarize(rows: list[dict[str, Any]], load_failures: list[dict[str, Any]], compilers: list[str]) -> Table3:
    """Count cases by kind and, over the static cases, failures per compiler."""
    kinds = Counter(r["kind"] for r in rows)
    counted_over = "static" if "magpy" in compilers else "unclassified"
    counted = [r for r in rows if r["kind"] == counted_over]
    failed = {c: sum(r[f"{c}_status"] != "ok" for r in counted) for c in compilers}
    statuses = {c: Counter(r[f"{c}_status"] for r in counted) for c in compilers}
    valid = [r for r in rows if r["kind"] in _VALID_KINDS]
    by_project: dict[str, list[dict[str, Any]]] = {}
    for r in valid:
        by_project.setdefault(r["file"], []).append(r)
    return Table3(
        cases=kinds["static"] + kinds["dynamic"] + kinds["unclassified"],
        static_cases=kinds["static"],
        dynamic_cases=kinds["dynamic"],
        unclassified_cases=kinds["unclassified"],
        eager_failed=kinds["eager_failed"],
        nondeterministic=kinds["nondeterministic"],
        files=len({r["file"] for r in rows}) + len(load_failures),
        files_failed_to_load=len(load_failures),
        compilers=[c for c in _PAPER_ORDER if c in compilers],
        failed=failed,
        statuses=statuses,
        counted_over=counted_over,
        all_statuses={c: Counter(r[f"{c}_status"] for r in valid) for c in compilers},
        projects=len(by_project),
        projects_passing={c: sum(all(r[f"{c}_status"] == "ok" for r in members) for members in by_project.values())
                          for c in compilers},
    )


_NORMALIZERS = [
    (re.compile(r"0x[0-9a-fA-F]+"), "0x…"),
    (re.compile(r"(/[^\s:'\"]+)+\.py(:\d+)?"), "<file>"),
    (re.compile(r"\bline \d+"), "line N"),
    (re.compile(r"(?<![\w.])\d+(\.\d+)?(?![\w.])"), "N"),
    (re.compile(r"\s+"), " "),
]


def reason_key(error_class: str, message: str) -> str:
    """A failure's reason with addresses, paths and numbers blanked, for grouping."""
    text = message
    for pattern, repl in _NORMALIZERS:
        text = pattern.sub(repl, text)
    text = text.strip()
    if len(text) > 160:
        text = text[:160] + "…"
    return f"{error_class}: {text}" if text else error_class


def write_reports(out: Path, top: int = 10) -> Table3:
    """Write cases.csv, table3.csv, table3.md and failures.md into ``out``; return the counts."""
    rows, load_failures, meta = case_rows(out)
    compilers = meta.get("config", {}).get("compilers", list(COMPILER_TITLES))
    table = summarize(rows, load_failures, compilers)

    with open(out / "cases.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=CASE_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)

    with open(out / "table3.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(TABLE3_COLUMNS)
        for c in table.compilers:
            writer.writerow([table.cases, table.static_cases, COMPILER_TITLES[c], table.failed[c],
                             f"{table.fail_rate(c):.4f}", "this run"])
        for c in table.compilers:  # the paper's values beside ours
            writer.writerow([PAPER_TABLE3["cases"], PAPER_TABLE3["static_cases"], COMPILER_TITLES[c],
                             PAPER_TABLE3["failed"][c],
                             f"{PAPER_TABLE3['fail_rate'][c]:.4f}", "paper"])

    with open(out / "coverage.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(COVERAGE_COLUMNS)
        for c in table.compilers:
            counts = table.all_statuses[c]
            writer.writerow([COMPILER_TITLES[c], sum(counts.values()),
                             *[sum(counts.get(s, 0) for s in group) for _, group in _OUTCOME_COLUMNS],
                             table.projects, table.projects_passing[c]])

    notes = sorted({e["helpers_note"] for e in _load_events(out) if e.get("helpers_note")})
    (out / "table3.md").write_text(_table3_md(table, rows, load_failures, meta, notes), encoding="utf-8")
    (out / "failures.md").write_text(_failures_md(table, rows, load_failures, top), encoding="utf-8")
    return table


def _load_events(out: Path) -> list[dict[str, Any]]:
    return [e for p in sorted((out / "files").glob("*.jsonl")) for e in read_events(p) if e.get("event") == "load"]


def _coverage_note(table: Table3, meta: dict[str, Any]) -> list[str]:
    """A line saying the table covers part of the directory's files (`--limit`, `--files`, a run
    not finished), so a partial table is never read as the whole benchmark's."""
    from .loader import find_testfiles

    try:
        total = len(find_testfiles(meta.get("directory", "")))
    except (FileNotFoundError, OSError):
        return []
    if not total or table.files >= total:
        return []
    return [f"**Partial: this table covers {table.files} of the {total} test files in that directory** "
            "(a `--limit` or `--files` selection, or a run not finished).", ""]


def _every_case_section(table: Table3) -> list[str]:
    """Every eager-runnable case counted for every compiler: nothing set apart by anyone's say."""
    total = sum(table.all_statuses[table.compilers[0]].values()) if table.compilers else 0
    out = [f"## Every eager-runnable case ({total} cases in {table.projects} projects)", ""]
    heads = [c for c, _ in _OUTCOME_COLUMNS]
    rows = []
    for c in table.compilers:
        counts = table.all_statuses[c]
        cells = []
        for i, (_, group) in enumerate(_OUTCOME_COLUMNS):
            n = sum(counts.get(s, 0) for s in group)
            cells.append(f"{n} ({100 * n / total:.1f}%)" if i == 0 and total else str(n))
        passing = table.projects_passing[c]
        share = f" ({100 * passing / table.projects:.1f}%)" if table.projects else ""
        rows.append([COMPILER_TITLES[c], *cells, f"{passing}{share}"])
    out.append(markdown_table(rows, ["Compiler", *heads, "projects with every case one graph, correct"],
                              "l" + "r" * (len(heads) + 1)))
    return out


def _table3_md(
    table: Table3, rows: list[dict[str, Any]], load_failures: list[dict[str, Any]], meta: dict[str, Any], notes: list[str]
) -> str:
    cfg = meta.get("config", {})
    static_title = "Static cases" if table.counted_over == "static" else "Unclassified cases"
    base = table.static_cases if table.counted_over == "static" else table.unclassified_cases
    lines = [
        "# Coverage on the transformers model zoo" if meta.get("suite") == "zoo"
        else "# Table 3: coverage on ParityBench-format programs",
        "",
        f"Programs: `{meta.get('directory', '?')}`; backend `{cfg.get('backend', '?')}`, {cfg.get('calls', '?')} calls per case, "
        f"torch {meta.get('torch', '?')}, Python {meta.get('python', '?')}, magpy {meta.get('magpy', '?')}.",
        "",
        *_coverage_note(table, meta),
        *_every_case_section(table),
        "",
    ]
    zoo = meta.get("suite") == "zoo"
    lines += ["## Over MagPy's own static split", ""] if zoo else [
        "## The paper's table" + (" over MagPy's own static split" if table.counted_over == "static" else ""), ""]
    if table.counted_over == "static":
        lines += [
            "Static and dynamic are *MagPy's own classification* (a case MagPy flags dynamic is set apart for",
            "every compiler, as the paper's hand classification set cases apart); `failures.md` lists every",
            "case set apart this way with MagPy's reason, so the split can be checked.",
            "",
        ]
    rows_shown = _table3_rows(table)
    if zoo:   # (the paper's rows are ParityBench's: nothing to set beside the zoo)
        rows_shown = [r for r in rows_shown if not str(r[2]).endswith("(paper)")]
    lines.append(markdown_table(rows_shown, ["Cases", static_title, "Compiler", "Failed cases", "Fail rate"], "rrlrr"))
    if not zoo:
        lines += ["", f"(paper) rows: {PAPER_SETTING}; the rows above them: this run, over the programs named above "
                  "and MagPy's own classification."]
    lines += [
        "",
        "Set apart before counting (as in the paper, §8.3):",
        "",
        f"- {table.files_failed_to_load} of {table.files} files did not load",
        f"- {table.eager_failed} cases failed in eager mode",
        f"- {table.nondeterministic} cases gave different results in two eager runs from the same seed",
        f"- {table.dynamic_cases} cases are dynamic (MagPy detected dynamic behaviour)",
    ]
    if table.counted_over != "static":
        lines.append("- MagPy was not run, so no case could be classified static or dynamic; rates are over all valid cases")
    lines += [f"\nHelper module: {note}" for note in notes]
    lines += ["", f"Outcomes on the {base} counted cases:", ""]
    lines.append(markdown_table([[COMPILER_TITLES[c], *(table.statuses[c].get(s, 0) for s in _STATUS_ORDER)]
                                 for c in table.compilers], ["Compiler", *_STATUS_ORDER], "l" + "r" * len(_STATUS_ORDER)))
    declared = [r for r in rows if r["expected"]]
    if declared:
        lines += ["", *_declared_section(declared, table)]
        lines += ["", *_family_section(rows, table)]
    lines.append("")
    return "\n".join(lines)


def _table3_rows(table: Table3) -> list[list[Any]]:
    """Table 3's rows: this run's, then the paper's for the same compilers (labelled ``(paper)``)."""
    base = table.static_cases if table.counted_over == "static" else table.unclassified_cases
    ours = [[table.cases if i == 0 else "", base if i == 0 else "", COMPILER_TITLES[c], table.failed[c],
             f"{100 * table.fail_rate(c):.1f}%"] for i, c in enumerate(table.compilers)]
    paper = [[PAPER_TABLE3["cases"] if i == 0 else "", PAPER_TABLE3["static_cases"] if i == 0 else "",
              f"{COMPILER_TITLES[c]} (paper)", PAPER_TABLE3["failed"][c],
              f"{100 * PAPER_TABLE3['fail_rate'][c]:.1f}%"]
             for i, c in enumerate(table.compilers)]
    return ours + paper


_FAMILIES = ("builtins", "oop", "side_effects", "typing", "dynamic", "models")


def family_of(file_stem: str) -> str:
    """The feature family of a corpus file, from its name ``test_<family>_<topic>``."""
    name = file_stem.removeprefix("test_")
    return next((f for f in _FAMILIES if name.startswith(f + "_")), name.split("_")[0])


def _family_section(rows: list[dict[str, Any]], table: Table3) -> list[str]:
    """Failures per feature family (our corpus names its files ``test_<family>_<topic>.py``)."""
    titles = [COMPILER_TITLES[c] for c in table.compilers]
    families: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        families.setdefault(family_of(r["file"]), []).append(r)
    table_rows = []
    for name, members in sorted(families.items()):
        counted = [r for r in members if r["kind"] == table.counted_over]
        fails = [sum(r[f"{c}_status"] != "ok" for r in counted) for c in table.compilers]
        kinds = Counter(r["kind"] for r in members)
        table_rows.append([name, len({r["file"] for r in members}), len(members), kinds["static"], kinds["dynamic"], *fails])
    columns = ["Family", "files", "cases", "static", "dynamic", *titles]
    return [f"Failed {table.counted_over} cases by feature family:", "",
            markdown_table(table_rows, columns, "l" + "r" * (len(columns) - 1))]


_STATUS_ORDER = ("ok", "error", "wrong", "graph_break", "fallback", "timeout", "crash", "harness_error")


def _declared_section(declared: list[dict[str, Any]], table: Table3) -> list[str]:
    """Agreement between what the programs declare (EXPECTED) and how the run classified them."""
    valid = [r for r in declared if r["kind"] in ("static", "dynamic", "unclassified")]
    out = ["Declared behaviour (the files' `EXPECTED`) against the measured classification:", ""]
    by_label = []
    for label in ("static", "dynamic"):
        group = [r for r in declared if r["expected"] == label]
        kinds = Counter(r["kind"] for r in group)
        by_label.append([label, len(group), kinds["static"], kinds["dynamic"], kinds["unclassified"],
                         kinds["eager_failed"] + kinds["nondeterministic"]])
    out.append(markdown_table(by_label, ["Declared", "cases", "classified static", "classified dynamic", "unclassified",
                                         "eager failed / nondeterministic"], "lrrrrr"))
    declared_static = [r for r in declared if r["expected"] == "static" and r["kind"] in ("static", "dynamic")]
    if declared_static and "magpy" in table.compilers:
        # Judged against the declarations instead of MagPy's own classification: a declared-static
        # case MagPy set apart as dynamic is a MagPy failure here.
        out += ["", f"Over the {len(declared_static)} declared-static cases (a case MagPy called dynamic counts as a MagPy failure):", ""]
        judged = []
        for c in table.compilers:
            failed = sum(r[f"{c}_status"] != "ok" or (c == "magpy" and r["kind"] == "dynamic") for r in declared_static)
            judged.append([COMPILER_TITLES[c], failed, f"{100 * failed / len(declared_static):.1f}%"])
        out.append(markdown_table(judged, ["Compiler", "Failed cases", "Fail rate"], "lrr"))
    mismatched = [r for r in valid if r["kind"] != "unclassified" and r["kind"] != r["expected"]]
    if mismatched:
        out += ["", "Cases classified against their declaration:", ""]
        out += [f"- `{r['file']}::{r['class']}`: declared {r['expected']}, classified {r['kind']}" for r in mismatched[:40]]
    return out


_REASON_COLUMNS = ["count", "reason", "example"]


def _failures_md(table: Table3, rows: list[dict[str, Any]], load_failures: list[dict[str, Any]], top: int) -> str:
    counted = [r for r in rows if r["kind"] == table.counted_over]
    lines = [f"# Failure reasons on the {len(counted)} {table.counted_over} cases", ""]
    for c in table.compilers:
        failures = [r for r in counted if r[f"{c}_status"] != "ok"]
        lines += [f"## {COMPILER_TITLES[c]}: {len(failures)} failed", ""]
        if not failures:
            lines += ["No failures.", ""]
            continue
        by_class = Counter(r[f"{c}_error_class"] or r[f"{c}_status"] for r in failures)
        lines.append("By error class: " + ", ".join(f"{k} {v}" for k, v in by_class.most_common()) + ".")
        groups: dict[str, list[dict[str, Any]]] = {}
        for r in failures:
            key = reason_key(r[f"{c}_error_class"] or r[f"{c}_status"], r[f"{c}_error"])
            groups.setdefault(key, []).append(r)
        reasons = []
        for key, members in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:top]:
            ex = members[0]
            where = f" ({ex[f'{c}_where']})" if ex[f"{c}_where"] else ""
            reasons.append([len(members), key, f"`{ex['file']}::{ex['class']}`{where}"])
        if len(groups) > top:
            reasons.append([sum(len(m) for _, m in sorted(groups.items(), key=lambda kv: -len(kv[1]))[top:]),
                            f"({len(groups) - top} other reasons)", ""])
        lines += ["", markdown_table(reasons, _REASON_COLUMNS, "rll"), ""]
    dynamic = [r for r in rows if r["kind"] == "dynamic"]
    if dynamic:
        # MagPy's own word decides what is set apart as dynamic; show it, so a reader can judge it.
        lines += [f"## Why MagPy classified {len(dynamic)} cases dynamic", ""]
        groups = {}
        for r in dynamic:
            groups.setdefault(reason_key("dynamic", r["magpy_dynamic_reason"]), []).append(r)
        lines.append(markdown_table([[len(members), key, f"`{members[0]['file']}::{members[0]['class']}`"]
                                     for key, members in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:top]],
                                    _REASON_COLUMNS, "rll"))
        lines += ["", "Every case MagPy set apart as dynamic, with its reason:", ""]
        lines += [f"- `{r['file']}::{r['class']}`: {cell(r['magpy_dynamic_reason'])}" for r in dynamic]
        lines.append("")
    set_apart = [r for r in rows if r["kind"] in ("eager_failed", "nondeterministic")]
    if set_apart or load_failures:
        lines += ["## Set apart", ""]
        if load_failures:
            reasons = Counter(reason_key(f["error_class"], f["error"]) for f in load_failures)
            lines += [f"Files that did not load ({len(load_failures)}):", ""]
            lines += [f"- {n} × {cell(k)}" for k, n in reasons.most_common(top)]
            lines.append("")
        if set_apart:
            reasons = Counter(reason_key(r["kind"], r["eager_error"]) for r in set_apart)
            lines += [f"Cases set apart in eager mode ({len(set_apart)}):", ""]
            lines += [f"- {n} × {cell(k)}" for k, n in reasons.most_common(top)]
            lines.append("")
    return "\n".join(lines)
