"""RefGraph (paper §4.1) and the searches of Algorithm 1 (§4.2).

A monitor run keeps one :class:`ShadowNode` per runtime object it touches, created
lazily when the interpreter explicitly accesses the object. SN #0 stands for the
external state: arguments, globals, closure cells and defaults hang off it.
Each node has a list of :class:`ShadowVersion`; an in-place change of the object
(attribute write, item write, ``list.append``...) appends a version. A version's
``change`` says what made it (:class:`Change`: an attribute, global or cell written, a
container call such as ``append`` logged, or a change taken whole); its
``refs`` are the reference edges (relation -> target) that the object holds in that
version: ``("attr", "scale")``, ``("item", 0)``, ``("cell",)``, ``("return",)``...

Targets are node ids for objects with identity and :class:`Const` for immutable
values (ints, strings, tuples of them): those have no identity worth tracking and
are identified by where they came from, never by ``id()``.

Example (Figure 9: ``x[0] += y; x.append(x[0] * y); a = tuple(x)``), the updates a monitor run makes::

    >>> from magpy.source import ArgSource, ItemSource
    >>> lst, y = [torch.ones(2)], torch.ones(2)
    >>> g = RefGraph()
    >>> x = g.external(lst, ArgSource(0, "x"), ("arg", "x"))   # SN #1, edge SN0 -v0-> SN1
    >>> x0 = g.external(lst[0], ItemSource(x.source, 0))       # SN #2, read x[0] ...
    >>> g.add_initial_ref(x, ("item", 0), x0.node_id)           # ... an edge on all of SN #1's versions
    >>> g.read(x, ("item", 0)) == x0.node_id
    True
    >>> g.inplace(x0)                                           # x[0] += y: SN #2 gets version 1
    >>> made = g.new(lst[0] * y)                                # SN #3, made in the run
    >>> g.write(x, ("item", 1), made.node_id)                   # x.append(...): SN #1 gets version 1
    >>> [n.node_id for n in guard_nodes(g)], [n.node_id for n in mock_nodes(g)]
    ([0, 1, 2], [3, 1, 2])

Every write the mock replays is a version here (``magpy.replay_plan`` builds the replay plan from
them): attribute writes (:meth:`RefGraph.write_attr`), global writes as versions of SN #0 itself
(its ``("global", id(globals), name)`` edges are the globals the run read,
:meth:`RefGraph.write_global`), closure-cell writes as versions of the cell's node, reached from
SN #0 by ``("cell", id(cell))`` (:meth:`RefGraph.write_cell`), and container mutations, logged as
calls the mock repeats (:meth:`RefGraph.log_call`) or taken whole (:meth:`RefGraph.inplace`).
"""
from __future__ import annotations

import sys
import types
import weakref
from dataclasses import dataclass, field
from typing import Any

import torch

from .objmodel import is_immutable
from .source import ConstSource, Source

#: how many tuples and lists the run makes between two scans for unreachable ones, at least
_RELEASE_BATCH = 4


def _refcount_held_only_by_node() -> int:
    """What ``sys.getrefcount`` says, in :meth:`RefGraph.release_unreachable`'s loop, of an
    object that only its node holds (the node, the loop's local, and whatever this interpreter
    counts for the call's argument): measured, not assumed, as interpreters count that
    argument differently."""
    class _Node:
        obj: Any = None

    node = _Node()
    node.obj = (object(),)
    obj = node.obj
    return sys.getrefcount(obj)


_HELD_ONLY_BY_NODE = _refcount_held_only_by_node()


#: weakref id -> (the weak reference, the owner's weak reference, attribute, key): the watches of
#: :func:`forget_when_dead`, kept alive here until their object dies (a weak reference nobody holds
#: never calls back)
_WATCHES: dict[int, tuple] = {}


def forget_when_dead(obj: Any, owner: Any, attr: str, key: Any) -> bool:
    """When ``obj`` dies, ``getattr(owner, attr)`` (a dict or a set of ids) drops ``key``, so a
    later object with the same ``id()`` is not taken for it. False if ``obj`` cannot be
    weakly referenced (the caller keeps it alive instead).

    The callback holds ``owner`` weakly: a tensor made in the monitor run can outlive the run
    (the output the caller keeps, a cache on a module), and a strong reference would keep the
    run's RefGraph alive with it, and through it every object the run touched: parameters,
    whole modules built only for the run. (A plain weak reference with a callback, not
    ``weakref.finalize``: a run watches every intermediate tensor, and a finalizer costs several
    times as much to make and to run.)"""
    try:
        ref = weakref.ref(obj, _drop)
    except TypeError:
        return False
    _WATCHES[id(ref)] = (ref, weakref.ref(owner), attr, key)
    return True


