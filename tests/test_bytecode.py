"""Bytecode per CPython version: every opcode is an event the monitor has a rule for, and the
programs whose bytecode differs most between 3.10, 3.11, 3.12 and 3.13 (calls with keywords,
``super()``, slices, comprehensions that reuse a parameter's name, conditions on comparisons,
closures called from C) compile to the result eager gives, or break with a reason."""
from __future__ import annotations

import dis
import sys
import textwrap

import pytest
import torch
import torch.nn.functional as F
from conftest import same
from torch import nn

import magpy
from magpy import bytecode, capture
from magpy.monitor import Monitor

VERSION = f"{sys.version_info[0]}.{sys.version_info[1]}"


def compiled_matches_eager(fn, *calls):
    cm = magpy.compile(fn, backend="eager")
    for args in calls:
        assert same(cm(*args), fn(*args))
    return magpy.stats(cm)


def test_every_opcode_is_an_event_with_a_rule():
    for name in dis.opmap:
        if name.startswith(("INSTRUMENTED_", "<")):
            continue
        assert Monitor.handles("op_" + bytecode.DECODER.event(name)), name


def test_decoder_is_the_running_version():
    assert bytecode.DECODER.version == sys.version_info[:2]


_SPECIMENS = textwrap.dedent("""
    def specimen(x, *rest, key=None, **kw):
        total = 0
        for i in range(300):
            total += i
        v = f"{x!r:>10} {key!s} {total:{kw}}"
        g = lambda a, b=2, *, c=3: (a, b, c)
        try:
            del v
        except (NameError, KeyError) as e:
            raise ValueError from e
        finally:
            total -= 1
        with open(x) as fh:
            pass
        while total and not rest:
            total = total // 2 if total > 3 else None
        return sorted(kw, key=len, reverse=True), g, -x, ~x

    async def agen(xs):
        return [y async for y in xs]
""") + "def many(x):\n" + "".join(f"    v{i} = x + {i}.5\n" for i in range(300)) + \
    "    if x:\n" + "".join(f"        v{i} += v{i + 1}\n" for i in range(200)) + "    return v299\n"


def _code_objects(modules) -> list:
    """Every code object of the functions of ``modules``, nested ones included."""
    import types as _t
    seen, todo = set(), []
    for m in modules:
        for v in vars(m).values():
            for f in [v, *vars(v).values()] if isinstance(v, type) else [v]:
                f = getattr(f, "__func__", f)
                if isinstance(f, _t.FunctionType) and f.__code__ not in seen:
                    seen.add(f.__code__)
                    todo.append(f.__code__)
    while todo:
        for k in todo.pop().co_consts:
            if isinstance(k, _t.CodeType) and k not in seen:
                seen.add(k)
                todo.append(k)
    return list(seen)


def test_the_decoder_reads_every_instruction_as_dis_does():
    """A version's own reading of ``co_code`` (3.11's, faster than dis) gives the instructions
    ``dis`` gives, value and words of each argument, line and event, on the code of torch's
    modules, MagPy's own, the standard library's and a specimen of rare encodings: long
    jumps and constant tables (EXTENDED_ARG), format specs, keyword-only defaults, handlers."""
    import collections
    import inspect
    import json

    import torch.nn.modules.conv as conv

    import magpy.monitor.run as run

    ns: dict = {}
    exec(compile(_SPECIMENS, "<specimen>", "exec"), ns)
    codes = _code_objects([nn.modules.module, conv, F, run, inspect, json.decoder, collections, textwrap])
    codes += [ns[name].__code__ for name in ("specimen", "agen", "many")]
    assert any(i.opname == "EXTENDED_ARG" for i in dis.get_instructions(ns["many"]))
    assert len(codes) > 500
    base = bytecode.Decoder.decode
    # (3.11 reads co_code by a loop in C where it is built, else in Python: both are checked)
    readers = [bytecode.DECODER.decode] + ([bytecode.DECODER.decode_python] if sys.version_info[:2] == (3, 11) else [])
    fields = ("opname", "real", "offset", "arg", "argval", "argrepr", "line", "method", "to_bool", "handler",
              "events")
    for code in codes:
        want = base(bytecode.DECODER, code)
        for read in readers:
            got = read(code)
            assert list(want) == list(got), code
            for off, ins in want.items():
                assert [repr(getattr(ins, f)) for f in fields] == [repr(getattr(got[off], f)) for f in fields], \
                    (read.__name__, code, off)


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="the decoding loop in C is CPython 3.11's")
def test_the_3_11_decoder_reads_by_its_loop_in_c():
    """Built with the package (``magpy/bytecode/_decode311.c``): a missing build would leave the
    slower Python loop running unnoticed."""
    from magpy.bytecode import _py311

    assert _py311._c_decode is not None
    table = bytecode.DECODER.decode(test_the_3_11_decoder_reads_by_its_loop_in_c.__code__)
    assert all(type(ins) is bytecode.Instr for ins in table.values())


