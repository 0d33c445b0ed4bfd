"""The pass after a monitor run that rolls counted loops (paper §6.2.2): :func:`roll_loops`.

The loop watcher (:mod:`magpy.dynamic.loops`) followed each counted loop while the run went and
checked conditions 1-3 of its module docstring; here, once the run is over, condition 4 (the
graph repeats) and 5 (nothing else depended on the count) are checked on the graph, and each loop
that passes has its unrolled iterations replaced by one :class:`~magpy.dynamic.nodes.RolledLoop`
node whose body graph is compiled once. A loop that fails keeps its count assumed.
"""
from __future__ import annotations

import contextlib
import operator
from typing import Any

import torch
import torch.fx as fx

from ..graph import loop_index
from .loops import Loop
from .nodes import RolledLoop


class NotRolled(Exception):
    """The graph of a loop does not repeat (condition 4) or is used after the loop in a way a
    rolled loop cannot give (not the last iteration, not a whole accumulator)."""


def _leaves(a: Any):
    if isinstance(a, (tuple, list)):
        for e in a:
            yield from _leaves(e)
    elif isinstance(a, dict):
        for e in a.values():
            yield from _leaves(e)
    elif isinstance(a, slice):
        yield from _leaves((a.start, a.stop, a.step))
    else:
        yield a


def loop_nodes(mon: Any, loop: Loop) -> set:
    """The graph nodes of ``loop``'s iterations (from its marks)."""
    g = mon.graph.graph
    first, last = loop.marks[0][0], loop.marks[-1][0]
    nodes, inside = set(), first is None
    for n in g.nodes:
        if inside:
            nodes.add(n)
        if n is first:
            inside = True
        if n is last:
            break
    return nodes


