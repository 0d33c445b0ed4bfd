"""Records and the record cache (paper §2.2, §6.1).

A :class:`Record` is what one monitor run produced: a guard, a mock and the compiled
operator graph. The :class:`RecordCache` keeps several records per compiled function;
a hit moves the record to the front so the common case is tried first.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Record:
    """guard(args, kwargs) -> fetched locals or None; mock(fetched) -> the call's result."""

    guard: Callable
    mock: Callable
    graph_module: Any
    compiled_graph: Any
    guards_text: str
    guard_source: str
    mock_source: str
    op_count: int
    hits: int = 0


@dataclass
class RecordCache:
    """Most-recently-hit-first list of records, with an optional size limit."""

    limit: int = 64
    records: list = field(default_factory=list)

    def add(self, record: Record) -> None:
        self.records.insert(0, record)
        del self.records[self.limit:]

    def promote(self, index: int) -> None:
        if index:
            self.records.insert(0, self.records.pop(index))

    def clear(self) -> None:
        self.records.clear()

    def __len__(self) -> int:
        return len(self.records)
