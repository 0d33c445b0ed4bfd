"""Written the ways users write such code, changing outside state between calls: numbers that are not plain int/float: subclasses, Decimal, Fraction, numpy scalars, bool."""
from harness import program

F_ = "user_numbers"

program(F_, "int_subclass_argument_scales", """
EXPECT = "dynamic"
_SH = sys.modules.get("user_programs_shared_numbers")
if _SH is None:
    _SH = types.ModuleType("user_programs_shared_numbers")
    for _n, _b in (("Width", int), ("Temp", float), ("Heads", int), ("Count", int), ("Depth", int)):
        setattr(_SH, _n, type(_n, (_b,), {"__module__": "user_programs_shared"}))
    sys.modules["user_programs_shared_numbers"] = _SH
Width = _SH.Width
def f(x, n):
    return x * n
def make(): return f
def inputs(i): return (torch.ones(3), Width(2 + i))
""")

program(F_, "float_subclass_temperature_attribute", """
EXPECT = "dynamic"
_SH = sys.modules.get("user_programs_shared_numbers")
if _SH is None:
    _SH = types.ModuleType("user_programs_shared_numbers")
    for _n, _b in (("Width", int), ("Temp", float), ("Heads", int), ("Count", int), ("Depth", int)):
        setattr(_SH, _n, type(_n, (_b,), {"__module__": "user_programs_shared"}))
    sys.modules["user_programs_shared_numbers"] = _SH
Temp = _SH.Temp
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.t = Temp(1.0)
    def forward(self, x):
        return torch.softmax(x / self.t, -1)
NET = Net()
def make(): return NET
def inputs(i): return (torch.arange(4.0),)
def step(i): NET.t = Temp(1.0 + i)
""")

program(F_, "decimal_learning_rate_converted", """
EXPECT = "record"
import decimal
LR = {"lr": decimal.Decimal("0.5")}
def f(x):
    return x * float(LR["lr"])
def make(): return f
def inputs(i): return (torch.ones(3),)
def step(i):
    if i >= 2: LR["lr"] = decimal.Decimal("0.25")
""")

program(F_, "fraction_ratio_converted", """
EXPECT = "record"
import fractions
R = {"r": fractions.Fraction(1, 2)}
def f(x):
    return x * float(R["r"])
def make(): return f
def inputs(i): return (torch.ones(3),)
def step(i):
    if i >= 2: R["r"] = fractions.Fraction(3, 4)
""")

program(F_, "numpy_scalar_from_config", """
EXPECT = "record"
CFG = {"k": np.float32(0.5), "n": np.int64(2)}
def f(x):
    return x.repeat(int(CFG["n"])) * float(CFG["k"])
def make(): return f
def inputs(i): return (torch.ones(3),)
def step(i):
    if i == 2: CFG["k"] = np.float32(2.0)
    if i == 3: CFG["n"] = np.int64(3)
""")

program(F_, "int_subclass_size_for_view", """
EXPECT = "record"
_SH = sys.modules.get("user_programs_shared_numbers")
if _SH is None:
    _SH = types.ModuleType("user_programs_shared_numbers")
    for _n, _b in (("Width", int), ("Temp", float), ("Heads", int), ("Count", int), ("Depth", int)):
        setattr(_SH, _n, type(_n, (_b,), {"__module__": "user_programs_shared"}))
    sys.modules["user_programs_shared_numbers"] = _SH
Heads = _SH.Heads
class Attn(nn.Module):
    def __init__(self):
        super().__init__()
        self.h = Heads(2)
    def forward(self, x):
        b, d = x.shape
        return x.view(b, self.h, d // self.h).sum(-1)
NET = Attn()
def make(): return NET
def inputs(i): return (torch.randn(2, 12),)
def step(i):
    if i == 2: NET.h = Heads(3)
    if i == 3: NET.h = Heads(4)
""")

program(F_, "int_subclass_counter_returned", """
EXPECT = "dynamic"
_SH = sys.modules.get("user_programs_shared_numbers")
if _SH is None:
    _SH = types.ModuleType("user_programs_shared_numbers")
    for _n, _b in (("Width", int), ("Temp", float), ("Heads", int), ("Count", int), ("Depth", int)):
        setattr(_SH, _n, type(_n, (_b,), {"__module__": "user_programs_shared"}))
    sys.modules["user_programs_shared_numbers"] = _SH
Count = _SH.Count
STATE = {"c": Count(0)}
def f(x):
    c = STATE["c"]
    return x + 1, c * 10
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i): STATE["c"] = Count(i)
""")

program(F_, "bool_flag_vs_int_flag", """
EXPECT = "record"
FLAGS = {"on": True}
def f(x):
    return x * FLAGS["on"] + (1 if FLAGS["on"] is True else 0)
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2: FLAGS["on"] = 1
    if i == 3: FLAGS["on"] = False
""")

program(F_, "negative_zero_epsilon", """
EXPECT = "record"
E = {"eps": 0.0}
def f(x):
    return torch.copysign(torch.ones_like(x), torch.tensor(E["eps"])) * x, math.copysign(1.0, E["eps"])
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2: E["eps"] = -0.0
""")

program(F_, "large_int_seed_arithmetic", """
EXPECT = "record"
S = {"seed": 2**40 + 1}
def f(x):
    return x + (S["seed"] % 7), S["seed"] // 3
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i): S["seed"] = 2**40 + 1 + i * 5
""")

