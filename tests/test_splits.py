"""Splitting a call at a dynamic operation and resuming after it (magpy.splits, paper §5.3.1).

A dynamic operation used to send the whole call to eager. Now the code before it is a record,
the operation runs with its real arguments, and the code after it is a compiled continuation.
Every program is compared with eager on every call, outside state included (the log written,
lists pushed to, globals); outside state is changed between calls where the continuation reads
it. The counts asserted are the design's: one monitor run for the prefix, one per continuation
(a few where a number the operation returns changes and is lifted), graphs on both sides.
On CPython 3.10 frames cannot be resumed: there the same programs must run eagerly with the
reason, and still match eager.
"""
from __future__ import annotations

import bisect
import heapq
import io
import struct
import traceback

import pytest
import torch
import torch.nn as nn
from conftest import same

import magpy
from magpy.bytecode.resume import supported

SPLITS = supported()


def _check(eager_fn, compiled, calls, state=lambda: None):
    """Call both with each argument tuple; results and the outside state ``state()`` must agree."""
    for args in calls:
        before = state()
        ref = eager_fn(*args)
        ref_state = state()
        got = compiled(*args)
        got_state = state()
        assert same(got, ref), f"result of call with {[getattr(a, 'shape', a) for a in args]}"
        if isinstance(before, str):   # a log: what each call appended
            assert got_state[len(ref_state):] == ref_state[len(before):]
        elif before is not None:
            assert got_state == ref_state


def _expect_split(cf, splits=1, graphs=2):
    st = magpy.stats(cf)
    if SPLITS:
        assert st.splits == splits, st
        assert st.graph_count == graphs, st
        assert st.fallbacks == 0 and st.resumed_fallbacks == 0, st
        assert any("split at" in r for r in st.break_reasons), st.break_reasons
    else:
        assert st.records == 0 and st.splits == 0
        assert any("not split: frames are resumed on CPython 3.11 to 3.13 only" in r for r in st.break_reasons)
    return st


LOG = io.StringIO()


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        y = self.fc(x).relu()
        LOG.write(f"{y.sum().item():.3f}\n")   # StringIO.write: a native MagPy does not annotate
        return y * 2 + x


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Block()
        self.b = nn.Linear(4, 4)

    def forward(self, x):
        h = self.b(x)
        z = self.a(h) + 1
        return torch.tanh(z) - h


def test_split_in_a_submodule_resumes_both_frames():
    m = Net()
    cf = magpy.compile(m, backend="eager")
    _check(m, cf, [(torch.randn(3, 4),) for _ in range(5)], state=LOG.getvalue)
    st = _expect_split(cf)
    if SPLITS:
        # the continuation's monitor run is in the first call too (the program stops at the split)
        assert st.monitor_runs == 1 and st.guard_hits == 4
        assert st.resumed_monitor_runs == 1 and st.resumed_guard_hits == 4


THRESHOLDS = [-2.0, -1.0, 0.0, 1.0, 2.0]


def test_value_from_the_operation_is_lifted_in_the_continuation():
    """A number read from a tensor is passed to a native with a list from outside: the call splits
    there; the int the native returns changes between calls and is lifted in the continuation
    once two of its records differ in it."""
    def f(x):
        s = x.mean().item()
        bucket = bisect.bisect(THRESHOLDS, s)   # a native on a value read from a tensor
        return x * bucket + 1

    cf = magpy.compile(f, backend="eager")
    xs = [torch.randn(5) + k % 5 - 2 for k in range(12)]
    _check(f, cf, [(x,) for x in xs])
    st = magpy.stats(cf)
    if SPLITS:
        assert st.monitor_runs == 1 and st.splits == 1 and st.fallbacks == 0, st
        # (the value handed over is lifted from its first change: one continuation record guards it)
        assert st.resumed_monitor_runs == 2 and st.resumed_guard_hits == 10 and st.resumed_fallbacks == 0, st
        assert st.split_hits == st.guard_hits == 11, st   # every hit was of the split record
    else:
        assert st.splits == 0 and st.split_hits == 0


class Pushes(nn.Module):
    """A native changes a list from outside; the continuation reads it; the user changes it too."""

    def __init__(self):
        super().__init__()
        self.heap = []
        self.scale = 2.0

    def forward(self, x):
        y = x.relu()
        heapq.heappush(self.heap, round(float(y.sum()), 3))
        LOG.write(f"{len(self.heap)}\n")   # a second split, in the continuation
        return y * self.scale + len(self.heap)