def roll(mon: Any, loop: Loop, other_loops: frozenset = frozenset()) -> fx.Node:
    """Replace ``loop``'s unrolled iterations in ``mon.graph`` by a :class:`RolledLoop` node;
    NotRolled (and the graph unchanged) if its iterations do not repeat. ``other_loops``: nodes
    of other loops over the same sequence, which may take its elements too (rolled in their turn,
    or unrolled with the count assumed); elements no node takes any more are erased at the end."""
    g = mon.graph.graph
    T = loop.count
    order = {n: i for i, n in enumerate(g.nodes)}
    bounds = [order[m[0]] if m[0] is not None else -1 for m in loop.marks]   # T + 1 marks
    if len(bounds) != T + 1:
        raise NotRolled("its iterations were not all seen")
    all_nodes = list(g.nodes)
    iters = []
    for k in range(T):
        iters.append([n for n in all_nodes[bounds[k] + 1:bounds[k + 1] + 1] if n.op not in ("placeholder", "get_attr")])
    m = len(iters[0])
    if m == 0 or any(len(it) != m for it in iters):
        raise NotRolled("its iterations have different numbers of operators")
    where = {}
    for k, it in enumerate(iters):
        for p, n in enumerate(it):
            where[n] = (k, p)
    seq_nodes = [len_node.args[0] for _, len_node in loop.seqs]
    backwards = loop.values[2]

    def at(k):   # (the element iteration k takes: reversed(range(len(xs))) counts down)
        return T - 1 - k if backwards else k

    def element_of(leaf, k):
        """Which sequence's element for iteration ``k`` ``leaf`` is, or None."""
        if leaf.op != "call_function" or leaf.target is not operator.getitem or leaf.args[1] != at(k):
            return None
        return next((j for j, sn in enumerate(seq_nodes) if leaf.args[0] is sn), None)

    def classify(leaf, k):
        if not isinstance(leaf, fx.Node):
            if isinstance(leaf, (int, float, bool, str, complex, type(None), torch.dtype, torch.device,
                                 torch.layout, torch.memory_format)):
                return ("const", type(leaf), leaf)
            return ("object", id(leaf))   # (a tensor or other object baked in: the very same one)
        hit = where.get(leaf)
        if hit is not None:
            j, q = hit
            if j == k:
                return ("local", q)
            if j == k - 1:
                return ("carry", q)
            raise NotRolled("an iteration takes a value from two iterations back")
        if order[leaf] > bounds[-1]:
            raise NotRolled("internal: an iteration takes a value computed after the loop")
        j = element_of(leaf, k)
        if j is not None:
            return ("element", j)
        return ("invariant", leaf)

    def signature(n, k):
        if n.target is loop_index:
            return ("index",)
        return (n.op, n.target, len(n.args), tuple(n.kwargs), n.meta.get("example_value_shape"),
                tuple(classify(leaf, k) for leaf in _leaves((n.args, n.kwargs))))

    sigs = [[signature(n, k) for n in it] for k, it in enumerate(iters)]
    for k in range(2, T):
        if sigs[k] != sigs[1]:
            raise NotRolled(f"iteration {k} computes other operators than iteration 1")
    inits: dict[int, fx.Node] = {}
    for p in range(m):
        a, b = sigs[0][p], sigs[1][p]
        if a[:5] != b[:5] or len(a) != len(b):
            raise NotRolled("the first iteration computes other operators")
        if a == ("index",):
            continue
        for x, y in zip(a[5], b[5]):
            if y[0] == "carry":
                if x[0] != "invariant":
                    raise NotRolled("a carried value does not start from before the loop")
                if inits.setdefault(y[1], x[1]) is not x[1]:
                    raise NotRolled("a carried value starts from two values")
            elif x != y:
                raise NotRolled("the first iteration takes other inputs")

    # -- assumptions made inside: the same in every iteration, checked by the rolled loop -------------
    per_iter: list[list] = [[] for _ in range(T)]
    for k, kind, node, expected in loop.assumed:
        hit = where.get(node)
        if hit is None or hit[0] != k:
            raise NotRolled("an assumption inside the loop is on a value computed elsewhere")
        per_iter[k].append((kind, hit[1], type(expected), expected))
    if any(a != per_iter[0] for a in per_iter[1:]):
        raise NotRolled("iterations assume different values")
    checks = per_iter[0]

    # -- what the code after the loop takes -----------------------------------------------------------
    last_pos: dict[int, int] = {}    # position in an iteration -> index among the loop node's last values
    coll_pos: dict[int, int] = {}    # position -> index among its collected lists
    after = [n for n in all_nodes[bounds[-1] + 1:] if n.op not in ("placeholder", "get_attr")]

    def after_arg(a):
        if isinstance(a, (list, tuple)) and len(a) >= T and not hasattr(a, "_fields"):
            # an accumulator: a value of every iteration, in order, after what it held before
            # the loop (`outs = [h]` first, or an iteration run before the loop's own)
            prefix, rest = a[:len(a) - T], a[len(a) - T:]
            if all(isinstance(e, fx.Node) and e in where for e in rest) \
                    and not any(isinstance(leaf, fx.Node) and leaf in where for leaf in _leaves(prefix)):
                hits = [where[e] for e in rest]
                if [h[0] for h in hits] == list(range(T)) and len({h[1] for h in hits}) == 1:
                    coll_pos.setdefault(hits[0][1], len(coll_pos))
                    return _Ref("coll", hits[0][1], list(prefix))
        if isinstance(a, (list, tuple)) and not hasattr(a, "_fields"):
            return type(a)(after_arg(e) for e in a)
        if isinstance(a, dict):
            return {k: after_arg(e) for k, e in a.items()}
        if isinstance(a, fx.Node) and a in where:
            k, p = where[a]
            if k != T - 1:
                raise NotRolled("the code after the loop takes a value of an earlier iteration")
            last_pos.setdefault(p, len(last_pos))
            return _Ref("last", p)
        return a

    rewired = []
    for n in after:
        if any(isinstance(leaf, fx.Node) and leaf in where for leaf in _leaves((n.args, n.kwargs))):
            rewired.append((n, after_arg(n.args), after_arg(n.kwargs)))
    users_after = {n for n, _, _ in rewired}
    # the sequence's elements, each a getitem made when the operator returned: the loop takes them
    # by index now, and no other node may (a count that changes would leave them out of range)
    elements = [u for sn in seq_nodes for u in sn.users if u.op == "call_function" and u.target is operator.getitem]
    for e in elements:
        if any(u not in where and u not in other_loops for u in e.users):
            raise NotRolled("an element of the loop's sequence is used outside the loop")
    for n in where:
        if any(u not in where and u not in users_after for u in n.users):
            raise NotRolled("a value computed in the loop is used in a way a rolled loop cannot give")
    # values bound to tensors and numbers the mock may still need: the last iteration's
    for node in mon.graph.bound_nodes():
        hit = where.get(node)
        if hit is not None and hit[0] == T - 1:
            last_pos.setdefault(hit[1], len(last_pos))
    for _key, (_value, node) in list(mon.scalar_nodes.items()):
        hit = where.get(node)
        if hit is not None and hit[0] == T - 1:
            last_pos.setdefault(hit[1], len(last_pos))
    check_no_other_references(mon, set(where), {id(a[2]) for a in loop.assumed})

    # -- the body graph ------------------------------------------------------------------------------------
    body = fx.Graph()
    index_ph = body.placeholder("index")
    elem_ph = [body.placeholder(f"element{j}") for j in range(len(seq_nodes))]
    carry_q = sorted(inits)
    carry_ph = {q: body.placeholder(f"carry{j}") for j, q in enumerate(carry_q)}
    invariants: dict[fx.Node, fx.Node] = {}
    env: dict[int, fx.Node] = {}
    template = iters[1]

    def body_arg(leaf):
        hit = where.get(leaf)
        if hit is not None:
            j, q = hit
            return env[q] if j == 1 else carry_ph[q]
        j = element_of(leaf, 1)
        if j is not None:
            return elem_ph[j]
        return invariants[leaf]

    # invariants become placeholders, in order of first use
    for n in template:
        if n.target is loop_index:
            continue
        for leaf in _leaves((n.args, n.kwargs)):
            if isinstance(leaf, fx.Node) and leaf not in where and element_of(leaf, 1) is None:
                invariants.setdefault(leaf, None)
    inv_list = list(invariants)
    for j, leaf in enumerate(inv_list):
        invariants[leaf] = body.placeholder(f"invariant{j}")
    for p, n in enumerate(template):
        if n.target is loop_index:
            env[p] = index_ph
            continue
        # (named by position, not after the run's nodes: the bodies of loops that compute the same,
        # a stacked LSTM's layers, have the same code and share one compiled body)
        env[p] = body.create_node(n.op, n.target, fx.map_arg(n.args, body_arg), fx.map_arg(n.kwargs, body_arg),
                                  name=f"v{p}", type_expr=n.type)
        env[p].meta = dict(n.meta)
    if any(q not in env for q in carry_q):
        raise NotRolled("internal: a carry is not computed by the body")
    outs = [env[q] for q in carry_q]
    outs += [env[p] for p, _ in sorted(coll_pos.items(), key=lambda kv: kv[1])]
    outs += [env[p] for p, _ in sorted(last_pos.items(), key=lambda kv: kv[1])]
    outs += [env[p] for _, p, _, _ in checks]
    body.output(tuple(outs))
    uses_index = bool(index_ph.users)
    if not uses_index:
        body.erase_node(index_ph)   # (a compiler given a Python int specialises on its value)
    body.lint()
    body_gm = fx.GraphModule(torch.nn.Module(), body)
    runner = RolledLoop(body_gm, len(carry_q), len(coll_pos), len(last_pos), loop.where,
                        [(kind, expected) for kind, _, _, expected in checks], uses_index, backwards)

    # -- splice it in ------------------------------------------------------------------------------------
    anchor = all_nodes[bounds[-1] + 1] if bounds[-1] + 1 < len(all_nodes) else None
    ctx = g.inserting_before(anchor) if anchor is not None else contextlib.nullcontext()   # (else: at the end)
    with ctx:
        lnode = g.call_function(runner, (loop.count_node, tuple(seq_nodes), tuple(inits[q] for q in carry_q),
                                         tuple(inv_list)))
        lnode.meta["magpy_python"] = True
        lnode.meta["magpy_rolled"] = loop.where
        outs_nodes = []
        for j in range(len(last_pos) + len(coll_pos)):
            gi = g.call_function(operator.getitem, (lnode, j))
            gi.meta["magpy_python"] = True
            outs_nodes.append(gi)
    for sn in seq_nodes:
        # (its tuple's length is the count: a compiled region would be specialised to it)
        sn.meta["magpy_python"] = True
    last_node = {p: outs_nodes[j] for p, j in last_pos.items()}
    coll_node = {p: outs_nodes[len(last_pos) + j] for p, j in coll_pos.items()}
    for p, gi in last_node.items():
        shape = iters[T - 1][p].meta.get("example_value_shape")
        if shape is not None:
            gi.meta["example_value_shape"] = shape

    def resolve(a, before):
        if isinstance(a, _Ref):
            if a.kind == "last":
                return last_node[a.p]
            if not a.prefix:
                return coll_node[a.p]
            with g.inserting_before(before):
                joined = g.call_function(operator.add, (a.prefix, coll_node[a.p]))
            joined.meta["magpy_python"] = True
            return joined
        if isinstance(a, (list, tuple)) and not hasattr(a, "_fields"):
            return type(a)(resolve(e, before) for e in a)
        if isinstance(a, dict):
            return {k: resolve(e, before) for k, e in a.items()}
        return a

    for n, a, kw in rewired:
        n.args = resolve(a, n)
        n.kwargs = resolve(kw, n)
    # (a tensor bound to the last iteration's value is the loop node's; to an earlier one's, none)
    mon.graph.rebind({n: last_node[p] if k == T - 1 and p in last_node else None for n, (k, p) in where.items()})
    for key, (value, node) in list(mon.scalar_nodes.items()):
        hit = where.get(node)
        if hit is not None:
            if hit[0] == T - 1:
                mon.scalar_nodes[key] = (value, last_node[hit[1]])
            else:
                del mon.scalar_nodes[key]
    for it in reversed(iters):
        for n in reversed(it):
            g.erase_node(n)
    return lnode


