"""The pass after a monitor run that merges branches on tensor values (paper §6.2.2, the ``If``
node): :func:`merge_branches`, and the library of arms it merges from.

The branch watcher (:mod:`magpy.dynamic.branches`, whose docstring describes the whole design)
found each branch's arm while the run went; here, once the run is over, each clean arm becomes a
graph of its own (:func:`extract_arm`), a branch whose other side an earlier run kept in the
:class:`ArmLibrary` becomes one :class:`~magpy.dynamic.nodes.Conditional` node, and after the
record is built the run's own arms join the library (:func:`keep_arms`).
"""
from __future__ import annotations

import collections
import dataclasses
import operator
import types
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx as fx

from ..guards import TensorGuard, alias_guards
from ..objmodel import exact_key
from .branches import Span
from .nodes import Arm, Conditional
from .rolling import check_no_other_references


class NotMerged(Exception):
    """A branch whose sides cannot become one conditional node (the reason in words)."""


class StaleArm(NotMerged):
    """The library's arm relies on outside state that differs in this run: it is dropped."""


def extract_arm(mon: Any, span: Span) -> tuple[Arm, set, dict]:
    """The arm of ``span`` as an :class:`Arm` (a copy: the run's graph is not changed), with the
    set of the run's nodes inside it and the run's node per output name."""
    g = mon.graph.graph
    nodes = list(g.nodes)
    order = {n: i for i, n in enumerate(nodes)}
    lo = order[span.start_tail] if span.start_tail is not None else -1
    hi = order[span.end_tail] if span.end_tail is not None else -1
    inside = [n for n in nodes[lo + 1:hi + 1] if n.op not in ("placeholder", "get_attr")]
    inside_set = set(inside)
    ph_index = {n: k for k, n in enumerate(n for n in nodes if n.op == "placeholder")}
    for n in inside:
        if n.op not in ("call_function", "call_method") or n.meta.get("magpy_python") \
                or getattr(n.target, "magpy_python", False):
            raise NotMerged(f"its arm runs Python between operators ({n.target})")
    arm = fx.Graph()
    root = torch.nn.Module()
    env: dict[fx.Node, fx.Node] = {}
    in_names: list[str] = []
    outside: list[tuple] = []   # (source, example) of each placeholder the arm takes
    needed: dict[fx.Node, None] = {}   # (the values from before the arm, in order of first use)
    for n in inside:
        for leaf in n.all_input_nodes:
            if leaf not in inside_set:
                needed.setdefault(leaf)
    for name in span.m_names:
        if span.m_nodes[name] not in inside_set:
            needed.setdefault(span.m_nodes[name])
    locals_in, outs_in, consts = [], [], []
    for leaf in needed:
        if leaf in span.j_canon:
            # (a live local first, also where it holds a tensor from outside: in another run the
            # same local may hold a tensor the call computed, and the node passes what it holds)
            locals_in.append(leaf)
        elif leaf.op == "placeholder":
            if leaf.meta.get("magpy_scalar"):
                raise NotMerged("its arm takes a number that changes between calls")
            outside.append(mon.graph.inputs[ph_index[leaf]])
            outs_in.append(leaf)
        elif leaf.op == "get_attr":
            consts.append(leaf)
        else:
            raise NotMerged("its arm takes a value computed before the branch that no live local holds")
    for leaf in locals_in:
        env[leaf] = arm.placeholder(f"local_{span.j_canon[leaf]}")
        in_names.append(span.j_canon[leaf])
    for k, leaf in enumerate(outs_in):
        env[leaf] = arm.placeholder(f"outside{k}")
    for k, leaf in enumerate(consts):
        root.register_buffer(f"_const{k}", mon.graph.constants[leaf.target], persistent=False)
        env[leaf] = arm.get_attr(f"_const{k}")
    for n in inside:
        env[n] = arm.node_copy(n, lambda leaf: env[leaf])
    passes, reads = {}, {}
    for name in span.m_names:
        n = span.m_nodes[name]
        if n in span.j_canon and n not in inside_set:
            passes[name] = span.j_canon[n]
        elif n.op == "placeholder":
            reads[name] = mon.graph.inputs[ph_index[n]][0]
    arm.output(tuple(env[span.m_nodes[name]] for name in span.m_names))
    arm.lint()
    gm = fx.GraphModule(root, arm)
    return (Arm(gm, tuple(in_names), tuple(outside), span.m_names, passes, reads, len(inside), span.where),
            inside_set, dict(span.m_nodes))


