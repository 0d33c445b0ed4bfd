"""Written the ways users write such code, changing outside state between calls: exceptions, context managers, closures, defaults, function objects patched between calls."""
from harness import program

F_ = "user_control"

program(F_, "custom_ctxmgr_counts_enter_exit", """
EXPECT = "record"
class Timer:
    n_enter = 0
    n_exit = 0
    def __enter__(self):
        Timer.n_enter += 1
        return self
    def __exit__(self, *a):
        Timer.n_exit += 1
        return False
T = Timer()
def f(x):
    with T:
        y = x * 2
    return y
def make(): return f
def inputs(i): return (torch.ones(2),)
def state(): return Timer.n_enter, Timer.n_exit
""")

program(F_, "contextmanager_generator_sets_and_restores_global", """
EXPECT = "record"
MODE = {"scale": 1.0}
@contextlib.contextmanager
def scaled(s):
    old = MODE["scale"]
    MODE["scale"] = s
    try:
        yield
    finally:
        MODE["scale"] = old
def g(x): return x * MODE["scale"]
S = [2.0]
def f(x):
    with scaled(S[0]):
        y = g(x)
    return y + g(x)
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2: S[0] = 5.0
    if i == 3: MODE["scale"] = 3.0
""")

program(F_, "exitstack_callbacks_registered_in_call", """
EXPECT = "dynamic"
DONE = []
def f(x):
    with contextlib.ExitStack() as st:
        for k in range(2):
            st.callback(DONE.append, k)
        y = x + 1
    return y
def make(): return f
def inputs(i): return (torch.ones(2),)
def state(): return list(DONE)
""")

program(F_, "assert_on_tensor_value_raises_later", """
EXPECT = "record"
def f(x):
    assert (x > 0).all(), "non-positive input"
    return x.log()
def make(): return f
def inputs(i): return (torch.ones(2) * (-1 if i == 2 else 1),)
""")

program(F_, "exception_message_with_value", """
EXPECT = "record"
ERR = []
def f(x):
    try:
        if x.sum() > 5:
            raise ValueError(f"too big: {x.sum().item():.1f}")
        return x
    except ValueError as e:
        ERR.append(str(e))
        return x * 0
def make(): return f
def inputs(i): return (torch.ones(2) * [1, 1, 4, 5][i],)
def state(): return list(ERR)
""")

program(F_, "try_finally_writes_global_on_every_path", """
EXPECT = "record"
STATE = {"busy": False, "n": 0}
def f(x):
    STATE["busy"] = True
    try:
        if x.max() > 1:
            return x.sqrt()
        return x
    finally:
        STATE["busy"] = False
        STATE["n"] += 1
def make(): return f
def inputs(i): return (torch.ones(2) * [1, 4, 1, 9][i],)
""")

program(F_, "exception_swallowed_counter", """
EXPECT = "record"
FAILS = [0]
D = {"a": 1.0}
def f(x):
    try:
        s = D["b"]
    except KeyError:
        FAILS[0] += 1
        s = 0.5
    return x * s
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2: D["b"] = 3.0
    if i == 3: del D["b"]
""")

program(F_, "mutable_default_argument_cache", """
EXPECT = "dynamic"
def f(x, _cache={}):
    n = x.shape[0]
    if n not in _cache:
        _cache[n] = torch.arange(float(n))
    return x + _cache[n], len(_cache)
def make(): return f
def inputs(i): return (torch.ones(2 + (i % 2)),)
def step(i):
    if i == 3: f.__defaults__[0].clear()
""")

program(F_, "defaults_tuple_replaced", """
EXPECT = "record"
def f(x, scale=2.0, *, shift=0.0):
    return x * scale + shift
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2: f.__defaults__ = (3.0,)
    if i == 3: f.__kwdefaults__ = {"shift": 1.0}
""")

program(F_, "closure_cell_rebound_by_factory_setter", """
EXPECT = "record"
def make_scaler():
    s = 1.0
    def fwd(x): return x * s
    def set_s(v):
        nonlocal s
        s = v
    return fwd, set_s
FWD, SET = make_scaler()
def make(): return FWD
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2: SET(4.0)
""")

program(F_, "code_object_swapped", """
EXPECT = "record"
def act(x): return torch.relu(x)
def other(x): return torch.sigmoid(x)
def f(x): return act(x) * 2
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: act.__code__ = other.__code__
""")

program(F_, "torch_function_monkeypatched_between_calls", """
EXPECT = "record"
_ORIG = F.gelu
def f(x): return F.gelu(x)
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: F.gelu = lambda x, approximate="none": x * 0 + 7
    if i == 3: F.gelu = _ORIG
CLEANUP.append(lambda: setattr(F, "gelu", _ORIG))
""")

program(F_, "tensor_method_monkeypatched_between_calls", """
EXPECT = "record"
_ORIG = torch.Tensor.softmax
def f(x): return x.softmax(-1)
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: torch.Tensor.softmax = lambda self, d: self * 0 + 1
    if i == 3: torch.Tensor.softmax = _ORIG
CLEANUP.append(lambda: setattr(torch.Tensor, "softmax", _ORIG))
""")

program(F_, "module_global_function_rebound_in_helper_module", """
EXPECT = "record"
UTIL = new_module("rt6util", '''
def norm(x): return x / x.norm()
''')
def f(x): return UTIL.norm(x) + 1
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: UTIL.norm = lambda x: x * 0
""")

program(F_, "lambda_in_list_rebinds_loop_variable", """
EXPECT = "record"
FNS = [lambda x, k=k: x * k for k in range(3)]
def f(x):
    return sum(fn(x) for fn in FNS)
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2: FNS.append(lambda x: x * 10)
    if i == 3: FNS[0].__defaults__ = (100,)
""")

program(F_, "suppress_keyerror_around_python_lookup", """
EXPECT = "record"
D = {}
def f(x):
    s = 1.0
    with contextlib.suppress(KeyError):
        s = D["scale"]
    return x * s
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2: D["scale"] = 4.0
""")

program(F_, "no_grad_decorator_method_and_enable_grad_inside", """
EXPECT = "dynamic"
W = torch.ones(2, requires_grad=True)
class M:
    @torch.no_grad()
    def run(self, x, need):
        y = W * x
        if need:
            with torch.enable_grad():
                z = W * x
            return y, z
        return y, y
OBJ = M()
NEED = [False]
def f(x):
    a, b = OBJ.run(x, NEED[0])
    return a.requires_grad, b.requires_grad, a + b
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2: NEED[0] = True
""")

program(F_, "stopiteration_from_next_default", """
EXPECT = "record"
ITEMS = []
def f(x):
    first = next(iter(ITEMS), None)
    return x if first is None else x * first
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2: ITEMS.append(3.0)
""")
