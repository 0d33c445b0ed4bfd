"""The operator graph (paper §4.3): torch.fx nodes for every tensor operation.

Inputs are placeholders for tensors read from outside (each with the :class:`Source`
the mock loads it from); outputs are only the tensors the mock needs, so the
backend is free to fuse and drop every intermediate.

    >>> from magpy.source import ArgSource
    >>> t = torch.randn(3)
    >>> g = OpGraph()
    >>> x = g.placeholder(t, ArgSource(0, "x"))        # t, read from outside, is input i0
    >>> out = torch.relu(t)                            # the monitor run's own value of the operation
    >>> g.bind(out, g.call("function", torch.relu, (x,), {}))
    >>> gm = g.finish([g.node_of(out)])                # the graph returns only what the mock needs
    >>> torch.equal(gm(t)[0], out)
    True
"""
from __future__ import annotations

import re
from typing import Any

import torch
import torch.fx as fx

from .objmodel import storage_key
from .refgraph import forget_when_dead


class Unsupported(Exception):
    """Something the operator graph cannot represent; becomes a break reason."""


# Functions a graph node may call for the loops the monitor unrolls (magpy.dynamic.loops makes such nodes;
# code generation reads them as numbers over the graph's inputs).
def loop_index(k: int) -> int:
    """The index of an unrolled iteration (a graph node, so that the index has one to follow)."""
    return k


def range_len(start: int, stop: int, step: int) -> int:
    """``len(range(start, stop, step))``: the trip count of a loop over such a range."""
    return len(range(start, stop, step))


_NODE_NAMES: dict[str, str] = {}   # a function's or method's name -> the node name fx makes of it
_SNAKE = re.compile(r"(?<=[a-z])([A-Z])")


def _node_name(target: Any) -> str:
    """The name fx gives a node of ``target`` (``linear``, ``add``, ``layer_norm``), before it
    numbers repeats: the snake-cased name of the function or method, worked out once per name
    (fx would work it out with a regular expression for every node). Kept by name, not by
    target: a target made for one record (a scripted method's caller) is not held here."""
    op = target if isinstance(target, str) else getattr(target, "__name__", "fn")
    name = _NODE_NAMES.get(op)
    if name is None:
        bare = op[2:-2] if isinstance(target, str) and op.startswith("__") and op.endswith("__") else op
        name = _NODE_NAMES[op] = _SNAKE.sub(r"_\1", bare).lower()
    return name


