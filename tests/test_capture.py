"""Execution-state capture (magpy/capture) on every installed CPython 3.10-3.13.

The monitor run trusts two things from the capture backend: the value stack handed to
``hooks.instruction`` before an instruction is exactly what that instruction consumes,
and the stack at the next event of the same frame holds what it produced. This file
runs a set of small user programs (arithmetic, calls with NULL slots, method calls,
loops, comprehensions, closures, try/except, with, generators, f-strings, unpacking,
``*args/**kwargs`` calls, recursion, a thread running the same code) under the capture
and checks, online at every event, what each instruction really did:

* ``LOAD_CONST c`` left ``c`` on top and kept the rest of the stack (by identity);
* every binary/unary/compare op's result equals the op applied to the inputs seen;
* every call consumed the callable and arguments seen (recomputed for pure builtins,
  the callee's own return value for traced Python callees), NULL slots where expected;
* returns, yields, stores, builds, unpacks, subscripts, f-string formatting, ``COPY``
  and ``SWAP``, exception-handler entry, ...;
* on 3.11 the static stack depth (``capture._stackdepth``) equals the real ``stacktop``
  at every event; on 3.12/3.13 the programs are re-run with one source line per
  instruction, so that ``LINE`` monitoring events (which do save ``stacktop``) give the
  true stack before every instruction, and the capture's stack must match it slot by slot.

The file is also its own worker: ``python tests/test_capture.py`` runs all of it in the
current interpreter and prints a JSON report; the pytest functions at the bottom run it
under each pyenv interpreter and skip only an interpreter that is not installed.
"""
from __future__ import annotations

import dis
import glob
import json
import operator
import os
import subprocess
import sys
import threading
import time
from types import CodeType, FunctionType

MAGPY_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "magpy")
VERSION = sys.version_info[:2]

# ======================================================================================
# User programs. Each is called with fixed arguments; results are compared with a plain
# run without capture. Keep them deterministic.
# ======================================================================================


def arith(a, b):
    c = (a + b) * (a - b) // 3 + a ** 2 % 7 - (-a)
    d = (a << 2) | (b >> 1) ^ (a & b)
    e = a / b + 1.5 * b - ~a
    f = (a * 0.5) ** 2 - b / 4.0
    c += d
    c *= 2
    s = "x" * 3 + str(c)
    return c, d, e, f, s, not a, a < b, a == b, a is b, a in (1, 2, b), a not in [b]


def calls_with_null(xs):
    n = len(xs)
    m = max(xs) + min(xs) + abs(-n)
    t = sum([abs(v) for v in xs])
    r = divmod(m, 3)
    return sorted(xs, reverse=True), n, m, t, r, round(3.14159, 2), int("12") + float("1.5")


class Acc:
    """A small object with attribute state and chained methods."""

    scale = 3

    def __init__(self, start):
        self.total = start

    def add(self, v):
        self.total += v * self.scale
        return self

    @property
    def double(self):
        return self.total * 2

    @staticmethod
    def twice(v):
        return v + v


def method_calls(n):
    a = Acc(1)
    for i in range(n):
        a.add(i).add(1)
    words = "a, bb ,ccc".split(",")
    joined = "-".join(w.strip().upper() for w in words)
    d = {"k": 1}
    d.update(z=2)
    return a.total, a.double, Acc.twice(4), a.twice(5), joined, d.get("z"), d.get("q", 7)


def loops(n):
    total = 0
    i = 0
    while i < n:
        i += 1
        if i % 3 == 0:
            continue
        for j in range(i):
            if j > 4:
                break
            total += i * j
    else:
        total -= 1
    k = n
    while True:
        k -= 2
        if k < 0:
            break
    return total, k


def comprehensions(xs):
    sq = [x * x for x in xs if x % 2]
    dct = {x: x + 1 for x in xs}
    st = {x % 3 for x in xs}
    gen = list(x - 1 for x in xs)
    nested = [[y * x for y in range(x)] for x in xs[:3]]
    shadow = 100
    shadowed = [shadow for shadow in xs]          # comprehension variable shadows a local
    funcs = [lambda q, x=x: q + x for x in xs[:2]]  # closures created inside
    cell = [(lambda: z)() for z in xs[:2]]        # comprehension variable is a cell
    return sq, dct, st, gen, nested, shadow, shadowed, [f(10) for f in funcs], cell


def closures(n):
    counter = 0
    base = n

    def bump(k):
        nonlocal counter
        counter += k
        return counter + base

    g = lambda q: bump(q) * 2  # noqa: E731
    out = [g(i) for i in range(3)]
    return out, counter


def _raiser(kind):
    if kind == 1:
        raise ValueError("bad")
    if kind == 2:
        return {}["missing"]
    return 1 / 0


