"""Outside state reached in less common ways: identity-keyed caches (id(), data_ptr(), weak
dictionaries), a tensor's own flags (grad, requires_grad, contiguity), counters behind
properties and __getattr__, lru_cache over a global, iterators held on self, default
arguments, copies of templates, numbers read from 0-d buffers, names looked up on torch."""
from harness import program

F_ = "reached"

program(F_, "cache_keyed_by_id_of_the_input", """
def private_cache():
    # (in a closure: raw ids differ between the two worlds, only what they decide is compared)
    cache = {}
    def lookup(k):
        return cache.get(k)
    def store(k, v):
        cache.clear()
        cache[k] = v
    return lookup, store
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.lookup, self.store = private_cache()
        self.hits = 0
    def forward(self, x):
        hit = self.lookup(id(x))
        if hit is not None:
            self.hits += 1
            return hit[1] + 1
        y = x * 2
        self.store(id(x), (x, y))   # (x kept alive: its id stays its own)
        return y
m = M()
X = torch.randn(3)
def make(): return m
def inputs(i): return (X,) if i != 2 else (torch.randn(3),)
def state(): return m.hits
NCALLS = 10
""")

program(F_, "cache_keyed_by_data_ptr", """
EXPECT = "split"
def private_slot():
    slot = [None]
    def swap(v):
        old, slot[0] = slot[0], v
        return old
    return swap
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.swap = private_slot()
        self.hits = 0
    def forward(self, x):
        if self.swap(x.data_ptr()) == x.data_ptr():
            self.hits += 1
        return x * (self.hits + 1)
m = M()
X = torch.randn(4)
def make(): return m
def inputs(i): return (X,) if i in (0, 1, 3) else (X.clone(),)
def state(): return m.hits
""")

program(F_, "weak_key_cache_of_tensors", """
EXPECT = "dynamic"
import weakref
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.memo = weakref.WeakKeyDictionary()
    def forward(self, x):
        hit = self.memo.get(x)
        if hit is not None:
            return hit * 3
        y = x.sin()
        self.memo[x] = y
        return y
m = M()
X = torch.randn(3)
def make(): return m
def inputs(i): return (X,) if i < 3 else (torch.randn(3),)
""")

program(F_, "branch_on_grad_of_an_argument", """
# `p.grad` is read through its source on every call: None guarded, a gradient an input
EXPECT = "record"
def f(p, x):
    if p.grad is None:
        return x * p
    return x * p - 0.1 * p.grad
P = torch.randn(3, requires_grad=True)
def make(): return f
def inputs(i): return (P, torch.randn(3))
def step(i):
    if i == 2:
        P.grad = torch.ones(3)
    if i == 3:
        P.grad = None
""")

program(F_, "branch_on_requires_grad_toggled_by_the_caller", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
    def forward(self, x):
        if self.lin.weight.requires_grad:
            return self.lin(x)
        return self.lin(x).detach() * 2
m = M()
def make(): return m
def inputs(i): return (torch.randn(2, 3),)
def step(i):
    m.lin.weight.requires_grad_(i % 2 == 0)
""")

program(F_, "branch_on_contiguity_of_the_input", """
def f(x):
    if x.is_contiguous():
        return x.view(-1) * 2
    return x.reshape(-1) + 1
def make(): return f
def inputs(i):
    a = torch.randn(3, 4)
    return (a if i % 2 == 0 else a.t(),)
""")

program(F_, "property_with_a_counter", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self._reads = 0
    @property
    def temperature(self):
        self._reads += 1
        return 1.0 / self._reads
    def forward(self, x):
        return x / self.temperature
m = M()
def make(): return m
def inputs(i): return (torch.randn(3),)
def state(): return m._reads
""")

program(F_, "config_with_getattr_over_a_dict", """
class Cfg:
    def __init__(self, d):
        self._d = d
    def __getattr__(self, name):
        try:
            return self.__dict__["_d"][name]
        except KeyError:
            raise AttributeError(name) from None
CFG = Cfg({"scale": 2.0, "shift": 1})
def f(x):
    return x * CFG.scale + CFG.shift
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: CFG._d["scale"] = 5.0
    if i == 3: CFG._d = {"scale": -1.0, "shift": 3}
""")

