"""Written the ways users write such code, changing outside state between calls: config objects, dataclasses, enums, properties, descriptors, __getattr__, __class__."""
from harness import program

F_ = "user_config"

program(F_, "frozen_dataclass_config_replaced", """
EXPECT = "record"
@dataclass(frozen=True)
class Cfg:
    scale: float = 1.0
    act: str = "relu"
CFG = [Cfg()]
def f(x):
    c = CFG[0]
    y = x * c.scale
    return torch.relu(y) if c.act == "relu" else torch.tanh(y)
def make(): return f
def inputs(i): return (torch.randn(4),)
def step(i):
    if i == 2: CFG[0] = Cfg(scale=3.0, act="tanh")
    if i == 3: CFG[0] = dataclasses.replace(CFG[0], act="relu")
""")

program(F_, "getattr_backed_by_dict_changes", """
EXPECT = "record"
class Cfg:
    def __init__(self, d): self._d = d
    def __getattr__(self, k):
        try:
            return self._d[k]
        except KeyError:
            raise AttributeError(k)
CFG = Cfg({"alpha": 0.5})
def f(x):
    a = CFG.alpha
    if hasattr(CFG, "beta"):
        return x * a + CFG.beta
    return x * a
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 1: CFG._d["alpha"] = 2.0
    if i == 2: CFG._d["beta"] = 10.0
    if i == 3: del CFG._d["beta"]
NCALLS = 5
""")

program(F_, "property_reads_global_counter", """
EXPECT = "record"
STEP = [0]
class Sched:
    @property
    def lr(self):
        return 0.1 * (0.5 ** (STEP[0] // 2))
S = Sched()
def f(x):
    return x * S.lr
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i): STEP[0] = i
NCALLS = 6
""")

program(F_, "base_class_attribute_changed", """
EXPECT = "record"
class Base(nn.Module):
    gain = 1.0
class Net(Base):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
    def forward(self, x):
        return self.lin(x) * self.gain
def make(): return Net()
def inputs(i): return (torch.randn(2, 3),)
def step(i):
    if i == 2: Base.gain = 4.0
    if i == 3: Net.gain = -1.0
    if i == 4: del Net.gain
NCALLS = 6
""")

program(F_, "instance_class_swapped", """
EXPECT = "record"
class A:
    def act(self, x): return torch.relu(x)
class B:
    def act(self, x): return torch.sigmoid(x)
OBJ = A()
def f(x):
    return OBJ.act(x) + 1
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: OBJ.__class__ = B
    if i == 3: OBJ.__class__ = A
""")

program(F_, "method_replaced_on_instance", """
EXPECT = "record"
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
    def act(self, x): return torch.relu(x)
    def forward(self, x):
        return self.act(self.lin(x))
NET = Net()
def make(): return NET
def inputs(i): return (torch.randn(2, 3),)
def step(i):
    if i == 2: NET.act = lambda x: x * 100
    if i == 3: del NET.act
""")

program(F_, "slots_object_attribute_changed", """
EXPECT = "record"
class P:
    __slots__ = ("k", "b")
    def __init__(self): self.k = 2; self.b = 0.5
PP = P()
def f(x):
    return x.pow(PP.k) + PP.b
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: PP.k = 3
    if i == 3: PP.b = -1.0
""")

program(F_, "enum_member_float_value_selected", """
EXPECT = "record"
class Mode(enum.Enum):
    SMALL = 0.5
    BIG = 2.0
MODE = {"m": Mode.SMALL}
def f(x):
    m = MODE["m"]
    return x * m.value if m is Mode.SMALL else x + m.value
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: MODE["m"] = Mode.BIG
""")

program(F_, "flag_enum_combination", """
EXPECT = "record"
class Opt(enum.Flag):
    NONE = 0
    NORM = enum.auto()
    ACT = enum.auto()
OPTS = [Opt.NORM]
def f(x):
    o = OPTS[0]
    if Opt.NORM in o:
        x = x / x.norm()
    if o & Opt.ACT:
        x = torch.relu(x)
    return x
def make(): return f
def inputs(i): return (torch.randn(5),)
def step(i):
    if i == 2: OPTS[0] = Opt.NORM | Opt.ACT
    if i == 3: OPTS[0] = Opt.ACT
""")

program(F_, "simple_namespace_config", """
EXPECT = "record"
CFG = types.SimpleNamespace(depth=2, width=1.0)
def f(x):
    for _ in range(CFG.depth):
        x = x * CFG.width + 1
    return x
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: CFG.depth = 3
    if i == 3: CFG.width = 0.5
    if i == 4: CFG.__dict__.update(depth=1)
NCALLS = 6
""")

