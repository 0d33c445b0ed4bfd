"""Conditional nodes as ``torch.cond``: one graph the backend compiles, branches included.

:func:`~magpy.dynamic.merging.merge_branches` puts a :class:`~magpy.dynamic.nodes.Conditional`
node where a branch on a tensor value was; run as it is, that node is Python, and a backend other
than eager compiles the graph as regions around it (:func:`magpy.backends.compile_regions`), each
arm a graph of its own. For TorchInductor, :func:`as_torch_cond` rewrites each such node into
``torch.cond(pred, true_fn, false_fn, operands)`` (the higher-order operator Inductor lowers into
one kernel program with both sides), so the record's graph is compiled once, whole.

A node is rewritten only where ``torch.cond`` means exactly what the Python node does:

* both arms return the same live locals (same names, in the same order), none a tensor read from
  outside (its identity may be observed); a local an arm passes through is copied (``torch.cond``'s
  outputs may not alias its operands, and merging made a conditional only where nothing observes
  that identity), but for an argument of the call passed on to the graph's result, sides after
  sides (every gated block skipped: the caller gets its own tensor back);
* no operand needs a gradient while autograd records (the compiled graph serves inference);
* the predicate is a tensor node (``bool(t)`` on a one-element tensor: ``t != 0``);
* an operand that may be a view of another is copied (the operands may not alias each other).

Otherwise, or when the backend refuses the rewritten graph, the record keeps its regions.
"""
from __future__ import annotations

import operator
from typing import Any

import torch
import torch.fx as fx

from .nodes import Conditional

#: Operators whose result may share memory with an input: as an operand of ``torch.cond`` such a
#: value is copied (its operands may not alias each other).
_VIEWS = frozenset({"getitem", "view", "view_as", "reshape", "reshape_as", "transpose", "permute", "expand",
                    "expand_as", "narrow", "select", "squeeze", "unsqueeze", "t", "T", "mT", "flatten", "unflatten",
                    "split", "chunk", "unbind", "as_strided", "diagonal", "detach", "contiguous", "movedim",
                    "swapaxes", "swapdims", "index_select", "real", "imag", "view_as_real", "view_as_complex"})


def _may_be_view(n: fx.Node) -> bool:
    if n.op == "call_method":
        return n.target in _VIEWS
    return n.op == "call_function" and getattr(n.target, "__name__", "") in _VIEWS


def _arm_fn(arm: Any, operands: list, inputs: tuple) -> fx.GraphModule:
    """A graph ``(*operands) -> tuple of the arm's outputs``: the arm's graph on its own inputs."""
    g = fx.Graph()
    ph = {n: g.placeholder(f"o{k}") for k, n in enumerate(operands)}
    root = torch.nn.Module()
    root.arm = arm.gm
    out = g.call_module("arm", tuple(ph[n] for n in inputs))
    outs = []
    for k, name in enumerate(arm.out_names):
        v = g.call_function(operator.getitem, (out, k))
        # (a local passed through: torch.cond's outputs may not alias its operands; merging made
        # the branch a conditional only where nothing observes that identity, so a copy is the same)
        # Every other output is given dense strides: torch.cond's outputs must be (an arm returning a
        # slice, `x[:, :c]`, made the backend refuse the graph); a copy of an intermediate only.
        outs.append(g.call_method("clone", (v,)) if name in arm.passes
                    else g.call_method("clone", (v,), {"memory_format": torch.contiguous_format}))
    g.output(tuple(outs))
    return fx.GraphModule(root, g)


def _attr(gm: fx.GraphModule, target: str) -> Any:
    obj: Any = gm
    for part in target.split("."):
        obj = getattr(obj, part, None)
    return obj


def _rewritable(node: fx.Node, example_of: dict) -> bool:
    cond: Conditional = node.target
    t, f = cond.arms
    if t.out_names != f.out_names or not t.out_names:
        return False
    if any(a.reads for a in (t, f)):
        return False
    if not isinstance(node.args[0], fx.Node):
        return False
    users = list(node.users)
    if not all(u.op == "call_function" and u.target is operator.getitem for u in users):
        return False
    if torch.is_grad_enabled():
        for n in [*node.args[1], *node.args[2]]:
            v = example_of.get(n)
            if not isinstance(v, torch.Tensor) or v.requires_grad:
                return False
    return True


def _returns_a_passed_argument(gm: fx.GraphModule, nodes: list) -> bool:
    """May the graph return one of its inputs itself through sides that pass it on (every gated
    block skipped: the result *is* the caller's argument)? ``torch.cond`` would return a copy,
    and the caller can tell; the Python node returns the very tensor."""
    maybe_input: set = {n for n in gm.graph.nodes if n.op == "placeholder"}
    passed: set = set()
    for n in nodes:   # (in graph order: a side may pass on what an earlier one passed)
        cond: Conditional = n.target
        for arm, operands in zip(cond.arms, n.args[1:3]):
            for k, out in enumerate(arm.out_names):
                j = arm.passes.get(out)
                if j is not None and j in arm.in_names and operands[arm.in_names.index(j)] in maybe_input:
                    for u in n.users:
                        if u.target is operator.getitem and u.args[1] == k:
                            maybe_input.add(u)
                            passed.add(u)
    out_node = next((n for n in gm.graph.nodes if n.op == "output"), None)
    return out_node is not None and any(leaf in passed for leaf in out_node.all_input_nodes)


def as_torch_cond(gm: fx.GraphModule, example_inputs: list) -> fx.GraphModule | None:
    """A copy of ``gm`` whose conditional nodes are ``torch.cond`` calls, or None when any of them
    cannot be (then the graph keeps its Python nodes, compiled as regions)."""
    nodes = [n for n in gm.graph.nodes if n.op == "call_function" and isinstance(n.target, Conditional)]
    if not nodes:
        return None
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    example_of = dict(zip(placeholders, example_inputs))
    for n in gm.graph.nodes:   # (parameters and buffers: their requires_grad matters too)
        if n.op == "get_attr":
            example_of[n] = _attr(gm, n.target)
    if not all(_rewritable(n, example_of) for n in nodes) or _returns_a_passed_argument(gm, nodes):
        return None
    conds = set(nodes)
    new = fx.GraphModule(gm, fx.Graph())
    env: dict = {}
    g = new.graph
    k = 0
    for n in gm.graph.nodes:
        if n.op == "call_function" and isinstance(n.target, Conditional):
            cond: Conditional = n.target
            pred, t_in, f_in = n.args
            operands = list(dict.fromkeys([*t_in, *f_in]))
            t, f = cond.arms
            names = (f"magpy_cond{k}_true", f"magpy_cond{k}_false")
            k += 1
            new.add_submodule(names[0], _arm_fn(t, operands, t_in))
            new.add_submodule(names[1], _arm_fn(f, operands, f_in))
            args = tuple(g.call_method("clone", (env[o],)) if _may_be_view(o) else env[o] for o in operands)
            p = g.call_function(torch.ne, (env[pred], 0))
            p = g.call_method("reshape", (p, ()))
            tn, fn_ = g.get_attr(names[0]), g.get_attr(names[1])
            env[n] = g.call_function(torch.ops.higher_order.cond, (p, tn, fn_, args))
            env[n].meta["magpy_where"] = n.meta.get("magpy_where")
            continue
        new_node = g.node_copy(n, lambda a: env[a])
        if n.op == "call_function" and n.target is operator.getitem and n.args and n.args[0] in conds:
            new_node.meta.pop("magpy_python", None)   # (an output of the conditional: a tensor node now)
        env[n] = new_node
    new.recompile()
    return new