class OpGraph:
    """An fx graph under construction, with tensors mapped to nodes by identity."""

    def __init__(self) -> None:
        self.graph = fx.Graph()
        self._node_of: dict[int, fx.Node] = {}
        self._keep: list[Any] = []          # tensors that cannot be weakly referenced
        self.inputs: list[tuple[Any, Any]] = []   # (source, example tensor)
        self.constants: dict[str, torch.Tensor] = {}   # get_attr name -> tensor the graph holds
        self.op_count = 0
        # (how many inputs there were, the ids of the tensors among them, their storage keys) when read
        self._input_memory: tuple[int, set[int], set[int]] = (0, set(), set())

    def node_of(self, tensor: torch.Tensor) -> fx.Node | None:
        return self._node_of.get(id(tensor))

    def bind(self, tensor: torch.Tensor, node: fx.Node) -> None:
        """``tensor`` is the value of ``node``. Intermediates are not kept alive (a monitor run
        would hold every activation at once): when one dies, its id is forgotten before the
        memory can be reused by another tensor."""
        key = id(tensor)
        if key not in self._node_of and not forget_when_dead(tensor, self, "_node_of", key):
            self._keep.append(tensor)
        self._node_of[key] = node
        node.meta["example_value_shape"] = tuple(tensor.shape)
        node.meta["storage"] = storage_key(tensor)   # (a later in-place change of that memory: magpy.monitor.ops)

    def bound_nodes(self) -> list[fx.Node]:
        """The node of each tensor bound (one entry per tensor, in the order they were bound)."""
        return list(self._node_of.values())

    def rebind(self, images: dict) -> None:
        """A pass replaced nodes (a rolled loop, a conditional): every tensor bound to a node in
        ``images`` is bound to its image instead, or to no node where the image is None."""
        for key, node in list(self._node_of.items()):
            if node in images:
                new = images[node]
                if new is None:
                    del self._node_of[key]
                else:
                    self._node_of[key] = new

    def _input_node(self) -> fx.Node:
        name = f"i{len(self.inputs)}"
        return self.graph.create_node("placeholder", name, name=name)

    def placeholder(self, tensor: torch.Tensor, source: Any) -> fx.Node:
        node = self._input_node()
        self.inputs.append((source, tensor))
        self.bind(tensor, node)
        return node

    def in_input_memory(self, key: int, changed: torch.Tensor) -> bool:
        """Is the memory ``key`` (:func:`~magpy.objmodel.storage_key`) that of a tensor input, now
        that ``changed`` was changed in place? The inputs' keys are read once and kept until an
        input is itself the tensor changed (``set_``, ``resize_`` may move its memory), those of
        inputs added since are added: an in-place operation on every layer of a deep model asks once
        per operation."""
        count, ids, keys = self._input_memory
        if id(changed) in ids:
            count, ids, keys = 0, set(), set()
        if count != len(self.inputs):
            tensors = [x for _, x in self.inputs[count:] if isinstance(x, torch.Tensor)]
            ids.update(map(id, tensors))
            keys.update(map(storage_key, tensors))
            self._input_memory = (len(self.inputs), ids, keys)
        return key in keys

    def scalar_input(self, value: Any, source: Any) -> fx.Node:
        """A Python number the graph takes as an input (a lifted value, magpy.monitor.scalars)."""
        node = self._input_node()
        node.meta["magpy_scalar"] = True
        self.inputs.append((source, value))
        return node

    def object_input(self, value: Any, source: Any) -> fx.Node:
        """An object from outside the graph takes as it is (a dict handed to a custom
        ``autograd.Function``, whose ctx keeps it for backward): fetched by the guard every call."""
        node = self._input_node()
        node.meta["magpy_object"] = True
        self.inputs.append((source, value))
        return node

    def draw_input(self, value: Any, source: Any) -> fx.Node:
        """A number the mock draws again each call (magpy.redraw): an input of the graph, never
        a function of the guarded inputs' sizes."""
        node = self.scalar_input(value, source)
        node.meta["magpy_draw"] = source
        return node

    def constant(self, value: torch.Tensor) -> fx.Node:
        """A tensor the graph holds (a numpy array's values computed from guarded inputs)."""
        name = f"_const{len(self.constants)}"
        self.constants[name] = value
        return self.graph.get_attr(name)

    def call(self, kind: str, target: Any, args: tuple, kwargs: dict) -> fx.Node:
        """Add ``call_function``/``call_method`` with already-converted arguments."""
        self.op_count += 1
        op = "call_method" if kind == "method" else "call_function"
        return self._node(op, target, args, kwargs, _node_name(target))

    def getitem(self, node: fx.Node, index: int) -> fx.Node:
        import operator

        return self._node("call_function", operator.getitem, (node, index), {}, _node_name(operator.getitem))

    def _node(self, op: str, target: Any, args: tuple, kwargs: dict, name: str) -> fx.Node:
        """``graph.create_node(op, target, args, kwargs, name=name)``, with the arguments set on
        the new node (the ``Node.args``/``kwargs`` setters: the same uses and immutable
        containers). torch 2.13's ``create_node`` walks the arguments with pytree for raw
        ``torch.SymInt``s, which a graph of real tensors never holds: two thirds of its cost, paid
        once per operator of a capture."""
        node = self.graph.create_node(op, target, name=name)
        if args:
            node.args = args
        if kwargs:
            node.kwargs = kwargs
        return node

    def finish(self, outputs: list[fx.Node]) -> fx.GraphModule:
        self.graph.output(tuple(outputs))
        root = torch.nn.Module()
        for name, value in self.constants.items():
            root.register_buffer(name, value, persistent=False)
        self.graph.lint()
        return fx.GraphModule(root, self.graph)