def try_except(n):
    log = []
    for kind in (1, 2, 3):
        try:
            _raiser(kind)
        except ValueError as e:
            log.append(str(e))
        except KeyError:
            log.append("key")
        except Exception as e:  # noqa: BLE001
            log.append(type(e).__name__)
        else:
            log.append("none")
        finally:
            log.append(kind)
    try:
        try:
            raise TypeError(n)
        except TypeError:
            raise RuntimeError("wrapped") from None
    except RuntimeError as e:
        log.append(e.args[0])
    try:
        log.append(n // 0)
    except ZeroDivisionError:
        log.append("zero")
    return log


class Managed:
    """A context manager that records and optionally suppresses exceptions."""

    def __init__(self, log, suppress=False):
        self.log, self.suppress = log, suppress

    def __enter__(self):
        self.log.append("enter")
        return len(self.log)

    def __exit__(self, et, ev, tb):
        self.log.append(("exit", et.__name__ if et else None))
        return self.suppress


def with_blocks(n):
    log = []
    with Managed(log) as v:
        log.append(v + n)
    with Managed(log, suppress=True):
        raise KeyError("suppressed")
    with Managed(log) as a, Managed(log) as b:
        log.append(a * b)
    try:
        with Managed(log):
            raise ValueError("escapes")
    except ValueError:
        log.append("caught")
    return log


def _gen(n):
    total = 0
    for i in range(n):
        got = yield i * 10
        if got is not None:
            total += got
    return total


def _delegate(n):
    result = yield from _gen(n)
    yield result


def generators(n):
    g = _gen(n)
    first = next(g)
    second = g.send(5)
    rest = list(g)
    d = list(_delegate(3))
    g2 = _gen(5)
    next(g2)
    try:
        g2.throw(KeyError("thrown"))
    except KeyError as e:
        thrown = e.args[0]
    g3 = _gen(5)
    next(g3)
    g3.close()
    return first, second, rest, d, thrown, sum(x for x in range(n))


def fstrings(x, name):
    a = f"{x}"
    b = f"{x!r:>8}|{name!s}|{x:.2f}|{x + 1:{'>'}{6}}"
    c = f"{name=}" if name else ""
    return a, b, c, "%s-%d" % (name, x)  # noqa: UP031 - BINARY_OP % on a str is a case


def unpacking(t):
    a, b, *rest = t
    (c, d), e = (a, b), rest
    first, *_, last = range(5)
    merged = [*t, *rest]
    m = {**{"a": 1}, **{"b": 2}, "c": 3}
    x = y = a
    a, b = b, a
    return a, b, c, d, e, first, last, merged, m, x, y, (*t,)


def _kw(a, b=2, *args, c=3, **kw):
    return a, b, args, c, sorted(kw.items())


def star_calls(*args, **kwargs):
    r1 = _kw(*args, **kwargs)
    r2 = _kw(1, *args, c=9, **kwargs)
    r3 = _kw(a=4, b=5, z=6)
    r4 = _kw(*args)
    r5 = max(*args)
    r6 = dict(**kwargs, w=1)
    return r1, r2, r3, r4, r5, r6


def _fib(n):
    return n if n < 2 else _fib(n - 1) + _fib(n - 2)


def recursion(n):
    return _fib(n), [_fib(i) for i in range(4)]


def containers(n):
    lst = list(range(n))
    lst[1] = 99
    lst[2:4] = [7, 7]
    d = {}
    d["a"] = lst[0]
    d["b"] = lst[-1]
    d["a"] += 5
    del lst[0]
    sl = lst[1:3], lst[::2], "hello"[1:-1]
    o = Acc(2)
    o.total += 4
    o.extra = [1]
    o.extra[0] -= 3
    s = {1, 2}
    s |= {3}
    return lst, d, sl, o.total, o.extra, s, n if n > 2 else -n, n > 2 and n or 0, n < 0 or n


def matching(v):
    match v:
        case [a, b]:
            return ("pair", a, b)
        case {"k": x, **rest}:
            return ("map", x, rest)
        case Acc(total=t) if t > 1:
            return ("acc", t)
        case int() | float() as num:
            return ("num", num)
        case _:
            return ("other",)


def matches(_):
    return [matching(v) for v in ([1, 2], {"k": 3, "z": 4}, Acc(5), 2.5, "s")]


def _many_constants():
    """A function whose bytecode needs EXTENDED_ARG (more than 256 constants/names)."""
    body = ["    t = 0"] + [f"    v{i} = {i}.5 + t" for i in range(300)] + ["    t = v0 + v299", "    return t"]
    ns: dict = {}
    exec("def many():\n" + "\n".join(body), ns)  # noqa: S102 - builds a test program
    return ns["many"]


many = _many_constants()


def _twin_functions():
    """Two functions whose code objects are equal (``==``) but distinct objects."""
    src = "def twin(a):\n    return [a * k for k in range(3)]\n"
    ns1: dict = {}
    ns2: dict = {}
    exec(compile(src, "<twin>", "exec"), ns1)  # noqa: S102 - builds a test program
    exec(compile(src, "<twin>", "exec"), ns2)  # noqa: S102
    assert ns1["twin"].__code__ == ns2["twin"].__code__ and ns1["twin"].__code__ is not ns2["twin"].__code__
    return ns1["twin"], ns2["twin"]


twin1, twin2 = _twin_functions()


def twins(a):
    return twin1(a), twin2(a + 1), twin1(a + 2)


def extended_arg(_):
    return many()


def deep_expression(x):
    return max(min(abs(x - 10), len([1, 2, (3, 4), {5: 6}])), int(str(x)[0]), *[x, x + 1], key=None)


async def _co_inner(v):
    return v * 2


async def _co_outer(n):
    total = 0
    for i in range(n):
        total += await _co_inner(i)
    return total


def coroutines(n):
    co = _co_outer(n)
    try:
        co.send(None)
    except StopIteration as stop:
        return stop.value
    raise AssertionError("coroutine did not finish")


def threaded(n):
    """Runs ``arith`` on another thread while this one runs it: only ours is captured."""
    out = []
    th = threading.Thread(target=lambda: out.append([arith(i, 3) for i in range(200)]))
    th.start()
    mine = [arith(i, 2) for i in range(20)]
    th.join()
    return mine[-1], len(out[0])


PROGRAMS = [
    (arith, (7, 3)), (arith, (-4, 9)), (calls_with_null, ([3, -1, 4, 1, -5],)), (method_calls, (4,)),
    (loops, (9,)), (comprehensions, ([1, 2, 3, 4, 5],)), (closures, (10,)), (try_except, (4,)),
    (with_blocks, (2,)), (generators, (4,)), (fstrings, (3.25, "nm")), (unpacking, ((1, 2, 3, 4),)),
    (star_calls, ((1, 2), {"k": 3})), (recursion, (6,)), (containers, (6,)), (matches, (0,)),
    (extended_arg, (0,)), (twins, (2,)), (deep_expression, (14,)), (coroutines, (4,)), (threaded, (0,)),
]


def _call(fn, args):
    if fn is star_calls:
        return fn(*args[0], **args[1])
    return fn(*args)


# ======================================================================================
# Worker: the checks, run inside the interpreter under test.
# ======================================================================================

def _code_tree(code: CodeType):
    yield code
    for c in code.co_consts:
        if isinstance(c, CodeType):
            yield from _code_tree(c)


def _program_functions():
    """Every function object whose code belongs to the test programs (for re-coding)."""
    fns = [fn for fn, _ in PROGRAMS] + [_raiser, _gen, _delegate, _kw, _fib, _co_inner, _co_outer, matching, many,
                                        twin1, twin2]
    for cls in (Acc, Managed):
        for v in vars(cls).values():
            fn = getattr(v, "fget", None) or getattr(v, "__func__", None) or v
            if isinstance(fn, FunctionType):
                fns.append(fn)
    return list(dict.fromkeys(fns))


def _svarint(v: int) -> bytes:
    u = (v << 1) if v >= 0 else ((-v) << 1) | 1
    out = bytearray()
    while u >= 64:
        out.append(64 | (u & 63))
        u >>= 6
    out.append(u)
    return bytes(out)


def _relined(code: CodeType) -> tuple[CodeType, dict]:
    """``code`` with one source line per instruction (location table of 3.11+).

    Returns the new code and a map line -> instruction offset for it and nested codes.
    Each instruction (with its inline caches) gets one ``NO_COLUMNS`` entry (code 13)
    whose line delta is 1; caches beyond 8 code units go into extra entries of delta 0.
    """
    lines: dict = {}
    consts = []
    for c in code.co_consts:
        if isinstance(c, CodeType):
            new, sub = _relined(c)
            consts.append(new)
            lines.update(sub)
        else:
            consts.append(c)
    instrs = list(dis.get_instructions(code))
    table = bytearray()
    mine = {}
    for k, ins in enumerate(instrs):
        end = instrs[k + 1].offset if k + 1 < len(instrs) else len(code.co_code)
        units = (end - ins.offset) // 2
        delta = 1
        while units:
            n = min(units, 8)
            table.append(0x80 | (13 << 3) | (n - 1))
            table += _svarint(delta)
            delta = 0
            units -= n
        mine[code.co_firstlineno + 1 + k] = ins.offset
    new = code.replace(co_linetable=bytes(table), co_consts=tuple(consts))
    lines[new] = mine
    return new, lines


_BINOPS = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "//": operator.floordiv,
    "%": operator.mod, "**": operator.pow, "<<": operator.lshift, ">>": operator.rshift, "&": operator.and_,
    "|": operator.or_, "^": operator.xor, "@": operator.matmul,
}
_BINOPS_310 = {
    "BINARY_ADD": "+", "BINARY_SUBTRACT": "-", "BINARY_MULTIPLY": "*", "BINARY_TRUE_DIVIDE": "/",
    "BINARY_FLOOR_DIVIDE": "//", "BINARY_MODULO": "%", "BINARY_POWER": "**", "BINARY_LSHIFT": "<<",
    "BINARY_RSHIFT": ">>", "BINARY_AND": "&", "BINARY_OR": "|", "BINARY_XOR": "^",
}
_BINOPS_310.update({"INPLACE" + k[6:]: v + "=" for k, v in _BINOPS_310.items()})
_CMP = {"<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne, ">": operator.gt,
        ">=": operator.ge}
_PURE = {len, abs, max, min, sum, divmod, round, int, float, str, repr, sorted, tuple, bool, isinstance,
         type, _fib, _kw, Acc.twice, _raiser}
_IMMUTABLE = (int, float, str, bytes, tuple, bool, type(None), frozenset, range)


class IdentitySet:
    """Membership by identity (code objects compare equal by value)."""

    def __init__(self, items):
        self.ids = {id(x): x for x in items}

    def __contains__(self, x):
        return id(x) in self.ids


def _cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:    # an empty cell
        return _ABSENT


_ABSENT = object()


