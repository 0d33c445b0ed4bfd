"""``functools.lru_cache`` functions called in the program: answered from their cache, whose
entries change between calls (``cache_clear()``, an eviction, a refill with another result, a
global the body reads changed), called after the program changed state outside, as a method
set on a class (a ``warning_once`` on a logger), with keyword arguments and ``typed=True``.
Every program compares ``cache_info()`` too: a hit the mock makes is a hit eager makes."""
from harness import program

F_ = "cached_calls"

program(F_, "cached_helper_called_after_a_write_outside", """
EXPECT = "record"
LOG = {}
SEEN = []
@functools.lru_cache
def available():
    SEEN.append("probe")
    return True
def f(x):
    LOG["batch"] = x.shape[0]
    if available():
        x = x * 2
    return x + 1
def make(): return f
def inputs(i): return (torch.randn(2, 3),)
def state(): return available.cache_info(), list(SEEN)
""")

program(F_, "cache_cleared_between_calls_runs_the_body_again", """
EXPECT = "record"
TABLE = {"a": 2.0}
HISTORY = []
@functools.lru_cache(maxsize=None)
def factor(name):
    HISTORY.append(name)
    return TABLE[name]
def f(x):
    HISTORY.append("call")
    return x * factor("a")
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: TABLE["a"] = 7.0       # eager keeps answering 2.0 from the cache
    if i == 3: factor.cache_clear()    # now the body runs again, after the write: 7.0
    if i == 5: TABLE["a"] = 2.0; factor.cache_clear()
def state(): return factor.cache_info(), list(HISTORY)
NCALLS = 7
""")

program(F_, "bounded_cache_refilled_with_another_result_between_calls", """
EXPECT = "record"
TABLE = {"a": 2.0}
@functools.lru_cache(maxsize=4)
def factor(name):
    return TABLE[name]
def f(x):
    return x * factor("a")
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2:
        TABLE["a"] = 7.0
        factor.cache_clear()
        factor("a")                      # the cache holds 7.0 before the call
    if i == 4:
        TABLE["a"] = 2.0
        factor.cache_clear()
        factor("a")                      # back to 2.0: the first record holds again
def state(): return factor.cache_info()
NCALLS = 6
""")

program(F_, "bounded_cache_evicted_between_calls", """
EXPECT = "record"
COMPUTED = []
@functools.lru_cache(maxsize=2)
def coef(k):
    COMPUTED.append(k)
    return k * 1.5
def f(x):
    return x * coef(3) + coef(4)
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: coef(5); coef(6)          # evicts both keys: the call computes them again
    if i == 4: coef(5)                   # evicts the least recently used one (3)
def state(): return coef.cache_info(), list(COMPUTED)
NCALLS = 6
""")

program(F_, "cached_helper_with_keywords_and_types", """
EXPECT = "record"
GLOBAL = {"k": 1}
@functools.lru_cache(maxsize=8, typed=True)
def scale(a, b=1, *, c=2.0):
    return (a + b) * c * GLOBAL["k"]
def f(x):
    GLOBAL["last"] = 1
    return x * scale(1, b=2, c=0.5) + scale(1.0)
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: GLOBAL["k"] = 3
    if i == 3: scale.cache_clear()
def state(): return scale.cache_info()
""")

program(F_, "warning_once_on_a_logger_class", """
EXPECT = "record"
import logging
MESSAGES = []
class Collect(logging.Handler):
    def emit(self, record):
        MESSAGES.append(record.getMessage())
class Logger(logging.Logger):
    pass
def _warning_once(self, *args):
    self.warning(*args)
Logger.warning_once = functools.lru_cache(None)(_warning_once)
log = Logger("soundness-warning-once")
log.addHandler(Collect())
log.propagate = False
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
    def forward(self, x):
        log.warning_once("the input has %d rows", 2)
        return self.lin(x)
def make(): return M()
def inputs(i): return (torch.randn(2, 3),)
def step(i):
    if i == 2: Logger.warning_once.cache_clear()   # warned again, as eager does
def state(): return list(MESSAGES), Logger.warning_once.cache_info()
NCALLS = 5
""")

