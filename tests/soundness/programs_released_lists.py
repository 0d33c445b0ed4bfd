"""Lists the call makes and drops while it runs: the monitor run lets go of a list once nothing but
the run holds it and no write names it (its activations die then, as in eager), and a later object
may take its ``id()`` (CPython hands a freed list's address to the next list made). The programs
forward through ``[self, *args]`` lists, make, drop and make again lists of the same size, write
lists in loops beside accumulators, keep lists alive only through a generator, a closure cell or
an outside container, and change outside state between calls: every call must still equal eager."""
from harness import program

F_ = "released_lists"

program(F_, "forward_wrapper_passing_self_and_star_args_through_a_layer_stack", """
import functools
def wrapped(forward):
    @functools.wraps(forward)
    def run(self, *args, **kwargs):
        return forward(self, *args, **kwargs)   # builds [self, *args]: dropped after the call
    return run
class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
    def forward(self, x, scale=1.0):
        return self.lin(x).tanh() * scale
Layer.forward = wrapped(Layer.forward)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(Layer() for _ in range(40))
    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x, 0.5 + 0.01 * i) + x
        return x
m = Net()
def make(): return m
def inputs(i): return torch.randn(2, 8)
def step(i):
    if i == 2: m.layers[7].lin.weight.data.mul_(0.5)
""")

program(F_, "lists_dropped_in_a_loop_then_a_list_stored_outside", """
store = {}
def f(x):
    for i in range(150):
        parts = [x * i, x + i]          # dropped at the next iteration
        x = parts[0].tanh() + parts[1].sin() * 0.1
    store["last"] = [x, x * 2]          # a new list, likely at the address of a dropped one
    store["n"] = len(store["last"])
    return x
def make(): return f
def inputs(i): return torch.randn(3)
def step(i):
    if i == 2: store.clear()
def state(): return store
""")

program(F_, "list_written_in_each_iteration_beside_an_accumulator", """
def f(xs):
    acc = []
    for x in xs:
        tmp = []
        tmp.append(x * 2)               # a write to a list made and dropped in the iteration
        tmp.append(x.sin())
        acc.append(tmp[0] + tmp[1])
    return torch.stack(acc).sum(0)
def make(): return f
def inputs(i): return [torch.randn(3) for _ in range(3 + i % 3)]
""")

program(F_, "list_kept_only_by_a_suspended_generator", """
def gen(x):
    held = [x * 2, x * 3]
    yield held[0]
    held.append(x * 4)
    yield held[-1]
def f(x):
    g = gen(x)
    a = next(g)
    for i in range(150):
        t = [a + i, a - i]
        a = t[0] * 0.5 + t[1] * 0.5
    b = next(g)
    return a + b
def make(): return f
def inputs(i): return torch.randn(3)
""")

program(F_, "list_kept_only_by_a_closure_cell", """
def f(x):
    held = [x.sin(), x.cos()]
    def use():
        return held[0] * held[1]
    for i in range(150):
        t = [x + i]
        x = t[0] * 0.9
    held.append(x)
    return x + use() + held[-1]
def make(): return f
def inputs(i): return torch.randn(3)
""")

program(F_, "list_identity_compared_after_others_died", """
EXPECT = "split"   # (`id()` of a list made in the call: a new number every call, run eagerly there)
seen = []
def f(x):
    first = [x, 1]
    for i in range(150):
        tmp = [x * i, i]
        x = tmp[0].cos()
    again = [x, 1]
    seen.append(first is again)
    seen.append(id(first) == id(again))
    return x, first[0]
def make(): return f
def inputs(i): return torch.randn(3)
def state(): return seen
""")

program(F_, "lists_kept_by_an_outside_list_among_dropped_ones", """
kept = []
def f(x):
    kept.clear()
    for i in range(120):
        t = [x * i, i]                  # dropped at the next iteration
        if i % 3 == 0:
            kept.append(t)              # reachable from outside: never let go
        x = t[0].tanh() * 0.5 + x
    held = kept[5]
    held[1] = held[1] + 100             # written after many lists of its size died
    again = [held[0], 115]
    return x, held[1], again == held, kept[-1][0]
def make(): return f
def inputs(i): return torch.randn(3)
def step(i):
    if i == 2: kept.append([torch.zeros(1), -1])
def state(): return kept
""")
