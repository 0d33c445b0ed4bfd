"""What a compiled callable says about itself: :class:`Stats` (its counters, :func:`magpy.stats`)
and :class:`Explanation` (what one call recorded, :func:`magpy.explain`).

    >>> import magpy, torch
    >>> fast = magpy.compile(lambda x: x.relu() + 1, backend="eager")
    >>> _ = fast(torch.randn(3)); _ = fast(torch.randn(3))
    >>> s = magpy.stats(fast)
    >>> (s.monitor_runs, s.guard_hits, s.calls)
    (1, 1, 2)

Both are plain data read by the user (and printed: ``str(explanation)``); :mod:`magpy.api`
fills them in.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Stats:
    """Counters of one compiled callable (see :func:`stats`).

    Each call made outside a monitor run is counted once, as exactly one of

    * ``guard_hits``: a record's guard passed and its mock produced the result (or raised
      the user's exception: those are also counted in ``mock_errors``);
    * ``guard_misses``: no guard passed and the call went to a monitor run (or found that
      its arguments cannot be monitored, gave up and ran eagerly);
    * ``fallbacks``: the call ran eagerly without a monitor run: the callable had given up
      (a break, an internal error, or this very call reached ``recompile_limit``), or hooks
      were registered (see the module docstring).

    so ``calls == guard_hits + guard_misses + fallbacks`` and ``monitor_runs <= guard_misses``.
    Calls from inside another compiled callable's monitor run run as plain code and are
    not counted. ``records`` is the number of records cached now and ``graph_count`` how
    many compiled graphs they run (one per record with tensor operations; a record split at
    numpy nodes for a backend other than eager counts each compiled region). ``guard_errors`` counts records dropped because
    their guard raised (a MagPy bug). ``unheld`` counts tries of a speculative record whose
    guard passed but whose assumptions on values read from tensors did not hold (its graph ran
    and its result was dropped, :mod:`magpy.monitor.scalars`); such a call goes on to another record or
    a miss, so ``unheld`` is not part of the sum above. ``matched_calls``, ``guard_time_s`` and
    ``mock_time_s`` are measured only with ``profile=True`` (then ``matched_calls ==
    guard_hits``); otherwise they are None. Counters are not locked: under concurrent calls
    from several threads an increment can be lost.

    A call split at a dynamic operation (:mod:`magpy.splits`) is counted here by its first
    part (a hit of a split record, or the miss whose monitor run split it); the code after the
    operation is a continuation, a compiled callable of its own, whose counters are summed into
    ``resumed_monitor_runs``, ``resumed_guard_hits`` and ``resumed_fallbacks`` (over every level
    of nesting), whose graphs are in ``graph_count``, and ``splits`` counts the continuations.
    ``split_hits`` counts the guard hits (also in ``guard_hits``) of records that split, so
    ``guard_hits - split_hits`` calls were answered whole by a record's guard + mock.
    """

    monitor_runs: int = 0
    guard_hits: int = 0
    guard_misses: int = 0
    fallbacks: int = 0
    mock_errors: int = 0
    guard_errors: int = 0
    unheld: int = 0
    records: int = 0
    graph_count: int = 0
    analysis_time_s: float = 0.0
    backend_compile_time_s: float = 0.0
    matched_calls: int | None = None
    guard_time_s: float | None = None
    mock_time_s: float | None = None
    break_reasons: list = field(default_factory=list)
    #: split points (magpy.splits): dynamic operations after which the code goes on in a compiled
    #: continuation; with the continuations' own counters, summed over every level of nesting
    #: (their graphs are in ``graph_count``)
    splits: int = 0
    #: rolled loops (a body compiled once, run for any trip count, magpy.dynamic.rolling) and
    #: conditionals (both sides of a branch on a tensor value, magpy.dynamic.merging) in the graphs
    #: of the records held, continuations' included (counted as :class:`Explanation` counts them)
    loop_regions: int = 0
    conditionals: int = 0
    #: graphs compiled by the backend for the records made (counted per record as ``graph_count``
    #: counts them; continuations' included), over the callable's life: records dropped since too
    backend_compiles: int = 0
    resumed_monitor_runs: int = 0
    resumed_guard_hits: int = 0
    resumed_fallbacks: int = 0
    #: check mode (``check=True``, :mod:`magpy.check`): calls whose record was evaluated on a sandbox
    #: and compared with the eager call, how many of them differed, the reports of the first
    #: differences (at most 20) and the parts of records that were not compared
    checks: int = 0
    check_divergences: int = 0
    check_reports: list = field(default_factory=list)
    check_notes: list = field(default_factory=list)
    split_hits: int = 0
    #: other-side runs (magpy.dynamic.other_side): after a miss, the program again on the same
    #: arguments taking the other sides of its branches on tensor values (not in ``monitor_runs``)
    other_side_runs: int = 0
    #: the break reasons above, typed (:class:`magpy.breaks.BreakReason`; ``break_reasons`` holds
    #: their text), and whether a monitor run (of this callable or a continuation) saw behaviour
    #: that follows tensor values
    breaks: list = field(default_factory=list)
    dynamic: bool = False
    #: per record, the graph it serves: the backend's compiled graph or the same graph run eagerly,
    #: whichever its first matched calls measured faster, with the times (``adaptive``, magpy.adaptive)
    graphs_served: list = field(default_factory=list)

    @property
    def calls(self) -> int:
        """Calls counted: ``guard_hits + guard_misses + fallbacks``."""
        return self.guard_hits + self.guard_misses + self.fallbacks


@dataclass
class Explanation:
    """What one monitor run found (see :func:`explain`)."""

    graph_count: int
    break_reasons: list
    guards: str
    op_count: int
    dynamic: bool
    graph: Any = None
    assumptions: list = field(default_factory=list)
    #: dynamic operations kept in the record: each runs in Python (between compiled regions,
    #: for backends other than eager) with the values the graph computed, in program order; and
    #: the split the run ended at ("split at `op` (file:line): reason"), after which the code
    #: goes on in a compiled continuation (magpy.splits; ``graph_count`` is the code before it)
    splits: list = field(default_factory=list)
    #: branches on tensor values (magpy.dynamic.merging): whether each one's arm can become one side of a
    #: conditional node once a run takes the other side, or why it stays an assumption
    branches: list = field(default_factory=list)
    #: loops whose trip count changes between calls (magpy.dynamic.loops): rolled into one body, or
    #: unrolled and why (with the loop's file:line)
    loops: list = field(default_factory=list)
    #: the break reasons and splits, typed (:class:`magpy.breaks.BreakReason`)
    breaks: list = field(default_factory=list)
    #: what the call recorded, counted as :class:`Stats` counts them: split points (continuations,
    #: every level), rolled loops and conditional nodes in the records' graphs
    split_count: int = 0
    loop_regions: int = 0
    conditionals: int = 0
    #: explaining a compiled callable: the graph each of its records serves (``Stats.graphs_served``)
    graphs_served: list = field(default_factory=list)

    def __str__(self) -> str:
        lines = [f"Graph count: {self.graph_count}", f"Operator count: {self.op_count}",
                 f"Dynamic behaviour detected: {self.dynamic}",
                 f"Splits: {self.split_count}, rolled loops: {self.loop_regions}, conditionals: {self.conditionals}",
                 f"Break reasons ({len(self.break_reasons)}):"]
        lines += [f"  {i + 1}. {r}" for i, r in enumerate(self.break_reasons)]
        lines.append(f"Values read from tensors and assumed ({len(self.assumptions)}):")
        lines += [f"  {i + 1}. {a}" for i, a in enumerate(self.assumptions)]
        lines.append(f"Dynamic operations run in Python inside the record ({len(self.splits)}):")
        lines += [f"  {i + 1}. {a}" for i, a in enumerate(self.splits)]
        lines.append(f"Branches on tensor values ({len(self.branches)}):")
        lines += [f"  {i + 1}. {a}" for i, a in enumerate(self.branches)]
        lines.append(f"Loops over a changing count ({len(self.loops)}):")
        lines += [f"  {i + 1}. {a}" for i, a in enumerate(self.loops)]
        lines.append("Guards:")
        lines += ["  " + g for g in self.guards.splitlines()]
        if self.graphs_served:
            lines.append("Graphs served by the compiled callable's records:")
            lines += ["  " + g for g in self.graphs_served]
        return "\n".join(lines)


def python_operations(gm: Any) -> list[str]:
    """The dynamic operations a record's graph runs in Python (numpy nodes), with file:line."""
    if gm is None:
        return []
    return [f"`{getattr(n.target, '__name__', n.target)}` on values read from tensors ({n.meta['magpy_where']})"
            for n in gm.graph.nodes if n.meta.get("magpy_python") and "magpy_where" in n.meta]