program(F_, "cached_helper_reads_a_global_written_by_the_call", """
EXPECT = "record"
CONFIG = {"mode": "a"}
@functools.lru_cache(maxsize=None)
def pick(name):
    return 2.0 if CONFIG["mode"] == "a" else 5.0
def f(x, mode):
    CONFIG["mode"] = mode                # the body, when it runs, reads this call's write
    return x * pick("scale")
def make(): return f
def inputs(i): return (torch.randn(3), "a" if i < 2 else "b")
def step(i):
    if i == 3: pick.cache_clear()        # the body runs after the write: eager sees 5.0
def state(): return pick.cache_info(), dict(CONFIG)
""")

program(F_, "a_cache_of_size_zero_runs_its_body_on_every_call", """
EXPECT = "split"
import functools
C = [0]
@functools.lru_cache(maxsize=0)
def g():
    C[0] += 1
    return float(C[0])
def f(x):
    return x * g()
def make(): return f
def inputs(i): return (torch.randn(3),)
def state(): return C[0], g.cache_info()
""")

program(F_, "a_cached_function_that_raises_runs_again_on_every_call", """
EXPECT = "dynamic"
import functools
C = [0]
@functools.lru_cache(maxsize=None)
def g(n):
    C[0] += 1
    raise ValueError(n)
def f(x):
    try:
        g(1)
    except ValueError:
        pass
    return x * C[0]
def make(): return f
def inputs(i): return (torch.randn(3),)
def state(): return C[0], g.cache_info()
""")

program(F_, "staticmethod_wrapper_of_an_lru_cache_called_through_self", """
# transformers' compile_compatible_method_lru_cache on a staticmethod, called as `self.helper(...)`:
# the wrapper's closure holds the lru_cache wrapper; the cache cleared, the entry's result changed
# in place, or the staticmethod replaced between calls are all seen.
import functools
def cached(**kw):
    def deco(func):
        with_cache = functools.lru_cache(**kw)(func)
        @functools.wraps(func)
        def wrapper(*a):
            if torch.compiler.is_compiling():
                return func(*a)
            return with_cache(*a)
        wrapper.cache = with_cache
        return wrapper
    return deco
class Emb(nn.Module):
    @staticmethod
    @cached(maxsize=4)
    def table(n, d):
        return torch.arange(n * d, dtype=torch.float32).reshape(n, d)
    def forward(self, x):
        return x + self.table(x.shape[0], x.shape[1])
m = Emb()
def make(): return m
def inputs(i): return (torch.ones(2 if i != 3 else 3, 4) * i,)
NCALLS = 6
def step(i):
    if i == 2: Emb.table.cache.cache_clear()
    if i == 4: Emb.table.cache(2, 4).mul_(-1)
    if i == 5: Emb.table = staticmethod(lambda n, d: torch.ones(n, d))
""")

program(F_, "warning_once_on_a_path_a_tensor_value_chose", """
# `if mask.any(): logger.warning_once(...)`: the call is on a path the graph's value decides; a
# call whose value takes the other path must not have counted a hit (cache_info), and one that
# takes it after `cache_clear()` warns again.
EXPECT = "record"
import functools
MESSAGES = []
@functools.lru_cache(None)
def warning_once(msg):
    MESSAGES.append(msg)
def f(x):
    y = x * 2
    if (y > 0).any():
        warning_once("positive entries")
        y = y - 1
    return y
def make(): return f
def inputs(i): return (torch.randn(4) if i % 3 else -torch.rand(4) - 0.1,)
NCALLS = 8
def step(i):
    if i == 5: warning_once.cache_clear()
def state(): return list(MESSAGES), warning_once.cache_info()
""")

program(F_, "bounded_cache_called_twice_after_a_branch_on_a_tensor_value", """
# Two keys of one bounded cache, in an order a tensor value picks: the LRU order and the hits
# after each call are eager's (a later third key evicts the least recently used one).
EXPECT = "record"
import functools
COMPUTED = []
@functools.lru_cache(maxsize=2)
def coef(k):
    COMPUTED.append(k)
    return k * 0.5
def f(x):
    if x.sum() > 0:
        return x * coef(1) + coef(2)
    return x * coef(2) + coef(1)
def make(): return f
def inputs(i): return (torch.randn(3) + (1.0 if i % 2 else -1.0),)
NCALLS = 7
def step(i):
    if i == 4: coef(3)
def state(): return coef.cache_info(), list(COMPUTED)
""")