def _erase_unused_elements(mon: Any, seq_nodes: set) -> None:
    """The getitems of rolled loops' sequences that no node takes any more (a count that changes
    would leave them out of range)."""
    g = mon.graph.graph
    gone = {u for s in seq_nodes for u in list(s.users)
            if u.op == "call_function" and u.target is operator.getitem and not u.users}
    mon.graph.rebind(dict.fromkeys(gone))
    for e in gone:
        g.erase_node(e)


class _Ref:
    """A value the rolled loop node gives the code after the loop: the last iteration's value at
    position ``p``, or the list of the values at ``p`` of every iteration (after ``prefix``, the
    values the list held before the loop)."""

    def __init__(self, kind: str, p: int, prefix: list | None = None) -> None:
        self.kind, self.p, self.prefix = kind, p, prefix or []


def check_no_other_references(mon: Any, inside: set, own: set) -> None:
    """No fact of the run other than tensor and number bindings (and the loop's own assumptions,
    ``own``: ids of their nodes) names a node of the loop."""
    for a in mon.assumptions:
        if isinstance(a[1], fx.Node) and a[1] in inside and id(a[1]) not in own:
            raise NotRolled("the run assumes a value computed in the loop")
    for k in ("effects", "draws"):
        for leaf in _leaves(getattr(mon, k)):
            if isinstance(leaf, fx.Node) and leaf in inside:
                raise NotRolled(f"the run's {k} name a value computed in the loop")
    for leaf in _leaves(list(mon.lifted_value_nodes.values())):
        if isinstance(leaf, fx.Node) and leaf in inside:
            raise NotRolled("a lifted value is computed in the loop")


