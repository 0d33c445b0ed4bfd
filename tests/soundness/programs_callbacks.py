"""Programs written the way users write models, with outside state changed
between calls: natives calling the program back from C (a ``key=`` function whose values are read
from tensors; ``sum``/``tuple`` over ``map(f, ...)``), lazy modules built by the first call, ints
read from integer tensors, counters lifted from their first change, and arithmetic on followed
numbers inside ``try``."""
from harness import program

F_ = "callbacks"

program(F_, "sorted_by_item_keys_outside_list_grows", """
EXPECT = "record"
class Ranker(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
        self.history = []
    def forward(self, x):
        outs = [h(x) for h in self.heads]
        ranked = sorted(outs, key=lambda t: t.mean().item(), reverse=True)
        self.history.append(len(ranked))
        return ranked[0] - ranked[-1], max(outs, key=lambda t: t.abs().sum().item())
m = Ranker()
def make(): return m
def inputs(i): return (torch.randn(2, 4, generator=torch.Generator().manual_seed(i % 3)),)
def step(i):
    if i == 4:
        m.history.clear()
NCALLS = 8
""")

program(F_, "list_sort_in_place_by_keys_read_from_tensors", """
EXPECT = "record"
def f(x, pool):
    pool.sort(key=lambda t: float(t.sum()))
    return pool[0] * x, [float(t.sum()) for t in pool]
pool = [torch.full((2,), v) for v in (3.0, -1.0, 2.0)]
def make(): return f
def inputs(i): return (torch.ones(2), pool)
def step(i):
    if i in (2, 5):
        pool[0].neg_()   # the order changes between calls (and with it, the list sorted in place)
NCALLS = 7
""")

program(F_, "sum_of_map_over_branches_modules_swapped", """
EXPECT = "record"
class SumBranches(nn.Module):
    def __init__(self):
        super().__init__()
        self.branches = nn.ModuleList([nn.Linear(3, 3), nn.Tanh()])
    def forward(self, x):
        return sum(map(lambda fn: fn(x), self.branches)), tuple(map(lambda fn: fn(x).relu(), self.branches))
m = SumBranches()
def make(): return m
def inputs(i): return (torch.randn(2, 3, generator=torch.Generator().manual_seed(i)),)
def step(i):
    if i == 3:
        m.branches.append(nn.Sigmoid())
NCALLS = 6
""")

program(F_, "lazy_linear_built_by_the_first_call", """
EXPECT = "record"
class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.LazyLinear(6), nn.ReLU(), nn.LazyLinear(2))
        self.calls = 0
    def forward(self, x):
        self.calls += 1
        return self.body(x) * self.calls
m = Head()
def make(): return m
def inputs(i): return (torch.randn(3, 5, generator=torch.Generator().manual_seed(i)),)
NCALLS = 5
""")

program(F_, "int_count_of_a_mask_flows_and_branches", """
EXPECT = "record"
class Balance(nn.Module):
    def __init__(self):
        super().__init__()
        self.seen = 0
    def forward(self, pred, target):
        pos = (target > 0.5).sum().item()
        self.seen += pos
        w = torch.where(target > 0.5, 1.0 / max(pos, 1), 1.0)
        if pos > 2:
            w = w * 2
        return (w * (pred - target) ** 2).sum() / max(pos, 1), pos
m = Balance()
def make(): return m
def inputs(i):
    g = torch.Generator().manual_seed(i)
    return (torch.randn(6, generator=g), torch.rand(6, generator=g))
NCALLS = 8
""")

program(F_, "division_by_a_counter_that_reaches_zero_inside_try", """
EXPECT = "record"
class Decay(nn.Module):
    def __init__(self):
        super().__init__()
        self.left = 3
    def forward(self, x):
        self.left -= 1
        try:
            w = 1.0 / self.left
        except ZeroDivisionError:
            w = 0.0
        return x * w
m = Decay()
def make(): return m
def inputs(i): return (torch.ones(2),)
NCALLS = 6
""")

# Adversarial programs against the features above (each was a silent wrong result before its fix).

program(F_, "filter_by_a_predicate_returning_a_size", """
EXPECT = "record"
def f(xs):
    return sum(filter(lambda t: t.shape[1:], xs))   # an empty torch.Size for a 1-d tensor: dropped
xs = [torch.ones(2, 1), torch.full((2,), 5.0), torch.full((2, 1), 2.0)]
def make(): return f
def inputs(i): return (list(xs),)
""")

program(F_, "filter_by_an_int_count_read_from_a_tensor", """
EXPECT = "record"
def f(xs):
    return sum(filter(lambda t: (t > 0).sum().item(), xs))   # a count of 0 drops the tensor
def make(): return f
def inputs(i):
    g = torch.Generator().manual_seed(i % 2)
    return ([torch.randn(3, generator=g), -torch.ones(3), torch.ones(3)],)
""")

program(F_, "nested_maps_of_one_function", """
EXPECT = "dynamic"
def dbl(t):
    return t * 2
def f(xs):
    return sum(map(dbl, map(dbl, xs)))
def make(): return f
def inputs(i): return ([torch.tensor([1.0 + i]), torch.tensor([2.0])],)
""")

program(F_, "sorted_and_max_of_a_map_with_a_key", """
EXPECT = "dynamic"
def f(xs):
    r = sorted(map(lambda t: t * 2, xs), key=lambda t: t.sum().item())
    m = max(map(lambda t: t + 1, xs), key=lambda t: t.sum().item())
    return r, m
ORDERS = [[1.0, 2.0, 3.0], [3.0, 2.0, 1.0], [2.0, 3.0, 1.0], [1.0, 3.0, 2.0]]
def make(): return f
def inputs(i): return ([torch.tensor([a]) for a in ORDERS[i]],)
""")

program(F_, "max_by_a_recursive_key", """
EXPECT = "record"
def key(t, inner=False):
    if inner:
        return t.sum().item()
    return (key(t, True) - 1.5) ** 2
def f(xs):
    return max(xs, key=key)
VALUES = [[1.0, 2.0], [1.0, 2.1], [1.2, 2.0], [1.0, 2.0]]
def make(): return f
def inputs(i): return ([torch.tensor([a]) for a in VALUES[i]],)
""")

program(F_, "argmax_by_a_native_key_over_read_floats", """
EXPECT = "record"
def f(xs):
    scores = [t.sum().item() for t in xs]
    best = max(range(len(scores)), key=scores.__getitem__)
    order = sorted(range(len(scores)), key=scores.__getitem__)
    return best, xs[best] * 2, order
ORDERS = [[1.0, 2.0, 3.0], [3.0, 2.0, 1.0], [2.0, 3.0, 1.0], [1.0, 2.0, 3.0]]
def make(): return f
def inputs(i): return ([torch.tensor([a]) for a in ORDERS[i]],)
""")
