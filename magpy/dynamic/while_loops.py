"""Counted ``while`` loops (paper §6.2.2): a loop on a counter local rolls like a ``for`` over a range.

``t = 0; while t < xs.size(0): h = cell(xs[t], h); t += 1`` has no iterator to follow, only a
counter the program compares with a number the run follows (a lifted size, ``len`` of a counted
sequence) and steps in the body. :class:`WhileLoops` (part of the loop watcher,
:class:`~magpy.dynamic.loops.LoopWatcher`) finds such a loop and hands its iterations to the
watcher as a loop (:class:`~magpy.dynamic.loops.Loop`), which :mod:`magpy.dynamic.rolling` rolls as any
other:

1. *The first test* (:meth:`WhileLoops.on_compare`): a local ``int`` (or a tracked number)
   compared with a tracked number (or a constant), by ``<``, ``<=``, ``>``, ``>=`` or ``!=``,
   the comparison being a loop's test (its jump goes back, or the code it guards jumps back to
   where it falls through), and true. The counter is noted by name; the first iteration runs
   unrolled.
2. *The counter's next value* (:meth:`WhileLoops.counter_stored`): the first ``STORE_FAST`` of the
   counter in that iteration gives the step. The program goes on with a tracked copy of the
   value (``start + step`` from constants in the graph), so from now on the counter is a graph
   value, the same in every iteration.
3. *Each later test of that counter* marks an iteration (true) or the loop's exit (false). The
   trip count of the rolled part is ``len(range(next, bound, step))`` (``bound + 1`` for ``<=``),
   a graph node made before its first iteration, and must equal the count the run saw. The
   tests are assumptions: inside the loop they are checked after every iteration, the last
   (false) one after the loop, so a count that does not fit the program (a bound or step the
   body changes) fails a check, never a result.
"""
from __future__ import annotations

import dis
import functools
import operator
from dataclasses import dataclass
from typing import Any

from .. import capture
from ..graph import range_len
from ..lifted import LiftedInt

#: The tests a counted ``while`` loop may make: what its ``range``'s stop adds to the bound, and
#: the sign its step must have (0: either, with a step of 1 or -1).
_COUNTING_TESTS = {"<": (0, 1), "<=": (1, 1), ">": (0, -1), ">=": (-1, -1), "!=": (0, 0)}
_SWAPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "!=": "!=", "==": "=="}
_TESTS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "!=": operator.ne}


@dataclass
class WhileCounter:
    """A ``while`` loop on a counter local, noted at its first test."""

    fs: Any
    name: str                    # the counter's local
    op: str                      # the test, the counter on the left
    start: int                   # the counter at the first test
    bound: int                   # the bound at the first test
    bound_node: Any              # its graph node (read before the loop), or the constant
    where: str
    value: Any = None            # the tracked counter the next test compares (by identity)
    step: int = 0
    loop: Any = None             # its Loop (magpy.dynamic.loops) once the rolled part starts


@functools.lru_cache(maxsize=256)
def _loop_test(code: Any, offset: int) -> bool:
    """Is the comparison at ``offset`` the test of a loop: the conditional jump after it jumps
    back, or leaves a stretch of code that jumps back to where the jump falls through?"""
    ins = list(dis.get_instructions(code))
    at = next((k for k, i in enumerate(ins) if i.offset == offset), None)
    if at is None:
        return False
    jump = next((i for i in ins[at + 1:at + 4] if "JUMP" in i.opname and "IF" in i.opname), None)
    if jump is None or not isinstance(jump.argval, int):
        return False
    if jump.argval <= offset:
        return True   # (a test at the loop's bottom, jumping back while true)
    after = next((i.offset for i in ins if i.offset > jump.offset), None)
    return after is not None and any(
        "JUMP" in i.opname and isinstance(i.argval, int) and i.argval < i.offset and i.argval <= after
        for i in ins if jump.offset < i.offset < jump.argval)


