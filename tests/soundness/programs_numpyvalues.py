"""Tensor values read into numpy (``t.numpy()``, ``np.asarray(t)``) and computed on with numpy:
the arrays are followed as values read from tensors (numpy calls are graph nodes, Python reads
of them are assumptions). Changed values, arrays written outside, views of arguments, in-place
changes of an array, and numpy values as keys or formatted text."""
from harness import program

F_ = "numpyvalues"

program(F_, "percentile_clamp_bound", """
class Clip(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        y = self.fc(x)
        hi = float(np.percentile(y.detach().numpy(), 90))
        return y.clamp(max=hi), hi
m = Clip()
def make(): return m
def inputs(i): return torch.randn(5, 4, generator=torch.Generator().manual_seed(i))
NCALLS = 5
""")

program(F_, "argsort_order_indexes_a_tensor", """
class Rank(nn.Module):
    def __init__(self):
        super().__init__()
        self.score = nn.Linear(3, 1)
    def forward(self, items):
        s = self.score(items).squeeze(-1)
        order = np.argsort(-s.detach().numpy())
        return items[torch.from_numpy(order.copy())][:2], order
m = Rank()
def make(): return m
def inputs(i): return torch.rand(5, 3, generator=torch.Generator().manual_seed(i))
NCALLS = 5
""")

program(F_, "branch_on_a_numpy_statistic_and_state_outside", """
class Norm(nn.Module):
    def __init__(self):
        super().__init__()
        self.last = None
        self.peaks = []
    def forward(self, x):
        a = x.numpy()
        m, s = a.mean(), a.std()
        self.last = (a - m) / (s + 1e-6)
        self.peaks.append(a.max())
        if abs(m) > 0.5:
            return x - float(m)
        return torch.from_numpy(self.last).float() * 2
m = Norm()
def make(): return m
def inputs(i): return torch.randn(6, generator=torch.Generator().manual_seed(i)) + (2.0 if i % 3 == 0 else 0.0)
NCALLS = 6
""")

program(F_, "array_of_an_argument_changed_in_place_is_dynamic", """
EXPECT = "dynamic"
def f(x):
    a = x.numpy()
    a[0] = 100.0
    b = x.numpy()
    b *= 2
    return x * 1
def make(): return f
def inputs(i): return torch.arange(3.0) + i
""")

program(F_, "tensor_changed_after_its_array_was_taken", """
def f(x):
    y = x * 2
    a = y.numpy()
    y.add_(1)                    # the array sees it, as in eager
    return torch.from_numpy(a.copy()), a.sum()
def make(): return f
def inputs(i): return torch.arange(3.0) * i
""")

program(F_, "iteration_unpacking_and_keys", """
names = {0: "low", 1: "high"}
def f(x):
    a = np.asarray(x)
    first, *rest = a
    total = 0.0
    for v in a:
        total += float(v)
    key = names[int(a.argmax() > 1)]
    return x * total + float(first), key, f"{a.mean():.2f}", len(rest)
def make(): return f
def inputs(i): return torch.tensor([0.5, 1.5, 2.5]) * (i % 3)
NCALLS = 6
""")

program(F_, "unique_counts_and_where", """
def f(x):
    a = x.numpy()
    u, c = np.unique(np.round(a), return_counts=True)
    idx = np.where(a > 0)
    return torch.from_numpy(c), u.shape[0], torch.from_numpy(a[idx].copy()).sum()
def make(): return f
def inputs(i): return torch.randn(8, generator=torch.Generator().manual_seed(i % 2)) * 2
NCALLS = 5
""")

program(F_, "array_cached_on_the_module_between_calls", """
class Cache(nn.Module):
    def __init__(self):
        super().__init__()
        self.cache = None
        self.cfg = {"scale": 2.0}
    def forward(self, x):
        a = x.numpy()
        out = x if self.cache is None else x + torch.from_numpy(self.cache.copy())
        self.cache = a * self.cfg["scale"]
        return out
m = Cache()
def make(): return m
def step(i):
    if i == 3: m.cfg["scale"] = np.float64(3.0)   # a dict that held a float now holds a numpy scalar
def inputs(i): return torch.ones(2) * (i % 2)
NCALLS = 8
""")