def test_two_splits_and_outside_state_changed_between_calls():
    m, ref = Pushes(), Pushes()
    cf = magpy.compile(m, backend="eager")
    for k in range(6):
        x = torch.randn(4)
        if k == 3:
            m.heap.append(-1.0)
            ref.heap.append(-1.0)
            m.scale = ref.scale = 3.0
        mark = len(LOG.getvalue())
        e = ref(x)
        elog = LOG.getvalue()[mark:]
        mark = len(LOG.getvalue())
        got = cf(x)
        assert LOG.getvalue()[mark:] == elog
        assert same(got, e)
        assert m.heap == ref.heap
    st = magpy.stats(cf)
    if SPLITS:
        assert st.splits == 2 and st.fallbacks == 0 and st.resumed_fallbacks == 0, st
        assert st.guard_hits >= 4
    else:
        assert st.records == 0


def test_identity_and_containers_cross_the_split():
    def f(x):
        acc = [x.sin()]
        d = {"a": acc[0], "b": acc}
        LOG.write(f"{acc[0].sum().item():.2f}\n")
        acc.append(acc[0] * 2)
        return acc, d

    cf = magpy.compile(f, backend="eager")
    for _ in range(4):
        x = torch.randn(3)
        ref, got = f(x), cf(x)
        assert same(got, ref)
        assert got[1]["b"] is got[0] and got[1]["a"] is got[0][0]
    _expect_split(cf)


def test_locals_cells_and_closures_after_the_split():
    def helper(x, k):
        base = x * k
        LOG.write(f"{base.mean().item():.2f}\n")
        shift = lambda t: t + base + k   # noqa: E731  (a closure over locals, made after the split)
        return [shift(t) for t in (x, base)]

    def f(x):
        return helper(x.cos(), 3)

    cf = magpy.compile(f, backend="eager")
    _check(f, cf, [(torch.randn(4),) for _ in range(4)], state=LOG.getvalue)
    _expect_split(cf)


def test_exception_handler_around_the_operation_splits():
    """A `try` of the operation's own frame covers it: the frame goes on from the operation (its
    handler, had it raised, would have run: tests/soundness/programs_trywith.py)."""
    def f(x):
        y = x * 2
        try:
            LOG.write(f"{y.sum().item():.2f}\n")
        except OSError:
            pass
        return y + 1

    cf = magpy.compile(f, backend="eager")
    _check(f, cf, [(torch.randn(3),) for _ in range(3)], state=LOG.getvalue)
    st = _expect_split(cf)
    if SPLITS:
        assert st.monitor_runs == 1 and st.resumed_monitor_runs == 1 and st.resumed_guard_hits == 1, st


def test_operation_under_no_grad_resumes_inside_the_with_block():
    """`with torch.no_grad(): log.write(...)`: the prefix leaves grad mode off for the write, the
    continuation (rebinding the `__exit__` of this call's `no_grad`) turns it back on. One monitor
    run each side, every later call served by the two records (the first call goes on eagerly past
    the write: a `with` around it must not see the monitor stop the program there, so the
    continuation is monitored on the second call)."""
    lin = nn.Linear(3, 3)

    def f(x):
        h = lin(x)
        with torch.no_grad():
            LOG.write(f"{h.sum().item():.3f} {torch.is_grad_enabled()}\n")
            ref = h * 2
        return (h - ref).sum(), torch.is_grad_enabled()

    cf = magpy.compile(f, backend="eager")
    calls = [(torch.randn(2, 3),) for _ in range(5)]
    _check(f, cf, calls, state=LOG.getvalue)
    st = _expect_split(cf)
    if SPLITS:
        assert st.monitor_runs == 1 and st.guard_hits == 4 and st.split_hits == 4, st
        assert st.resumed_monitor_runs == 1 and st.resumed_guard_hits == 3, st
        assert cf(*calls[0])[0].requires_grad


