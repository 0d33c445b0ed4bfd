"""Lifted numbers that reach outside state, and errors raised under torch modes: a LiftedInt left
in a deque from outside and in a returned ``slice``; an ``lru_cache`` helper called on a path a tensor
value chose (the mock calls it after the graph's checks: a failed speculation must not touch the
cache, whose LRU order would make a later eviction differ); a guard on ``float("inf")``; a function whose inlined comprehension
variable is also a closure cell (CPython 3.12+); floats, NaNs and sizes kept outside and found
again by identity; a tensor subclass, operators and numpy raising inside ``try`` under
inference mode, ``no_grad`` and autocast."""
from harness import program

F_ = "lifted_numbers_outside_and_errors_under_modes"

program(F_, "a_size_appended_to_a_deque_from_outside", """
EXPECT = "record"
HISTORY = collections.deque(maxlen=8)
def f(x):
    HISTORY.append(x.size(0))
    return x * 2
def make(): return f
def inputs(i): return (torch.ones(2 + i % 3),)
def state(): return list(HISTORY), [type(v).__name__ for v in HISTORY], [v is 3 for v in HISTORY]
NCALLS = 6
""")

program(F_, "a_returned_slice_over_a_size", """
EXPECT = "record"
def f(x):
    return x * 2, slice(0, x.size(0), 1)
def make(): return f
def inputs(i): return (torch.ones(2 + i % 3),)
def invoke(f, i):
    out, s = f(*inputs(i))
    return out, s, type(s.stop).__name__, s.stop is 2 + i % 3
NCALLS = 6
""")

program(F_, "an_lru_cache_helper_on_a_branch_of_a_tensor_value", """
EXPECT = "record"   # (the mock calls the helper after the graph's checks)
COMPUTED = []
@functools.lru_cache(maxsize=2)
def coef(k):
    COMPUTED.append(k)
    return k * 1.5
def f(x):
    if x.sum() > 0:
        c = coef(3)
    else:
        c = coef(4)
    return x * c
def make(): return f
def inputs(i): return (torch.tensor([1.0 if i < 2 else -1.0]),)
def post(out, i):
    coef(7)   # (the program uses the helper elsewhere: the LRU order decides what is evicted)
    return list(COMPUTED)
NCALLS = 5
""")

program(F_, "an_lru_cache_helper_in_a_submodule_branch", """
EXPECT = "record"   # (the mock calls the helper after the graph's checks)
COMPUTED = []
@functools.lru_cache(maxsize=1)
def coef(k):
    COMPUTED.append(k)
    return k * 1.5
class Block(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x * coef(3)
        return x * 2.0
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block(), Block()])
    def forward(self, x):
        for b in self.blocks:
            x = b(x) - 0.5
        return x
def make(): return M()
def inputs(i): return (torch.tensor([3.0 if i < 3 else -3.0]),)
def post(out, i):
    coef(7)
    return list(COMPUTED)
NCALLS = 5
""")

program(F_, "a_branch_on_a_float_argument_against_infinity", """
EXPECT = "record"
def f(x, s):
    if s != float("inf") and s > -math.inf:
        return x * s
    return x
def make(): return f
def inputs(i): return (torch.ones(2), [0.5, 0.7, float("inf"), 0.25, 0.3][i])
NCALLS = 5
""")

program(F_, "an_inlined_comprehension_variable_that_is_also_a_closure_cell", """
EXPECT = "record"
def f(x, n):
    if n < 0:
        fns = [lambda t: t * i for i in range(n)]   # `i` is a cell of f (3.12+ inlines both)
    adds = [lambda t, i=i: t + i for i in range(n)]
    return x * len(adds) + sum(g(x) for g in adds)
def make(): return f
def inputs(i): return (torch.ones(2), 2 + i % 2)
NCALLS = 5
""")

program(F_, "a_lifted_float_argument_found_in_a_list_by_identity", """
EXPECT = "record"
SEEN = []
def f(x, s):
    SEEN.append(s)
    k = SEEN.index(s)
    if s in SEEN and [s] == [s]:
        return x + 1 + k, SEEN.count(s)
    return x - 1, 0
def make(): return f
def inputs(i): return (torch.ones(2), [0.5, 0.7, 0.9, float("nan"), 0.3, float("nan"), 0.5][i])
def step(i): SEEN.clear()
NCALLS = 7
""")

program(F_, "an_exception_object_holding_a_size_kept_outside", """
EXPECT = "record"
ERRS = []
def f(x):
    e = ValueError("bad batch", x.size(0))
    ERRS.append(e)
    return x * 2, e
def make(): return f
def inputs(i): return (torch.ones(2 + i % 3),)
def invoke(f, i):
    out, e = f(*inputs(i))
    return out, e.args, type(e.args[1]).__name__, type(ERRS[-1].args[1]).__name__, ERRS[-1].args[1] is 2 + i % 3
NCALLS = 6
""")

# Values kept outside and found again by identity (NaNs, sizes, lifted ints across a split):