# -- the library ----------------------------------------------------------------------------------------------
@dataclass
class ArmEntry:
    """A clean arm of an earlier run, with what makes it valid in another run's record."""

    arm: Arm
    exit: tuple
    guards: list          # every guard of its run, before any merge (and the alias guards)


class ArmLibrary:
    """The clean arms of a compiled function's runs, by (key, outcome); the newest first."""

    def __init__(self, limit: int = 1024, arms: Any = ()) -> None:
        self.limit = limit
        self._arms: collections.OrderedDict = collections.OrderedDict(arms)

    def __len__(self) -> int:
        return len(self._arms)

    def has(self, key: tuple, outcome: bool) -> bool:
        return (key, outcome) in self._arms

    def find(self, key: tuple, outcome: bool, exit: tuple) -> ArmEntry | None:
        hit = self._arms.get((key, outcome))
        return hit if hit is not None and hit.exit == exit else None

    def add(self, key: tuple, outcome: bool, entry: ArmEntry) -> None:
        self._arms[(key, outcome)] = entry
        self._arms.move_to_end((key, outcome), last=False)
        while len(self._arms) > self.limit:
            self._arms.popitem()

    def drop(self, key: tuple, outcome: bool) -> None:
        self._arms.pop((key, outcome), None)

    def clear(self) -> None:
        self._arms.clear()

    def copy(self) -> ArmLibrary:
        """A library holding the same arms (for ``explain``, which must not change the callable's)."""
        return ArmLibrary(self.limit, self._arms)


def describe_branches(mon: Any) -> list[str]:
    """One line per branch of a finished run (for ``explain``: one run, no library)."""
    w = mon.branch_watcher
    spans = w.on_finish()
    said = list(w.branch_notes)
    blocked = run_blocks_arms(mon)
    for span in w.branch_spans:
        if not span.ok:
            said.append(f"kept: the branch at {span.where}: {span.why}")
        elif blocked is not None:
            said.append(f"kept: the branch at {span.where}: {blocked}")
        elif span in spans:
            said.append(f"assumed: the branch at {span.where}: its arm becomes one side of a conditional node "
                        "once a run takes the other side")
    return said


def run_blocks_arms(mon: Any) -> str | None:
    """Why this run may neither use nor give arms (None: it may): the arms' guards are checked at
    the call's start, so the run must leave everything outside as it found it."""
    if mon.rg.outside_changes or mon.mutated or mon.mutates_outside or mon.contextvars:   # (versions: every write outside)
        return "the run changes state outside the call"
    if mon.draws:
        return "the run draws random numbers"
    if mon.lifted_dims or mon.lifted_value_nodes:
        return "the run has lifted sizes or values"
    if mon.loop_watcher.loops:
        return "the run has counted loops"
    return None


def merge_branches(mon: Any, library: ArmLibrary) -> list[str]:
    """After a monitor run: turn each branch whose other side the library holds into a
    :class:`Conditional` node (the last first, so that earlier branches' marks stay valid).
    Keeps the run's clean arms in its branch watcher's ``arms`` for :func:`keep_arms`. Returns a
    line per branch for ``explain`` and the recompiles log."""
    w = mon.branch_watcher
    spans = w.on_finish()
    said = list(w.branch_notes)
    w.arms = []
    w.merged = []                   # (key, outcome) of the library arms merged
    w.own_guards = list(mon.guards)   # (before any merge: what this run's arms rely on)
    blocked = run_blocks_arms(mon)
    if blocked is not None:
        for span in w.branch_spans:   # (as describe_branches says them: explain reports these lines)
            if not span.ok:
                said.append(f"kept: the branch at {span.where}: {span.why}")
            elif span in spans:
                said.append(f"kept: the branch at {span.where}: {blocked}")
        mon.branch_report = said
        return said
    arms = []
    for span in spans:
        try:
            arms.append((span, *extract_arm(mon, span)))
        except NotMerged as e:
            span.fail(str(e))
    w.arms = [(s, a) for s, a, _, _ in arms]
    for span in [s for s in w.branch_spans if not s.ok]:
        said.append(f"kept: the branch at {span.where}: {span.why}")
    for span, arm, inside, out_nodes in reversed(arms):
        entry = library.find(span.key, not span.outcome, span.exit)
        if entry is None:
            said.append(f"assumed: the branch at {span.where}: its other side has not run yet; its arm becomes "
                        "one side of a conditional node once a run takes the other side")
            continue
        try:
            _merge(mon, span, arm, inside, out_nodes, entry)
        except NotMerged as e:
            said.append(f"kept: the branch at {span.where}: {e}")
            if isinstance(e, StaleArm):
                library.drop(span.key, not span.outcome)
        else:
            w.merged.append((span.key, not span.outcome))
            said.append(f"conditional: the branch at {span.where} runs either side (one compiled graph each)")
    mon.branch_report = said
    return said