def test_operation_that_raises_goes_to_the_frames_handler():
    """The operation raises on a matched call: the frame goes on in its own `except` (and its
    `with` block's `__exit__` sees the exception), as in eager; the traceback shows the line."""
    seen = []

    class Watch:
        def __enter__(self):
            return self

        def __exit__(self, kind, value, tb):
            seen.append(kind)

    sink = [io.StringIO()]

    def f(x):
        y = x.cos()
        try:
            with Watch():
                sink[0].write(f"{y.sum().item():.2f};")
                y = y + 1
        except ValueError:
            y = y - 1
        return y

    cf = magpy.compile(f, backend="eager")
    for k in range(6):
        if k == 3:
            sink[0].close()
        if k == 5:
            sink[0] = io.StringIO()
        x = torch.randn(3)
        ref_seen = len(seen)
        ref = f(x)
        got = cf(x)
        assert same(got, ref) and seen[ref_seen:ref_seen + 1] == seen[ref_seen + 1:], (k, seen)
    st = _expect_split(cf)
    if SPLITS:
        assert st.monitor_runs == 1 and st.guard_hits == 5, st
        # (call 1 monitors the continuation, calls 3 and 4 raise: the handler's path runs as plain
        # Python, the exception is not a record's input)
        assert st.resumed_monitor_runs == 1 and st.resumed_guard_hits == 2, st

        def g(x):
            with Watch():
                sink[0].write(f"{x.sum().item():.2f};")
            return x

        cg = magpy.compile(g, backend="eager")
        sink[0] = io.StringIO()
        cg(torch.randn(2))
        sink[0].close()
        with pytest.raises(ValueError) as info:
            cg(torch.randn(2))
        lines = [t.lineno for t in traceback.extract_tb(info.value.__traceback__) if t.name == "g"]
        assert lines == [g.__code__.co_firstlineno + 2], lines
        assert magpy.stats(cg).guard_hits == 1 and magpy.stats(cg).splits == 1


def test_list_indexed_with_a_tensor_splits_at_the_subscript():
    """`rows[score.argmax()]` on a list from outside: the subscript runs with its real operands
    (the list as it is now), the code after it is a continuation; one monitor run each side."""
    rows = [torch.full((3,), float(k)) for k in range(4)]

    def f(x, score):
        y = x.relu()
        row = rows[score.argmax()]
        return y + row

    cf = magpy.compile(f, backend="eager")
    calls = [(torch.randn(3), torch.randn(4)) for _ in range(6)]
    _check(f, cf, calls[:3])
    rows[2] = torch.full((3,), -7.0)   # (an item replaced: the subscript reads it on the next call)
    _check(f, cf, calls[3:])
    st = _expect_split(cf)
    if SPLITS:
        assert st.monitor_runs == 1 and st.guard_hits == 5 and st.split_hits == 5, st
        assert st.resumed_monitor_runs == 1 and st.resumed_guard_hits == 5, st
        assert "split at `[] (subscript)`" in st.break_reasons[0], st.break_reasons


def test_exception_handler_around_an_outer_call_splits():
    """The handler is in a frame that called the one the operation is in: the continuation hands
    an exception of the inner frame (the operation's, raised on calls 3 and 4 by a closed log) to
    the outer frame, raised at its call, so its `except` runs as in eager."""
    sink = [io.StringIO()]

    def log(y):
        sink[0].write(f"{y.sum().item():.2f}\n")
        return y.abs()

    def f(x):
        y = x * 2
        try:
            y = log(y) * 3
        except ValueError:
            y = y - 1
        return y + 1

    cf = magpy.compile(f, backend="eager")
    for k in range(6):
        if k == 3:
            sink[0].close()
        if k == 5:
            sink[0] = io.StringIO()
        _check(f, cf, [(torch.randn(3),)])
    st = _expect_split(cf)
    if SPLITS:
        # (call 0 goes on eagerly past the split its handler covers; call 1 monitors the continuation)
        assert st.monitor_runs == 1 and st.guard_hits == 5 and st.split_hits == 5, st
        assert st.resumed_monitor_runs == 1 and st.resumed_guard_hits == 2, st


def test_speculation_that_keeps_failing_splits_at_the_native():
    """A number read from a tensor passed to a native alone is speculated on (the record holds
    while it repeats); once two records assumed different values there, the call splits."""
    def f(x):
        s = x.sum().item()
        struct.pack("f", s)   # (checks that it packs; the bytes are dropped)
        return x + s

    cf = magpy.compile(f, backend="eager")
    _check(f, cf, [(torch.randn(4),) for _ in range(10)])
    st = magpy.stats(cf)
    if SPLITS:
        assert st.monitor_runs == 3 and st.splits == 1 and st.guard_hits == 7 and st.fallbacks == 0, st
        # the float the prefix hands over changes too: lifted from its first change
        assert st.resumed_monitor_runs == 2 and st.resumed_guard_hits == 6, st