program(F_, "nondata_descriptor_shadowed_by_instance_dict", """
EXPECT = "record"
class Const:
    def __init__(self, v): self.v = v
    def __get__(self, obj, owner=None): return self.v
class M:
    scale = Const(2.0)
OBJ = M()
def f(x):
    return x * OBJ.scale
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 1: M.__dict__["scale"].v = 5.0
    if i == 2: OBJ.__dict__["scale"] = 7.0
    if i == 3: del OBJ.__dict__["scale"]
NCALLS = 5
""")

program(F_, "data_descriptor_beats_instance_dict", """
EXPECT = "record"
class Typed:
    def __set_name__(self, owner, name): self.name = "_" + name
    def __get__(self, obj, owner=None): return getattr(obj, self.name) * 2
    def __set__(self, obj, v): setattr(obj, self.name, v)
class M:
    k = Typed()
OBJ = M()
OBJ.k = 1.0
def f(x):
    return x * OBJ.k
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: OBJ.__dict__["k"] = 100.0   # ignored: data descriptor wins
    if i == 3: OBJ.k = 3.0
""")

program(F_, "dataclass_default_factory_list_mutated", """
EXPECT = "record"
@dataclass
class Cfg:
    dims: list = field(default_factory=lambda: [1, 2])
CFG = Cfg()
def f(x):
    return x.sum(dim=CFG.dims, keepdim=True)
def make(): return f
def inputs(i): return (torch.randn(2, 3, 4),)
def step(i):
    if i == 2: CFG.dims.append(0)
    if i == 3: CFG.dims[:] = [2]
""")

program(F_, "cached_property_deleted_between_calls", """
EXPECT = "record"
CALLS = []
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.k = 2.0
    @functools.cached_property
    def factor(self):
        CALLS.append(self.k)
        return self.k * 3
    def forward(self, x):
        return x * self.factor
NET = Net()
def make(): return NET
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2:
        NET.k = 5.0
    if i == 3:
        del NET.__dict__["factor"]
def state(): return list(CALLS)
NCALLS = 5
""")

program(F_, "config_getitem_via_dunder", """
EXPECT = "record"
class Cfg:
    def __init__(self): self.d = {"a": 1.0}
    def __getitem__(self, k): return self.d[k]
    def __contains__(self, k): return k in self.d
CFG = Cfg()
def f(x):
    y = x * CFG["a"]
    if "b" in CFG:
        y = y - CFG["b"]
    return y
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: CFG.d["b"] = 3.0
    if i == 3: Cfg.__contains__ = lambda self, k: False
""")

program(F_, "namedtuple_hparams_replaced", """
EXPECT = "record"
HP = collections.namedtuple("HP", "p eps")
H = [HP(0.0, 1e-5)]
def f(x):
    h = H[0]
    y = F.layer_norm(x, x.shape[-1:], eps=h.eps)
    return F.dropout(y, p=h.p, training=h.p > 0)
def make(): return f
def inputs(i): return (torch.randn(2, 4),)
def step(i):
    if i == 2: H[0] = H[0]._replace(eps=0.5)
def state(): return torch.get_rng_state()
""")

program(F_, "int_subclass_config_value", """
EXPECT = "record"
_SH = sys.modules.get("user_programs_shared_config")
if _SH is None:
    _SH = types.ModuleType("user_programs_shared_config")
    for _n, _b in (("Width", int), ("Temp", float), ("Heads", int), ("Count", int), ("Depth", int)):
        setattr(_SH, _n, type(_n, (_b,), {"__module__": "user_programs_shared"}))
    sys.modules["user_programs_shared_config"] = _SH
Depth = _SH.Depth
CFG = {"n": Depth(2)}
def f(x):
    n = CFG["n"]
    out = x
    for _ in range(n):
        out = out * 2
    return out, type(n).__name__
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: CFG["n"] = 2
    if i == 3: CFG["n"] = Depth(3)
""")

program(F_, "str_enum_compare", """
EXPECT = "record"
class Act(str, enum.Enum):
    RELU = "relu"
    GELU = "gelu"
CFG = {"act": "relu"}
def f(x):
    if CFG["act"] == Act.RELU:
        return torch.relu(x)
    return F.gelu(x)
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 1: CFG["act"] = Act.RELU
    if i == 2: CFG["act"] = Act.GELU
    if i == 3: CFG["act"] = "gelu"
NCALLS = 5
""")