def _merge(mon: Any, span: Span, mine: Arm, inside: set, out_nodes: dict, entry: ArmEntry) -> None:
    other = entry.arm
    if mon.inplace_changes != span.counters[3]:
        raise NotMerged("the run changes a tensor in place after the branch")
    if other.out_names != mine.out_names:
        raise NotMerged("internal: the sides give other locals")
    # which outputs differ between the sides (the others are the same value either way)
    differ = []
    for name in mine.out_names:
        a, b = mine.passes.get(name), other.passes.get(name)
        if a is not None and a == b:
            continue
        ra, rb = mine.reads.get(name), other.reads.get(name)
        if ra is not None or rb is not None:
            if ra is not None and rb is not None and ra == rb:
                continue
            raise NotMerged(f"a side leaves a tensor from outside in `{name}`")
        for passed in (a, b):
            if passed is not None and (span.private is None or passed not in span.private):
                raise NotMerged(f"a side passes `{passed}` through to `{name}`, and something besides the "
                                "frame's locals holds that tensor (or it is not made in the call)")
        if a is not None and span.j_nodes[a].op == "placeholder" and _holds(getattr(mon, "result", None),
                                                                            out_nodes[name], mon):
            # this run passes an argument on to what the call returns: the mock hands the caller
            # that argument by its source, not the conditional node's output
            raise NotMerged(f"this run's side passes the argument `{a}` on to the call's result")
        differ.append(name)
    if any(name not in span.j_nodes for name in other.in_names):
        raise NotMerged("the other side takes a tensor local that this run's graph does not hold")
    conflict = _conflicting_guard(mon, entry.guards)
    if conflict is not None:
        raise StaleArm(f"the other side was recorded when {conflict}; this run's guard on it differs")
    # what the code after the merge point may reach: only the differing outputs
    targets = {}
    for name in differ:
        targets.setdefault(out_nodes[name], name)
    g = mon.graph.graph
    nodes = list(g.nodes)
    order = {n: i for i, n in enumerate(nodes)}
    hi = order[span.end_tail] if span.end_tail is not None else -1
    after = [n for n in nodes[hi + 1:] if n.op != "output"]
    for n in inside:
        for u in n.users:
            if u not in inside and n not in targets:
                raise NotMerged("a value computed in its arm is used after the merge point other than "
                                "through the frame's locals")
    try:
        check_no_other_references(mon, inside | {t for t in targets if t not in inside}, set())
    except Exception as e:
        raise NotMerged(str(e)) from None
    for _key, (_value, node) in list(mon.scalar_nodes.items()):
        if node in inside:
            raise NotMerged("a number read in its arm is used after it")
    # -- the node --------------------------------------------------------------------------------------
    placeholders = [n for n in nodes if n.op == "placeholder"]
    by_source = {}
    for k, (src, _) in enumerate(mon.graph.inputs):
        by_source.setdefault(src, placeholders[k])
    # (placeholders are made where a run first read them; an input added here is used earlier
    # than that: every placeholder moves to the front, in order, so the inputs keep their order)
    first_op = next((n for n in nodes if n.op != "placeholder"), None)
    if first_op is not None:
        for ph in placeholders:
            if order[ph] > order[first_op]:
                first_op.prepend(ph)

    def outside_node(src, example):
        hit = by_source.get(src)
        if hit is None:
            ctx = g.inserting_before(first_op) if first_op is not None else g.inserting_after(None)
            with ctx:
                hit = g.placeholder(f"i{len(mon.graph.inputs)}")
            mon.graph.inputs.append((src, example))
            placeholders.append(hit)
            by_source[src] = hit
        return hit

    def inputs_of(arm: Arm) -> tuple:
        ins = [span.j_nodes[name] for name in arm.in_names]
        ins += [outside_node(src, ex) for src, ex in arm.outside]
        return tuple(ins)

    mine_in, other_in = inputs_of(mine), inputs_of(other)
    true_arm, false_arm = (mine, other) if span.outcome else (other, mine)
    true_in, false_in = (mine_in, other_in) if span.outcome else (other_in, mine_in)
    cond = Conditional(true_arm, false_arm, span.where)
    anchor = next((n for n in after if n.op != "placeholder"), None)
    ctx = g.inserting_before(anchor) if anchor is not None else g.inserting_after(None)
    outs = {}
    with ctx:
        cnode = g.call_function(cond, (span.pred, true_in, false_in))
        cnode.meta["magpy_python"] = True
        cnode.meta["magpy_where"] = span.where
        cnode.meta["magpy_conditional"] = span.where
        for k, name in enumerate(mine.out_names):
            if name in differ and out_nodes[name] in targets and targets[out_nodes[name]] == name:
                gi = g.call_function(operator.getitem, (cnode, k))
                gi.meta["magpy_python"] = True
                shape = out_nodes[name].meta.get("example_value_shape")
                if shape is not None:
                    gi.meta["example_value_shape"] = shape
                outs[out_nodes[name]] = gi
    for n in after:
        for old, new in outs.items():
            if old in n.all_input_nodes:
                n.replace_input_with(old, new)
    mon.graph.rebind({**dict.fromkeys(inside), **outs})   # (a tensor bound in the arm: the node's output, or none)
    for guard in entry.guards:
        mon.add_guard(guard)
    keep = [not (a[0] == "truth" and a[1] is span.pred) for a in mon.assumptions]
    mon.assumptions[:] = [a for a, k in zip(mon.assumptions, keep) if k]
    mon.assumed_at[:] = [w for w, k in zip(mon.assumed_at, keep) if k]
    for n in reversed([n for n in nodes if n in inside]):
        g.erase_node(n)