class Checker:
    """Capture hooks that check each instruction against the stack at the next event.

    ``pending[frame]`` holds the last instruction event of a running frame; when the
    frame's next event arrives (or it returns), the pair is checked. Checks run online
    because values on the stack may be mutated later. Failures and per-kind check
    counts are collected, never raised, so user code runs unchanged.
    """

    def __init__(self, capture, codes, depth_of=None, truth=None):
        self.capture = capture
        self.NULL = capture.NULL
        self.codes = codes
        self.depth_of = depth_of          # code -> {offset: static depth} (3.11+)
        self.truth = truth                # frame -> (offset, true stack) from LINE events
        self.thread = threading.get_ident()
        self.pending: dict = {}
        self.running: set = set()
        self.kwnames: dict = {}
        self.last_exc: dict = {}
        self.callee_return: dict = {}
        self.counts: dict = {}
        self.failures: list = []
        self.events = 0
        self.ops_seen: set = set()
        self.codes_with_events: set = set()
        self.instrs: dict = {}

    # -- bookkeeping --------------------------------------------------------------------
    def ok(self, kind, cond, *detail):
        self.counts[kind] = self.counts.get(kind, 0) + 1
        if not cond and len(self.failures) < 60:
            self.failures.append(f"{kind}: " + " ".join(repr(d)[:300] for d in detail))

    def instr(self, code, offset):
        table = self.instrs.get(id(code))    # by identity: equal codes may hold distinct constants
        if table is None:
            table = self.instrs[id(code)] = {i.offset: i for i in dis.get_instructions(code)}
        return table[offset]

    def enter_frame(self, frame):
        accept = frame.f_code in self.codes and not (frame.f_code is _fib.__code__ and frame.f_locals["n"] == 3)
        if accept:
            self.ok("enter on own thread", threading.get_ident() == self.thread, frame.f_code.co_name)
            if VERSION >= (3, 11):
                fn = self.capture.backend().frame_function(frame)
                self.ok("frame_function is the running function", fn.__code__ is frame.f_code, fn)
            self.running.add(frame)
        return accept

    def leave_frame(self, frame, value):
        self.ok("leave of running frame", frame in self.running, frame.f_code.co_name)
        self.running.discard(frame)
        prev = self.pending.pop(frame, None)
        if prev is not None:
            try:
                self.check_leave(frame, prev, value)
            except Exception as e:  # noqa: BLE001
                self.ok("checker crashed", False, repr(e), prev[1])
        if frame.f_back is not None:
            self.callee_return[frame.f_back] = (frame.f_code, value)

    def exception(self, frame, exc):
        self.ok("exception in running frame", frame in self.running)
        self.last_exc[frame] = exc

    def instruction(self, frame, offset, stack):
        self.events += 1
        self.codes_with_events.add(id(frame.f_code))
        self.ok("event of accepted frame", frame in self.running, frame.f_code.co_name, offset)
        self.ok("event on own thread", threading.get_ident() == self.thread)
        again = self.capture.read_stack(frame)
        self.ok("read_stack agrees", len(again) == len(stack) and all(a is b for a, b in zip(again, stack)))
        if self.depth_of is not None:
            depths = self.depth_of(frame.f_code)
            self.ok("static depth", depths.get(offset) == len(stack), frame.f_code.co_name, offset,
                    depths.get(offset), len(stack), stack)
        if self.truth is not None:
            t = self.truth.pop(frame, None)
            self.ok("truth event before instruction", t is not None and t[0] == offset, frame.f_code.co_name,
                    offset, t and t[0])
            if t is not None and t[0] == offset:
                true = t[1]
                self.ok("stack equals true stack", len(true) == len(stack) and all(a is b for a, b in zip(true, stack)),
                        frame.f_code.co_name, offset, self.instr(frame.f_code, offset).opname, stack, true)
        locs = dict(frame.f_locals)
        prev = self.pending.get(frame)
        if prev is not None:
            try:
                self.check_pair(frame, prev, offset, stack, locs)
            except Exception as e:  # noqa: BLE001
                self.ok("checker crashed", False, repr(e), prev[1], prev[2])
        ins = self.instr(frame.f_code, offset)
        self.ops_seen.add(ins.opname)
        if ins.opname == "KW_NAMES":
            self.kwnames[frame] = frame.f_code.co_consts[ins.arg]
        self.last_exc.pop(frame, None)
        self.callee_return.pop(frame, None)
        self.pending[frame] = (ins, offset, stack, locs)

    # -- the checks -------------------------------------------------------------------
    def check_leave(self, frame, prev, value):
        ins, _, before, _ = prev
        if ins.opname in ("RETURN_VALUE", "YIELD_VALUE"):
            self.ok("return/yield value is top", value is before[-1], ins.opname, value, before)
        elif ins.opname == "RETURN_CONST":
            self.ok("return const", value is ins.argval, value, ins.argval)

    def check_pair(self, frame, prev, offset, after, locs):
        NULL = self.NULL
        ins, prev_offset, before, locs0 = prev
        name = ins.opname
        exc = self.last_exc.get(frame)
        if isinstance(exc, StopIteration) and name in ("FOR_ITER", "SEND", "YIELD_FROM"):
            exc = None    # an iterator ended; reported as an exception, handled by the instruction
        if exc is not None:
            # The instruction raised (or a callee did): the next event is a handler.
            if VERSION >= (3, 11):
                self.ok("handler entry has exception on top", after and after[-1] is exc, name, after, exc)
            else:
                self.ok("handler entry has exception type on top", len(after) >= 2 and after[-1] is type(exc)
                        and after[-2] is exc, name, after, exc)
            if name == "RAISE_VARARGS" and ins.arg == 1:
                raised = before[-1]
                self.ok("raised value was on stack", exc is raised or type(exc) is raised, exc, before)
            return
        n = len(before)

        def keeps(k):
            """``after`` keeps the bottom ``k`` values of ``before`` (same objects)."""
            return len(after) >= k and all(after[i] is before[i] for i in range(k))

        def result(pop, push=1):
            self.ok(f"{name} depth", len(after) == n - pop + push, name, before, after)
            self.ok(f"{name} keeps the rest", keeps(n - pop), name, before, after)

        if name == "LOAD_CONST":
            result(0)
            self.ok("LOAD_CONST pushes c", after[-1] is ins.argval, ins.argval, after)
        elif name == "LOAD_FAST" and ins.argval in frame.f_code.co_cellvars + frame.f_code.co_freevars:
            result(0)    # 3.13 lowers LOAD_CLOSURE to LOAD_FAST: the cell itself
            cell = after[-1]
            self.ok("LOAD_FAST of a cell pushes the cell", type(cell).__name__ == "cell"
                    and _cell_value(cell) is locs0.get(ins.argval, _ABSENT), ins.argval, after)
        elif name in ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_DEREF"):
            result(0)
            self.ok(f"{name} pushes the local", after[-1] is locs0[ins.argval], ins.argval, after)
        elif name == "LOAD_FAST_AND_CLEAR":
            result(0)
            if ins.argval in frame.f_code.co_cellvars:    # the slot holds the cell itself
                self.ok("LOAD_FAST_AND_CLEAR pushes a cell", type(after[-1]).__name__ == "cell", after)
            else:
                self.ok("LOAD_FAST_AND_CLEAR pushes local or NULL", after[-1] is locs0.get(ins.argval, NULL),
                        ins.argval, after)
        elif name == "LOAD_FAST_LOAD_FAST":
            a, b = ins.argval
            result(0, 2)
            self.ok("LOAD_FAST_LOAD_FAST", after[-2] is locs0[a] and after[-1] is locs0[b], after)
        elif name == "STORE_FAST" and ins.argval in frame.f_code.co_cellvars:
            result(1, 0)    # restoring a comprehension's cell variable: stores the cell (or NULL)
            self.ok("STORE_FAST restores a cell", before[-1] is NULL or type(before[-1]).__name__ == "cell", before)
        elif name in ("STORE_FAST", "STORE_DEREF"):
            result(1, 0)
            self.ok(f"{name} stores top", locs.get(ins.argval, NULL) is before[-1], ins.argval, before)
        elif name == "STORE_FAST_STORE_FAST":
            a, b = ins.argval
            result(2, 0)
            self.ok("STORE_FAST_STORE_FAST", locs[a] is before[-1] and locs[b] is before[-2], before)
        elif name == "STORE_FAST_LOAD_FAST":
            a, b = ins.argval
            result(1, 1)
            self.ok("STORE_FAST_LOAD_FAST", locs[a] is before[-1] and after[-1] is locs[b], before, after)
        elif name == "LOAD_GLOBAL":
            value = frame.f_globals.get(ins.argval, frame.f_builtins.get(ins.argval))
            if "NULL" in ins.argrepr:
                result(0, 2)
                pair = [NULL, value] if VERSION < (3, 13) else [value, NULL]
                self.ok("LOAD_GLOBAL pushes NULL and value", after[-2] is pair[0] and after[-1] is pair[1],
                        ins.argrepr, after)
            else:
                result(0)
                self.ok("LOAD_GLOBAL pushes value", after[-1] is value, after)
        elif name in ("BINARY_OP", *_BINOPS_310):
            result(2)
            sym = ins.argrepr if name == "BINARY_OP" else _BINOPS_310[name]
            a, b = before[-2], before[-1]
            if sym.endswith("=") and sym not in ("==",):
                if not isinstance(a, _IMMUTABLE):
                    self.ok("in-place op returns the object", after[-1] is a, sym, a)
                    return
                sym = sym[:-1]
            if isinstance(a, _IMMUTABLE) and isinstance(b, _IMMUTABLE) or isinstance(a, list):
                want = _BINOPS[sym](a, b)
                self.ok("binary op result", after[-1] == want and type(after[-1]) is type(want),
                        sym, a, b, after[-1])
        elif name == "COMPARE_OP":
            result(2)
            sym = ins.argrepr
            to_bool = sym.startswith("bool(")
            sym = sym[5:-1] if to_bool else sym
            want = _CMP[sym](before[-2], before[-1])
            self.ok("compare result", after[-1] == (bool(want) if to_bool else want), sym, before[-2:], after[-1])
        elif name in ("IS_OP", "CONTAINS_OP"):
            result(2)
            a, b = before[-2], before[-1]
            want = (a is b) if name == "IS_OP" else (a in b)
            self.ok(f"{name} result", after[-1] is (want != bool(ins.arg)), a, b, after[-1])
        elif name in ("UNARY_NEGATIVE", "UNARY_NOT", "UNARY_INVERT", "TO_BOOL"):
            result(1)
            fn = {"UNARY_NEGATIVE": operator.neg, "UNARY_NOT": operator.not_, "UNARY_INVERT": operator.invert,
                  "TO_BOOL": bool}[name]
            self.ok("unary result", after[-1] == fn(before[-1]), name, before[-1], after[-1])
        elif name in ("POP_TOP",):
            result(1, 0)
        elif name in ("COPY", "DUP_TOP"):
            k = ins.arg if name == "COPY" else 1
            result(0)
            self.ok("COPY pushes a copy", after[-1] is before[-k], k, before, after)
        elif name == "SWAP":
            k = ins.arg
            self.ok("SWAP", len(after) == n and after[-1] is before[-k] and after[-k] is before[-1]
                    and all(after[i] is before[i] for i in range(n) if i not in (n - 1, n - k)), before, after)
        elif name in ("ROT_TWO", "ROT_THREE"):
            k = 2 if name == "ROT_TWO" else 3
            self.ok(name, keeps(n - k) and after[n - k:] == [before[-1], *before[n - k:-1]], before, after)
        elif name in ("BUILD_LIST", "BUILD_TUPLE", "BUILD_SET"):
            k = ins.arg
            result(k)
            kind = {"BUILD_LIST": list, "BUILD_TUPLE": tuple, "BUILD_SET": set}[name]
            items = before[n - k:]
            built = after[-1]
            self.ok(f"{name} builds from the values seen", type(built) is kind and (
                list(built) == items and all(x is y for x, y in zip(built, items)) if kind is not set
                else built == set(items)), items, built)
        elif name == "BUILD_MAP":
            k = ins.arg
            result(2 * k)
            items = before[n - 2 * k:]
            self.ok("BUILD_MAP", after[-1] == dict(zip(items[::2], items[1::2])), items, after[-1])
        elif name == "BUILD_CONST_KEY_MAP":
            k = ins.arg
            result(k + 1)
            self.ok("BUILD_CONST_KEY_MAP", after[-1] == dict(zip(before[-1], before[n - 1 - k:n - 1])), after[-1])
        elif name == "BUILD_STRING":
            k = ins.arg
            result(k)
            self.ok("BUILD_STRING joins the pieces", after[-1] == "".join(before[n - k:]), before, after[-1])
        elif name == "LIST_APPEND":
            k = ins.arg
            result(1, 0)
            self.ok("LIST_APPEND appends top to the list", after[-k][-1] is before[-1], k, before)
        elif name == "UNPACK_SEQUENCE":
            k = ins.arg
            result(1, k)
            seq = list(before[-1])
            self.ok("UNPACK_SEQUENCE", all(x is y for x, y in zip(after[n - 1:], reversed(seq))) and len(seq) == k,
                    seq, after)
        elif name == "BINARY_SUBSCR":
            result(2)
            c, k = before[-2], before[-1]
            if isinstance(c, (list, tuple, dict, str, range)):
                self.ok("BINARY_SUBSCR", after[-1] == c[k], c, k, after[-1])
        elif name == "BINARY_SLICE":
            result(3)
            c, a, b = before[-3:]
            self.ok("BINARY_SLICE", after[-1] == c[a:b], c, a, b, after[-1])
        elif name == "STORE_SUBSCR":
            result(3, 0)
            v, c, k = before[-3:]
            stored = c[k] == list(v) if isinstance(k, slice) else c[k] is v
            self.ok("STORE_SUBSCR stores the value", stored, v, c, k)
        elif name == "STORE_ATTR":
            result(2, 0)
            v, o = before[-2:]
            self.ok("STORE_ATTR stores the value", getattr(o, ins.argval) is v, ins.argval)
        elif name in ("LOAD_ATTR", "LOAD_METHOD"):
            self.check_load_attr(ins, before, after, keeps)
        elif name in ("FORMAT_VALUE", "FORMAT_SIMPLE", "FORMAT_WITH_SPEC", "CONVERT_VALUE"):
            self.check_format(ins, before, after, result)
        elif name == "GET_ITER":
            result(1)
            self.ok("GET_ITER pushes an iterator", hasattr(after[-1], "__next__"), after[-1])
        elif name == "FOR_ITER":
            if offset == self.next_offset(frame.f_code, prev_offset):
                result(0, 1)
                self.ok("FOR_ITER keeps the iterator under the item", after[-2] is before[-1], before, after)
                self.count("FOR_ITER next")
            else:
                self.ok("FOR_ITER exhausted pops the iterator", len(after) == n - 1 and keeps(n - 1), before, after)
        elif name in ("CALL", "CALL_KW", "CALL_FUNCTION", "CALL_FUNCTION_KW", "CALL_METHOD", "CALL_FUNCTION_EX"):
            self.check_call(frame, ins, before, after, result)
        elif name in ("BEFORE_WITH", "SETUP_WITH"):
            cm = before[-1]
            if isinstance(cm, Managed):
                self.ok("BEFORE_WITH pushes __exit__ and __enter__()", after[-1] == len(cm.log)
                        and getattr(after[-2], "__self__", None) is cm, after)
        elif name == "RESUME" or name == "NOP":
            self.ok(f"{name} leaves the stack", len(after) == n and keeps(n), before, after)

    def count(self, kind):
        self.counts[kind] = self.counts.get(kind, 0) + 1

    def next_offset(self, code, offset):
        offsets = sorted(self.instrs[id(code)])
        i = offsets.index(offset)
        return offsets[i + 1] if i + 1 < len(offsets) else None

    def check_load_attr(self, ins, before, after, keeps):
        NULL = self.NULL
        n = len(before)
        obj = before[-1]
        method_form = ins.opname == "LOAD_METHOD" or (ins.opname == "LOAD_ATTR" and VERSION >= (3, 12) and ins.arg & 1)
        plain = getattr(obj, ins.argval)
        if not method_form:
            self.ok("LOAD_ATTR depth", len(after) == n and keeps(n - 1), before, after)
            self.ok("LOAD_ATTR pushes the attribute", after[-1] == plain, ins.argval, after[-1], plain)
            return
        self.ok("method load depth", len(after) == n + 1 and keeps(n - 1), before, after)
        lo, hi = after[-2], after[-1]
        if VERSION >= (3, 13):
            unbound = hi is obj and getattr(lo, "__get__", None) is not None
            attr = hi is NULL and lo == plain
        else:
            unbound = hi is obj and lo is not NULL
            attr = lo is NULL and hi == plain
        if unbound:
            self.ok("method load pushes function and self", lo.__get__(obj) == plain, lo, plain)
        else:
            self.ok("method load pushes NULL and attribute", attr, lo, hi, plain)

    def check_format(self, ins, before, after, result):
        name = ins.opname
        if name == "FORMAT_VALUE":
            conv = {0: lambda v: v, 1: str, 2: repr, 3: ascii}[ins.arg & 3]
            has_spec = bool(ins.arg & 4)
            value = before[-2] if has_spec else before[-1]
            spec = before[-1] if has_spec else ""
            result(2 if has_spec else 1)
            self.ok("FORMAT_VALUE", after[-1] == format(conv(value), spec), value, spec, after[-1])
        elif name == "FORMAT_SIMPLE":
            result(1)
            self.ok("FORMAT_SIMPLE", after[-1] == format(before[-1]), before[-1], after[-1])
        elif name == "FORMAT_WITH_SPEC":
            result(2)
            self.ok("FORMAT_WITH_SPEC", after[-1] == format(before[-2], before[-1]), before[-2:], after[-1])
        else:
            result(1)
            conv = {1: str, 2: repr, 3: ascii}[ins.arg]
            self.ok("CONVERT_VALUE", after[-1] == conv(before[-1]), before[-1], after[-1])

    def check_call(self, frame, ins, before, after, result):
        """Decode the callable and arguments the call consumed, per version; check the result."""
        NULL = self.NULL
        name, n, arg = ins.opname, len(before), ins.arg
        kwnames = ()
        if name == "CALL_FUNCTION_EX":
            has_kw = arg & 1
            kwargs = before[-1] if has_kw else {}
            callargs = before[-1 - has_kw]
            if VERSION >= (3, 13):
                fn, null = before[-3 - has_kw], before[-2 - has_kw]
                pop = 3 + has_kw
            elif VERSION >= (3, 11):
                null, fn = before[-3 - has_kw], before[-2 - has_kw]
                pop = 3 + has_kw
            else:
                fn, null, pop = before[-2 - has_kw], NULL, 2 + has_kw
            self.ok("CALL_FUNCTION_EX has a NULL slot", null is NULL, before)
            args = list(callargs)
            kw = dict(kwargs)
        else:
            if name == "CALL_KW":
                kwnames = before[-1]
                slots = before[n - 3 - arg:n - 1]
                pop = arg + 3
            elif name == "CALL_FUNCTION_KW":
                kwnames = before[-1]
                slots = [NULL] + before[n - 2 - arg:n - 1]
                pop = arg + 2
            elif name == "CALL_FUNCTION":
                slots = [NULL] + before[n - 1 - arg:]
                pop = arg + 1
            else:
                kwnames = self.kwnames.pop(frame, ()) if name == "CALL" else ()
                slots = before[n - 2 - arg:]
                pop = arg + 2
            if VERSION >= (3, 13) and name != "CALL_FUNCTION_KW":
                fn, self_or_null, rest = slots[0], slots[1], list(slots[2:])
                args = rest if self_or_null is NULL else [self_or_null, *rest]
            else:
                lo, hi, rest = slots[0], slots[1], list(slots[2:])
                fn, args = (hi, rest) if lo is NULL else (lo, [hi, *rest])
            self.ok("callable is an object", fn is not NULL and callable(fn), name, before)
            nkw = len(kwnames)
            kw = dict(zip(kwnames, args[len(args) - nkw:])) if nkw else {}
            args = args[:len(args) - nkw]
        result(pop)
        callee = self.callee_return.get(frame)
        if isinstance(fn, FunctionType) and fn.__code__ in self.codes and callee is not None \
                and callee[0] is fn.__code__ and not fn.__code__.co_flags & 0x2a0:
            self.ok("call result is the traced callee's return value", after[-1] is callee[1],
                    fn.__name__, callee[1], after[-1])
        elif fn in _PURE and all(isinstance(a, (*_IMMUTABLE, list, dict)) for a in [*args, *kw.values()]):
            want = fn(*args, **kw)
            self.ok("call result equals the function applied to the stack args", after[-1] == want,
                    getattr(fn, "__name__", fn), args, kw, after[-1])