def test_an_opcode_without_a_rule_breaks_with_its_name(monkeypatch):
    def f(x):
        y = x * 2
        del y                     # DELETE_FAST, its rule taken away below: as an opcode MagPy lacks
        return x + 1

    def g(x):
        y = x * 2
        return (lambda: y)() + 1

    monkeypatch.delitem(bytecode.DECODER._events, "DELETE_FAST")
    monkeypatch.setattr(bytecode.DECODER, "_instr_cache", bytecode.CodeTable())
    ex = magpy.explain(f)(torch.ones(2, 3))
    assert ex.graph_count == 0
    assert any(f"is not supported by MagPy on CPython {VERSION}" in r and "DELETE_FAST" in r
               for r in ex.break_reasons), ex.break_reasons
    compiled_matches_eager(f, (torch.ones(2, 3),), (torch.ones(4),))
    assert not magpy.explain(g)(torch.ones(2)).break_reasons   # (the other opcodes keep their rules)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="`except*` (CHECK_EG_MATCH) is new in 3.11")
def test_except_star_is_an_opcode_without_a_rule():
    src = textwrap.dedent("""
        def f(x):
            try:
                raise ExceptionGroup("g", [ValueError(1)])
            except* ValueError:
                pass
            return x + 1
    """)
    scope: dict = {}
    exec(compile(src, "<except-star>", "exec"), scope)
    ex = magpy.explain(scope["f"])(torch.ones(2))
    assert any("CHECK_EG_MATCH" in r for r in ex.break_reasons), ex.break_reasons
    compiled_matches_eager(scope["f"], (torch.ones(2),), (torch.ones(3),))


def test_del_of_a_cell_variable():
    def f(x):
        y = x * 2

        def g():
            return y   # noqa: F821 - (the cell `del y` empties below)

        out = g()
        del y                     # DELETE_DEREF: the cell emptied
        try:
            g()
        except NameError:
            out = out + 1
        return out

    ex = magpy.explain(f)(torch.ones(2, 3))
    assert ex.graph_count == 1 and not ex.break_reasons, ex.break_reasons
    compiled_matches_eager(f, (torch.ones(2, 3),), (torch.ones(4),))


def test_match_on_a_shape():
    def f(x):
        match x.shape:            # MATCH_SEQUENCE (the type), GET_LEN (len of a guarded shape)
            case (a, _):
                return x * a
        return x

    ex = magpy.explain(f)(torch.ones(2, 3))
    assert ex.graph_count == 1 and not ex.break_reasons, ex.break_reasons
    compiled_matches_eager(f, (torch.ones(2, 3),), (torch.ones(4),), (torch.ones(5, 1),))


class Base(nn.Module):
    k = 2.0

    def scale(self, x):
        return x * 2


class Child(Base):
    def forward(self, x):
        return super().scale(x) + super().k     # LOAD_SUPER_ATTR on 3.12+, super() before


def test_super_attributes_are_guarded_through_the_mro():
    m = Child()
    x = torch.randn(3)
    st = compiled_matches_eager(m, (x,), (x,))
    assert st.graph_count == 1 and st.guard_hits == 1
    cm = magpy.compile(m, backend="eager")
    old = Base.scale
    try:
        Base.scale = lambda self, x: x * 3
        Base.k = 5.0
        assert same(cm(x), m(x))
    finally:
        Base.scale, Base.k = old, 2.0