program(F_, "complex_scalar_phase", """
EXPECT = "record"
P = {"z": 1 + 0j}
def f(x):
    return x * P["z"].real - P["z"].imag
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2: P["z"] = 0.5 + 2j
""")

program(F_, "float_nan_inf_config", """
EXPECT = "record"
C = {"clip": float("inf")}
def f(x):
    if math.isinf(C["clip"]):
        return x
    return x.clamp(max=C["clip"])
def make(): return f
def inputs(i): return (torch.arange(4.0),)
def step(i):
    if i == 2: C["clip"] = 1.5
    if i == 3: C["clip"] = float("nan")
""")

program(F_, "str_subclass_key_selects_activation", """
EXPECT = "record"
_SH = sys.modules.get("user_programs_shared_str")
if _SH is None:
    _SH = types.ModuleType("user_programs_shared_str")
    _SH.Name = type("Name", (str,), {"__module__": "user_programs_shared"})
    sys.modules["user_programs_shared_str"] = _SH
Name = _SH.Name
ACTS = {"relu": torch.relu, "tanh": torch.tanh}
CFG = {"act": Name("relu")}
def f(x):
    return ACTS[CFG["act"]](x)
def make(): return f
def inputs(i): return (torch.randn(4),)
def step(i):
    if i == 2: CFG["act"] = Name("tanh")
""")

program(F_, "float_subclass_rounded_to_int_steps", """
EXPECT = "record"
_SH = sys.modules.get("user_programs_shared_float")
if _SH is None:
    _SH = types.ModuleType("user_programs_shared_float")
    _SH.Ratio = type("Ratio", (float,), {"__module__": "user_programs_shared"})
    sys.modules["user_programs_shared_float"] = _SH
Ratio = _SH.Ratio
CFG = {"r": Ratio(2.4)}
def f(x):
    k = math.floor(CFG["r"])
    return x[:k].sum(), k
def make(): return f
def inputs(i): return (torch.arange(6.0),)
def step(i):
    if i == 2: CFG["r"] = Ratio(4.6)
""")

program(F_, "str_subclass_reduction_mode", """
EXPECT = "record"
_SH = sys.modules.get("user_programs_shared_str")
if _SH is None:
    _SH = types.ModuleType("user_programs_shared_str")
    _SH.Name = type("Name", (str,), {"__module__": "user_programs_shared"})
    sys.modules["user_programs_shared_str"] = _SH
Name = _SH.Name
class Loss(nn.Module):
    def __init__(self):
        super().__init__(); self.reduction = Name("mean")
    def forward(self, x, y):
        return F.mse_loss(x, y, reduction=self.reduction)
NET = Loss()
def make(): return NET
def inputs(i): return (torch.ones(2, 3), torch.zeros(2, 3))
def step(i):
    if i == 2: NET.reduction = Name("sum")
""")

program(F_, "int_subclass_dim_argument", """
EXPECT = "record"
_SH = sys.modules.get("user_programs_shared_dim")
if _SH is None:
    _SH = types.ModuleType("user_programs_shared_dim")
    _SH.Dim = type("Dim", (int,), {"__module__": "user_programs_shared"})
    sys.modules["user_programs_shared_dim"] = _SH
Dim = _SH.Dim
CFG = types.SimpleNamespace(dim=Dim(0))
def f(x):
    return x.softmax(CFG.dim)
def make(): return f
def inputs(i): return (torch.arange(6.0).view(2, 3),)
def step(i):
    if i == 2: CFG.dim = Dim(1)
""")

program(F_, "timedelta_budget_floor_divided", """
EXPECT = "split"
import datetime
BUDGET = {"d": datetime.timedelta(hours=2)}
def f(x):
    n = BUDGET["d"] // datetime.timedelta(hours=1)
    return x * n
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2: BUDGET["d"] = datetime.timedelta(hours=5)
""")

program(F_, "datetime_start_replaced_elapsed_hours", """
EXPECT = "record"
import datetime
_NOW = datetime.datetime(2024, 1, 1, 12, 0, 0)
TIMER = {"start": datetime.datetime(2024, 1, 1, 11, 0, 0)}
def f(x):
    hours = (_NOW - TIMER["start"]).seconds // 3600
    return x * min(1.0, hours / 4)
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2: TIMER["start"] = datetime.datetime(2024, 1, 1, 9, 0, 0)
""")

program(F_, "set_subclass_of_enabled_ids_iterated", """
EXPECT = "record"
_SH = sys.modules.get("user_programs_shared_set")
if _SH is None:
    _SH = types.ModuleType("user_programs_shared_set")
    _SH.IdSet = type("IdSet", (set,), {"__module__": "user_programs_shared"})
    sys.modules["user_programs_shared_set"] = _SH
IdSet = _SH.IdSet
ENABLED = IdSet({0})
LAYERS = [nn.Linear(2, 2) for _ in range(3)]
def f(x):
    for k in sorted(ENABLED):
        x = LAYERS[k](x)
    return x
def make(): return f
def inputs(i): return (torch.ones(1, 2),)
def step(i):
    if i == 2: ENABLED.add(2)
def state(): return sorted(ENABLED)
""")
