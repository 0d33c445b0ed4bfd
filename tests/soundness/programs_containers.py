"""Containers and outside state: list append in forward, dict caches on self, global counters,
closures over mutable cells, nonlocal writes, dataclass configs, OrderedDict, deque, sets."""
from harness import program

F_ = "containers"

program(F_, "list_append_in_forward", """
class Rec(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.history = []
    def forward(self, x):
        y = self.lin(x)
        self.history.append(y.detach())
        return y
m = Rec()
def make(): return m
def inputs(i): return torch.randn(2, 3)
""")

program(F_, "dict_cache_on_self", """
class Rope(nn.Module):
    def __init__(self):
        super().__init__()
        self.cache = {}
    def forward(self, x):
        n = x.shape[0]
        if n not in self.cache:
            self.cache[n] = torch.arange(n, dtype=torch.float32).cos()
        return x * self.cache[n][:, None]
m = Rope()
def make(): return m
def inputs(i): return torch.randn(3, 2)
def step(i):
    if i == 2: m.cache.clear()
    if i == 3: m.cache[3] = torch.zeros(3)
""")

program(F_, "global_counter", """
CALLS = 0
def f(x):
    global CALLS
    CALLS += 1
    return x * CALLS
def make(): return f
def inputs(i): return torch.ones(2)
""")

program(F_, "closure_over_mutable_cell", """
def build():
    hist = []
    def f(x):
        hist.append(float(len(hist)))
        return x * len(hist)
    return f, hist
FN, HIST = build()
def make(): return FN
def inputs(i): return torch.ones(2)
def step(i):
    if i % 2 == 0: HIST.clear()
NCALLS = 6
""")

program(F_, "nonlocal_write", """
def build():
    count = 0
    def f(x):
        nonlocal count
        count += 1
        return x * count
    def get(): return count
    def reset():
        nonlocal count
        count = 0
    return f, get, reset
FN, GET, RESET = build()
def make(): return FN
def inputs(i): return torch.ones(2)
def state(): return GET()
def step(i):
    if i % 2 == 0: RESET()
NCALLS = 6
""")

program(F_, "dataclass_config_changed", """
@dataclass
class Cfg:
    scale: float = 2.0
    act: str = "relu"
class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.lin = nn.Linear(3, 3)
    def forward(self, x):
        h = self.lin(x) * self.cfg.scale
        return torch.relu(h) if self.cfg.act == "relu" else torch.tanh(h)
cfg = Cfg()
m = Block(cfg)
def make(): return m
def inputs(i): return torch.randn(2, 3)
def step(i):
    if i == 1: cfg.scale = 3.0
    if i == 2: m.cfg = Cfg(scale=-1.0, act="tanh")
""")

program(F_, "frozen_dataclass_replaced", """
@dataclass(frozen=True)
class Cfg:
    dropout: float = 0.0
    residual: bool = True
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.cfg = Cfg()
        self.lin = nn.Linear(3, 3)
    def forward(self, x):
        h = self.lin(x)
        return x + h if self.cfg.residual else h
m = Block()
def make(): return m
def inputs(i): return torch.randn(2, 3)
def step(i):
    if i == 2: m.cfg = dataclasses.replace(m.cfg, residual=False)
""")

program(F_, "ordered_dict_features", """
EXPECT = "dynamic"
class Feats(nn.Module):
    def __init__(self):
        super().__init__()
        self.feats = collections.OrderedDict()
        self.a = nn.Linear(3, 3)
    def forward(self, x):
        self.feats["a"] = self.a(x)
        self.feats["b"] = x * 2
        self.feats.move_to_end("a")
        return sum(self.feats.values())
m = Feats()
def make(): return m
def inputs(i): return torch.randn(2, 3)
""")

program(F_, "deque_sliding_window", """
class Smooth(nn.Module):
    def __init__(self):
        super().__init__()
        self.window = collections.deque(maxlen=3)
    def forward(self, x):
        self.window.append(x.mean())
        return torch.stack(list(self.window)).mean()
m = Smooth()
def make(): return m
def inputs(i): return torch.full((3,), float(i))
NCALLS = 5
""")

program(F_, "global_queue_pop", """
QUEUE = [1.0, 2.0, 3.0, 4.0, 5.0]
def f(x):
    k = QUEUE.pop(0)
    return x * k
def make(): return f
def inputs(i): return torch.ones(2)
def step(i):
    if i % 2 == 0: QUEUE[:] = [1.0, 2.0, 3.0]
NCALLS = 6
""")

program(F_, "set_of_seen_shapes", """
SEEN = set()
def f(x):
    first = tuple(x.shape) not in SEEN
    SEEN.add(tuple(x.shape))
    return x * (2 if first else 1)
def make(): return f
def inputs(i): return torch.ones(2 if i < 2 else 3)
NCALLS = 6
""")

program(F_, "dict_setdefault_update", """
STATS = {}
def f(x):
    STATS.setdefault("n", 0)
    STATS["n"] += 1
    STATS.update(last=x.shape[0])
    return x * STATS["n"]
def make(): return f
def inputs(i): return torch.ones(2)
def step(i):
    if i % 2 == 0: STATS.clear()
NCALLS = 6
""")

program(F_, "global_rebound_dict", """
CACHE = {"k": 1.0}
def f(x):
    return x * CACHE["k"]
def make(): return f
def inputs(i): return torch.ones(2)
def step(i):
    global CACHE
    if i == 2: CACHE = {"k": 9.0}
""")

program(F_, "counter_update", """
EXPECT = "dynamic"
USAGE = collections.Counter()
class Router(nn.Module):
    def forward(self, x):
        e = "big" if x.shape[0] > 2 else "small"
        USAGE[e] += 1
        return x * len(USAGE)
m = Router()
def make(): return m
def inputs(i): return torch.ones(3 if i == 2 else 2)
""")

