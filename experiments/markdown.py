"""Markdown tables, the one way the artifact writes them (Table 2's table2.md, ParityBench's
table3.md and failures.md): ``pandas.DataFrame.to_markdown``, which formats with ``tabulate``.

    >>> print(markdown_table([["MagPy", 1], ["TorchDynamo", 10]], ["Compiler", "Failed"], align="lr"))
    | Compiler    |   Failed |
    |:------------|---------:|
    | MagPy       |        1 |
    | TorchDynamo |       10 |

Cells are written as given (``str``), never re-parsed as numbers, so a caller's ``33.3%`` or
``0.0300`` stays as it was; ``|`` in a cell is escaped and line breaks become spaces.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

__all__ = ["cell", "markdown_table"]

_ALIGN = {"l": "left", "r": "right", "c": "center"}


def markdown_table(rows: Sequence[Sequence[Any]], columns: Sequence[str], align: str | None = None) -> str:
    """A pipe table of ``rows`` under ``columns``; ``align`` has one letter per column (``l``, ``r``,
    ``c``; default all left)."""
    align = align or "l" * len(columns)
    if len(align) != len(columns):
        raise ValueError(f"align {align!r} has {len(align)} letters for {len(columns)} columns")
    frame = pd.DataFrame([[cell(v) for v in row] for row in rows], columns=[cell(c) for c in columns], dtype=object)
    return frame.to_markdown(index=False, tablefmt="pipe", colalign=[_ALIGN[a] for a in align], disable_numparse=True)


def cell(value: Any) -> str:
    """``value`` as the text of one table cell: one line, ``|`` escaped."""
    return str(value).replace("|", "\\|").replace("\r", " ").replace("\n", " ")
