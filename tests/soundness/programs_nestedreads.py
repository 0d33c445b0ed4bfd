"""Arguments and values read only inside nested code (a comprehension, a generator expression, a
lambda, an inner ``def``): on CPython 3.11 such an argument is a cell of the compiled frame, read
through ``LOAD_DEREF`` in the nested code object. And ``id(x)`` used as a key (a memo dict, an
f-string key): the number stands for x's identity."""
from harness import program

F_ = "nestedreads"

program(F_, "list_comp_reads_float_argument", """
EXPECT = "record"
NCALLS = 8
def f(x, scale):
    return torch.stack([r * scale for r in x.unbind(0)])
X = torch.randn(3, 4)
def make(): return f
def inputs(i): return (X, [1.0, 2.0, 0.5, 3.0][i // 2])
""")

program(F_, "genexpr_into_sum_reads_int_argument", """
EXPECT = "record"
NCALLS = 8
def f(x, k):
    return sum(r * k for r in x.unbind(0))
X = torch.randn(3, 4)
def make(): return f
def inputs(i): return (X, [2, 5, 7, 1][i // 2])
""")

program(F_, "comp_condition_reads_count_argument", """
EXPECT = "record"
NCALLS = 8
def f(x, n_active):
    rows = x.unbind(0)
    return torch.stack([r if i < n_active else r * 0 for i, r in enumerate(rows)])
X = torch.randn(4, 3)
def make(): return f
def inputs(i): return (X, [1, 3, 2, 4][i // 2])
""")

program(F_, "dict_and_set_comps_read_arguments", """
EXPECT = "record"
NCALLS = 8
def f(x, names, offset):
    d = {n: x[j] + offset for j, n in enumerate(names)}
    keep = {n for n in d if n != names[0] or offset > 1}
    return torch.stack([d[n] for n in sorted(keep)])
X = torch.randn(3, 2)
def make(): return f
def inputs(i): return (X, ("a", "b", "c"), [0.5, 2.0, 1.0, 3.0][i // 2])
""")

program(F_, "lambda_reads_argument", """
EXPECT = "record"
NCALLS = 8
def f(x, alpha):
    act = lambda t: torch.where(t > 0, t, t * alpha)
    return act(x) + 1
X = torch.randn(5)
def make(): return f
def inputs(i): return (X, [0.1, 0.2, 0.0, 0.3][i // 2])
""")

program(F_, "inner_def_reads_str_mode", """
EXPECT = "record"
NCALLS = 8
def f(x, mode):
    def pool(t):
        if mode == "max":
            return t.amax(-1)
        if mode == "sum":
            return t.sum(-1)
        return t.mean(-1)
    return pool(x)
X = torch.randn(2, 5)
def make(): return f
def inputs(i): return (X, ["max", "mean", "sum", "max"][i // 2])
""")

program(F_, "inner_function_reads_keyword_argument", """
EXPECT = "record"
NCALLS = 8
def f(x, *, eps=1e-5, power=2):
    def norm(t):
        return t / (t.abs().pow(power).sum() + eps) ** (1.0 / power)
    return norm(x)
X = torch.randn(6)
def make(): return f
def inputs(i):
    return ((X,), [dict(eps=1e-5, power=2), dict(eps=1.0, power=2), dict(eps=1.0, power=1), dict(power=3)][i // 2])
""")

program(F_, "submodule_comp_reads_self_attr_through_local", """
EXPECT = "record"
NCALLS = 8
class Heads(nn.Module):
    def __init__(self):
        super().__init__()
        self.temperature = 1.0
        self.lin = nn.Linear(4, 4)
    def forward(self, x):
        temp = self.temperature
        return torch.stack([torch.softmax(h / temp, -1) for h in self.lin(x).unbind(0)])
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = Heads()
    def forward(self, x, gain):
        return torch.stack([self.heads(r) * gain for r in x.unbind(0)])
m = Net()
X = torch.randn(2, 3, 4)
def make(): return m
def inputs(i): return (X, [2.0, 2.0, 3.0, 3.0, 0.5, 0.5, 2.0, 2.0][i])
def step(i):
    if i % 2 == 1: m.heads.temperature = [1.0, 0.5, 2.0, 4.0][i // 2]
""")

program(F_, "closure_defined_submodule_forward_comp_reads_free_variable", """
EXPECT = "record"
NCALLS = 8
def make_block():
    scale = 1.0
    class Block(nn.Module):
        def forward(self, x):
            return torch.stack([r * scale for r in x.unbind(0)])
        def set_scale(self, s):
            nonlocal scale
            scale = s
    return Block()
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.block = make_block()
    def forward(self, x):
        return self.block(self.lin(x))
m = Net()
X = torch.randn(2, 3)
def make(): return m
def inputs(i): return X
def step(i):
    if i % 2 == 0: m.block.set_scale([1.0, 3.0, 0.5, 2.0][i // 2])
""")

program(F_, "generator_function_made_in_call_reads_argument", """
EXPECT = "record"
NCALLS = 8
def f(x, shift):
    def rows():
        for r in x.unbind(0):
            yield r + shift
    return torch.stack(list(rows()))
X = torch.randn(3, 2)
def make(): return f
def inputs(i): return (X, [1, 2, 3, 4][i // 2])
""")

program(F_, "helper_closure_genexpr_reads_free_variable", """
EXPECT = "record"
NCALLS = 8
def make_helper():
    factor = 2.0
    def helper(x):
        return sum(r * factor for r in x.unbind(0))
    def set_factor(v):
        nonlocal factor
        factor = v
    return helper, set_factor
helper, set_factor = make_helper()
def f(x):
    return helper(x) + 1
X = torch.randn(3, 2)
def make(): return f
def inputs(i): return X
def step(i):
    if i % 2 == 0: set_factor([2.0, 3.0, 0.5, 1.0][i // 2])
""")

program(F_, "genexpr_reads_star_args_tuple", """
EXPECT = "record"
NCALLS = 8
def f(x, *ks):
    return sum(r * ks[0] + ks[-1] for r in x.unbind(0))
X = torch.randn(2, 3)
def make(): return f
def inputs(i): return (X, *[(1, 2), (3, 4), (1, 5), (6, 2)][i // 2])
""")

program(F_, "id_memo_in_module", """
EXPECT = "record"
NCALLS = 8
class Memo(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.memo = {}
    def forward(self, x):
        k = id(x)
        if k not in self.memo:
            self.memo[k] = self.fc(x)
        return self.memo[k]
_m = Memo()   # (private: the memo's keys are ids, which differ between the two worlds)
XS = [torch.randn(2, 3) for _ in range(3)]
def make(): return _m
def inputs(i): return XS[[0, 0, 1, 1, 0, 2, 2, 1][i]]
def state(): return sorted((t.detach() for t in _m.memo.values()), key=lambda t: t.sum().item())
""")

program(F_, "id_in_fstring_key", """
EXPECT = "record"
NCALLS = 8
_CACHE = {}   # (private: its keys hold ids, which differ between the two worlds)
def f(x, w):
    key = f"{id(w)}:{x.shape[0]}"
    if key not in _CACHE:
        _CACHE[key] = w.sum()
    return x * _CACHE[key]
W = [torch.randn(3), torch.randn(3), torch.randn(3)]
X = torch.randn(2, 3)
def make(): return f
def inputs(i): return (X, W[[0, 0, 1, 1, 2, 2, 0, 0][i]])
def state(): return sorted(v.item() for v in _CACHE.values())
""")