def test_operation_that_raises_on_a_matched_call_raises_as_eager():
    def f(x):
        n = int(x.sum().item())
        packed = struct.pack("b", n)   # struct.error past 127
        return x + len(packed) + n

    cf = magpy.compile(f, backend="eager")
    for k in range(1, 6):
        assert same(cf(torch.full((3,), float(k))), f(torch.full((3,), float(k))))
    big = torch.full((3,), 100.0)
    with pytest.raises(struct.error):
        f(big)
    hits = magpy.stats(cf).guard_hits
    with pytest.raises(struct.error):
        cf(big)
    st = magpy.stats(cf)
    if SPLITS:
        assert st.splits == 1 and st.guard_hits == hits + 1 and st.mock_errors == 1, st


def test_gradients_flow_through_both_sides():
    torch.manual_seed(1)
    m = Net()
    ref = Net()
    ref.load_state_dict(m.state_dict())
    cf = magpy.compile(m, backend="eager")
    for _ in range(3):
        x = torch.randn(2, 4)
        cf(x).sum().backward()
        ref(x).sum().backward()
    for (name, p), q in zip(m.named_parameters(), ref.parameters()):
        assert same(p.grad, q.grad), name
    if SPLITS:
        assert magpy.stats(cf).splits == 1


def test_explain_names_the_split():
    e = magpy.explain(Net())(torch.randn(2, 4))
    if SPLITS:
        assert e.break_reasons == []
        assert any("split at `StringIO.write`" in s and "test_splits.py" in s for s in e.splits), e.splits
        assert e.graph_count == 2   # the code before the split and its continuation, as stats counts them
    else:
        assert any("not split" in r for r in e.break_reasons)


def test_changed_global_before_the_operation_is_seen_by_it():
    """The prefix's writes are replayed before the operation runs, which reads them."""
    state = {"n": 0}

    def f(x):
        state["n"] += 1
        LOG.write(f"call {state['n']}\n")
        return x * state["n"]

    cf = magpy.compile(f, backend="eager")
    for _ in range(6):
        x = torch.randn(2)
        mark = len(LOG.getvalue())
        got = cf(x)
        assert LOG.getvalue()[mark:] == f"call {state['n']}\n"
        assert same(got, x * state["n"])
    assert state["n"] == 6


@pytest.mark.skipif(not SPLITS, reason="frames are resumed on CPython 3.11 to 3.13 only")
def test_resume_functions_share_cells_passed_to_them_and_delete_unbound_locals():
    """Cells passed as cells (a `nonlocal` of a closure made in the call and of the frame that
    made it): both resumed frames write and read the one cell; a frame that calls locals() does
    not see locals unbound at the split, nor the resume function's own parameters."""
    import dis
    import types

    from magpy.bytecode.resume import resume_function

    def marker(t):
        return None

    def f(x, k):
        total = 0

        def acc(t):
            nonlocal total
            total += k
            marker(t)
            total += 10 * k
            return t * 2
        y = acc(x)
        return y + total

    def after_call(code, pop):
        ins = list(dis.get_instructions(code))
        call = next(i for i in ins if i.opname.startswith("CALL"))
        at = next(i for i in ins if i.offset > call.offset and (not pop or i.opname == "POP_TOP"))
        return next(i for i in ins if i.offset > at.offset).offset if pop else at.offset

    acc_code = next(c for c in f.__code__.co_consts if isinstance(c, types.CodeType))
    stale = types.FunctionType(acc_code, {}, "acc", None,
                               tuple(types.CellType(99) for _ in acc_code.co_freevars))
    total, k = types.CellType(1), types.CellType(1)
    cells = {"total": total, "k": k, "marker": types.CellType(marker)}
    r_acc = resume_function(stale, after_call(acc_code, True), (), (), shared=acc_code.co_freevars)
    assert r_acc(5, *[cells[n] for n in acc_code.co_freevars]) == 10
    assert total.cell_contents == 11   # (this call's cell, not the stale closure's)
    ins = list(dis.get_instructions(f))
    last_call = [i for i in ins if i.opname.startswith("CALL")][-1]
    at = next(i for i in ins if i.offset > last_call.offset).offset
    only_cells = tuple(c for c in f.__code__.co_cellvars if c not in f.__code__.co_varnames)
    r_f = resume_function(f, at, (True,), only_cells, shared=("total", "k"))   # (`marker`: f's closure)
    params = [k if n == "k" else None for n in f.__code__.co_varnames] + [cells[c] for c in only_cells]
    assert r_f(*params, 10) == 21

    def g(a):
        b = a + 1
        marker(b)
        c = 3
        return sorted(locals()), c

    r_g = resume_function(g, after_call(g.__code__, True), (), (), unbound=("c",))
    assert r_g(1, 2, None) == g(1)   # (a, b, c and the free `marker`: no `.stack` slot, c bound again)
