"""Calls of ``functools.lru_cache`` functions: answered from the cache, as eager answers them.

A cached function's result is a value its cache keeps under a key made of the (hashable)
arguments. Eager runs the body only on a miss; a later call with the same arguments returns the
kept value without running it, whatever the state the body once read has become since, and
whatever the call changed outside before it. The monitor run calls the function as eager does
(the body, on a miss, runs unmonitored: what it reads and writes then is not the record's). The
record holds while the cache still answers the call with the run's result without running the
body: a guard on the call's entry (:class:`CacheEntry`, :class:`~magpy.guards.CacheEntryGuard`),
so ``cache_clear()``, an eviction or a refill with another result make the call a miss, whose
monitor run runs the body where eager runs it, in eager's state. The mock makes the call again
for its hit (the LRU order, ``cache_info()``), after the graph and its checks (:mod:`magpy.redraw`);
the guard fixes the result.

    >>> import functools
    >>> @functools.lru_cache
    ... def probe(name):
    ...     return len(name)
    >>> entry = lru_cache_entry(probe, ("torch",), {})
    >>> entry.holds(), probe("torch"), entry.holds(), entry.result()
    (False, 5, True, 5)
"""
from __future__ import annotations

import functools
import gc
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from ..breaks import BreakCompile
from ..lifted import delift
from ..objmodel import NO_VALUE, has_nan, is_immutable
from ..redraw import DrawSource
from ..source import ConstSource

if TYPE_CHECKING:
    from ..callsite import CallSite
    from .frame import FrameState


@dataclass(frozen=True)
class CacheEntry:
    """Where a C ``functools.lru_cache`` wrapper ``fn`` keeps the result of one call: ``key`` in
    ``table``, the dict ``cache_clear()`` empties (the same dict for the wrapper's lifetime). An
    unbounded cache maps keys to results; a bounded one maps them to opaque LRU links, whose
    results only the garbage collector's traversal of ``fn`` shows."""

    fn: Any
    table: dict
    key: Any
    bounded: bool

    def holds(self) -> bool:
        return self.key in self.table

    def result(self) -> Any:
        """What the cache answers for ``key`` without running the body (NO_VALUE: nothing)."""
        got = self.table.get(self.key, NO_VALUE)
        if got is NO_VALUE or not self.bounded:
            return got
        refs = gc.get_referents(self.fn)   # (key, result, type(link)) per link, then the table
        link_type = type(got)
        for i in range(2, len(refs)):
            if refs[i] is self.table:
                break
            if refs[i] is link_type and (refs[i - 2] is self.key or refs[i - 2] == self.key):
                return refs[i - 1]
        return NO_VALUE

    def link(self) -> Any:
        """The table's value for ``key`` now (a bounded cache's link; None where absent)."""
        return self.table.get(self.key)

    def answers(self, result: Any, link: Any, misses: int, same: Any) -> bool:
        """Does the cache still answer the call with ``result`` (``same(got, result)``), without
        running the body? ``link`` and ``misses`` are what a bounded cache had when the record
        was made: while that very link is still the key's and no call missed since (a link is
        reused only for a miss, and ``cache_clear()`` drops every link), it holds the result it
        held; otherwise the result is looked up."""
        if not self.bounded:
            got = self.table.get(self.key, NO_VALUE)
            return got is not NO_VALUE and same(got, result)
        if self.table.get(self.key) is link and self.fn.cache_info().misses == misses:
            return True
        got = self.result()
        return got is not NO_VALUE and same(got, result)


def lru_cache_entry(fn: Any, args: Any, kwargs: dict) -> CacheEntry | None:
    """The entry ``fn(*args, **kwargs)`` reads or fills, for a C ``functools.lru_cache`` wrapper
    made by the decorator; None where it cannot be told (no ``__wrapped__``, ``maxsize=0``).

    The wrapper does not expose its table: it is the dict the garbage collector's traversal
    visits right before the wrapped function (then the keyword marker), in every CPython the
    C implementation has. The key is built as the C ``lru_cache_make_key`` builds it; the rule
    checks that the table holds it, with the result, after the call: any mismatch is a break."""
    if not isinstance(fn, functools._lru_cache_wrapper):
        return None
    func, params = getattr(fn, "__wrapped__", None), getattr(fn, "cache_parameters", None)
    try:
        typed, maxsize = bool(params()["typed"]), params()["maxsize"]
    except Exception:
        return None
    if func is None or maxsize == 0:
        return None
    refs = gc.get_referents(fn)
    own = getattr(fn, "__dict__", None)
    for i in range(len(refs) - 2):
        if type(refs[i]) is dict and refs[i] is not own and refs[i + 1] is func:
            table, mark = refs[i], refs[i + 2]
            break
    else:
        return None
    if len(table) != fn.cache_info().currsize or (kwargs and type(mark) is not object):
        return None
    args = tuple(args)
    if not typed and not kwargs:
        key = args[0] if len(args) == 1 and type(args[0]) in (int, str) else args
    else:
        key = args
        if kwargs:
            key += (mark, *(x for kv in kwargs.items() for x in kv))
        if typed:
            key += (*map(type, args), *map(type, kwargs.values()))
    return CacheEntry(fn, table, key, maxsize is not None)


