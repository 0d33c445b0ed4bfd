"""The result of one monitor run, as the stages after it see it (paper §4.2).

A monitor run (:mod:`magpy.monitor`) builds a RefGraph of the objects the program touched, an
OpGraph of its tensor operations, the guards of what it read from outside and the tables of what
it changed there. The passes that still rewrite the run (merging branches, rolling loops) work on
the monitor; what comes after them (code generation, :mod:`magpy.codegen`; the record's backend
and stats, :mod:`magpy.api`; ``explain``, :mod:`magpy.pipeline`) reads a :class:`Trace` instead.
:meth:`Trace.of` is the one place that reads a finished run's fields, so those stages depend on
this contract, not on the monitor (and do not import it).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Protocol

from .breaks import BreakKind, BreakReason
from .replay_plan import Step, replay_plan

if TYPE_CHECKING:   # (annotations only: these modules are the run's, the trace is read after it)
    import torch.fx as fx

    from .global_state import GlobalState
    from .graph import OpGraph
    from .refgraph import RefGraph, ShadowNode

#: ``Trace.of(mon, result=...)`` not given: the run's own result.
_RUN_RESULT = object()


class FinishedRun(Protocol):
    """A monitor run (``magpy.monitor.Monitor``) as :meth:`Trace.of` takes it (the main fields;
    :meth:`Trace.of` lists every one it reads)."""

    rg: RefGraph
    graph: OpGraph
    result: object
    guards: list
    broken: str | None
    dynamic: bool

    def scalar_node(self, v: object) -> fx.Node | None: ...
    def holds_scalar(self, v: object, floats: bool = False) -> bool: ...
    def describe_assumptions(self) -> list[str]: ...
    def follows_changing_numbers(self) -> bool: ...


class SplitAt(Protocol):
    """A split point as a trace holds it (:class:`magpy.splits.SplitPoint`, which imports code
    generation, which reads traces: named here by what it offers)."""

    where: str
    op: str

    def describe(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Trace:
    """What one monitor run found, for the stages after it. The containers are read-only copies
    taken when the run is over (the objects in them are the run's own)."""

    # -- what the run computed -----------------------------------------------------------------------
    rg: RefGraph                     # a ShadowNode per object the run touched (source, versions, aliases)
    graph: OpGraph                   # the tensor operations (inputs, fx graph, node_of, op_count)
    result: object                   # what the call returned (a split: the image tuple of its frames)
    guards: tuple                    # a Guard per read from outside, in the order of the reads
    global_state: GlobalState        # the process-wide switches the run started with (one guard)
    param_sources: Mapping           # parameter name -> Source of the call's argument
    param_values: Mapping            # parameter name -> the argument
    # -- what it changed outside (the mock replays it) -----------------------------------------------
    attr_writes: Mapping             # node id -> {attribute name: True} written on that object
    mutated: tuple                   # node ids of objects from outside changed in place (in the run's set order)
    appends: Mapping                 # node id -> [(method, args)]: container calls replayed one by one
    global_writes: Mapping           # (id(globals), name) -> (globals dict, name) written or deleted
    cell_writes: Mapping             # id(cell) -> closure cell written or deleted
    contextvars: Mapping             # id -> (ContextVar, value before the call set it)
    replay: tuple[Step, ...]         # what the mock does to leave outside state as the run left it
                                     # (magpy.replay_plan: Algorithm 1 GetMockNodes, from versions)
    effects: tuple                   # (fn, args, kwargs, where) of calls replayed (print, logging, sleep)
    effect_marks: tuple              # per effect, how many of ``rg.writes`` the run had made before it
    run_writes: int                  # len(rg.writes) when the run ended (later ones: changes no event showed)
    made_functions: Mapping          # id -> function made in the call (MAKE_FUNCTION in a monitored frame)
    identity_numbers: frozenset      # id() / identity hash() of objects made in the call: never outlive it
    call_cells: Mapping              # id -> closure cell made in the call (a monitored frame's own variable)
    outside_cells: Mapping           # id -> closure cell that outlives the call (see FinishedRun.outside_cells)
    param_cells: Mapping             # id -> source of the argument a call cell still holds (None: not told)
    graph_mutates: bool              # an operator of the graph changes a tensor in place
    mutates_outside: bool            # ... one sharing memory with a tensor from outside
    mutated_storages: frozenset      # data_ptrs of the storages the graph changes in place
    array_constants: tuple           # (ndarray, snapshot) the graph holds as constant tensors
    # -- what it assumed (checked by the record) -----------------------------------------------------
    assumptions: tuple               # (kind, fx node, value the run saw): values read from tensors
    assumed_at: tuple                # file:line of each assumption
    assumption_lines: tuple          # one readable line per assumption
    speculative_ops: tuple           # file:line of tensor operations inside try/except
    draws: tuple                     # DrawSource per random draw the mock repeats, in order
    lifted_dims: Mapping             # Source -> dimensions of an argument tensor not guarded (lifted sizes)
    lifted_value_nodes: Mapping      # Source -> graph input of an int read from outside that is lifted
    follows_changing_numbers: bool   # the run followed sizes or ints that change between calls
    tracks_scalars: bool             # numbers read from tensors (or lifted sizes) were followed
    # (the run's lookups of followed numbers, by identity: magpy.monitor.scalars keeps the one table)
    scalar_node: Callable[[object], fx.Node | None]   # v -> the graph node computing the followed number v (or None)
    holds_scalar: Callable[..., bool]   # v -> is a followed number v or inside it?
    tracked_in: Callable[[object], list]   # v -> the followed numbers in v
    # -- how it ended ------------------------------------------------------------------------------
    split: SplitAt | None            # the SplitPoint the run split at (magpy.splits), or None
    break_reason: BreakReason | None  # why it broke (None: it finished or split)
    dynamic: bool                    # it saw behaviour that follows tensor values
    loop_report: tuple               # what became of each counted loop (magpy.dynamic.loops)
    branch_report: tuple | None      # what became of each branch, if they were merged (magpy.dynamic.branches)
    read_log: tuple                  # check mode: (source, value, where) of each read

    def node(self, v: object) -> ShadowNode | None:
        """The ShadowNode of object ``v`` (None if the run did not see it)."""
        return self.rg.get_node_by_var(v)

    @property
    def has_writes(self) -> bool:
        """Does the record change anything outside (objects, globals, cells, tensors in place)?
        (Every node in ``mutated`` has a step in the replay plan.)"""
        return bool(self.replay or self.graph_mutates)

    @classmethod
    def of(cls, mon: FinishedRun, result: object = _RUN_RESULT) -> Trace:
        """The trace of ``mon``'s run as it stands (``result``: in place of the run's result, the
        image tuple of a split)."""
        run_writes = len(mon.rg.writes)
        replay = tuple(replay_plan(mon.rg))   # (first: it adds the versions of changes no event showed)
        return cls(
            rg=mon.rg, graph=mon.graph, result=mon.result if result is _RUN_RESULT else result,
            guards=tuple(mon.guards), global_state=mon.global_state,
            param_sources=_frozen(mon.param_sources), param_values=_frozen(mon.param_values),
            attr_writes=_frozen(mon.attr_writes), mutated=tuple(mon.mutated), appends=_frozen(mon.appends),
            global_writes=_frozen(mon.global_writes), cell_writes=_frozen(mon.cell_writes), replay=replay,
            contextvars=_frozen(mon.contextvars), effects=tuple(mon.effects),
            effect_marks=tuple(mon.effect_marks), run_writes=run_writes,
            made_functions=_frozen({k: f for k, (f, _) in mon.made_functions.items()}),
            identity_numbers=frozenset(mon.identity_numbers),
            call_cells=_frozen(_call_cells(mon)), outside_cells=_frozen(mon.outside_cells),
            param_cells=_frozen(_param_cells(mon)), graph_mutates=bool(mon.graph_mutates),
            mutates_outside=bool(mon.mutates_outside), mutated_storages=frozenset(mon.mutated_storages),
            array_constants=tuple(mon.array_constants),
            assumptions=tuple(mon.assumptions), assumed_at=tuple(mon.assumed_at),
            assumption_lines=tuple(mon.describe_assumptions()), speculative_ops=tuple(mon.speculative_ops),
            draws=tuple(mon.draws), lifted_dims=_frozen(mon.lifted_dims),
            lifted_value_nodes=_frozen(mon.lifted_value_nodes),
            follows_changing_numbers=bool(mon.follows_changing_numbers()), tracks_scalars=bool(mon.scalar_nodes),
            scalar_node=mon.scalar_node, holds_scalar=mon.holds_scalar, tracked_in=mon.tracked_in,
            split=mon.split, break_reason=run_reason(mon), dynamic=bool(mon.dynamic),
            loop_report=tuple(mon.loop_report),   # (set by roll_loops, magpy.dynamic.rolling)
            branch_report=_report(mon.branch_report),   # (set by merge_branches, magpy.dynamic.merging)
            read_log=tuple(mon.read_log or ()),
        )


def _call_cells(mon: FinishedRun) -> dict:
    """The cells made in the call that functions made in the call hold: a variable of the frame
    that made the function (MAKE_CELL ran in that monitored frame, in this call)."""
    cells: dict = {}
    for f, creator in mon.made_functions.values():
        for name, c in zip(f.__code__.co_freevars, f.__closure__ or ()):
            if name in creator.f_code.co_cellvars and id(c) not in mon.outside_cells:
                cells[id(c)] = c
    return cells


def _param_cells(mon: FinishedRun) -> dict:
    """The cells of the compiled frame's parameters that functions made in the call hold and
    that still hold the argument (no store to the cell anywhere in the call): the interpreter
    moved the argument into the cell without a load the monitor saw, so no guard holds its value
    and the mock fills the rebuilt cell from the argument itself (an int the next call passes
    differently, or a lifted one). None where a store went to a cell the monitor could not tell."""
    cells: dict = {}
    unknown = "?" in mon.rebound_cells
    for f, creator in mon.made_functions.values():
        if creator is not mon.top_frame:
            continue
        for name, c in zip(f.__code__.co_freevars, f.__closure__ or ()):
            if name not in mon.param_sources or name in mon.rebound_cells or id(c) in mon.rebound_cells:
                continue
            try:
                held = c.cell_contents
            except ValueError:
                continue
            if held is mon.param_values.get(name, cells) or held is mon.frame_packed.get(name, cells):
                cells[id(c)] = None if unknown else mon.param_sources[name]
    return cells


def _frozen(d: dict) -> Mapping:
    return MappingProxyType(dict(d))


def _report(report: list | None) -> tuple | None:
    return None if report is None else tuple(report)


def run_reason(mon: FinishedRun) -> BreakReason | None:
    """The typed reason the monitor run broke with (None if it did not)."""
    if mon.broken is None:
        return None
    typed = mon.break_reason
    if typed is None or str(typed) != mon.broken:
        typed = BreakReason(BreakKind.INTERNAL if mon.internal_break else BreakKind.UNSUPPORTED,
                            mon.broken)
    if typed.kind is BreakKind.UNSUPPORTED and mon.dynamic:
        typed = dataclasses.replace(typed, kind=BreakKind.DYNAMIC)
    return typed
