"""Names looked up through user modules and classes at call time: `import` and `from ... import`
inside forward, a module-level `__getattr__`, a module replaced in `sys.modules` or reloaded,
enum members with methods over globals, enums as config keys, custom descriptors, classmethods
over a registry, a staticmethod replaced by a plain function (now bound), slots, and
`object.__setattr__` on a frozen dataclass."""
from harness import program

F_ = "lookups"

program(F_, "from_import_inside_forward_sees_the_new_value", """
import sys
cfg = new_module("sound_lookups_cfg_a", "SCALE = 2.0")
def f(x):
    from sound_lookups_cfg_a import SCALE
    return x * SCALE
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    sys.modules["sound_lookups_cfg_a"] = cfg   # (importable by that name: this world's own module, before each call)
    if i == 2: cfg.SCALE = 5.0
CLEANUP.append(lambda: sys.modules.pop("sound_lookups_cfg_a", None))
""")

program(F_, "module_level_getattr_with_a_counter", """
cfg = new_module("sound_lookups_cfg_b", '''
_calls = [0]
def __getattr__(name):
    if name == "WARMUP":
        _calls[0] += 1
        return 1.0 / _calls[0]
    raise AttributeError(name)
''')
def f(x):
    return x * cfg.WARMUP
def make(): return f
def inputs(i): return (torch.randn(3),)
def state(): return cfg._calls[0]
""")

program(F_, "module_replaced_in_sys_modules", """
import sys
cfg = new_module("sound_lookups_cfg_c", "SHIFT = 1.0")
def f(x):
    import sound_lookups_cfg_c as c
    return x + c.SHIFT
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2:
        other = new_module("sound_lookups_cfg_c_other", "SHIFT = -4.0")
        sys.modules["sound_lookups_cfg_c"] = other
""")

program(F_, "enum_member_method_reads_a_global", """
TABLE = {"fast": 0.5, "slow": 2.0}
class Speed(enum.Enum):
    FAST = "fast"
    SLOW = "slow"
    def factor(self):
        return TABLE[self.value]
CFG = {"speed": Speed.FAST}
def f(x):
    return x * CFG["speed"].factor()
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: TABLE["fast"] = 9.0
    if i == 3: CFG["speed"] = Speed.SLOW
""")

program(F_, "enum_members_as_keys_of_an_outside_table", """
EXPECT = "record"   # (Enum members are identity keys of a keys guard)
class Act(enum.Enum):
    RELU = 1
    TANH = 2
FN = {Act.RELU: torch.relu, Act.TANH: torch.tanh}
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = Act.RELU
    def forward(self, x):
        return FN[self.act](x)
m = M()
def make(): return m
def inputs(i): return (torch.randn(4),)
def step(i):
    if i == 2: FN[Act.RELU] = torch.sigmoid
    if i == 3: m.act = Act.TANH
""")

program(F_, "custom_descriptor_reads_a_global", """
LEVEL = {"v": 1.0}
class FromLevel:
    def __get__(self, obj, owner=None):
        return LEVEL["v"] * 2
class M(nn.Module):
    gain = FromLevel()
    def forward(self, x):
        return x * self.gain
m = M()
def make(): return m
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: LEVEL["v"] = 3.0
""")

program(F_, "classmethod_over_a_class_registry", """
class Blocks(nn.Module):
    registry = {"a": 1.0}
    @classmethod
    def weight(cls, name):
        return cls.registry.get(name, 0.0)
    def forward(self, x):
        return x * self.weight("a") + self.weight("b")
m = Blocks()
def make(): return m
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: Blocks.registry["b"] = 4.0
    if i == 3: Blocks.registry = {"a": -1.0}
""")

program(F_, "staticmethod_replaced_by_a_plain_function_binds_self", """
class M(nn.Module):
    @staticmethod
    def helper(x):
        return x * 2
    def forward(self, x):
        return self.helper(x)
m = M()
def make(): return m
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: M.helper = lambda x: x * 3          # now bound: helper(self, x) -> TypeError in eager
    if i == 3: M.helper = staticmethod(lambda x: x * 4)
""")

program(F_, "slots_object_changed_between_calls", """
class Opts:
    __slots__ = ("p", "q")
    def __init__(self):
        self.p = 1.0
        self.q = 2.0
OPTS = Opts()
def f(x):
    return x * OPTS.p + OPTS.q
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: OPTS.p = 7.0
    if i == 3: del OPTS.q
""")

program(F_, "frozen_dataclass_changed_through_object_setattr", """
import dataclasses
@dataclasses.dataclass(frozen=True)
class Cfg:
    scale: float = 1.0
CFG = Cfg()
def f(x):
    return x * CFG.scale
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: object.__setattr__(CFG, "scale", 6.0)
""")

program(F_, "super_through_a_middle_class_patched", """
class Base(nn.Module):
    def transform(self, x):
        return x + 1
class Mid(Base):
    def transform(self, x):
        return super().transform(x) * 2
class Top(Mid):
    def forward(self, x):
        return self.transform(x)
m = Top()
def make(): return m
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: Base.transform = lambda self, x: x - 10
    if i == 3: del Mid.transform
""")


# -- a dict keyed by Enum members (identity keys: Enum.__hash__ hashes the fixed name) -------------
# (was a fallback: "dict with non-constant keys")

program(F_, "a_dict_keyed_by_enum_members_with_entries_and_the_key_changed_between_calls", """
EXPECT = "record"
class Act(enum.Enum):
    RELU = "relu"
    TANH = "tanh"
    GELU = "gelu"
class Mode(enum.Flag):
    A = 1
    B = 2
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = Act.RELU
        self.table = {Act.RELU: F.relu, Act.TANH: torch.tanh}
        self.scales = {Mode.A: 2.0, Mode.B: 3.0, Mode.A | Mode.B: 5.0}
        self.mode = Mode.A
    def forward(self, x):
        return self.table[self.act](x) * self.scales[self.mode], self.act.name, Act.GELU in self.table
NET = Net()
def make(): return NET
def inputs(i): return (torch.randn(3, generator=torch.Generator().manual_seed(i)),)
def step(i):
    if i == 2:
        NET.act = Act.TANH
    if i == 3:
        NET.table[Act.TANH] = torch.sigmoid
    if i == 4:
        NET.table[Act.GELU] = F.gelu
        NET.act = Act.GELU
    if i == 5:
        NET.mode = Mode.A | Mode.B
    if i == 6:
        NET.scales[Mode.A | Mode.B] = -1.0
NCALLS = 8
""")

program(F_, "getattr_default_of_a_property_raising_attributeerror_on_a_module", """
# getattr's default after a property's AttributeError: the getter runs once, monitored (its log write replayed)
EXPECT = "record"
LOG = []
class M(nn.Module):
    @property
    def s(self):
        LOG.append(1)
        raise AttributeError("later")
    def forward(self, x):
        return x * getattr(self, "s", 1.0)
m = M()
def make(): return m
def inputs(i): return (torch.randn(3),)
NCALLS = 4
def state(): return list(LOG)
""")

program(F_, "getattr_default_of_a_property_raising_attributeerror_on_an_object", """
# as above, on an object that is no module
EXPECT = "record"
LOG = []
class C:
    @property
    def s(self):
        LOG.append(1)
        raise AttributeError("later")
OBJ = C()
def f(x):
    return x * getattr(OBJ, "s", 1.0)
def make(): return f
def inputs(i): return (torch.randn(3),)
NCALLS = 3
def state(): return list(LOG)
""")