def _truth_reader(capture_backend, null):
    """A LINE-event recorder that reads the real stack (``stacktop`` is saved at LINE events)."""
    import ctypes

    ptr = ctypes.sizeof(ctypes.c_void_p)

    def real_stack(frame):
        iframe = ctypes.c_void_p.from_address(id(frame) + 3 * ptr).value
        top = ctypes.c_int.from_address(iframe + 8 * ptr).value
        base = iframe + 9 * ptr
        out = []
        for i in range(capture_backend.nlocalsplus(frame.f_code), top):
            p = ctypes.c_void_p.from_address(base + i * ptr).value
            out.append(ctypes.cast(p, ctypes.py_object).value if p else null)
        return out

    return real_stack


def run_worker() -> dict:
    """Run every program under the capture, with every check; return a JSON-able report."""
    sys.path.insert(0, MAGPY_DIR)
    import capture

    capture.check_supported()
    backend = capture.backend()
    report = {"version": sys.version.split()[0], "backend": backend.__name__, "passes": []}
    expected = [repr(_call(fn, args)) for fn, args in PROGRAMS]

    depth_of = None
    if VERSION >= (3, 11):
        from capture._stackdepth import stack_depths
        cache: dict = {}

        def depth_of(code):
            d = cache.get(code)
            if d is None:
                d = cache[code] = stack_depths(code)
            return d

    # (3.11: the C driver, where built, delivers the plain pass; the settrace driver runs it again)
    c_driver = getattr(backend, "driver_name", lambda: "python")() == "c"
    report["driver"] = "c" if c_driver else "python"
    passes = ["plain"] + (["one line per instruction"] if VERSION >= (3, 12) else []) + \
        (["python driver"] if c_driver else [])
    for mode in passes:
        fns = _program_functions()
        saved = [(f, f.__code__) for f in fns]
        truth = None
        tool = None
        before = backend.use_driver("python") if mode == "python driver" else None
        if mode == "one line per instruction":
            truth = {}
            real_stack = _truth_reader(backend, capture.NULL)
            lines = {}
            for f in fns:
                new, sub = _relined(f.__code__)
                f.__code__ = new
                lines.update(sub)
            mon = sys.monitoring
            tool = next(t for t in (5, 4, 3, 1, 0) if mon.get_tool(t) is None)
            mon.use_tool_id(tool, "magpy-test-truth")

            def on_line(code, line, truth=truth, lines=lines, real_stack=real_stack):
                frame = sys._getframe(1)
                truth[frame] = (lines[code][line], real_stack(frame))

            mon.register_callback(tool, mon.events.LINE, on_line)
        # By identity: equal code objects (the twins) each need their own events.
        code_objects = list({id(c): c for f in fns for c in _code_tree(f.__code__)}.values())
        if tool is not None:
            for code in code_objects:
                sys.monitoring.set_local_events(tool, code, sys.monitoring.events.LINE)
        codes = IdentitySet(code_objects)
        must_run = [(f.__name__, id(f.__code__)) for f in [fn for fn, _ in PROGRAMS] + [twin1, twin2, _gen, _co_inner]]
        checker = Checker(capture, codes, depth_of, truth)
        got = []
        capture.start(checker)
        try:
            for fn, args in PROGRAMS:
                got.append(repr(_call(fn, args)))
        finally:
            capture.stop()
            if tool is not None:
                for code in code_objects:
                    sys.monitoring.set_local_events(tool, code, 0)
                sys.monitoring.register_callback(tool, sys.monitoring.events.LINE, None)
                sys.monitoring.free_tool_id(tool)
            for f, c in saved:
                f.__code__ = c
            if before is not None:
                backend.use_driver(before)
        for (fn, _), g, e in zip(PROGRAMS, got, expected):
            checker.ok("program result unchanged by capture", g == e, fn.__name__, g, e)
        for fname, code_id in must_run:
            checker.ok("every program delivered events", code_id in checker.codes_with_events, fname)
        checker.ok("no frame left running", not checker.running, [f.f_code.co_name for f in checker.running])
        if VERSION >= (3, 12):
            checker.ok("monitoring tool released", all(sys.monitoring.get_tool(t) is None for t in range(6)),
                       [sys.monitoring.get_tool(t) for t in range(6)])
        report["passes"].append({"mode": mode, "events": checker.events, "checks": checker.counts,
                                 "failures": checker.failures, "ops_seen": sorted(checker.ops_seen)})
    report["after_stop"] = _events_after_stop(capture)
    report["stop_inside_hook"] = _stop_inside_hook(capture)
    if VERSION >= (3, 12):
        report["abort"] = _abort_on_analysis_failure(capture)
    return report