program(F_, "cached_call_before_a_branch_on_a_tensor_value_that_fails", """
# The cached call comes before the value the path depends on: a call whose value differs is a
# miss, and the cache counts the one hit eager makes, not two.
EXPECT = "record"
import functools
@functools.lru_cache
def enabled():
    return True
def f(x):
    on = enabled()
    y = x + 1
    if y.max() > 1 and on:
        return y * 2
    return y
def make(): return f
def inputs(i): return (torch.randn(3) + (2.0 if i != 3 else -5.0),)
NCALLS = 5
def state(): return enabled.cache_info()
""")

# ---------------------------------------------------------------------------------------------
# functools.cached_property: a cache kept in the instance dict (its getter runs on the first read)
# ---------------------------------------------------------------------------------------------

program(F_, "cached_property_computed_on_the_first_call_then_invalidated", """
# The getter runs once (the log says when); `del m.pad` between calls makes eager run it again,
# after the configuration changed.
import functools
LOG = []
class Conv(nn.Module):
    def __init__(self):
        super().__init__()
        self.kernel = 3
    @functools.cached_property
    def pad(self):
        LOG.append(self.kernel)
        return self.kernel - 1
    def forward(self, x):
        return nn.functional.pad(x, (self.pad, 0)) * 2 + self.pad
m = Conv()
def make(): return m
def inputs(i): return (torch.randn(2, 5),)
NCALLS = 7
def step(i):
    if i == 3:
        m.kernel = 5                 # eager keeps answering 2 from the instance dict
    if i == 4:
        del m.pad                    # now the getter runs again: 4
    if i == 6:
        m.__dict__["pad"] = 1        # set by hand
def state(): return list(LOG), m.__dict__.get("pad")
""")

program(F_, "cached_property_holding_a_tensor_made_from_a_parameter", """
# The getter builds a tensor from a parameter once; changing the parameter in place later does
# not change what eager reads (the kept tensor), replacing the kept tensor does.
import functools
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4))
    @functools.cached_property
    def scale(self):
        return self.w.detach().abs() + 1
    def forward(self, x):
        return x * self.scale + self.scale.sum()
m = M()
def make(): return m
def inputs(i): return (torch.randn(3, 4),)
NCALLS = 6
def step(i):
    with torch.no_grad():
        if i == 2: m.w.mul_(3)
        if i == 4: m.scale = torch.ones(4)
def state(): return m.scale
""")

program(F_, "cached_property_replaced_on_the_class", """
# The class's descriptor replaced by a property between calls: the instance dict no longer wins
# over it (a data descriptor comes first).
import functools
class M(nn.Module):
    @functools.cached_property
    def factor(self):
        return 2.0
    def forward(self, x):
        return x * self.factor
m = M()
def make(): return m
def inputs(i): return (torch.randn(3),)
NCALLS = 5
def step(i):
    if i == 3: M.factor = property(lambda self: 5.0)
def state(): return m.__dict__.get("factor")
""")

program(F_, "cached_property_read_twice_in_one_call", """
# The first read fills the instance dict, the second reads it there; on later calls both are
# dict reads.
import functools
COUNT = [0]
class M(nn.Module):
    @functools.cached_property
    def offset(self):
        COUNT[0] += 1
        return float(COUNT[0])
    def forward(self, x):
        a = x + self.offset
        return a * self.offset
m = M()
def make(): return m
def inputs(i): return (torch.randn(3),)
NCALLS = 5
def step(i):
    if i == 3: del m.offset
def state(): return COUNT[0], m.__dict__.get("offset")
""")

program(F_, "a_nan_key_made_in_each_call_misses_every_call", """
# a NaN made in the call is a new key every call: eager's cache misses every time
EXPECT = "split"
import functools
RUNS = []
@functools.lru_cache(maxsize=None)
def c(v):
    RUNS.append(1)
    return 2.0
def f(x):
    v = float("nan")
    return x * c(v)
def make(): return f
def inputs(i): return (torch.randn(3),)
NCALLS = 5
def state(): return c.cache_info(), len(RUNS)
""")