def _drop(ref: weakref.ref) -> None:
    watch = _WATCHES.pop(id(ref), None)
    if watch is None:
        return
    _, owner_ref, attr, key = watch
    ids = getattr(owner_ref(), attr, None)   # (None also once the run is over: Monitor.release)
    if ids is None:
        return
    if isinstance(ids, dict):
        ids.pop(key, None)
    else:
        ids.discard(key)


@dataclass(frozen=True)
class Const:
    """An immutable value as an edge target (no ShadowNode: identity is meaningless)."""

    value: Any


class _Deleted:
    def __repr__(self):
        return "<deleted>"


#: The target of a deleted attribute, global or cell.
DELETED = _Deleted()


@dataclass(frozen=True, eq=False)
class Change:
    """What made a version: ``kind`` is ``"attr"`` (``key``: the name), ``"global"`` (on SN #0;
    ``key``: the name, ``holder``: the globals dict), ``"cell"`` (the cell's node),
    ``"call"`` (a container method the mock repeats: ``key`` the method, ``args`` its
    arguments) or ``"whole"`` (an in-place change the mock reproduces from the final state:
    seen as one operation, ``+=``, ``del``, ``sort``..., or found at the end by comparing the
    entry state)."""

    kind: str
    key: Any = None
    args: tuple = ()
    holder: Any = None


WHOLE = Change("whole")


#: How :meth:`Write.describe` says each kind of write (``{key}``: the change's key).
_WRITE_WORDS = {"attr": "writes attribute `{key}`", "global": "writes global `{key}`", "cell": "writes a closure cell",
                "call": "calls `{key}`", "item": "writes an item", "build": "adds to a container ({key})",
                "import": "imports `{key}`", "yield": "yields to its consumer"}


@dataclass(frozen=True, eq=False)
class Write:
    """One write of the run, to any object (:attr:`RefGraph.writes`): ``node`` is the written
    object's node id (None for an object the run has no ShadowNode for: a cell of a closure made
    in the call, a tensor made out of sight), ``obj_id`` its ``id()``, ``change`` what was written
    (:class:`Change`; the kinds of writes no mock replays add ``"item"``, ``"build"`` for a
    comprehension adding to the container it builds, ``"import"`` and ``"yield"``), ``where`` the
    user's file:line. Writes to objects from outside are also versions (what the mock replays);
    writes to objects made in the call are only these records."""

    node: int | None
    obj_id: int
    change: Change
    where: str = ""

    def describe(self) -> str:
        c = self.change
        if c.kind == "call" and str(c.key).endswith("="):
            return f"`{c.key}` changes a container"
        return _WRITE_WORDS.get(c.kind, "changes an object in place").format(key=c.key)


@dataclass
class ShadowVersion:
    """One state of an object: the references it holds in that state, and what made it."""

    refs: dict = field(default_factory=dict)
    change: Change | None = None   # None for version 0 (the state at entry or creation)


@dataclass(eq=False)
class ShadowNode:
    """The RefGraph's record of one runtime object.

    ``source`` is the path from SN #0 for objects present at function entry (None for
    objects created during the run). ``obj`` keeps the object alive so ``id()`` stays
    unique while the monitor run lasts.
    """

    node_id: int
    obj: Any
    source: Source | None
    versions: list = field(default_factory=lambda: [ShadowVersion()])
    full_read: bool = False        # whole structure guarded (container ValueRead)
    snapshot: Any = None           # shallow state at first access, to detect in-place changes
    aliases: list = field(default_factory=list)  # other sources reaching the same object

    @property
    def pre_existing(self) -> bool:
        return self.source is not None

    @property
    def last(self) -> ShadowVersion:
        return self.versions[-1]

    def __repr__(self) -> str:
        where = self.source.describe() if self.source is not None else "new"
        return f"SN#{self.node_id}<{type(self.obj).__name__} {where} v{len(self.versions)}>"


