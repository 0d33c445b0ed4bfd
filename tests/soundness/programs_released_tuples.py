"""Tuples the call makes and drops while it runs: the monitor run lets go of a tuple once nothing
but the run holds it (its activations die then, as in eager), and a later object may take its
``id()``. The programs make, drop and make again tuples of the same size (the allocator hands the
same address back), store new tuples, lists and dicts into outside state after that, keep tuples
alive only through a generator, a closure cell or a dict key, and change outside state between
calls: every call must still equal eager."""
from harness import program

F_ = "released_tuples"

program(F_, "pairs_dropped_in_a_loop_then_a_tuple_stored", """
def pair(x, i):
    return (x * i, x + i)
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.last = None
    def forward(self, x):
        acc = x
        for i in range(150):
            a, b = pair(acc, i)
            acc = a.tanh() + b.sin()
        self.last = (acc, x)   # a new tuple, likely at the address of one dropped above
        return acc
m = M()
def make(): return m
def inputs(i): return torch.randn(3)
def state(): return m.last
""")

program(F_, "dropped_tuple_then_list_written_and_returned", """
def parts(x):
    return (x.relu(), x.neg(), x.exp())
cache = {}
def f(x):
    for _ in range(150):
        p = parts(x)
        x = p[0] + p[1] * 0.5 + p[2] * 0.1
    out = [x]            # new containers made after the tuples died
    out.append(x * 2)
    d = {"k": out}
    cache["last"] = d
    return out
def make(): return f
def inputs(i): return torch.randn(4)
def state(): return cache
""")

program(F_, "tuple_kept_only_by_a_suspended_generator", """
def gen(x):
    held = (x * 2, x * 3)
    yield held[0]
    yield held[1]
def f(x):
    g = gen(x)
    a = next(g)
    for i in range(150):
        t = (a + i, a - i)
        a = t[0] * 0.5 + t[1] * 0.5
    b = next(g)
    return a + b
def make(): return f
def inputs(i): return torch.randn(3)
""")

program(F_, "tuple_kept_only_by_a_closure_cell", """
def f(x):
    held = (x.sin(), x.cos())
    def use():
        return held[0] * held[1]
    for i in range(150):
        t = (x + i,)
        x = t[0] * 0.9
    return x + use()
def make(): return f
def inputs(i): return torch.randn(3)
""")

program(F_, "tuple_as_key_of_an_outside_dict_then_removed", """
registry = {}
def f(x, n):
    key = (n, "step")
    registry[key] = x * 2
    for i in range(150):
        t = (x * i, i)
        x = t[0].tanh()
    val = registry.pop(key)
    registry[(n, "done")] = val.sum()
    return x + val
def make(): return f
def inputs(i): return (torch.randn(3), 5)
def step(i):
    if i == 2: registry.clear()
def state(): return registry
""")

program(F_, "module_returns_tuples_through_a_sequential_loop", """
class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
    def forward(self, x):
        h = self.lin(x)
        return (h.relu(), h.softmax(-1))
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(Layer() for _ in range(80))
        self.weights = []
    def forward(self, x):
        self.weights = []
        for layer in self.layers:
            out = layer(x)
            x = out[0]
            self.weights.append(out[1])
        return x, tuple(self.weights)
m = Net()
def make(): return m
def inputs(i): return torch.randn(2, 8)
def step(i):
    if i == 2: m.layers[3].lin.weight.data.mul_(0.5)
""")

program(F_, "tuple_identity_compared_after_others_died", """
seen = []
def f(x):
    first = (x, 1)
    for i in range(150):
        tmp = (x * i, i)
        x = tmp[0].cos()
    again = (x, 1)
    seen.append(first is again)
    return x, first[0]
def make(): return f
def inputs(i): return torch.randn(3)
def state(): return seen
""")

program(F_, "tuples_kept_by_an_outside_list_among_dropped_ones", """
kept = []
def f(x):
    kept.clear()
    for i in range(120):
        t = (x * i, i)               # dropped at the next iteration
        if i % 3 == 0:
            kept.append((t[0], i))   # reachable from outside: never let go
        x = t[0].tanh() * 0.5 + x
    held = kept[5]
    again = (held[0], 15)            # a new tuple, likely at the address of a dropped one
    return x, held[1], again is held, kept[-1][0]
def make(): return f
def inputs(i): return torch.randn(3)
def step(i):
    if i == 2: kept.append((torch.zeros(1), -1))
def state(): return kept
""")