program(F_, "a_nan_key_computed_from_a_global_misses_every_call", """
# inf - inf from outside: a new NaN, a miss every call
EXPECT = "split"
import functools
RUNS = []
CFG = {"a": math.inf}
@functools.lru_cache(maxsize=None)
def c(v):
    RUNS.append(1)
    return 2.0
def f(x):
    v = CFG["a"] - CFG["a"]
    return x * c(v)
def make(): return f
def inputs(i): return (torch.randn(3),)
NCALLS = 5
def state(): return c.cache_info(), len(RUNS)
""")

program(F_, "cached_property_getter_raises_until_a_flag_is_set", """
# a getter that raises keeps nothing: eager runs it again on every call
EXPECT = "dynamic"
import functools
READY = [False]
LOG = []
class M(nn.Module):
    @functools.cached_property
    def s(self):
        LOG.append("get")
        if not READY[0]:
            raise RuntimeError("not ready")
        return 3.0
    def forward(self, x):
        try:
            v = self.s
        except RuntimeError:
            v = 1.0
        return x * v
m = M()
def make(): return m
def inputs(i): return (torch.randn(3),)
NCALLS = 6
def step(i):
    if i == 2: READY[0] = True
def state(): return list(LOG), m.__dict__.get("s")
""")

program(F_, "cached_property_getter_raises_then_returns_a_value", """
# the value the getter returns once the flag is set reaches the output
EXPECT = "dynamic"
import functools
READY = [False]
class M(nn.Module):
    @functools.cached_property
    def s(self):
        if not READY[0]:
            raise RuntimeError("not ready")
        return 3.0
    def forward(self, x):
        try:
            v = self.s
        except RuntimeError:
            v = 1.0
        return x * v
m = M()
def make(): return m
def inputs(i): return (torch.randn(3),)
NCALLS = 5
def step(i):
    if i == 2: READY[0] = True
def state(): return m.__dict__.get("s")
""")

program(F_, "getattr_default_of_a_cached_property_whose_getter_raises", """
# getattr's default after the getter's AttributeError: the getter runs once per call, as in eager
EXPECT = "dynamic"
import functools
LOG = []
READY = [False]
class M(nn.Module):
    @functools.cached_property
    def s(self):
        LOG.append(1)
        if not READY[0]:
            raise AttributeError("later")
        return 5.0
    def forward(self, x):
        return x * getattr(self, "s", 1.0)
m = M()
def make(): return m
def inputs(i): return (torch.randn(3),)
NCALLS = 5
def step(i):
    if i == 3: READY[0] = True
def state(): return list(LOG)
""")

program(F_, "second_cached_property_raises_after_the_first_filled", """
# one cached property filled, a second one raising in the same call
EXPECT = "dynamic"
import functools
LOG = []
class M(nn.Module):
    @functools.cached_property
    def s(self):
        LOG.append(1)
        return 2.0
    def forward(self, x):
        v = self.s
        try:
            w = self.t
        except RuntimeError:
            w = 0.0
        return x * v + w
    @functools.cached_property
    def t(self):
        LOG.append(2)
        raise RuntimeError("t")
m = M()
def make(): return m
def inputs(i): return (torch.randn(3),)
NCALLS = 5
def state(): return list(LOG)
""")

program(F_, "getattr_default_of_a_raising_cached_property_on_a_plain_object", """
# as above, on an object that is no module
EXPECT = "dynamic"
import functools
LOG = []
class C:
    @functools.cached_property
    def s(self):
        LOG.append(1)
        raise AttributeError("later")
OBJ = C()
def f(x):
    return x * getattr(OBJ, "s", 1.0)
def make(): return f
def inputs(i): return (torch.randn(3),)
NCALLS = 4
def state(): return list(LOG)
""")

program(F_, "cached_property_raising_attributeerror_caught_in_forward", """
# the AttributeError caught by forward's own try
EXPECT = "dynamic"
import functools
LOG = []
class M(nn.Module):
    @functools.cached_property
    def s(self):
        LOG.append(1)
        raise AttributeError("later")
    def forward(self, x):
        try:
            v = self.s
        except AttributeError:
            v = 1.0
        return x * v
m = M()
def make(): return m
def inputs(i): return (torch.randn(3),)
NCALLS = 4
def state(): return list(LOG)
""")
