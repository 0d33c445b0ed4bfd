"""Distinctness: attributes going from distinct to the same object, the same container passed as
two arguments, overlapping tensor views passed as two arguments and then mutated."""
from harness import program

F_ = "distinct"

program(F_, "attr_is_attr_becomes_same", """
class AutoEnc(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 4)
        self.dec = nn.Linear(4, 4)
    def forward(self, x):
        if self.enc is self.dec:
            return self.enc(x) * 2
        return self.dec(torch.tanh(self.enc(x)))
m = AutoEnc()
def make(): return m
def inputs(i): return torch.randn(2, 4)
def step(i):
    if i == 2: m.dec = m.enc
""")

program(F_, "weight_tying_after_compile", """
class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Linear(4, 4, bias=False)
        self.out = nn.Linear(4, 4, bias=False)
    def forward(self, x):
        with torch.no_grad():
            self.emb.weight.mul_(0.9)
        return self.out(self.emb(x))
m = LM()
def make(): return m
def inputs(i): return torch.randn(2, 4)
def step(i):
    if i == 2: m.out.weight = m.emb.weight
def state(): return m.out.weight is m.emb.weight
""")

program(F_, "same_list_two_args", """
def log_and_scale(log_a, log_b, t):
    log_a.append(1)
    return t * len(log_b)
LA, LB = [], []
def make(): return log_and_scale
def inputs(i): return (LA, LA if i >= 2 else LB, torch.ones(3))
""")

program(F_, "same_dict_two_args", """
def update(stats, cfg, x):
    stats["n"] = stats["n"] + 1
    return x * cfg["n"]
S, C = {"n": 0}, {"n": 10}
def make(): return update
def inputs(i): return (S, S if i % 2 == 1 else C, torch.ones(2))
NCALLS = 7
""")

program(F_, "overlapping_views_mutated", """
def shift(a, b):
    a.add_(1.0)
    return b * 2
BASE = torch.zeros(6)
def make(): return shift
def inputs(i):
    BASE.zero_()
    if i >= 2:
        return (BASE[:4], BASE[2:])      # overlapping
    return (BASE[:3], BASE[3:])          # disjoint
""")

program(F_, "same_tensor_two_args", """
def axpy_(y, x, a):
    y.mul_(a)
    return y + x
def make(): return axpy_
def inputs(i):
    t = torch.ones(3)
    return (t, t if i in (1, 3) else t.clone(), 2.0)
""")

program(F_, "history_lists_become_aliased", """
class Tracker(nn.Module):
    def __init__(self):
        super().__init__()
        self.seen = []
        self.hist = []
    def forward(self, x):
        self.seen.append(x.shape[0])
        return x * len(self.hist)
m = Tracker()
def make(): return m
def inputs(i): return torch.ones(2)
def step(i):
    if i == 2: m.hist = m.seen
""")

program(F_, "modulelist_shared_block", """
class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(3, 3), nn.Linear(3, 3)])
    def forward(self, x):
        for b in self.blocks:
            x = torch.tanh(b(x))
        return x
m = Stack()
def make(): return m
def inputs(i): return torch.randn(2, 3)
def step(i):
    if i == 2: m.blocks[1] = m.blocks[0]
""")

program(F_, "view_args_same_base_inplace_both", """
def both(a, b):
    a.mul_(2.0)
    b.add_(1.0)
    return a.sum() + b.sum()
def make(): return both
def inputs(i):
    base = torch.arange(6.0)
    if i % 2:
        return (base[1:4], base[2:5])
    return (base[:3], base[3:])
""")

program(F_, "made_tensor_changed_in_place_then_same_tensor_twice", """
def f(a, b):
    y = a * 2
    y.add_(b)
    return y.relu_()
A, B = torch.randn(3), torch.randn(3)
def make(): return f
def inputs(i): return (A, A if i >= 2 else B)
NCALLS = 5
""")

program(F_, "buffer_updated_in_place_then_passed_as_the_input", """
class Running(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("avg", torch.zeros(3))
        self.lin = nn.Linear(3, 3)
    def forward(self, x):
        with torch.no_grad():
            self.avg.mul_(0.5).add_(x)
        return self.lin(x) + self.avg
m = Running()
def make(): return m
def inputs(i): return m.avg if i in (2, 4) else torch.randn(3)
NCALLS = 6
def state(): return m.avg.clone()
""")

program(F_, "parameter_tied_to_another_in_place_updated", """
class Two(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 3)
        self.b = nn.Linear(3, 3)
    def forward(self, x):
        with torch.no_grad():
            self.a.weight.mul_(0.9)
        return self.b(self.a(x))
m = Two()
def make(): return m
def inputs(i): return torch.ones(2, 3)
def step(i):
    if i == 3: m.b._parameters["weight"] = m.a.weight
NCALLS = 6
def state(): return (m.a.weight.clone(), m.b.weight is m.a.weight)
""")