def decide(mon: Any, fs: FrameState, c: CallSite) -> bool:
    """The call rule (Figure 12's "lru cache") for the monitor run ``mon``. Arguments must be
    values (guarded) or objects the cache keys by identity (guarded so). Where the entry cannot
    be read (``maxsize=0``), the mock's call could miss and run the body: a break. The mock makes
    the call after the graph and its checks (a hit changes only the cache's counters and LRU
    order, which nothing between reads): on a path a tensor value chose, a failed check leaves
    the cache as eager would find it."""
    fn, args, kwargs = c.fn, c.args, c.kwargs
    for v in [*args, *kwargs.values()]:
        if isinstance(v, torch.Tensor):
            raise BreakCompile(f"passes a tensor to the cached function `{fn.__qualname__}` "
                               "(the cache keys it by identity)")
        if is_immutable(v):
            continue
        node = mon.node(v)
        if node is None or node.source is None:
            raise BreakCompile(f"passes an object made in the call ({type(v).__name__}) to the cached function `{fn.__qualname__}`")
        mon.guard_identity(v)
    plain_args, plain_kwargs = tuple(delift(a) for a in args), {k: delift(v) for k, v in kwargs.items()}
    if any(has_nan(v) for v in (*plain_args, *plain_kwargs.values())):
        # (the cache finds a NaN key only as that very object: eager's new NaN misses every call)
        raise BreakCompile(f"passes a NaN to the cached function `{fn.__qualname__}` (its cache "
                           "finds a NaN key only by identity)")
    entry = lru_cache_entry(fn, plain_args, plain_kwargs)
    if entry is None:
        # (``maxsize=0``, a wrapper not made by the decorator): the mock's call could miss and run
        # the body, its writes and its result unseen, beside the one eager runs
        raise BreakCompile(f"calls the cached function `{fn.__qualname__}`, whose cache MagPy cannot read "
                           "(maxsize=0, or not made by the decorator)")
    fn_node = mon.node(fn)
    if fn_node is None or fn_node.source is None:
        raise BreakCompile(f"calls the cached function `{fn.__qualname__}` made in the call")
    if mon.holds_scalar(args) or mon.holds_scalar(kwargs):
        mon.scalar_escape("passes to a cached function", args, kwargs)
    mon.guard_identity(fn)
    if not entry.holds():
        # A miss runs the body; one that raises caches nothing, and eager runs the body again on
        # every call: the run ends dynamic unless the call returns (Monitor.after_call).
        mon.cached_misses[id(entry)] = fn.__qualname__
    mon.pend(fs, functools.partial(_post_cached_call, mon), (fn, plain_args, plain_kwargs, entry), opaque=True)
    return True


def _post_cached_call(mon: Any, fs: FrameState, stack: list, data: tuple) -> None:
    fn, args, kwargs, entry = data
    out = stack[-1]
    mon.cached_misses.pop(id(entry), None)
    if entry is not None:
        if entry.result() is not out:
            raise BreakCompile(f"calls the cached function `{fn.__qualname__}`, whose cache kept no entry "
                               "MagPy can check for the call")
        mon.read_cache_entry(entry, f"`{fn.__qualname__}`", out)
    mon.draws.append(DrawSource(len(mon.draws), fn, None, args, kwargs, f"cached {fn.__qualname__}",
                                mon.where(), (out,), cache_hit=True))
    if is_immutable(out) or mon.node(out) is not None:
        return
    mon.on_read(out, ConstSource(out, f"a result kept by the cache of {fn.__qualname__}"))