def _holds(v: Any, node: fx.Node, mon: Any, depth: int = 0) -> bool:
    """Is a tensor bound to graph node ``node`` ``v`` or inside it (tuples, lists, dicts, an
    object's attributes: what the mock returns)?"""
    if depth > 5:
        return True   # (too deep to tell: as if it did)
    if isinstance(v, torch.Tensor):
        return mon.graph.node_of(v) is node
    if isinstance(v, (tuple, list)):
        return any(_holds(e, node, mon, depth + 1) for e in v)
    if isinstance(v, dict):
        return any(_holds(e, node, mon, depth + 1) for e in v.values())
    d = getattr(v, "__dict__", None)
    if type(d) is dict and not isinstance(v, (type, types.ModuleType, torch.nn.Module)):
        return any(_holds(e, node, mon, depth + 1) for e in d.values())
    return False


def _conflicting_guard(mon: Any, guards: list) -> str | None:
    """The first of the library arm's ``guards`` that checks a source this run already guards
    with another expectation (the monitor keeps one guard per dedup key, so the arm's would be
    dropped and the record would not check what the arm relies on), in words; None if none."""
    mine = {}
    for g in mon.guards:
        mine.setdefault(g.dedup_key(), g)
    for g in guards:
        have = mine.get(g.dedup_key())
        if have is not None and have is not g and not _same_check(have, g):
            return g.describe()
    return None


def _same_check(a: Any, b: Any) -> bool:
    """Do guards ``a`` and ``b`` provably check the same thing (False when in doubt)?"""
    if type(a) is not type(b):
        return False
    if isinstance(a, TensorGuard):
        return a.entry == b.entry and a.dynamic_dims == b.dynamic_dims
    try:
        for f in dataclasses.fields(a):
            x, y = getattr(a, f.name), getattr(b, f.name)
            if x is y:
                continue
            if isinstance(x, torch.Tensor) or isinstance(y, torch.Tensor):
                return False
            if type(x) is not type(y) or exact_key(x) != exact_key(y) or not bool(x == y):
                return False
    except Exception:
        return False
    return True


def check_merged(mon: Any, library: ArmLibrary, record: Any, args: tuple, kwargs: dict) -> bool:
    """After the record of a run with conditional nodes was built: does its guard pass for the
    call just run (the merged arms' guards are about the state their own runs saw)? If not, the
    merged arms are stale: they leave the library, and the record must not be used."""
    merged = mon.branch_watcher.merged
    if not merged:
        return True
    try:
        holds = record.guard(args, kwargs) is not None
    except Exception:
        holds = False
    if not holds:
        for key, outcome in merged:
            library.drop(key, outcome)
    return holds


def keep_arms(mon: Any, library: ArmLibrary) -> None:
    """After the record of a run was built: keep the run's clean arms in ``library``, with the
    run's own guards (before any merge; alias guards included)."""
    w = mon.branch_watcher
    if not w.arms:
        return
    guards = list(w.own_guards) + alias_guards(mon.rg)
    for span, arm in w.arms:
        library.add(span.key, span.outcome, ArmEntry(arm, span.exit, guards))