class RefGraph:
    """Shadow nodes by object identity, with SN #0 for the external state."""

    def __init__(self) -> None:
        self.sn: list[ShadowNode] = []
        self._by_id: dict[int, ShadowNode] = {}
        self.sn0 = ShadowNode(0, None, None)
        self.sn.append(self.sn0)
        self.changed: dict[int, None] = {}   # ids of nodes with versions past 0, in the order first changed
        self._written: set = set()           # (node id, relation) written this run
        self._stamp = 0                      # changes so far: the by-kind views below are cached per stamp
        self._outside = 0                    # ... of them, changes to objects from outside (outside_changes)
        self._views: dict = {}
        self.writes: list[Write] = []        # every write of the run, in order (objects made in the call too)
        self.locate = None                   # () -> the user's file:line now (set by the monitor)
        self._made_sequences: list[ShadowNode] = []   # nodes holding tuples and lists the run made (release_unreachable)
        self._named_by_writes: set[int] = set()         # nodes whose id a Write names (note_write)
        self._next_release = _RELEASE_BATCH

    # -- lookup ---------------------------------------------------------------------------------
    def get_node_by_var(self, obj: Any) -> ShadowNode | None:
        return self._by_id.get(id(obj))

    def get_node_by_id(self, node_id: int) -> ShadowNode:
        return self.sn[node_id]

    # -- creation -------------------------------------------------------------------------------
    def _new_node(self, obj: Any, source: Source | None) -> ShadowNode:
        node = ShadowNode(len(self.sn), obj, source)
        self.sn.append(node)
        self._by_id[id(obj)] = node
        return node

    def external(self, obj: Any, source: Source, relation: tuple | None = None) -> ShadowNode:
        """An object reached from SN #0; an already-known object gains an alias source."""
        node = self._by_id.get(id(obj))
        if node is None:
            node = self._new_node(obj, source)
        elif node.source is not None and node.source != source and source not in node.aliases:
            node.aliases.append(source)
        if relation is not None:
            for v in self.sn0.versions:
                v.refs.setdefault(relation, node.node_id)
        return node

    def new(self, obj: Any) -> ShadowNode:
        """An object created during the monitor run.

        Tensors made in the run are not kept alive by their node (activations would pile up):
        the node forgets the object, and its id is dropped when the tensor dies. Nor are
        generators: one dropped unfinished is closed where its last reference goes, which runs
        its ``finally``/``__exit__`` there, as in eager; a node keeping it alive would move that
        code past what the program does next."""
        node = self._by_id.get(id(obj))
        if node is not None:
            return node
        if isinstance(obj, (torch.Tensor, types.GeneratorType)):
            key = id(obj)
            if not forget_when_dead(obj, self, "_by_id", key):
                return self._new_node(obj, None)
            node = ShadowNode(len(self.sn), None, None)
            self.sn.append(node)
            self._by_id[key] = node
            return node
        node = self._new_node(obj, None)
        if type(obj) is tuple or type(obj) is list:
            self._made_sequences.append(node)
        return node

    def release_unreachable(self) -> None:
        """Let go of the tuples and lists the run made that nothing but their node holds any more.

        A node keeps the object it stands for alive so that its ``id()`` names nothing else while
        the run lasts; a tuple cannot be weakly referenced (as tensors are, see :meth:`new`), so
        the tuples and lists a model passes its activations around in (``return (out, weights)``,
        the ``args`` of a module call, the ``[self, *args]`` a ``forward(self, *args)`` call
        builds) would keep every activation of the call alive until the run ends: memory eager
        frees early, and fresh pages for each later operation. One whose only reference is its
        node's is unreachable by the program (not by a local, a stack slot, a cell, another object
        or the run's own tables), so the program can never show it to the run again: its node
        forgets it (as a tensor's does) and it dies, with whatever only it held. A list the run
        saw written (other than while it was built) stays held: the write's record names it by
        ``id()``, which must name nothing else while the run lasts. Called between frames; the
        list is scanned whole once it has doubled since the last scan (amortised constant cost
        per object)."""
        if len(self._made_sequences) < self._next_release:
            return
        kept = []
        for node in self._made_sequences:
            obj = node.obj
            if sys.getrefcount(obj) > _HELD_ONLY_BY_NODE or node.node_id in self._named_by_writes:
                kept.append(node)
                continue
            if self._by_id.get(id(obj)) is node:
                del self._by_id[id(obj)]
            node.obj = None
        obj = None
        self._made_sequences = kept
        self._next_release = max(2 * len(kept), len(kept) + _RELEASE_BATCH)

    # -- §5.3.2 update rules ----------------------------------------------------------------------
    def read(self, node: ShadowNode, relation: tuple) -> Any:
        """The target of ``relation`` in the node's last version, or None if never seen."""
        return node.last.refs.get(relation)

    def add_initial_ref(self, node: ShadowNode, relation: tuple, target: Any) -> None:
        """A read relation seen for the first time exists from the beginning: add it to all versions."""
        for v in node.versions:
            v.refs.setdefault(relation, target)

    def write(self, node: ShadowNode, relation: tuple, target: Any, change: Change | None = None) -> None:
        """A write creates a new version holding the new reference."""
        self.inplace(node, change or Change(relation[0], relation[1] if len(relation) > 1 else None))
        node.last.refs[relation] = target
        self._written.add((node.node_id, relation))

    def inplace(self, node: ShadowNode, change: Change = WHOLE) -> None:
        """An in-place change: new version, references copied over."""
        node.versions.append(ShadowVersion(dict(node.last.refs), change))
        self.note_write(node, change, node.obj)
        self.changed[node.node_id] = None
        self._stamp += 1
        if node.source is not None or node is self.sn0:
            self._outside += 1

    def note_write(self, node: ShadowNode | None, change: Change, obj: Any = None) -> None:
        """Record a write in :attr:`writes` (:meth:`inplace` does for every version; the update
        rules for the writes that make no version: to objects made in the call)."""
        where = self.locate() if self.locate is not None else ""
        if node is not None and change.kind != "build":
            self._named_by_writes.add(node.node_id)   # (a watcher may look it up by id: release_unreachable)
        self.writes.append(Write(node.node_id if node is not None else None, id(obj), change, where))

    def writes_since(self, mark: int) -> list[Write]:
        """The writes after ``mark`` (``len(rg.writes)`` taken earlier): what a stretch of the
        run wrote, which the dynamic watchers ask (:mod:`magpy.monitor.writes`)."""
        return self.writes[mark:]

    @property
    def outside_changes(self) -> int:
        """Changes so far to objects from outside (SN #0 and nodes with a source: versions made,
        logged calls folded): equal before and after a stretch of the run that changed nothing
        outside (what the dynamic watchers compare; objects made in the call are theirs to watch)."""
        return self._outside

    def written(self, node: ShadowNode, relation: tuple) -> bool:
        """Did the run write ``relation`` of ``node`` (a later read sees the run's own value)?"""
        return (node.node_id, relation) in self._written

    def target_of(self, value: Any, create: bool = True) -> Any:
        """The edge target for ``value``: a :class:`Const`, or the id of its node (a new node when
        ``create``; without, a value the run made out of MagPy's sight stays a :class:`Const`
        target: no node is made for it, so no later decision takes it for an object the run made)."""
        if value is DELETED or is_immutable(value):
            return Const(value)
        node = self.get_node_by_var(value)
        if node is None and not create:
            return Const(value)
        return (node if node is not None else self.new(value)).node_id

    # -- writes the mock replays (magpy.replay_plan) ------------------------------------------------
    def write_attr(self, node: ShadowNode, name: str, value: Any = DELETED) -> None:
        """``obj.name = value`` (``del obj.name`` without a value) on an object from outside."""
        self.write(node, ("attr", name), self.target_of(value))

    def write_global(self, g: dict, name: str, value: Any = DELETED) -> None:
        """``STORE_GLOBAL``/``DELETE_GLOBAL``: a new version of SN #0, the external state."""
        self.write(self.sn0, ("global", id(g), name), self.target_of(value, False), Change("global", name, holder=g))

    def global_written(self, g: dict, name: str) -> bool:
        return (0, ("global", id(g), name)) in self._written

    def cell(self, cell: Any) -> ShadowNode:
        """The node of a closure cell that outlives the call, reached from SN #0."""
        return self.external(cell, ConstSource(cell, "cell"), ("cell", id(cell)))

    def write_cell(self, cell: Any, value: Any = DELETED) -> None:
        """``STORE_DEREF``/``DELETE_DEREF`` of such a cell: a new version of the cell's node."""
        self.write(self.cell(cell), ("contents",), self.target_of(value, False), Change("cell"))

    def cell_written(self, cell: Any) -> bool:
        node = self._by_id.get(id(cell))
        return node is not None and node.obj is cell and self.written(node, ("contents",))

    def log_call(self, node: ShadowNode, method: str, args: list) -> None:
        """A container change the mock repeats as the same call (``append``, ``d[k] = v``...)."""
        self.inplace(node, Change("call", method, tuple(args)))

    def logged_calls(self, node: ShadowNode) -> list:
        """The ``(method, args)`` the mock repeats on ``node``, in program order."""
        if len(node.versions) == 1:
            return []
        return [(v.change.key, list(v.change.args)) for v in node.versions[1:] if v.change.kind == "call"]

    def has_logged_calls(self, node: ShadowNode) -> bool:
        return any(v.change.kind == "call" for v in node.versions[1:])

    def fold_calls(self, node: ShadowNode) -> None:
        """The container was read whole after logged calls: its entry state is guarded, so the
        calls so far become one change the mock reproduces from the final contents."""
        for v in node.versions[1:]:
            if v.change.kind == "call":
                v.change = WHOLE
        self._stamp += 1
        self._outside += 1

    # -- the writes by kind, for the passes that ask "what did the run change outside?" ---------------
    # (read, never changed, by their callers; computed again only after a new change: a branch or a
    # loop compares them at every truth read and iteration)
    def _view(self, make) -> dict:
        hit = self._views.get(make.__name__)
        if hit is None or hit[0] != self._stamp:
            hit = self._views[make.__name__] = (self._stamp, make())
        return hit[1]

    def attr_writes(self) -> dict:
        """node id -> {name: True}: attributes written on objects from outside."""
        return self._view(self._attr_writes)

    def global_writes(self) -> dict:
        """(id(globals), name) -> (globals, name)."""
        return self._view(self._global_writes)

    def cell_writes(self) -> dict:
        """id(cell) -> cell."""
        return self._view(self._cell_writes)

    def calls_by_node(self) -> dict:
        """node id -> logged calls not folded (:meth:`logged_calls`)."""
        return self._view(self._calls_by_node)

    def _attr_writes(self) -> dict:
        out: dict = {}
        for nid in self.changed:
            for v in self.sn[nid].versions[1:]:
                if v.change.kind == "attr":
                    out.setdefault(nid, {})[v.change.key] = True
        return out

    def _global_writes(self) -> dict:
        if 0 not in self.changed:
            return {}
        return {(id(v.change.holder), v.change.key): (v.change.holder, v.change.key)
                for v in self.sn0.versions[1:]}

    def _cell_writes(self) -> dict:
        return {id(self.sn[nid].obj): self.sn[nid].obj for nid in self.changed
                if self.sn[nid].versions[-1].change.kind == "cell"}

    def _calls_by_node(self) -> dict:
        out = {}
        for nid in self.changed:
            calls = self.logged_calls(self.sn[nid])
            if calls:
                out[nid] = calls
        return out

    def target(self, ref: Any) -> Any:
        """The object or immutable value an edge points to."""
        if isinstance(ref, Const):
            return ref.value
        return self.sn[ref].obj


def search(g: RefGraph, src: ShadowNode, version: int) -> list[ShadowNode]:
    """Algorithm 1, ``Search``: nodes reachable from ``src`` through refs of ``version``."""
    result = [src]   # (breadth first: the result is the queue, read from its front)
    seen = {src.node_id}
    i = 0
    while i < len(result):
        cur = result[i]
        i += 1
        for ref in cur.versions[version].refs.values():
            if isinstance(ref, Const) or ref in seen:
                continue
            seen.add(ref)
            result.append(g.sn[ref])
    return result


def guard_nodes(g: RefGraph) -> list[ShadowNode]:
    """Algorithm 1, ``GetGuardNodes``: everything read from outside, through version 0."""
    return search(g, g.sn0, 0)


def mock_nodes(g: RefGraph) -> list[ShadowNode]:
    """Algorithm 1, ``GetMockNodes``: new objects stored outside, plus in-place-changed old ones
    (SN #0 among them when the run wrote globals: its versions are those writes)."""
    final = search(g, g.sn0, -1)
    initial = search(g, g.sn0, 0)
    initial_ids = {n.node_id for n in initial}
    result = [n for n in final if n.node_id not in initial_ids]
    result += [n for n in initial if len(n.versions) != 1]
    return result
