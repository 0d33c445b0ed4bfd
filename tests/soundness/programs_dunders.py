"""Dunders the interpreter looks up on a class (operators, truth, indexing, iteration, ``with``,
builtins like ``len`` and ``sorted``): replaced, added or re-defaulted on the class between
calls, the way a library patches a version or config class. What the lookup finds, or that it
finds nothing, is outside state."""
from harness import program

F_ = "dunders"

program(F_, "comparison_replaced_on_class", """
class Version:
    def __init__(self, v): self.v = v
    def __ge__(self, o): return self.v >= o
cur = Version(3)
def f(x):
    if cur >= 2:
        x = x * 2
    return x + 1
def make(): return f
def inputs(i): return torch.ones(3)
def step(i):
    if i == 2: Version.__ge__ = lambda self, o: False
""")

program(F_, "truth_dunder_added_to_class", """
class Options:
    def __init__(self): self.scale = 2.0
opts = Options()
def f(x):
    if opts:
        x = x * opts.scale
    return x
def make(): return f
def inputs(i): return torch.ones(3)
def step(i):
    if i == 2: Options.__bool__ = lambda self: False
""")

program(F_, "getitem_of_config_class_patched", """
class Config:
    def __init__(self): self.d = {"width": 2.0}
    def __getitem__(self, k): return self.d[k]
cfg = Config()
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
    def forward(self, x):
        return self.lin(x) * cfg["width"]
m = M()
def make(): return m
def inputs(i): return torch.ones(2, 4)
def step(i):
    if i == 2: Config.__getitem__ = lambda self, k: 10.0
""")

program(F_, "len_builtin_runs_replaced_dunder", """
class Bank:
    def __init__(self): self.items = [1, 2]
    def __len__(self): return len(self.items)
bank = Bank()
def f(x):
    return x * len(bank)
def make(): return f
def inputs(i): return torch.ones(3)
def step(i):
    if i == 2: Bank.__len__ = lambda self: 7
""")

program(F_, "iteration_protocol_replaced", """
class Stages:
    def __init__(self): self.scales = [1.0, 2.0]
    def __iter__(self): return iter(self.scales)
stages = Stages()
def f(x):
    for s in stages:
        x = x * s + 1
    return x
def make(): return f
def inputs(i): return torch.ones(3)
def step(i):
    if i == 2: Stages.__iter__ = lambda self: iter([3.0])
""")

program(F_, "context_manager_enter_replaced", """
class Scope:
    def __enter__(self): return 2.0
    def __exit__(self, *exc): return False
scope = Scope()
def f(x):
    with scope as k:
        return x * k
def make(): return f
def inputs(i): return torch.ones(3)
def step(i):
    if i == 2: Scope.__enter__ = lambda self: 5.0
""")

program(F_, "reflected_operator_added", """
class Gain:
    def __init__(self, g): self.g = g
    def __add__(self, o): return self.g + o
    def __radd__(self, o): return self.g + o
gain = Gain(1.0)
def f(x):
    return x * (2.0 + gain)
def make(): return f
def inputs(i): return torch.ones(3)
def step(i):
    if i == 2: Gain.__radd__ = lambda self, o: o - self.g
""")

program(F_, "shared_lambda_dunders_defaults_rebound", """
# (3.10: frames do not record their function, and a lambda shared by several dunders cannot be
# told apart: the call runs eagerly, see README "Status and limits")
EXPECT_BY_VERSION = {"3.10": "dynamic"}
class Level:
    def __init__(self, v): self.v = v
for _name, _sign in (("__ge__", 1), ("__le__", -1)):
    setattr(Level, _name, lambda a, b, m=_name, s=_sign: s * a.v >= s * b.v)
lo, hi = Level(1), Level(2)
def f(x):
    if hi >= lo:
        x = x + 1
    if lo <= hi:
        x = x * 3
    return x
def make(): return f
def inputs(i): return torch.ones(3)
def step(i):
    if i == 2: Level.__ge__.__defaults__ = ("__ge__", -1)
""")

program(F_, "sorted_by_replaced_less_than", """
class Stage:
    def __init__(self, order, scale): self.order, self.scale = order, scale
    def __lt__(self, o): return self.order < o.order
plan = [Stage(2, 3.0), Stage(1, 0.5)]
def f(x):
    for s in sorted(plan):
        x = x * s.scale + 1
    return x
def make(): return f
def inputs(i): return torch.ones(3)
def step(i):
    if i == 2: Stage.__lt__ = lambda self, o: self.order > o.order
""")

program(F_, "equality_added_to_class", """
class Mode:
    def __init__(self, name): self.name = name
train, train2 = Mode("train"), Mode("train")
def f(x):
    if train == train2:
        return x * 2
    return x - 1
def make(): return f
def inputs(i): return torch.ones(3)
def step(i):
    if i == 2: Mode.__eq__ = lambda self, o: self.name == o.name
""")

program(F_, "inplace_operator_on_accumulator_class", """
class Acc:
    def __init__(self): self.total = 0.0
    def __iadd__(self, v):
        self.total += v
        return self
acc = Acc()
def f(x):
    a = Acc()
    a += 2.0
    return x * a.total
def make(): return f
def inputs(i): return torch.ones(3)
def step(i):
    if i == 2:
        def scaled(self, v):
            self.total += 10 * v
            return self
        Acc.__iadd__ = scaled
""")