program(F_, "distinct_nan_arguments_kept_outside_and_found_by_identity", """
EXPECT = "dynamic"
STASH = []
KEYED = {}
def f(x, s):
    STASH.append(s)
    KEYED.setdefault(s, len(KEYED))
    return x + STASH.index(s) + KEYED[s]
def make(): return f
SCHED = [float("nan"), float("nan"), float("nan"), float("nan")]
def inputs(i): return (torch.ones(2), SCHED[i])
NCALLS = 4
""")

program(F_, "a_nan_read_from_a_tensor_kept_outside_across_a_split", """
EXPECT = "split"
import io
BUF = io.StringIO()
STASH = []
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.s = nn.Parameter(torch.tensor(1.5))
    def forward(self, x):
        w = self.s.item()
        fn = lambda t: t + len(STASH) + STASH.index(w) if STASH.append(w) is None else t
        BUF.write(f'{float(x.sum()):.3f}')
        return fn(x)
m = M()
def make(): return m
def step(i):
    with torch.no_grad():
        m.s.fill_([1.5, 1.5, float("nan"), float("nan"), float("nan")][i])
def inputs(i): return (torch.ones(2),)
NCALLS = 5
""")

program(F_, "a_lifted_int_in_a_closure_cell_across_a_split", """
EXPECT = "split"
import io
BUF = io.StringIO()
STASH = []
def _stash(t, v):
    STASH.append(v)
    return t + STASH.index(v)
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
    def forward(self, x, s):
        h = self.lin(x)
        w = s
        fn = lambda t: _stash(t, w)
        BUF.write(f'{float(h.sum()):.3f}')
        return fn(h)
m = M()
def make(): return m
def inputs(i): return (torch.ones(3, 4), [1, 1, 1, 1, -1, 2, 3][i])
def state(): return [type(v).__name__ for v in STASH]
NCALLS = 7
""")

# Errors raised inside try under torch modes (a subclass's __torch_function__, inference mode,
# no_grad and autocast, numpy floating-point and linalg errors):

program(F_, "a_subclass_torch_function_that_raises_on_a_flag_inside_try", """
EXPECT = "dynamic"
class Unit(torch.Tensor):
    strict = True
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if cls.strict and func is torch.Tensor.mul:
            raise TypeError("unit mismatch")
        return super().__torch_function__(func, types, args, kwargs or {})
def f(x, w):
    try:
        return x * w
    except TypeError:
        return x * 0
def make(): return f
def step(i): Unit.strict = i in (0, 1, 4)
def inputs(i): return (torch.full((2,), 3.0), torch.full((2,), 2.0).as_subclass(Unit))
def invoke(f, i):
    r = f(*inputs(i))
    return type(r).__name__, r.as_subclass(torch.Tensor)
NCALLS = 5
""")

program(F_, "calls_under_inference_mode_and_outside_it", """
EXPECT = "record"
m = nn.Sequential(nn.Linear(3, 3), nn.ReLU())
def make(): return m
def inputs(i): return (torch.ones(2, 3) * (i + 1),)
def context(i): return torch.inference_mode() if i % 2 else contextlib.nullcontext()
def invoke(f, i):
    out = f(*inputs(i))
    return out.detach().clone(), out.is_inference()
NCALLS = 6
""")

program(F_, "an_operator_raising_inside_no_grad_and_autocast_blocks", """
EXPECT = "record"
def f(x, idx):
    with torch.no_grad():
        z = x[idx] * 2
    with torch.autocast("cpu", dtype=torch.bfloat16):
        w = torch.mm(x, x)[idx].float()
    return z + w + x.sum()
def make(): return f
def inputs(i): return (torch.ones(2, 2, requires_grad=True), torch.tensor([0, 1, 5, 0, 7][i]))
def invoke(f, i):
    try:
        out = f(*inputs(i))
    except IndexError:
        out = None
    return out, torch.is_grad_enabled(), torch.is_autocast_enabled("cpu"), torch.mm(torch.ones(2, 2), torch.ones(2, 2)).dtype
NCALLS = 5
""")

program(F_, "numpy_inside_try_except_floating_point_and_linalg_errors", """
EXPECT = "dynamic"   # (numpy on tensor values under an np.errstate the call entered: run as it is)
def f(x, A):
    a = x.numpy()
    with np.errstate(all="raise"):
        try:
            b = np.log(a)
        except FloatingPointError:
            b = np.zeros_like(a)
    try:
        inv = np.linalg.inv(A.numpy())
    except np.linalg.LinAlgError:
        inv = np.eye(2)
    return torch.from_numpy(b) + float(inv.sum())
def make(): return f
def inputs(i):
    v = [1.0, 2.0, 0.0, 3.0, 2.0][i]
    A = torch.tensor([[1.0, 2.0], [2.0, 4.0]]) if i in (2, 3) else torch.eye(2) * 2
    return (torch.tensor([v, 1.0]), A)
NCALLS = 5
""")
