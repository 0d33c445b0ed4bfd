"""Objects without a source path: mutable defaults of helpers (memo caches), weakref targets,
next() on outside iterators/generators, itertools.count, id() used as a dict key."""
from harness import program

F_ = "nosource"

program(F_, "mutable_default_memo_cache", """
def pos_enc(n, d, _cache={}):
    key = (n, d)
    if key not in _cache:
        _cache[key] = torch.arange(n, dtype=torch.float32)[:, None] * torch.linspace(0, 1, d)
    return _cache[key]
class Enc(nn.Module):
    def forward(self, x):
        return x + pos_enc(x.shape[0], x.shape[1])
m = Enc()
def make(): return m
def inputs(i): return torch.randn(3, 4)
def step(i):
    if i == 2:
        pos_enc.__defaults__[0][(3, 4)] = torch.ones(3, 4)   # user overrides a cached table
def state(): return dict(pos_enc.__defaults__[0])
""")

program(F_, "mutable_default_list_history", """
def record(v, _hist=[]):
    _hist.append(v)
    return len(_hist)
def scaled(x):
    n = record(1)
    return x * n
def make(): return scaled
def inputs(i): return torch.randn(3)
def state(): return list(record.__defaults__[0])
def step(i):
    if i % 2 == 0: record.__defaults__[0].clear()
NCALLS = 6
""")

program(F_, "weakref_owner_attribute", """
class Owner:
    def __init__(self, s): self.scale = s
class Head(nn.Module):
    def __init__(self, owner):
        super().__init__()
        self._owner = weakref.ref(owner)
        self.lin = nn.Linear(4, 4)
    def forward(self, x):
        return self.lin(x) * self._owner().scale
A, B = Owner(1.0), Owner(-2.0)
m = Head(A)
def make(): return m
def inputs(i): return torch.randn(2, 4)
def step(i):
    if i == 1: A.scale = 3.0
    if i == 2: m._owner = weakref.ref(B)
    if i == 3: B.scale = 0.5
""")

program(F_, "weakref_parent_module", """
class Child(nn.Module):
    def __init__(self):
        super().__init__()
        self._parent = None
    def forward(self, x):
        p = self._parent()
        return x * p.temperature
class Parent(nn.Module):
    def __init__(self):
        super().__init__()
        self.child = Child()
        self.child._parent = weakref.ref(self)
        self.temperature = 1.0
    def forward(self, x):
        return self.child(x) + 1
m = Parent()
def make(): return m
def inputs(i): return torch.randn(3)
def step(i):
    if i == 2: m.temperature = 0.25
""")

program(F_, "next_on_outside_iterator", """
EXPECT = "split"
NOISE = iter([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
def add_noise(x):
    return x + next(NOISE)
def make(): return add_noise
def inputs(i): return torch.zeros(3)
""")

program(F_, "generator_lr_schedule", """
EXPECT = "split"
def schedule(lr):
    while True:
        yield lr
        lr *= 0.5
SCHED = schedule(1.0)
class Step(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(3))
    def forward(self, g):
        lr = next(SCHED)
        with torch.no_grad():
            self.w.sub_(lr * g)
        return self.w * 1
m = Step()
def make(): return m
def inputs(i): return torch.ones(3)
""")

program(F_, "itertools_count_step", """
EXPECT = "split"
COUNTER = itertools.count()
def warmup(x):
    step = next(COUNTER)
    return x * min(1.0, (step + 1) / 3)
def make(): return warmup
def inputs(i): return torch.ones(3)
""")

program(F_, "id_as_dict_key", """
_REG = {}
def embed(layer, x):
    key = id(layer)
    if key not in _REG:
        _REG[key] = len(_REG) + 1
    return layer(x) * _REG[key]
L1, L2 = nn.Linear(3, 3), nn.Linear(3, 3)
def make(): return embed
def inputs(i): return ((L1, L2, L2, L1)[i % 4], torch.randn(2, 3))
def state(): return sorted(_REG.values())
NCALLS = 7
""")

program(F_, "closure_counter_factory", """
def make_counter():
    c = [0]
    def tick():
        c[0] += 1
        return c[0]
    return tick
tick = make_counter()
class Warm(nn.Module):
    def forward(self, x):
        return x * tick()
m = Warm()
def make(): return m
def inputs(i): return torch.ones(2)
""")

program(F_, "random_object_registry_lookup", """
class Registry:
    def __init__(self): self._fns = {}
    def register(self, name):
        def deco(f):
            self._fns[name] = f
            return f
        return deco
    def get(self, name): return self._fns[name]
ACTS = Registry()
@ACTS.register("act")
def _relu(x): return torch.relu(x)
class Block(nn.Module):
    def forward(self, x):
        return ACTS.get("act")(x - 0.5)
m = Block()
def make(): return m
def inputs(i): return torch.randn(4)
def step(i):
    if i == 2:
        ACTS.register("act")(torch.tanh)
""")

program(F_, "lambda_inside_reads_a_free_variable_of_the_compiled_function", """
def build():
    order = {"a": 2, "b": 0, "c": 1}
    def f(x):
        feats = [("a", x * 2), ("b", x + 1), ("c", x - 3)]
        ranked = sorted(feats, key=lambda kv: order[kv[0]])
        weight = (lambda k: order[k])("a")
        return torch.stack([t for _, t in ranked]) * weight
    return f, order
f, ORDER = build()
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: ORDER["a"] = -1
""")

program(F_, "nested_function_writes_a_free_variable_of_the_compiled_function", """
def build():
    count = 0
    scale = [1.0]
    def f(x):
        def bump():
            nonlocal count
            count += 1
            return count
        n = bump()
        return x * n * scale[0]
    def reset():
        nonlocal count
        count = 0
    return f, scale, reset
f, SCALE, RESET = build()
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: SCALE[0] = 5.0
    if i % 2 == 0: RESET()
NCALLS = 6
""")