class _Hooks:
    """Hooks accepting every frame of the given code objects, counting instruction events."""

    def __init__(self, *codes, on_event=None):
        self.codes = IdentitySet(codes)
        self.events = 0
        self.on_event = on_event

    def enter_frame(self, frame):
        return frame.f_code in self.codes

    def instruction(self, frame, offset, stack):
        self.events += 1
        if self.on_event is not None:
            self.on_event(self)

    def leave_frame(self, frame, value):
        pass

    def exception(self, frame, exc):
        pass


def _tools_free() -> bool:
    return VERSION < (3, 12) or all(sys.monitoring.get_tool(t) is None for t in range(6))


def _stop_inside_hook(capture) -> list:
    """The monitor stops the capture from inside ``hooks.instruction`` when it gives up."""
    problems = []
    hooks = _Hooks(loops.__code__, on_event=lambda h: h.events == 10 and capture.stop())
    capture.start(hooks)
    result = loops(9)
    capture.stop()
    if result != loops(9):
        problems.append("the program result changed")
    if hooks.events != 10:
        problems.append(f"{hooks.events} events, expected exactly 10")
    if not _tools_free():
        problems.append("monitoring tool not released")
    return problems


def _abort_on_analysis_failure(capture) -> list:
    """A stack-depth analysis failure stops the capture; the program runs on unchanged."""
    import capture._py312 as engine
    from capture._stackdepth import StackDepthError

    problems = []
    ns: dict = {}
    exec("def fresh(n):\n    return sum(i * i for i in range(n)) + n\n", ns)  # noqa: S102 - a new code object
    fresh = ns["fresh"]

    def refuse(code):
        raise StackDepthError(f"refused {code.co_name}")

    hooks = _Hooks(loops.__code__, fresh.__code__)
    real, engine.stack_depths = engine.stack_depths, refuse
    try:
        capture.start(hooks)
        try:
            value = fresh(5), loops(4)   # fresh aborts the capture: loops runs uncaptured
        finally:
            capture.stop()
    finally:
        engine.stack_depths = real
    if value != (fresh(5), loops(4)):
        problems.append("the program result changed")
    if hooks.events != 0:
        problems.append(f"{hooks.events} events after the analysis failed")
    if "refused" not in str(capture.backend().last_error):
        problems.append(f"last_error is {capture.backend().last_error!r}")
    if not _tools_free():
        problems.append("monitoring tool not released")
    return problems