program(F_, "lru_cache_over_a_global_keeps_the_stale_value", """
import functools
TABLE = {"a": 2.0}
@functools.lru_cache(maxsize=None)
def factor(name):
    return TABLE[name]
def f(x):
    return x * factor("a")
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: TABLE["a"] = 7.0        # eager keeps returning the cached 2.0
    if i == 3: factor.cache_clear()     # now eager sees 7.0
""")

program(F_, "iterator_of_a_schedule_held_on_self", """
EXPECT = "split"
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.schedule = iter([1.0, 0.5, 0.25, 0.125, 0.0625])
    def forward(self, x):
        return x * next(self.schedule)
m = M()
def make(): return m
def inputs(i): return (torch.randn(3),)
""")

program(F_, "itertools_count_on_self", """
EXPECT = "split"
import itertools
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.counter = itertools.count()
    def forward(self, x):
        n = next(self.counter)
        return x + n
m = M()
def make(): return m
def inputs(i): return (torch.randn(3),)
""")

program(F_, "mutable_default_argument_as_a_cache", """
def f(x, _seen=[]):
    _seen.append(x.shape[0])
    return x * len(_seen)
def make(): return f
def inputs(i): return (torch.randn(2 + (i % 2)),)
def state(): return list(f.__defaults__[0])
def step(i):
    if i % 2 == 0: f.__defaults__[0].clear()
NCALLS = 6
""")

program(F_, "deepcopy_of_a_template_changed_between_calls", """
EXPECT = "record"   # (copy.deepcopy followed: its memo keys by id() of the copies it makes)
import copy
TEMPLATE = {"w": [1.0, 2.0], "name": "a"}
def f(x):
    cfg = copy.deepcopy(TEMPLATE)
    cfg["w"].append(3.0)
    return x * sum(cfg["w"])
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: TEMPLATE["w"][0] = 10.0
""")

program(F_, "number_read_from_a_zero_dim_buffer_changed_in_place", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("steps", torch.tensor(3))
    def forward(self, x):
        for _ in range(int(self.steps)):
            x = x * 0.5 + 1
        return x
m = M()
def make(): return m
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: m.steps.fill_(5)
""")

program(F_, "activation_looked_up_by_name_on_torch", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = "relu"
    def forward(self, x):
        return getattr(torch, self.act)(x)
m = M()
def make(): return m
def inputs(i): return (torch.randn(5),)
def step(i):
    if i == 2: m.act = "tanh"
""")

program(F_, "forward_replaced_on_the_instance_of_a_submodule", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Linear(3, 3)
    def forward(self, x):
        return self.inner(x) + 1
m = M()
def make(): return m
def inputs(i): return (torch.randn(2, 3),)
def step(i):
    if i == 2: m.inner.forward = lambda x: x * 100
    if i == 3: del m.inner.forward
""")

program(F_, "list_of_tensors_grown_by_the_caller", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.bank = [torch.ones(3)]
    def forward(self, x):
        return x + sum(self.bank) / len(self.bank)
m = M()
def make(): return m
def inputs(i): return (torch.randn(3),)
def step(i):
    if i >= 2: m.bank.append(torch.full((3,), float(i)))
""")

program(F_, "parameter_value_edited_in_place_by_the_caller", """
m = nn.Linear(3, 2)
def make(): return m
def inputs(i): return (torch.randn(4, 3),)
def step(i):
    if i == 2:
        with torch.no_grad():
            m.weight[0, 0] = 5.0
            m.bias.zero_()
""")

program(F_, "dtype_branch_with_the_input_dtype_changing", """
def f(x):
    if x.dtype == torch.float64:
        return x.float() * 2
    return x * 3
def make(): return f
def inputs(i): return (torch.randn(3, dtype=torch.float64 if i % 2 else torch.float32),)
""")

program(F_, "random_state_read_in_forward", """
EXPECT = "dynamic"
import random
def f(x):
    s = random.getstate()[1][0]
    return x + (s % 7)
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    random.seed(i)
""")

program(F_, "attribute_written_on_an_input_tensor_and_read_back", """
class M(nn.Module):
    def forward(self, x):
        x.grid = None                       # drop a cache the caller's object carries
        if getattr(x, "doubled", None) is None:
            x.doubled = x * 2
        return x.doubled + 1
m = M()
X = torch.randn(3)
def make(): return m
def inputs(i): return (X,) if i in (1, 2) else (torch.randn(3),)
def step(i):
    if i == 3: X.doubled = None
""")
