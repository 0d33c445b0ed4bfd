"""Identity and equality: enum attributes tested with is / ==, str-enum equality, x is self.last_x,
None checks on an attribute that becomes set, sentinels, function identity."""
from harness import program

F_ = "identity"

program(F_, "enum_is", """
class Act(enum.Enum):
    RELU = 1
    GELU = 2
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = Act.RELU
    def forward(self, x):
        if self.act is Act.RELU:
            return torch.relu(x)
        return F.gelu(x)
m = Block()
def make(): return m
def inputs(i): return torch.randn(4)
def step(i):
    if i == 2: m.act = Act.GELU
""")

program(F_, "enum_eq_in_config", """
class Norm(enum.Enum):
    LAYER = "layer"
    NONE = "none"
@dataclass
class Cfg:
    norm: Norm = Norm.LAYER
class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.ln = nn.LayerNorm(4)
    def forward(self, x):
        if self.cfg.norm == Norm.LAYER:
            x = self.ln(x)
        return x * 2
cfg = Cfg()
m = Block(cfg)
def make(): return m
def inputs(i): return torch.randn(2, 4)
def step(i):
    if i == 2: cfg.norm = Norm.NONE
""")

program(F_, "str_enum_equality", """
class Mode(str, enum.Enum):
    TRAIN = "train"
    EVAL = "eval"
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.mode = Mode.TRAIN
        self.drop_scale = 0.5
    def forward(self, x):
        if self.mode == "train":
            return x * self.drop_scale
        return x
m = Net()
def make(): return m
def inputs(i): return torch.ones(3)
def step(i):
    if i == 2: m.mode = Mode.EVAL
    if i == 3: m.mode = "train"
""")

program(F_, "x_is_last_x_cache", """
class Cached(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.last_x = None
        self.last_y = None
        self.hits = 0
    def forward(self, x):
        if x is self.last_x:
            self.hits += 1
            return self.last_y
        y = self.lin(x)
        self.last_x, self.last_y = x, y
        return y
m = Cached()
X = torch.randn(2, 3)
def make(): return m
def inputs(i): return X if i in (1, 2) else torch.randn(2, 3)
""")

program(F_, "none_attr_becomes_set", """
class Masked(nn.Module):
    def __init__(self):
        super().__init__()
        self.mask = None
    def forward(self, x):
        if self.mask is not None:
            x = x * self.mask
        return x + 1
m = Masked()
def make(): return m
def inputs(i): return torch.ones(4)
def step(i):
    if i == 2: m.mask = torch.tensor([1.0, 0.0, 1.0, 0.0])
""")

program(F_, "optional_submodule_set_later", """
class Enc(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 4)
        self.proj = None
    def forward(self, x):
        h = self.body(x)
        if self.proj is None:
            return h
        return self.proj(h)
m = Enc()
def make(): return m
def inputs(i): return torch.randn(2, 4)
def step(i):
    if i == 2: m.proj = nn.Linear(4, 2)
""")

program(F_, "sentinel_object_is", """
_MISSING = object()
class Bias(nn.Module):
    def __init__(self):
        super().__init__()
        self.value = _MISSING
    def forward(self, x):
        if self.value is _MISSING:
            return x
        return x + self.value
m = Bias()
def make(): return m
def inputs(i): return torch.zeros(2)
def step(i):
    if i == 2: m.value = 3.0
""")

program(F_, "function_identity_check", """
class Act(nn.Module):
    def __init__(self):
        super().__init__()
        self.fn = F.relu
    def forward(self, x):
        if self.fn is F.relu:
            return F.relu(x) * 2
        return self.fn(x)
m = Act()
def make(): return m
def inputs(i): return torch.randn(4)
def step(i):
    if i == 2: m.fn = torch.tanh
""")

program(F_, "tuple_config_equality", """
class Conv(nn.Module):
    def __init__(self):
        super().__init__()
        self.kernel = (3, 3)
    def forward(self, x):
        if self.kernel == (3, 3):
            return F.avg_pool2d(x, 3, 1, 1)
        return F.avg_pool2d(x, self.kernel, 1, 0)
m = Conv()
def make(): return m
def inputs(i): return torch.randn(1, 1, 4, 4)
def step(i):
    if i == 2: m.kernel = (1, 1)
""")

program(F_, "returned_object_identity", """
class Keep(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.zeros(3))
    def forward(self, x):
        self.buf.add_(x)
        return self.buf
m = Keep()
def make(): return m
def inputs(i): return torch.ones(3)
def post(out, i): return out is m.buf
""")

program(F_, "abc_register_after_compile", """
import abc
class Quantizable(abc.ABC):
    pass
class Plain(nn.Module):
    def forward(self, x):
        return x + 1
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = Plain()
    def forward(self, x):
        y = self.body(x)
        if isinstance(self.body, Quantizable):
            y = torch.round(y * 4) / 4
        return y
m = Net()
def make(): return m
def inputs(i): return torch.randn(4)
def step(i):
    if i == 2: Quantizable.register(Plain)
""")

program(F_, "abc_sequence_argument", """
import collections.abc as cabc
def f(x, spec):
    if isinstance(spec, cabc.Sequence):
        return x * len(spec)
    if isinstance(spec, cabc.Mapping):
        return x + len(spec)
    return x - 1
def make(): return f
def inputs(i): return (torch.randn(3), [(1, 2), (1, 2), {"a": 1}, 5][i])
""")

program(F_, "copy_of_an_annotated_functions_code_with_its_own_globals", """
# torch.is_tensor's code object copied into a function of the program's own (equal to the
# original, another object): MagPy annotates torch.is_tensor, not the copy, whose frame runs
# monitored like any user function and whose global `torch` is outside state.
import types as _types
class _Kinds:
    Tensor = torch.Tensor
kinds = _Kinds()
is_kind = _types.FunctionType(torch.is_tensor.__code__.replace(), {"torch": kinds})
def f(x):
    if is_kind(x):
        return x * 2
    return x - 1
def make(): return f
def inputs(i): return (torch.ones(3) * i,)
def step(i):
    if i == 2:
        kinds.Tensor = int   # the copy now says no for a tensor: eager takes the other branch
""")
