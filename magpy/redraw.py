"""Random numbers drawn again by the mock (paper §5.3.1, footnote 4).

``if random.random() < self.p: x = x.flip(3)``, ``x * np.random.uniform(0.9, 1.1)``,
``k = random.randint(0, 3)``: a draw from Python's or numpy's random generator is not a pure
closure (PureClosure=False), so the paper's general rule would split the program there. The
paper special-cases these APIs: the mock draws the number again, with the same generator and
the same arguments, in the order the program drew them, and hands it to the rest of the
record. The monitor follows the number like one read from a tensor (:mod:`magpy.monitor.scalars`):
arithmetic on it and the operators it feeds stay in the graph, where it is an input; any use
by Python (a branch, an index, a format) is an *assumption* the matched path checks after the
graph ran. A call whose draws make another path is a miss: the generators' states are put
back (with torch's RNG and grad mode) so the next record, or the monitor run, draws the very
same numbers eager would have drawn.

What can be drawn again: a method of ``random.Random`` (the module-level functions are those of
its hidden instance) or of numpy's ``RandomState``/``Generator`` (``np.random.rand`` and
friends are those of the global ``RandomState``), called with constant (guarded or literal)
arguments (tuples and lists of constants included), on a generator that exists outside the
call (the mock reaches it through a guarded source). An argument that is a lifted size or value
(``random.randrange(x.shape[0])``, ``random.choice(range(n))`` with ``n`` lifted) is a
:class:`SizedArg`: the mock computes it again from the call's inputs before it draws. A
Python ``float`` or ``int`` drawn is a graph input. Anything else drawn (a numpy array from ``np.random.choice(n, k)``, a numpy
scalar, a bool) is *pinned*: the mock checks that it drew the very value the run drew, and the
record holds only then (a program that reseeds before each call, or draws from a fixed seed,
gets one record; one that draws new arrays every call misses, up to the recompile limit).
Anything else stays dynamic: ``shuffle`` (it changes a container), ``sample``, generators made
inside the call. Clock readings (``time.time()``, ``time.perf_counter()``) are repeated the same
way: the mock reads the clock where the program did.

    >>> import random
    >>> as_draw(random.uniform, [0.9, 1.1]) == (random._inst, "uniform", [0.9, 1.1])
    True
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any

from .objmodel import is_instance
from .realtype import callable_attr
from .source import ConstPool, Source, literal

#: ``random.Random`` methods that draw one number (``choice`` of a sequence of numbers included).
PY_DRAWS = frozenset({"random", "uniform", "randint", "randrange", "gauss", "normalvariate", "lognormvariate",
                      "expovariate", "vonmisesvariate", "gammavariate", "betavariate", "paretovariate",
                      "weibullvariate", "triangular", "getrandbits", "choice", "binomialvariate"})
#: numpy ``RandomState``/``Generator`` methods that draw one number when given no size.
NUMPY_DRAWS = frozenset({"rand", "randn", "random", "random_sample", "ranf", "sample", "uniform", "normal",
                         "randint", "integers", "beta", "binomial", "exponential", "gamma", "poisson", "choice",
                         "standard_normal", "laplace", "lognormal", "geometric", "random_integers", "triangular"})


def _numpy_generator_types() -> tuple:
    try:
        import numpy as np
    except ImportError:   # pragma: no cover - numpy is a dependency of torch's tests, not of torch
        return ()
    return (np.random.RandomState, np.random.Generator)


_NUMPY_GENERATORS = _numpy_generator_types()


def is_generator(obj: Any) -> bool:
    """A random generator whose draws the mock can repeat and whose state it can save."""
    return is_instance(obj, random.Random) or (bool(_NUMPY_GENERATORS) and is_instance(obj, _NUMPY_GENERATORS))


#: Clock readings: no state to draw from or put back, a new number every call (the paper's dynamic
#: operations that split the program): the mock reads the clock again where the program did.
CLOCKS = frozenset({time.time, time.time_ns, time.perf_counter, time.perf_counter_ns, time.monotonic,
                    time.monotonic_ns, time.process_time, time.process_time_ns, time.thread_time,
                    time.thread_time_ns})


def as_draw(fn: Any, args: list) -> tuple[Any, str, list] | None:
    """``(generator, method name, arguments)`` if calling ``fn(*args)`` draws one number from a
    generator (bound, or 3.11's unpacked ``Random.uniform(gen, ...)``), or reads a clock
    (generator None); else None."""
    if fn in CLOCKS and not args:
        return None, fn.__name__, []
    gen = callable_attr(fn, "__self__")
    if not is_generator(gen):
        if not args or not is_generator(args[0]):
            return None
        name = callable_attr(fn, "__name__")
        if getattr(type(args[0]), name or "", None) is not fn:
            return None
        gen, args = args[0], list(args[1:])
    else:
        name = callable_attr(fn, "__name__")
    allowed = PY_DRAWS if isinstance(gen, random.Random) else NUMPY_DRAWS
    return (gen, name, list(args)) if name in allowed else None


def save_states(gens: tuple) -> list:
    """Each generator's state, to put back when a speculative record does not hold."""
    return [_state_of(g) for g in gens]


def _state_of(g: Any) -> Any:
    if g is None:
        return None   # (a clock: nothing to put back)
    if isinstance(g, random.Random):
        return g.getstate()
    if hasattr(g, "get_state"):
        return g.get_state()   # numpy RandomState
    return g.bit_generator.state   # numpy Generator


def restore_states(gens: tuple, states: list) -> None:
    for g, s in zip(gens, states):
        if g is None:
            continue   # (a clock: nothing to put back)
        if isinstance(g, random.Random):
            g.setstate(s)
        elif hasattr(g, "set_state"):
            g.set_state(s)
        else:
            g.bit_generator.state = s


@dataclass(eq=False, frozen=True)
class SizedArg:
    """An argument of a draw computed from sizes that change between calls (``random.randrange(
    x.shape[0])`` with the batch size lifted): the mock computes it from the call's inputs (the
    graph ``node`` of the number) before it draws. ``value`` is the run's."""

    node: Any
    value: Any
    range_of: tuple | None = None   # (start, step) of a range whose length is ``node``

    def __repr__(self) -> str:
        return f"{self.value} (from sizes)"


@dataclass(eq=False, frozen=True)
class DrawSource(Source):
    """A number the mock draws (the ``index``-th draw of the run): ``call(*args, **kwargs)``,
    where ``call`` is the guarded bound method, or ``(method, generator)`` to call unbound.
    Every draw is its own source (identity equality): two draws of one call are two numbers."""

    index: int
    call: Any
    generator: Any
    args: tuple
    kwargs: dict = field(default_factory=dict)
    label: str = ""
    where: str = ""
    pinned: Any = None   # (the value drawn, compared by same_draw) for draws that are not graph inputs
    after_ops: int = 0   # operators recorded before the draw
    # A cached function's hit (magpy.monitor.cached_calls): the guard fixes its result; the mock makes
    # the call only for its effect on the cache (hits, LRU order), after the graph and its checks.
    cache_hit: bool = False

    def expr(self, pool: ConstPool | None = None) -> str:
        return f"_draw{self.index}"

    def describe(self) -> str:
        return f"draw {self.index}: {self.label}({', '.join(map(repr, self.args))}) at {self.where}"

    def check_code(self, pool: ConstPool) -> str | None:
        """The condition under which a pinned draw differs from the run's (None: not pinned)."""
        if self.pinned is None:
            return None
        return f"not _same_draw({self.expr()}, {pool.ref(self.pinned[0])})"

    def call_code(self, pool: ConstPool, sized: Any = None) -> str:
        """The mock's statement that draws the number again; ``sized(arg)`` is the code of an
        argument computed from the call's sizes (:class:`SizedArg`)."""
        def arg(a: Any) -> str:
            return sized(a) if isinstance(a, SizedArg) else literal(a, pool)
        parts = [arg(a) for a in self.args] + [f"{k}={arg(v)}" for k, v in self.kwargs.items()]
        if isinstance(self.call, tuple):
            method, gen = self.call
            parts.insert(0, pool.ref(gen))
            fn = pool.ref(method)
        else:
            fn = pool.ref(self.call)
        return f"{self.expr()} = {fn}({', '.join(parts)})"


def same_draw(a: Any, b: Any) -> bool:
    """Is draw ``a`` exactly ``b`` (type, dtype, shape and every value; NaN equals NaN)? Results
    that are not numbers, text or numpy values (an object a cache keeps) must be ``b`` itself."""
    if type(a) is not type(b):
        return False
    if (type(b).__module__ or "") == "numpy" and hasattr(b, "dtype") and hasattr(b, "shape"):
        import numpy as np

        return a.dtype == b.dtype and a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=b.dtype.kind in "fc"))
    if not _plain_value(b):
        return a is b
    return a == b or (a != a and b != b)


def _plain_value(v: Any) -> bool:
    """A value compared by ``==``: a number, text, None, or a tuple or frozenset of them."""
    if type(v) in (tuple, frozenset):
        return all(_plain_value(e) for e in v)
    return type(v) in (bool, int, float, complex, str, bytes, type(None))


def pinnable(value: Any) -> bool:
    """Can a draw's result be pinned (compared whole by :func:`same_draw`)?"""
    if type(value) in (bool, int, float, str):
        return True
    mod = type(value).__module__ or ""
    if mod == "numpy" and hasattr(value, "dtype"):
        return value.dtype.kind in "biufc" and getattr(value, "size", 1) <= 1 << 20
    return False


def as_argument(value: Any) -> Any:
    """A draw's argument as the mock passes it: lists of constants become tuples (the mock must
    not hold the program's list; the draw reads only its items)."""
    if type(value) is list:
        return tuple(as_argument(v) for v in value)
    return value
