"""What happened to a cell, in the words every figure and table uses (:data:`OUTCOMES`).

A result row is a plain measurement, or one of: *fell back to eager* (MagPy ran some calls as
the original program, or TorchDynamo hit its recompile limit and runs those frames as the original
program: the time is real but is not only the compiler's graphs), *wrong output*, *failed*,
*unavailable* (a package or device is missing), *timed out*, *crashed*. Figures draw a fallback
hatched and leave the others without a bar; tables write the word; both give :func:`reason`.

Example::

    >>> outcome({"status": "ok", "correct": True, "fallbacks": 24})
    'fell back to eager'
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pandas as pd

#: Words for what happened to a cell, shared by every figure and table.
OUTCOMES = {"unavailable": "unavailable", "error": "failed", "timeout": "timed out", "crash": "crashed",
            "wrong": "wrong output", "fallback": "fell back to eager", "none": "not run",
            "no_baseline": "no eager baseline"}
_REPO = str(Path(__file__).resolve().parent.parent) + "/"
#: The checkout a cell ran in, before one of the project's packages: a committed run redrawn in
#: another checkout names ``models/quantized.py:218`` as the checkout that measured it did.
_CHECKOUT = re.compile(r"(?:/[\w.+-]+)+/(?=(?:magpy|models|experiments|paritybench)/)")


def outcome(row: pd.Series | dict[str, Any]) -> str | None:
    """What happened to a cell in :data:`OUTCOMES`' words; None for a plain measurement."""
    status = row.get("status")
    if status is None or (isinstance(status, float) and math.isnan(status)):
        return OUTCOMES["none"]
    if status != "ok":
        return OUTCOMES.get(status, status)
    if str(row.get("correct")) == "False":
        return OUTCOMES["wrong"]
    for column in ("fallbacks", "limit_hits"):  # MagPy's breaks; frames past Dynamo's recompile limit
        value = row.get(column)
        if value is not None and not pd.isna(value) and value > 0:
            return OUTCOMES["fallback"]
    return None


def reason(row: pd.Series | dict[str, Any]) -> str:
    """Why a cell has its :func:`outcome`, in one short line (paths relative to the repository,
    object reprs elided so that cells failing the same way share one note)."""
    what = outcome(row)
    if what == OUTCOMES["fallback"]:
        text = row.get("break_reasons")
    elif what == OUTCOMES["wrong"]:
        text = row.get("mismatch")
    else:
        text = row.get("error")
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return ""
    text = _CHECKOUT.sub("", str(text).split(" | ")[0].replace(_REPO, "")).strip()
    # Addresses and object reprs differ between cells that failed the same way; one note covers them.
    text = re.sub(r"<[^<>]*>", "<...>", re.sub(r" at 0x[0-9a-fA-F]+", "", text))
    return text if len(text) <= 110 else text[:107] + "..."


def table2_cell(row: pd.Series | dict[str, Any]) -> str:
    """A Table 2 entry: the graph count, or the outcome's word (a fallback keeps its count)."""
    what = outcome(row)
    if row.get("status") != "ok":
        return what or "-"
    count = str(int(row["graph_count"])) if not pd.isna(row.get("graph_count")) else "?"
    if what == OUTCOMES["wrong"]:
        return f"{count} ({what})"
    if what == OUTCOMES["fallback"] or \
            count == "0" and isinstance(row.get("break_reasons"), str) and row["break_reasons"]:
        return f"{count} ({OUTCOMES['fallback']})"  # MagPy gave up, Dynamo hit its limit; break_reasons says why
    return count
