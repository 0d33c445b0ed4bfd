"""The program raises for some inputs after it already changed state: the compiled call must raise
like eager, and the in-place updates / appends must have happened exactly once."""
from harness import program

F_ = "mockfail"

program(F_, "inplace_then_shape_mismatch", """
class Acc(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros(()))
        self.w = torch.randn(4, 2)
    def forward(self, x):
        self.total += x.sum()
        return x @ self.w
m = Acc()
def make(): return m
def inputs(i): return torch.ones(2, 3 if i == 2 else 4)
""")

program(F_, "append_then_linear_fails", """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 2)
        self.log = []
    def forward(self, x):
        self.log.append(tuple(x.shape))
        return self.lin(x)
m = Net()
def make(): return m
def inputs(i): return torch.ones(2, 5 if i == 2 else 4)
""")

program(F_, "counter_then_keyerror", """
class Table(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0
        self.table = {"a": 1.0, "b": 2.0}
        self.key = "a"
    def forward(self, x):
        self.calls += 1
        return x * self.table[self.key]
m = Table()
def make(): return m
def inputs(i): return torch.ones(2)
def step(i):
    m.key = "zz" if i == 2 else "b"
NCALLS = 7
""")

program(F_, "assert_after_buffer_update", """
class Check(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("seen", torch.zeros(()))
    def forward(self, x):
        self.seen += 1
        assert x.shape[-1] == 4, "expected 4 features"
        return x * 2
m = Check()
def make(): return m
def inputs(i): return torch.ones(2, 3 if i == 2 else 4)
""")

program(F_, "raise_in_submodule_hook", """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 3)
        self.register_buffer("n", torch.zeros(()))
    def forward(self, x):
        self.n += 1
        return self.a(x)
m = Net()
def guard(mod, args):
    if args[0].shape[0] > 2:
        raise ValueError("batch too large")
def make(): return m
def inputs(i): return torch.ones(3 if i == 2 else 2, 3)
def step(i):
    if i == 1: m.a.register_forward_pre_hook(guard)
""")

program(F_, "index_error_after_arg_update", """
def pick(x, idx, xs):
    x.add_(1)
    return xs[idx] * x
XS = [torch.ones(2), torch.ones(2) * 2]
def make(): return pick
def inputs(i): return (torch.zeros(2), 5 if i == 2 else i % 2, XS)
""")

program(F_, "value_error_user_check", """
class Bank(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("bank", torch.zeros(3))
        self.limit = 2
        self.n = 0
    def forward(self, x):
        self.bank.add_(x)
        self.n += 1
        if x.shape[0] > self.limit + 1:
            raise ValueError("too long")
        return self.bank * 1
m = Bank()
def make(): return m
def inputs(i): return torch.ones(3)
def step(i):
    if i == 4: m.limit = 0
    if i % 2 == 0: m.n = 0
NCALLS = 6
""")

program(F_, "inplace_on_leaf_requiring_grad", """
def f(x):
    x.add_(1)
    return x * 2
def make(): return f
def inputs(i): return torch.ones(3, requires_grad=(i == 2))
""")

program(F_, "append_then_runtime_error_in_cat", """
LOG = []
def f(a, b):
    LOG.append(a.shape[0])
    return torch.cat([a, b], dim=1)
def make(): return f
def inputs(i): return (torch.ones(2, 2), torch.ones(3 if i == 2 else 2, 2))
""")