program(F_, "list_of_tensors_extend_and_del", """
class Mem(nn.Module):
    def __init__(self):
        super().__init__()
        self.mem = [torch.zeros(2)]
    def forward(self, x):
        self.mem.extend([x, x * 2])
        if len(self.mem) > 3:
            del self.mem[0]
        return torch.stack(self.mem).sum(0)
m = Mem()
def make(): return m
def inputs(i): return torch.ones(2) * i
def step(i):
    if i % 2 == 0: m.mem[:] = [torch.zeros(2)]
NCALLS = 6
""")

program(F_, "simple_namespace_state", """
STATE = types.SimpleNamespace(step=0, lr=1.0)
def f(x):
    STATE.step += 1
    STATE.lr = STATE.lr * 0.5
    return x * STATE.lr
def make(): return f
def inputs(i): return torch.ones(2)
""")

program(F_, "list_arg_mutated_sorted", """
def f(xs, t):
    xs.sort(reverse=True)
    xs.append(len(xs))
    return t * xs[0]
L = [3, 1, 2]
def make(): return f
def inputs(i): return (L, torch.ones(2))
def step(i):
    if i % 2 == 0: L[:] = [3, 1, 2]
NCALLS = 6
""")

program(F_, "returned_dict_is_self_cache", """
class Enc(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = {}
    def forward(self, x):
        self.out["y"] = x * 2
        return self.out
m = Enc()
def make(): return m
def inputs(i): return torch.randn(3)
def post(out, i): return out is m.out
""")

program(F_, "getattr_dynamic_layer_names", """
class Deep(nn.Module):
    def __init__(self):
        super().__init__()
        for k in range(3):
            setattr(self, f"layer{k}", nn.Linear(3, 3))
        self.num_layers = 3
    def forward(self, x):
        for k in range(self.num_layers):
            x = torch.tanh(getattr(self, f"layer{k}")(x))
        return x
m = Deep()
def make(): return m
def inputs(i): return torch.randn(2, 3)
def step(i):
    if i == 2: m.num_layers = 1
""")

program(F_, "moduledict_key_added", """
class Heads(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleDict({"a": nn.Linear(3, 1)})
    def forward(self, x):
        return torch.cat([h(x) for h in self.heads.values()], -1)
m = Heads()
def make(): return m
def inputs(i): return torch.randn(2, 3)
def step(i):
    if i == 2: m.heads["b"] = nn.Linear(3, 1)
""")

program(F_, "parameter_replaced_between_calls", """
m = nn.Linear(3, 2)
def make(): return m
def inputs(i): return torch.ones(1, 3)
def step(i):
    if i == 2: m.weight = nn.Parameter(torch.zeros(2, 3))
""")

program(F_, "module_to_float64_between_calls", """
m = nn.Sequential(nn.Linear(3, 3), nn.ReLU())
def make(): return m
def inputs(i): return torch.randn(2, 3, dtype=torch.float64 if i >= 2 else torch.float32)
def step(i):
    if i == 2: m.to(torch.float64)
""")

program(F_, "buffer_deleted_and_readded", """
class Opt(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("bias", torch.ones(3))
    def forward(self, x):
        if hasattr(self, "bias") and self.bias is not None:
            return x + self.bias
        return x
m = Opt()
def make(): return m
def inputs(i): return torch.zeros(3)
def step(i):
    if i == 2: m.bias = None
    if i == 3: m.bias = torch.full((3,), 7.0)
""")

program(F_, "tensor_python_attribute_tag", """
EXPECT = "record"   # (y.source on the tensor the call made: set on the graph output by the mock)
def tag(x):
    x.tag = "seen"
    y = x * 2
    y.source = getattr(x, "origin", "unknown")
    return y
def make(): return tag
def inputs(i):
    x = torch.ones(2)
    if i == 2: x.origin = "loader"
    return x
def post(out, i): return getattr(out, "source", None)
""")

program(F_, "exhausted_iterator_stopiteration", """
EXPECT = "split"
SCALES = iter([1.0, 2.0, 3.0])
def f(x):
    return x * next(SCALES)
def make(): return f
def inputs(i): return torch.ones(2)
""")

program(F_, "dunder_dict_update_config", """
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.alpha = 1.0
    def forward(self, x):
        return x * self.alpha
m = Block()
def make(): return m
def inputs(i): return torch.ones(2)
def step(i):
    if i == 2: m.__dict__.update(alpha=-4.0)
""")

program(F_, "kwargs_and_argument_list_stored_on_self", """
# `self.input_kwargs = kwargs` (a reversible block keeps its call's arguments for the backward
# pass): the stored dict is the call's own, the stored list is the caller's very object; the
# caller changes its list after a call, and later calls pass other keywords.
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.input_args = ()
        self.input_kwargs = {}
    def forward(self, x, extra, *args, **kwargs):
        self.input_args = args
        self.input_kwargs = kwargs
        self.extra = extra
        return self.fc(x) * kwargs.get("scale", 1.0) + len(extra)
m = M()
lists = [[1], [1, 2], [3], [4, 5, 6], [7]]
def make(): return m
def inputs(i):
    i = i % 5
    x = torch.randn(2, 4, generator=torch.Generator().manual_seed(i))
    return ((x, lists[i], i) if i % 2 else (x, lists[i]), {"scale": float(i)} if i < 3 else {})
def step(i):
    if i == 2:
        lists[1].append(9)
def state():
    return (m.input_args, dict(m.input_kwargs), m.extra is lists[len(lists) - 1] or [m.extra is l for l in lists])
NCALLS = 8
""")
