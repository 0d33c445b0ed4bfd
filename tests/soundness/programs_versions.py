"""Versions: the mock replays what the call changed outside in the order and to the final version
the call left (a global written twice, a cell written then read back, a list appended to and then
an item of it replaced, a dict key deleted and set again, one object changed through two paths)."""
from harness import program

F_ = "versions"

program(F_, "global_written_twice", """
EXPECT = "record"
step_count = 0
last_scale = 1.0
def f(x, s):
    global step_count, last_scale
    step_count = step_count + 1
    last_scale = s
    y = x * last_scale
    step_count = step_count * 10
    last_scale = s + step_count
    return y + last_scale
def make(): return f
def inputs(i): return (torch.ones(3) * i, 2.0)
def step(i):
    global step_count
    if i == 3:
        step_count = 7
NCALLS = 6
""")

program(F_, "cell_written_then_read_back", """
EXPECT = "record"
def outer():
    total = 0
    last = None
    def f(x, k):
        nonlocal total, last
        total = total + k
        y = x * total
        last = (total, y.shape[0])
        total = total - k
        return y + total + last[0]
    def reset(v):
        nonlocal total
        total = v
    return f, reset, lambda: (total, last)
fn, reset, peek = outer()
def make(): return fn
def inputs(i): return (torch.ones(2), 3)
def step(i):
    if i == 3:
        reset(5)
def state(): return peek()
NCALLS = 7
""")

program(F_, "list_appended_then_item_replaced", """
EXPECT = "record"
class Log(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.seen = ["start"]
    def forward(self, x):
        self.seen.append("a")
        self.seen.append("b")
        self.seen[-1] = "c"
        self.seen[0] = "first"
        self.seen.append(x.shape[0])
        return self.lin(x)
m = Log()
def make(): return m
def inputs(i): return torch.ones(2, 3)
def step(i):
    if i == 3:
        m.seen[:] = ["again"]
def state(): return list(m.seen)
NCALLS = 6
""")

program(F_, "dict_key_deleted_and_readded", """
EXPECT = "record"
cache = {"a": 1, "b": 2, "c": 3}
def f(x):
    v = cache["a"]
    del cache["a"]
    cache["d"] = v + 1
    cache["a"] = v + 10
    del cache["b"]
    cache["b"] = 5
    return x + len(cache) + cache["a"]
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    cache.clear()
    cache.update({"a": 4 if i >= 3 else 1, "b": 2, "c": 3})
def state(): return list(cache.items())
NCALLS = 7
""")

program(F_, "object_changed_through_two_paths", """
EXPECT = "record"
class Box:
    def __init__(self):
        self.n = 0
        self.items = []
box = Box()
holder = {"box": box}
class M(nn.Module):
    def __init__(self, b):
        super().__init__()
        self.b = b
        self.lin = nn.Linear(2, 2)
    def forward(self, x):
        self.b.n = self.b.n + 1
        holder["box"].n = holder["box"].n * 2
        holder["box"].items.append(self.b.n)
        self.b.items[-1] = self.b.n + 100
        return self.lin(x) + self.b.n
m = M(box)
def make(): return m
def inputs(i): return torch.ones(1, 2)
def step(i):
    if i == 3:
        box.n = 5
def state(): return (box.n, list(box.items), holder["box"] is box)
NCALLS = 7
""")

program(F_, "global_list_rebound_then_appended", """
EXPECT = "record"
trace = []
def f(x):
    global trace
    old = trace
    old.append("seen")
    trace = [len(old)]
    trace.append("new")
    return x * len(trace)
def make(): return f
def inputs(i): return (torch.ones(2),)
def state(): return list(trace)
NCALLS = 6
""")