def test_a_parameter_reused_as_a_comprehension_variable_keeps_its_guard():
    def f(x, n):
        ys = [n * 2 for n in range(3)]     # 3.12+ inlines this and puts `n` back afterwards
        return x * n + len(ys)

    x = torch.randn(3)
    compiled_matches_eager(f, (x, 2), (x, 5), (x, 2))


def test_slices_with_bounds_from_arguments():
    def f(x, a, b):
        y = x.clone()
        y[a:b] = 0                           # STORE_SLICE on 3.12+
        return x[a:b] * 2 + y[a:b].sum()     # BINARY_SLICE on 3.12+

    x = torch.randn(6)
    compiled_matches_eager(f, (x, 1, 3), (x, 0, 2), (x, 1, 3))


def helper(t, *, scale=1.0, shift=0.0):
    return t * scale + shift


def test_keyword_and_star_calls():
    def f(x, kw):
        a = F.softmax(x, dim=-1)                        # KW_NAMES / CALL_KW / CALL_FUNCTION_KW
        b = torch.cat(*[[x, a]], dim=0)                 # CALL_FUNCTION_EX with keywords
        c = helper(*(b,), **kw)
        return x.add(a, alpha=2.0), c

    x = torch.randn(2, 3)
    compiled_matches_eager(f, (x, {"scale": 2.0}), (x, {"scale": 3.0, "shift": 1.0}))


def test_a_tensor_comparison_as_a_condition_is_assumed():
    def f(x):
        if x.sum() > 0 and x.mean() < 10:    # 3.13: COMPARE_OP makes the bool itself
            return x * 2
        return x - 1

    ex = magpy.explain(f)(torch.ones(3))
    assert not ex.dynamic and ex.graph_count == 1 and len(ex.assumptions) == 2
    assert "the truth of `gt`" in ex.assumptions[0] and "is True" in ex.assumptions[0]
    compiled_matches_eager(f, (torch.ones(3),), (-torch.ones(3),), (torch.full((3,), 20.0),))


def _make_closure(k):
    def g(t):
        return t * k
    return g


def _make_plain():
    def h(t, k=1.0):
        return t * k
    return h


def test_the_function_of_a_frame_entered_from_c():
    # map() calls these from C: no instruction of a monitored frame names the function.
    closures = [_make_closure(1.0), _make_closure(2.0)]
    plains = [_make_plain(), _make_plain()]
    seen = []

    class Hooks:
        def enter_frame(self, frame):
            if frame.f_code in (closures[0].__code__, plains[0].__code__):
                seen.append(capture.backend().frame_function(frame))
            return False

        def instruction(self, frame, offset, stack):
            pass

        def leave_frame(self, frame, value):
            pass

        def exception(self, frame, exc):
            pass

    capture.start(Hooks())
    try:
        list(map(lambda fn: fn(1.0), closures + plains))
    finally:
        capture.stop()
    assert seen[:2] == closures                      # told apart by their closure cells
    # same code, no closure: 3.10 cannot tell them apart and says so (never the wrong one)
    assert seen[2:] == plains or (sys.version_info < (3, 11) and seen[2:] == [None, None])


def test_defaults_of_a_function_called_from_c_are_guarded():
    h1, h2 = _make_plain(), _make_plain()
    h2.__defaults__ = (5.0,)

    def f(x):
        return torch.stack(list(map(h2, [x, x])))

    x = torch.randn(3)
    cm = magpy.compile(f, backend="eager")
    assert same(cm(x), f(x))
    h2.__defaults__ = (7.0,)
    assert same(cm(x), f(x))
    if sys.version_info < (3, 11):
        reasons = magpy.stats(cm).break_reasons
        assert reasons and all("cannot tell which function object runs `h`" in r for r in reasons), reasons
    assert h1.__defaults__ == (1.0,)


def test_a_bound_method_of_a_native_function_is_classified_by_its_function():
    # np.random.randint is a bound method around a compiled function: 3.11's PRECALL hands the
    # call rules the function and `self`, 3.10 and 3.12+ the bound method. Either way it is a
    # draw of numpy's generator that the mock repeats (magpy.redraw), never a Python method
    # that runs monitored.
    import numpy as np

    def f(x):
        top = int(np.random.randint(0, 3))
        return x[top:top + 2]

    ex = magpy.explain(f)(torch.randn(6))
    assert not ex.dynamic and "draws again: draw 0: numpy.randint(0, 3)" in ex.guards, ex.break_reasons
    np.random.seed(0)
    got = [magpy.compile(f, backend="eager")(torch.arange(6.0)) for _ in range(6)]
    np.random.seed(0)
    want = [f(torch.arange(6.0)) for _ in range(6)]
    assert all(same(a, b) for a, b in zip(got, want))