class WhileLoops:
    """The counted ``while`` loops of a monitor run, for the loop watcher ``watcher`` (its host
    is the monitor: ``graph``, ``scalar_node``, ``track_scalar``, ``where``)."""

    def __init__(self, watcher: Any) -> None:
        self.watcher = watcher
        self.host = watcher.host
        self.found: dict[int, WhileCounter] = {}    # id(frame state) -> its counted while loop
        self.pending: dict[int, WhileCounter] = {}  # id(frame state) -> one waiting for its counter's store

    def on_compare(self, fs: Any, ins: Any, offset: int, a: Any, b: Any) -> None:
        """A comparison with a tracked number, about to run: a counted while loop's test (one of
        its iterations, its end), or the first test of one."""
        op = ins.argval if isinstance(ins.argval, str) else None
        w = self.found.get(id(fs))
        if w is not None and w.fs is fs:
            if w.value is not None and (a is w.value or b is w.value):
                self._test(w, fs, a if a is w.value else b, b if a is w.value else a,
                           op if a is w.value else _SWAPPED.get(op))
            return
        if op not in _COUNTING_TESTS or self.watcher.active_loops or not _loop_test(fs.code, offset):
            return
        sides = [(a, b, op), (b, a, _SWAPPED[op])]
        if type(b) is int and type(a) is LiftedInt:
            sides.reverse()   # (a plain int beside a tracked number is the counter: `while n > t`)
        for counter, bound, test in sides:
            if type(counter) not in (int, LiftedInt) or type(bound) not in (int, LiftedInt):
                continue
            tracked = type(counter) is LiftedInt
            node = self.host.scalar_node(bound) if type(bound) is LiftedInt else int(bound)
            if node is None or (tracked and self.host.scalar_node(counter) is None) \
                    or (not tracked and type(node) is int) or not _TESTS[test](int(counter), int(bound)):
                continue   # (one of the two is a number the run follows; the test holds)
            try:
                names = [k for k, v in capture.frame_locals(fs.frame).items()
                         if (v is counter if tracked else type(v) is int and v == counter)]
            except Exception:
                return
            if len(names) == 1:
                w = WhileCounter(fs, names[0], test, int(counter), int(bound), node, self.host.where())
                self.found[id(fs)] = self.pending[id(fs)] = w
                return

    def counter_stored(self, fs: Any, ins: Any, stack: list) -> None:
        """A ``STORE_FAST`` while a loop waits for its counter: in the first iteration the step,
        and the program goes on with a tracked copy of the value; in a rolled one the counter
        the next test compares."""
        w = self.pending.get(id(fs))
        if w is None or w.fs is not fs or ins.argval != w.name or not stack:
            return
        del self.pending[id(fs)]
        v = stack[-1]
        if w.loop is not None:
            if type(v) is LiftedInt and self.host.scalar_node(v) is not None:
                w.value = v
            else:
                w.loop.fail(f"its counter is set to a number the graph does not compute ({self.host.where()})")
            return
        sign = _COUNTING_TESTS[w.op][1]
        tracked = type(v) is LiftedInt and self.host.scalar_node(v) is not None
        if type(v) not in (int, LiftedInt) or (type(v) is LiftedInt and not tracked) or v == w.start \
                or (sign and (v - w.start) * sign < 0) or (w.op == "!=" and abs(v - w.start) != 1):
            del self.found[id(fs)]
            return
        w.step = int(v) - w.start
        if not tracked:
            node = self.host.graph.call("function", operator.add, (w.start, w.step), {})
            self.host.track_scalar(fs, stack, node)
        w.value = stack[-1]

    def frame_left(self, fs: Any) -> None:
        self.pending.pop(id(fs), None)
        self.found.pop(id(fs), None)

    def _test(self, w: WhileCounter, fs: Any, counter: Any, bound: Any, test: str | None) -> None:
        """A test of the tracked counter: an iteration starts (true) or the loop ends (false)."""
        loop = w.loop
        if test != w.op:
            if loop is not None:
                loop.fail(f"its counter is tested otherwise ({self.host.where()})")
            return
        holds = _TESTS[test](int(counter), int(bound))
        if loop is None:
            if not holds:
                del self.found[id(fs)]   # (one iteration: nothing to roll)
                return
            loop = w.loop = self.watcher.new_loop(fs, self._count_node(w, counter), w.where, w)
        self.watcher.mark_iteration(loop, fs)
        if holds:
            w.value = None   # (the next test's counter is whatever the iteration stores)
            self.pending[id(fs)] = w
            return
        loop.count = len(loop.marks) - 1
        delta, _ = _COUNTING_TESTS[w.op]
        if loop.count != len(range(int(counter) - loop.count * w.step, w.bound + delta, w.step)) \
                or int(bound) != w.bound:
            loop.fail("its count is not the count of its counter's range (the bound or the step changed)")
        del self.found[id(fs)]
        self.watcher.end_loop(loop)

    def _count_node(self, w: WhileCounter, counter: Any) -> Any:
        """``len(range(counter, stop, step))`` as a graph node, before the rolled part's first iteration."""
        delta, _ = _COUNTING_TESTS[w.op]
        if type(w.bound_node) is int:
            stop = w.bound_node + delta
        elif delta:
            stop = self.host.graph.call("function", operator.add, (w.bound_node, delta), {})
        else:
            stop = w.bound_node
        return self.host.graph.call("function", range_len, (self.host.scalar_node(counter), stop, w.step), {})