def served_explanation(record: Any, counts: tuple[int, int, int], graphs_served: list) -> Explanation:
    """The explanation of a call a compiled callable's ``record`` answers (its guard passes for the
    call's arguments): what that record runs, counted as :class:`Stats` counts it (``counts``: the
    record's graphs, rolled loops and conditional nodes, ``pipeline.record_counts``). Its
    assumptions are checked after its graph: a call on which one fails is a miss."""
    return Explanation(graph_count=counts[0], break_reasons=[], guards=record.guards_text, op_count=record.op_count,
                       dynamic=False, graph=record.graph_module, assumptions=list(record.assumptions),
                       splits=python_operations(record.graph_module), branches=list(record.branches),
                       loops=list(record.loops), loop_regions=counts[1], conditionals=counts[2],
                       graphs_served=graphs_served)


def changing_lines(texts: list[str], most: int = 3) -> list[str]:
    """Guard lines of the newest record that some other record does not have (its version of
    what kept changing), at most ``most`` of them."""
    if len(texts) < 2:
        return []
    newest, others = texts[0].splitlines(), [set(t.splitlines()) for t in texts[1:]]
    return [line for line in newest if any(line not in o for o in others)][:most]


def limit_reason(limit: int, records: tuple) -> str:
    """What a compiled callable says once it reaches its recompile limit: naming the guards that
    differ between its records (what kept changing: a shape, a Python number, an object) and the
    values read from tensors they assumed differently."""
    reason = (f"recompile limit ({limit}) reached: calls that no record matches run "
              f"eagerly, the {len(records)} records are still used")
    changing = changing_lines([r.guards_text for r in records])
    if changing:
        reason += "; guards that differ between the records: " + "; ".join(changing)
    assumed = changing_lines(["\n".join(r.assumptions) for r in records])
    if assumed:
        reason += "; values read from tensors that differ between the records: " + "; ".join(assumed)
    return reason