def _events_after_stop(capture) -> int:
    """Events delivered after stop() (must be 0)."""
    seen = []

    class Hooks:
        def enter_frame(self, frame):
            return True

        def instruction(self, frame, offset, stack):
            seen.append(offset)

        def leave_frame(self, frame, value):
            pass

        def exception(self, frame, exc):
            pass

    capture.start(Hooks())
    arith(1, 2)
    capture.stop()
    before = len(seen)
    arith(1, 2)
    return len(seen) - before if before else -1


def bench(n: int = 20000) -> dict:
    """µs per captured instruction event on a loop, with hooks that do nothing."""
    sys.path.insert(0, MAGPY_DIR)
    import capture

    def loop(k):
        t = 0
        for i in range(k):
            t += i * 2
        return t

    class Count:
        events = 0

        def enter_frame(self, frame):
            return frame.f_code is loop.__code__

        def instruction(self, frame, offset, stack):
            self.events += 1

        def leave_frame(self, frame, value):
            pass

        def exception(self, frame, exc):
            pass

    plain, traced = [], []
    for _ in range(5):
        t0 = time.perf_counter()
        loop(n)
        plain.append(time.perf_counter() - t0)
        hooks = Count()
        capture.start(hooks)
        t0 = time.perf_counter()
        loop(n)
        traced.append(time.perf_counter() - t0)
        capture.stop()
    return {"version": sys.version.split()[0], "events": hooks.events,
            "us_per_event": 1e6 * (min(traced) - min(plain)) / hooks.events}


# ======================================================================================
# pytest entry points: one test per interpreter, each running this file as the worker.
# ======================================================================================

def _interpreter(ver: str) -> str | None:
    if ".".join(map(str, VERSION)) == ver:
        return sys.executable
    roots = [os.environ.get("PYENV_ROOT", ""), os.path.expanduser("~/.pyenv")]
    for root in filter(None, roots):
        for exe in sorted(glob.glob(os.path.join(root, "versions", ver + ".*", "bin", "python")), reverse=True):
            return exe
    for cand in (f"/usr/bin/python{ver}", f"/usr/local/bin/python{ver}"):
        if os.path.exists(cand):
            return cand
    return None