def test_is_none_on_an_argument_does_not_pin_the_object():
    # 3.10 compiles `kernel is None` as IS_OP, 3.11+ as a jump: neither needs the list's identity.
    def f(x, kernel=None):
        k = (2, 2) if kernel is None else tuple(kernel)
        return F.max_pool2d(x, k)

    cm = magpy.compile(f, backend="eager")
    for kernel in ([3, 2], [3, 2], [3, 2], None, [2, 3]):
        x = torch.rand(1, 6, 6)
        assert same(cm(x, kernel=kernel), f(x, kernel=kernel))
    st = magpy.stats(cm)
    assert st.monitor_runs == 3 and st.guard_hits == 2, st


# -- lookup hooks that only read (magpy.bytecode.flow.only_reads) ------------------------------------

_LOG: list = []


class _RemapsBySuper:
    attribute_map = {"hidden": "hidden_size"}

    def __getattribute__(self, key):
        if key != "attribute_map" and key in super().__getattribute__("attribute_map"):
            key = super().__getattribute__("attribute_map")[key]
        return super().__getattribute__(key)


class _RemapsByClass:
    attribute_map = {"hidden": "hidden_size"}

    def __getattribute__(self, key):
        if key != "attribute_map" and key in type(self).attribute_map:
            key = type(self).attribute_map[key]
        return object.__getattribute__(self, key)


class _RemapsByGet:
    def __getattribute__(self, key):
        return object.__getattribute__(self, object.__getattribute__(self, "names").get(key, key))


class _RemapsInAConditionalArgument(type):
    def __getattribute__(cls, key):
        return super().__getattribute__("value" if key == "alias" else key)   # (3.10: two CALL_METHODs)


class _RemapsOrDefaults:
    def __getattribute__(self, key):
        try:
            return object.__getattribute__(self, key)
        except AttributeError:
            return None


class _LogsWhenMissing:
    def __getattribute__(self, key):
        try:
            return object.__getattribute__(self, key)
        except AttributeError:
            log = object.__getattribute__(self, "log")
            log(key)
            raise


class _Logs:
    def __getattribute__(self, key):
        _LOG.append(key)
        return super().__getattribute__(key)


class _Counts:
    n = 0

    def __getattribute__(self, key):
        type(self).n += 1
        return object.__getattribute__(self, key)


class _LoadsOnce:
    def __getattribute__(self, key):
        if object.__getattribute__(self, "_obj") is None:
            object.__setattr__(self, "_obj", object())
        return getattr(object.__getattribute__(self, "_obj"), key)


class _CallsWhatItRead:
    def __getattribute__(self, key):
        log = object.__getattribute__(self, "log")
        log(key)
        return object.__getattribute__(self, key)


class _Warns:
    def __getattribute__(self, key):
        if key == "old":
            import warnings
            warnings.warn("old is deprecated", stacklevel=2)
        return object.__getattribute__(self, key)


@pytest.mark.parametrize("cls", [_RemapsBySuper, _RemapsByClass, _RemapsByGet, _RemapsInAConditionalArgument,
                                 _RemapsOrDefaults])
def test_a_lookup_hook_that_remaps_names_only_reads(cls):
    from magpy.bytecode.flow import only_reads

    assert only_reads(cls.__getattribute__.__code__)


@pytest.mark.parametrize("cls", [_Logs, _Counts, _LoadsOnce, _CallsWhatItRead, _Warns, _LogsWhenMissing])
def test_a_lookup_hook_with_an_effect_of_its_own_does_more_than_read(cls):
    """A log, a counter, a proxy loading its target, a call of what a plain load gave, a warning:
    each is an effect per lookup (the call that meets such an object runs eagerly)."""
    from magpy.bytecode.flow import only_reads

    assert not only_reads(cls.__getattribute__.__code__)
