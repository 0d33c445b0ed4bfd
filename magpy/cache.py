"""Records and the record cache (paper §2.2, §6.1).

A :class:`Record` is what one monitor run produced: a guard, a mock and the compiled
operator graph. The :class:`RecordCache` keeps several records per compiled function;
a hit moves the record to the front so the common case is tried first.

Threads: ``RecordCache.records`` is an immutable tuple, replaced (under a lock) by every
change. A caller iterates the tuple it read, so a thread trying guards never sees the
list change under it while another thread adds, promotes or removes a record.
"""
from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .guard_text import guard_words


class _Miss:
    """What :attr:`Record.run` returns when the record's guard fails."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISS"


MISS = _Miss()


class _Unheld:
    """What a speculative record's mock returns when its graph computed a value other than the
    one its monitor run depended on (see :mod:`magpy.monitor.scalars`): a miss, after the graph ran."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNHELD"


UNHELD = _Unheld()


@dataclass(eq=False)
class Record:
    """guard(args, kwargs) -> fetched locals or None; mock(fetched) -> the call's result;
    run(args, kwargs) -> the call's result or :data:`MISS`: guard and mock fused, the matched
    path. Exceptions the guard part raised other than a missing path are appended to
    ``guard_bugs`` (MagPy's bugs, reported by the caller) and the call is a miss.

    Records compare by identity (two records are never "equal": each guards its own objects).
    """

    make_guard: Callable             # () -> the guard alone (see :attr:`guard`)
    mock: Callable
    run: Callable
    guard_bugs: list
    graph_module: Any
    compiled_graph: Any
    readable: list                   # the guards in words, or callables that say them (see guards_text)
    guard_source: str
    mock_source: str
    run_source: str
    op_count: int
    inputs: Callable | None = None   # fetched -> the compiled graph's inputs
    hits: int = 0
    assumptions: tuple = ()          # values read from tensors the record holds for (magpy.monitor.scalars)
    arg_shapes: dict | None = None   # parameter name -> shape of each tensor argument of its monitor run
    lifted: dict | None = None       # argument -> dimensions of any size (lifted shapes)
    int_values: dict | None = None   # source -> int or float value guarded (what lifting compares between records)
    int_sources: dict | None = None  # the same described sources -> Source (lifting peeks at their values on a miss)
    regions: int = 1                 # compiled graphs it runs (more when split at numpy nodes, backends.compile_regions)
    loops: tuple = ()                # counted loops of its monitor run: rolled or not, and why (magpy.dynamic.loops)
    branches: tuple = ()             # branches on tensor values: conditional nodes, or kept assumed and why (magpy.dynamic.branches)
    assumed_at: tuple = ()           # (file:line, what) per assumption: where speculation keeps failing (magpy.splits)
    split: str | None = None         # the dynamic operation it ends at, run before its continuation (magpy.splits)
    reads: tuple = ()                # check mode: (source, value, file:line) of the values its run read (magpy.check)
    choice: Any = None               # its compiled graph against the eager one, and which it serves (magpy.adaptive)
    declines_after_guard: bool = False   # its mock may make a call its guard passed a miss (checks after the graph)

    @functools.cached_property
    def guards_text(self) -> str:
        """The guard's checks in words, one per line (``explain``, the ``guards`` log): said when
        first read, which most records never are."""
        return guard_words(self.readable)

    @functools.cached_property
    def guard(self) -> Callable:
        """The guard alone, compiled when first asked for: a call runs :attr:`run`, which has the
        guard's checks inline, so only profiling, check mode and choosing among records (a
        deciding guard) need this one, and most records never do."""
        return self.make_guard()

    @property
    def served_graph(self) -> Any:
        """What the matched path calls now: the graph the record settled on (magpy.adaptive), else
        ``compiled_graph`` (the chooser, while it times its first matched calls)."""
        chosen = self.choice.chosen if self.choice is not None else None
        return chosen if chosen is not None else self.compiled_graph

    def graph_inputs(self, args: tuple, kwargs: dict) -> list | None:
        """The compiled graph's inputs for a call with these arguments, None when the guard fails:
        ``record.compiled_graph(*inputs)`` is the bare graph, without guard or mock."""
        fetched = self.guard(args, kwargs)
        return None if fetched is None or self.inputs is None else self.inputs(fetched)


def subsumes(a: Record, b: Record) -> bool:
    """Does ``a`` answer every call ``b`` answers? The same guards, ending at the same split, and
    fewer assumptions, each one of ``b``'s (``b`` assumed the side of a branch that ``a`` runs as a
    conditional node): whenever ``b``'s guard passes and its checks hold, ``a``'s do too."""
    return (a is not b and a.guards_text == b.guards_text and a.split == b.split
            and len(a.assumptions) < len(b.assumptions) and set(a.assumptions) <= set(b.assumptions))


class RecordCache:
    """Most-recently-hit-first records, with an optional size limit (``limit`` records at most)."""

    def __init__(self, limit: int = 64) -> None:
        self.limit = limit
        self.records: tuple[Record, ...] = ()   # a snapshot: never mutated, only replaced
        self.first: Callable | None = None      # records[0].run: the compiled callable's fast path
        self._lock = threading.Lock()

    def _set(self, records: tuple[Record, ...]) -> None:
        self.records = records
        self.first = records[0].run if records else None

    def add(self, record: Record) -> None:
        with self._lock:
            self._set(((record,) + self.records)[:max(self.limit, 0)])

    def add_merged(self, record: Record) -> None:
        """Add ``record`` and drop the records it subsumes (:func:`subsumes`): a record whose
        branch became a conditional node serves every call the one-sided record served, so that
        one would only be tried first for nothing, and counted as graphs no call needs."""
        with self._lock:
            self._set(((record,) + tuple(r for r in self.records if not subsumes(record, r)))[:max(self.limit, 0)])

    def deciding(self, args: tuple, kwargs: dict) -> Record | None:
        """The record a call with these arguments would run, where its guard alone decides: the
        first, in the order a call tries them, whose guard passes. None where that record's mock
        checks values after its graph ran (whether they hold is known only then) or it splits (what
        runs after the split is decided by the continuation at run time)."""
        for r in self.records:
            try:
                passes = r.guard(args, kwargs) is not None
            except Exception:
                continue
            if passes:
                return None if r.split is not None or r.declines_after_guard else r
        return None

    def promote(self, record: Record) -> None:
        """Move ``record`` to the front (no-op if it is first or no longer cached)."""
        with self._lock:
            recs = self.records
            if recs and recs[0] is not record and any(r is record for r in recs):
                self._set((record,) + tuple(r for r in recs if r is not record))

    def remove(self, record: Record) -> bool:
        """Drop ``record``; False if it was not cached (e.g. another thread removed it)."""
        with self._lock:
            recs = self.records
            kept = tuple(r for r in recs if r is not record)
            self._set(kept)
            return len(kept) != len(recs)

    def clear(self) -> None:
        with self._lock:
            self._set(())

    def __len__(self) -> int:
        return len(self.records)