def _run_version(ver: str) -> None:
    import pytest

    exe = _interpreter(ver)
    if exe is None:
        pytest.skip(f"CPython {ver} is not installed")
    proc = subprocess.run([exe, os.path.abspath(__file__)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["after_stop"] == 0, "events were delivered after stop()"
    assert report["stop_inside_hook"] == [], report["stop_inside_hook"]
    if ver not in ("3.10", "3.11"):
        assert report["abort"] == [], report["abort"]
    for p in report["passes"]:
        assert not p["failures"], f"{ver} {p['mode']}: {len(p['failures'])} failures:\n" + "\n".join(p["failures"])
        checks = p["checks"]
        # Every family of checks must really have run, so that none can pass vacuously.
        for kind in ("LOAD_CONST pushes c", "binary op result", "compare result", "LOAD_FAST pushes the local",
                     "call result equals the function applied to the stack args",
                     "call result is the traced callee's return value", "return/yield value is top",
                     "BUILD_STRING joins the pieces", "UNPACK_SEQUENCE", "LIST_APPEND appends top to the list",
                     "FOR_ITER keeps the iterator under the item", "FOR_ITER exhausted pops the iterator",
                     "BINARY_SUBSCR", "STORE_SUBSCR stores the value", "method load depth",
                     "BEFORE_WITH pushes __exit__ and __enter__()", "CALL_FUNCTION_EX has a NULL slot",
                     "program result unchanged by capture", "read_stack agrees", "every program delivered events"):
            assert checks.get(kind, 0) > 0, f"{ver} {p['mode']}: check {kind!r} never ran"
        if ver != "3.10":
            kind = "frame_function is the running function"
            assert checks.get(kind, 0) > 0, f"{ver} {p['mode']}: check {kind!r} never ran"
        assert p["events"] > 3000
        if ver != "3.10":
            assert checks.get("static depth", 0) == p["events"]
            assert checks.get("handler entry has exception on top", 0) >= 8
        if p["mode"] == "one line per instruction":
            assert checks.get("stack equals true stack", 0) == p["events"]
    if ver == "3.11" and report["driver"] == "c":
        plain, python = (next(p for p in report["passes"] if p["mode"] == m) for m in ("plain", "python driver"))
        assert plain["events"] == python["events"] and plain["checks"] == python["checks"], \
            "the C and the settrace driver delivered different events"


def test_capture_py310():
    _run_version("3.10")


def test_capture_py311():
    _run_version("3.11")


def test_capture_py312():
    _run_version("3.12")


def test_capture_py313():
    _run_version("3.13")


def survey(module_names: list[str]) -> dict:
    """Run the static analysis over every code object of some stdlib modules' source.

    Counts failures (the analysis raises) and how often the deepest stack it finds
    (before or after any instruction) equals the compiler's own ``co_stacksize``; the
    compiler computes that bound with the same flow analysis, so a wrong edge or effect
    shows up as a mismatch even in code that never runs.
    """
    import importlib

    sys.path.insert(0, MAGPY_DIR)
    from capture._stackdepth import StackDepthError, stack_depths

    out = {"codes": 0, "errors": [], "mismatch": []}

    def walk(code):
        out["codes"] += 1
        try:
            depths = stack_depths(code)
        except StackDepthError as e:
            out["errors"].append(str(e))
            return
        deepest = 0
        for ins in dis.get_instructions(code):
            d = depths.get(ins.offset)
            if d is None:
                continue
            arg = ins.arg if ins.opcode >= dis.HAVE_ARGUMENT else None
            effects = [dis.stack_effect(ins.opcode, arg, jump=j) for j in (False, True)]
            deepest = max(deepest, d, d + max(effects))
        # 3.13 reserves one slot even for code that never pushes anything.
        if deepest != code.co_stacksize and not (deepest == 0 and code.co_stacksize == 1):
            out["mismatch"].append((code.co_name, code.co_filename, deepest, code.co_stacksize))
        for c in code.co_consts:
            if isinstance(c, CodeType):
                walk(c)

    for name in module_names:
        path = importlib.import_module(name).__file__
        with open(path, encoding="utf-8") as f:
            walk(compile(f.read(), path, "exec"))
    return out


_SURVEY_MODULES = ["ast", "inspect", "dataclasses", "enum", "typing", "argparse", "json.decoder", "re._parser",
                   "asyncio.tasks", "asyncio.base_events", "difflib", "pathlib", "tarfile", "email._header_value_parser",
                   "_pydecimal", "contextlib", "functools", "collections", "textwrap", "tokenize"]


def _survey_version(ver: str) -> None:
    import pytest

    exe = _interpreter(ver)
    if exe is None:
        pytest.skip(f"CPython {ver} is not installed")
    proc = subprocess.run([exe, os.path.abspath(__file__), "--survey", *_SURVEY_MODULES],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["codes"] > 2000
    assert out["errors"] == []
    assert out["mismatch"] == []


def test_stack_depth_survey_py311():
    _survey_version("3.11")


def test_stack_depth_survey_py312():
    _survey_version("3.12")


def test_stack_depth_survey_py313():
    _survey_version("3.13")


# ======================================================================================
# the two 3.11 drivers, in this (pytest's) interpreter
# ======================================================================================

def _c_driver_backend():
    import pytest

    from magpy import capture

    backend = capture.backend()
    if VERSION != (3, 11):
        pytest.skip("the C capture driver is CPython 3.11's")
    assert backend.driver_name() == "c", "the C capture driver (magpy/capture/_ctrace.c) is not built"
    return backend


def test_driver_names_are_checked():
    import pytest

    backend = _c_driver_backend()
    with pytest.raises(ValueError, match="'c' or 'python'"):
        backend.use_driver("fast")
    assert backend.use_driver("c") == "c"


def test_the_c_and_ctypes_reads_of_a_frames_function_agree():
    """The function object a frame runs, read in C and through ctypes: running, suspended in a
    generator, a method's, a closure's, a finished frame's, a module's."""
    import types

    backend = _c_driver_backend()
    frames = []

    def outer(k):
        def inner():
            frames.append(sys._getframe())
            return k
        return inner

    class C:
        def method(self):
            frames.append(sys._getframe())

    def gen():
        frames.append(sys._getframe())
        yield 1

    outer(3)()
    C().method()
    g = gen()
    next(g)
    frames.append(sys._getframe())
    exec(compile("frames.append(sys._getframe())", "<module code>", "exec"), {"frames": frames, "sys": sys})
    for f in frames:
        fn = backend._read_frame_function(f)
        assert backend.frame_function(f) is fn and (fn is None or isinstance(fn, types.FunctionType)), f


def test_a_generator_left_suspended_by_the_c_driver_runs_under_a_later_settrace():
    """A frame the C driver followed keeps a callable ``f_trace`` that ignores it: a debugger's
    tracer installed after the run meets it when the generator resumes."""
    from magpy import capture

    _c_driver_backend()

    def gen():
        yield 1
        yield 2

    g = gen()
    capture.start(_Hooks(gen.__code__))
    try:
        first = next(g)
    finally:
        capture.stop()
    lines = []

    def tracer(frame, event, arg):
        if frame.f_code is gen.__code__:
            lines.append(event)
        return tracer

    sys.settrace(tracer)
    try:
        rest = list(g)
    finally:
        sys.settrace(None)
    assert (first, rest) == (1, [2]) and "call" in lines


def _inner():
    return None


def _callee(a, b):
    x = a
    _inner()
    y = b
    return x + y


def _run_callee(hooks, level=0):
    from magpy import capture

    capture.start(hooks)
    capture.set_quiet(level)
    try:
        assert _callee(1, 2) == 3
    finally:
        capture.stop()
    return hooks


def _callee_quiet_map():
    """(``_callee``'s quiet map flagging its moves at level 2, the offsets of those moves)."""
    from magpy import capture

    flags = bytearray(len(_callee.__code__.co_code))
    quiet_ops = {i.offset for i in dis.get_instructions(_callee) if i.opname in ("LOAD_FAST", "STORE_FAST", "POP_TOP")}
    for off in quiet_ops:
        flags[off] = 2
    return capture.quiet_map(bytes(flags)), quiet_ops


def test_the_c_driver_skips_quiet_instructions_only_when_told():
    """A frame whose last delivered event answered its quiet map skips the events at the map's
    flagged offsets up to the level set_quiet allows; level 0 delivers every event; a frame's
    first event is always delivered; wake() (here from a callee's entry) makes the next event of
    a frame arrive again."""
    from magpy import capture

    _c_driver_backend()
    quiet, quiet_ops = _callee_quiet_map()

    class Hooks:
        def __init__(self, answer, wake):
            self.answer, self.wake, self.seen = answer, wake, []

        def enter_frame(self, frame):
            if frame.f_code is _inner.__code__ and self.wake:
                capture.wake(frame.f_back)
            return frame.f_code is _callee.__code__

        def instruction(self, frame, offset, stack):
            self.seen.append(offset)
            return self.answer

        def leave_frame(self, frame, value):
            pass

        def exception(self, frame, exc):
            pass

    def run(answer, level, wake=False):
        return _run_callee(Hooks(answer, wake), level).seen

    every = run(None, 2)
    assert set(every) >= quiet_ops
    skipped = run(quiet, 2)
    assert skipped[0] == every[0] and not (set(skipped[1:]) & quiet_ops)
    assert skipped == [o for i, o in enumerate(every) if i == 0 or o not in quiet_ops]
    assert run(quiet, 1) == every and run(quiet, 0) == every   # (flags above the level: delivered)
    pop_top = next(i.offset for i in dis.get_instructions(_callee) if i.opname == "POP_TOP")
    assert pop_top not in skipped and pop_top in run(quiet, 2, wake=True)


class _EntryHooks:
    """Hooks that note which frames the driver offers them, and which instructions of ``_callee``."""

    def __init__(self, answer_for_callee=True, skipped=None, opaque_in=None, quiet=None):
        self.answer, self.entered, self.seen, self.opaque_in = answer_for_callee, [], [], opaque_in
        self.quiet = quiet   # what the callee's instruction events answer
        if skipped is not None:
            self.skipped = skipped

    def enter_frame(self, frame):
        from magpy import capture

        if frame.f_code.co_filename != __file__:
            return False   # (the capture's own calls on the way in and out)
        self.entered.append(frame.f_code.co_name)
        if frame.f_code is _callee.__code__:
            if self.opaque_in is not None:
                capture.set_opaque(True)   # (what the callee's frames call is not offered)
            return self.answer
        return True

    def instruction(self, frame, offset, stack):
        if frame.f_code is _callee.__code__:
            self.seen.append(offset)
            return self.quiet
        return None

    def leave_frame(self, frame, value):
        pass

    def exception(self, frame, exc):
        pass


def test_the_c_driver_does_not_offer_the_frames_the_hooks_name_as_skipped():
    """``hooks.skipped`` names code objects (by id) and files whose frames enter_frame would
    refuse: the driver refuses them itself; other frames are still offered, and malformed
    ``skipped`` is an error at start."""
    import pytest

    from magpy import capture

    _c_driver_backend()
    assert _run_callee(_EntryHooks()).entered == ["_callee", "_inner"]
    by_code = _run_callee(_EntryHooks(skipped=(frozenset({id(_inner.__code__)}), frozenset())))
    assert by_code.entered == ["_callee"]
    by_file = _run_callee(_EntryHooks(skipped=(frozenset(), frozenset({_inner.__code__.co_filename}))))
    assert by_file.entered == []   # (both functions live in this file)
    with pytest.raises(TypeError, match="skipped"):
        capture.start(_EntryHooks(skipped=({id(_inner.__code__)}, frozenset())))   # a set, not a frozenset
    capture.stop()


_STOP_INSIDE_AN_EVENT = """
import gc
from magpy import capture

class Hooks:
    def enter_frame(self, frame):
        return frame.f_code is work.__code__
    def instruction(self, frame, offset, stack):
        capture.stop()   # (as a split ends the monitor run: the thread drops its Tracer)
        for _ in range(2000):
            [object() for _ in range(8)]   # (reuse the freed memory, as a program goes on)
        return None
    def leave_frame(self, frame, value):
        pass
    def exception(self, frame, exc):
        pass

def work(a, b):
    c = a + b
    return c * 2

for _ in range(50):
    capture.start(Hooks())
    assert work(1, 2) == 6
    capture.stop()
gc.collect()
print("ok")
"""


def test_a_hook_that_stops_the_c_driver_inside_an_event_leaves_no_freed_tracer_in_use():
    """A split ends the monitor run inside an instruction event: ``stop`` drops the thread's
    reference to the driver's Tracer while its trace function is still running. What the event
    does after the hook returns must not read the freed Tracer (an increment of a stale
    ``t->idle`` corrupted another object's count: a crash much later, when a frame died). Run
    with the debug allocator, which fills freed memory, so a read of it fails at once."""
    _c_driver_backend()
    env = dict(os.environ, PYTHONMALLOC="debug")
    proc = subprocess.run([sys.executable, "-X", "faulthandler", "-c", _STOP_INSIDE_AN_EVENT], capture_output=True,
                          text=True, timeout=300, env=env, cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]


def test_the_c_driver_offers_no_frame_while_opaque_and_start_clears_it():
    """set_opaque(True): frames that start are not offered until set_opaque(False); a new capture
    starts with every frame offered again."""
    from magpy import capture

    _c_driver_backend()
    hooks = _run_callee(_EntryHooks(opaque_in=True))
    assert hooks.entered == ["_callee"]   # (_inner started while opaque)
    assert _run_callee(_EntryHooks()).entered == ["_callee", "_inner"]   # (start cleared the flag)
    capture.start(_EntryHooks())
    try:
        capture.set_opaque(True)
        capture.set_opaque(False)
        assert _callee(1, 2) == 3
    finally:
        capture.stop()


def test_a_frame_entered_with_its_quiet_map_skips_its_first_quiet_instructions():
    """enter_frame answering the frame's quiet map: the frame is followed and its quiet
    instructions are skipped from the first one, at the levels set_quiet allows (level 0: every
    event); True: its first event is delivered as before."""
    _c_driver_backend()
    instrs = list(dis.get_instructions(_callee))
    quiet, quiet_ops = _callee_quiet_map()
    every = _run_callee(_EntryHooks(), level=2).seen
    first_quiet = next(i.offset for i in instrs if i.opname == "LOAD_FAST")
    assert first_quiet in every
    after_first = _run_callee(_EntryHooks(quiet=quiet), level=2).seen
    assert after_first[0] == first_quiet   # (entered with True: the first event comes)
    skipped = _run_callee(_EntryHooks(answer_for_callee=quiet, quiet=quiet), level=2).seen
    assert skipped and not set(skipped) & quiet_ops
    assert skipped == [o for o in every if o not in quiet_ops] == after_first[1:]
    assert _run_callee(_EntryHooks(answer_for_callee=quiet, quiet=quiet), level=0).seen == every


def test_both_drivers_make_the_same_record():
    import torch

    import magpy

    backend = _c_driver_backend()

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(6, 6)

        def forward(self, x, scale=2.0):
            h, g = self.lin(x).chunk(2, dim=-1)
            out = [h * scale, g.relu()]
            return torch.cat(out, -1), {"n": len(out)}

    x, m = torch.randn(3, 6), Block()
    made = {}
    for name in ("c", "python"):
        before = backend.use_driver(name)
        try:
            compiled = magpy.compile(m, backend="eager")
            out = compiled(x)
            again = compiled(x)
            made[name] = magpy.explain(m)(x)
        finally:
            backend.use_driver(before)
        st = magpy.stats(compiled)
        assert st.monitor_runs == 1 and st.guard_hits == 1 and st.graph_count == 1
        torch.testing.assert_close(out[0], m(x)[0])
        torch.testing.assert_close(again[0], out[0])
    assert made["c"].guards == made["python"].guards and made["c"].op_count == made["python"].op_count


def test_both_drivers_make_the_same_record_of_a_block_with_opaque_and_framework_calls():
    """A block whose calls the C driver refuses without asking the monitor: framework frames
    (``Module.__call__``), Python code under annotated functions (``F.layer_norm``, ``F.gelu``,
    ``F.dropout`` check their arguments in Python), generators and a closure; the Python driver
    offers every frame to the monitor. Both make the same record: guards, operators, graph."""
    import torch
    import torch.nn.functional as F

    import magpy

    backend = _c_driver_backend()

    class Attention(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = torch.nn.Linear(8, 24)
            self.norm = torch.nn.LayerNorm(8)
            self.drop = torch.nn.Dropout(0.1)
            self.heads = 2
            self.register_buffer("mask", torch.triu(torch.ones(5, 5, dtype=torch.bool), 1))

        def split(self, t):
            return (p.reshape(*t.shape[:-1], self.heads, -1).transpose(-2, -3) for p in t.chunk(3, dim=-1))

        def forward(self, x):
            q, k, v = self.split(self.qkv(self.norm(x)))
            scores = q @ k.transpose(-1, -2) / (q.shape[-1] ** 0.5)
            if self.mask is not None:
                scores = scores.masked_fill(self.mask, float("-inf"))
            def act(t):   # (a closure over self)
                return F.gelu(t) * self.heads

            out = self.drop(F.softmax(scores, dim=-1)) @ v
            return act(F.layer_norm(out.transpose(-2, -3).flatten(-2), (8,))) + x

    m = torch.nn.Sequential(Attention(), Attention()).eval()
    x = torch.randn(2, 5, 8)
    made = {}
    for name in ("c", "python"):
        before = backend.use_driver(name)
        try:
            compiled = magpy.compile(m, backend="eager")
            out, again = compiled(x), compiled(x)
            made[name] = magpy.explain(m)(x)
        finally:
            backend.use_driver(before)
        st = magpy.stats(compiled)
        assert st.monitor_runs == 1 and st.guard_hits == 1 and st.graph_count == 1, name
        torch.testing.assert_close(out, m(x))
        torch.testing.assert_close(again, out)
    c, py = made["c"], made["python"]
    assert c.guards == py.guards and c.op_count == py.op_count and c.op_count > 20
    assert c.graph.code == py.graph.code


if __name__ == "__main__":
    if "--bench" in sys.argv:
        print(json.dumps(bench()))
    elif "--survey" in sys.argv:
        print(json.dumps(survey(sys.argv[sys.argv.index("--survey") + 1:])))
    else:
        print(json.dumps(run_worker(), default=repr))