def roll_loops(mon: Any) -> list[str]:
    """After a monitor run: roll every counted loop that passes the checks (the last first, so
    that the marks of earlier loops stay valid); every other keeps its count assumed. Returns a
    line per loop for ``explain``."""
    rollable = mon.loop_watcher.on_finish()
    said = []
    nodes = {id(loop): loop_nodes(mon, loop) for loop in rollable if loop.seqs}
    rolled_seqs = set()
    for loop in reversed(mon.loop_watcher.loops):
        if loop in rollable:
            mine = {n for _, n in loop.seqs}
            others = frozenset().union(*[nodes[id(lp)] for lp in rollable if lp is not loop and lp.seqs
                                         and mine & {n for _, n in lp.seqs}])
            try:
                roll(mon, loop, others)
            except NotRolled as e:
                loop.fail(str(e))
            else:
                # (a loop on the same count that stays unrolled assumes it again below)
                own = {id(a[2]) for a in loop.assumed}
                if own:
                    mon.speculative_ops.append(f"a check inside the loop rolled at {loop.where}")
                counts = {loop.count_node, *(n for _, n in loop.seqs)}
                keep = [a[1] not in counts and id(a[1]) not in own for a in mon.assumptions]
                mon.assumptions[:] = [a for a, k in zip(mon.assumptions, keep) if k]
                mon.assumed_at[:] = [w for w, k in zip(mon.assumed_at, keep) if k]
                said.append(f"rolled: the loop at {loop.where} ({loop.count} iterations in this run) runs a body "
                            "compiled once, for any trip count >= 1")
                rolled_seqs.update(n.args[0] for _, n in loop.seqs)
                continue
        said.append(f"unrolled: the loop at {loop.where} ({loop.count} iterations): {loop.why}")
    _erase_unused_elements(mon, rolled_seqs)
    for line, loop in zip(list(said), list(reversed(mon.loop_watcher.loops))):
        if line.startswith("rolled"):
            mon.assume("atleast", loop.count_node, 1)
        else:
            mon.assume("scalar", loop.count_node, loop.count)
    mon.loop_report = list(reversed(said))
    return mon.loop_report
