"""Generators left unfinished at a yield inside their own ``try``/``with``: closing one runs its
``finally``/``__exit__`` where its last reference goes. The compiled call must run that code
where eager does (the program may read what it did), and a record must replay it."""
import contextlib
import gc
import sys
from collections.abc import Sequence

import torch

import magpy


def _calls(fn, args_list, state):
    """Eager and compiled results and outside state after each call, from the same start."""
    out = []
    for compiled in (False, True):
        state["reset"]()
        call = magpy.compile(fn, backend="eager") if compiled else fn
        seen = []
        for a in args_list:
            r = call(a)
            gc.collect()
            seen.append((r.clone(), state["read"]()))
        out.append((seen, call))
    (eager, _), (got, cm) = out
    for (er, es), (gr, gs) in zip(eager, got):
        assert torch.equal(er, gr) and es == gs, (er, es, gr, gs)
    return magpy.stats(cm)


#: Where the monitor follows a close as a frame ends (sys.settrace, 3.10 and 3.11): such a call gets
#: a record; under sys.monitoring (3.12+) it is not followed and the calls run eagerly, as eager.
CLOSES_FOLLOWED = sys.version_info < (3, 12)
#: 3.10 does not tell a close that only tests ``except`` clauses apart: such a call runs eagerly.
EXCEPT_ONLY_CLOSE_FOLLOWED = sys.version_info >= (3, 11)


def _recorded_or_eager(s, followed: bool, runs_records_hits=(1, 1, 3)) -> None:
    """One record serving every later call where the close is followed; else no record (eager)."""
    if followed:
        assert (s.monitor_runs, s.records, s.guard_hits) == runs_records_hits
    else:
        assert s.records == 0 and s.break_reasons


LOG: list = []
_LOG_STATE = {"reset": LOG.clear, "read": lambda: list(LOG)}


def _stream(x):
    try:
        for i in range(10):
            yield x * i
    finally:
        LOG.append("closed")


def test_a_loop_broken_out_of_closes_the_generator_before_the_code_after_it():
    def f(x):
        for _ in _stream(x):
            break
        return x * len(LOG)   # eager: the finally already ran
    s = _calls(f, [torch.ones(2)] * 3, _LOG_STATE)
    if CLOSES_FOLLOWED:
        assert s.records >= 1 and s.break_reasons == []
    else:
        assert s.records == 0 and s.break_reasons


def test_a_generator_dropped_as_the_call_ends_is_closed_and_its_finally_replayed():
    def f(x):
        g = _stream(x)
        return next(g) + next(g)
    s = _calls(f, [torch.ones(2) * i for i in range(4)], _LOG_STATE)
    _recorded_or_eager(s, CLOSES_FOLLOWED)


def test_a_temporary_generator_closes_through_its_with_block():
    class Scope:
        def __enter__(self):
            LOG.append("enter")
            return self

        def __exit__(self, *exc):
            LOG.append("exit")
            return False

    def stream(x):
        with Scope():
            yield x + 1
            yield x + 2

    def f(x):
        return next(stream(x)) * 2
    s = _calls(f, [torch.ones(2) * i for i in range(4)], _LOG_STATE)
    _recorded_or_eager(s, CLOSES_FOLLOWED)


def test_a_generator_dropped_in_a_helper_frame():
    def helper(x):
        g = _stream(x)
        return next(g) + 1

    def f(x):
        return helper(x) * 3
    s = _calls(f, [torch.ones(2) * i for i in range(4)], _LOG_STATE)
    _recorded_or_eager(s, CLOSES_FOLLOWED)


class _Rows(Sequence):
    def __len__(self):
        return 5

    def __getitem__(self, i):
        if i >= 5:
            raise IndexError(i)
        return float(i)


def test_a_sequence_iterator_zipped_partially_closes_through_an_except_only():
    # Sequence.__iter__ is `try: ... yield ... except IndexError: return`: its close runs nothing
    def f(x):
        out = x
        for k, r in zip(range(2), _Rows()):
            out = out + r * k
        return out
    s = _calls(f, [torch.ones(2) * i for i in range(4)], _LOG_STATE)
    _recorded_or_eager(s, EXCEPT_ONLY_CLOSE_FOLLOWED)


def test_a_generator_kept_alive_outside_runs_eagerly_with_a_reason():
    kept = []

    def f(x):
        g = _stream(x)
        kept.append(g)
        return next(g)
    s = _calls(f, [torch.ones(2)] * 2, {"reset": lambda: (kept.clear(), LOG.clear()), "read": lambda: list(LOG)})
    assert s.records == 0
    assert any("suspended inside `try`/`with` when the call returns" in r for r in s.break_reasons)


def test_an_unfinished_contextmanager_generator_held_by_its_manager_runs_eagerly():
    @contextlib.contextmanager
    def scope():
        LOG.append("enter")
        try:
            yield 1
        finally:
            LOG.append("exit")

    def f(x):
        m = scope()
        return x + m.__enter__()
    s = _calls(f, [torch.ones(2)] * 2, _LOG_STATE)
    assert s.records == 0 and s.break_reasons
