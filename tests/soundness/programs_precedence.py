"""Reads whose value comes from where MagPy does not look by default: items read by index from
outside containers it has no item guard for (deque, array.array, bytearray, memoryview, ...),
attribute reads whose CPython precedence (data descriptor > instance dict > nn.Module registries >
class attribute / non-data descriptor) changes between calls, and BatchNorm's cumulative moving
average (momentum=None) in train mode."""
from harness import program

F_ = "precedence"

# ---------------------------------------------------------------------------------------------
# item reads from outside containers mutated between calls
# ---------------------------------------------------------------------------------------------

program(F_, "deque_item_read", """
import collections
EXPECT = "record"
Q = collections.deque([1.0, 2.0, 3.0], maxlen=3)
def f(x):
    return x * Q[0] + Q[-1]
def make(): return f
def inputs(i): return torch.ones(2)
def step(i):
    if i in (2, 4): Q.append(float(i) + 0.5)
NCALLS = 6
""")

program(F_, "deque_appendleft_then_item_read", """
import collections
EXPECT = "record"
Q = collections.deque([1.0, 2.0], maxlen=4)
def f(x):
    Q.appendleft(3.0)   # moves the items: Q[1] is no longer the entry's Q[1]
    return x * Q[1]
def make(): return f
def inputs(i): return torch.ones(2)
NCALLS = 6
""")

program(F_, "array_item_read", """
import array
EXPECT = "dynamic"
A = array.array("d", [1.0, 2.0])
def f(x):
    return x * A[0] + A[1]
def make(): return f
def inputs(i): return torch.ones(2)
def step(i):
    if i in (2, 4): A[0] = float(i) * 3.0
NCALLS = 6
""")

program(F_, "bytearray_item_read", """
EXPECT = "dynamic"
B = bytearray(b"\\x01\\x02\\x03")
def f(x):
    return x * B[1]
def make(): return f
def inputs(i): return torch.ones(2)
def step(i):
    if i in (2, 4): B[1] = i + 7
NCALLS = 6
""")

program(F_, "memoryview_item_read", """
EXPECT = "dynamic"
BUF = bytearray(b"\\x05\\x06")
MV = memoryview(BUF)
def f(x):
    return x * MV[0]
def make(): return f
def inputs(i): return torch.ones(2)
def step(i):
    if i in (2, 4): BUF[0] = i + 11
NCALLS = 6
""")

program(F_, "array_slice_read", """
import array
EXPECT = "dynamic"
A = array.array("i", [1, 2, 3, 4])
def f(x):
    s = A[1:3]
    return x * s[0] + s[1]
def make(): return f
def inputs(i): return torch.ones(2)
def step(i):
    if i in (2, 4): A[1] = i * 5
NCALLS = 6
""")

program(F_, "deque_on_module_item_read", """
import collections
EXPECT = "record"
class Smooth(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.scales = collections.deque([1.0, 0.5])
    def forward(self, x):
        return self.lin(x) * self.scales[1]
m = Smooth()
def make(): return m
def inputs(i): return torch.ones(1, 2)
def step(i):
    if i in (2, 4): m.scales.appendleft(float(i))
NCALLS = 6
""")

program(F_, "array_iterated_and_unpacked", """
import array
EXPECT = "dynamic"
A = array.array("d", [1.0, 2.0])
def f(x):
    for v in A:
        x = x * v
    a, b = A
    return x + a * b + (1.0 if 5.0 in A else 0.0)
def make(): return f
def inputs(i): return torch.ones(2)
def step(i):
    if i in (2, 4): A[0] = float(i) + 1.0
NCALLS = 6
""")

program(F_, "array_folded_by_builtins", """
import array
EXPECT = "split"
A = array.array("f", [1.0, 2.0, 3.0])
def f(x):
    return x * sum(A) + max(A)
def make(): return f
def inputs(i): return torch.ones(2)
def step(i):
    if i in (2, 4): A[1] = float(i) * 2.0
NCALLS = 6
""")

program(F_, "bytearray_length", """
EXPECT = "record"
B = bytearray(b"ab")
def f(x):
    return x * len(B)
def make(): return f
def inputs(i): return torch.ones(2)
def step(i):
    if i in (2, 4): B.append(i)   # the length is guarded: later calls hit
NCALLS = 7
""")

# ---------------------------------------------------------------------------------------------
# attribute precedence changed between calls
# ---------------------------------------------------------------------------------------------

program(F_, "property_added_over_instance_attr", """
EXPECT = "record"
class Cfg:
    def __init__(self):
        self.scale = 2.0
C = Cfg()
def f(x):
    return x * C.scale
def make(): return f
def inputs(i): return torch.ones(2)
def step(i):
    if i == 2: Cfg.scale = property(lambda self: 10.0)
NCALLS = 6
""")

program(F_, "instance_dict_over_buffer", """
EXPECT = "record"
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("bias", torch.ones(2))
    def forward(self, x):
        return x + self.bias
m = M()
def make(): return m
def inputs(i): return torch.ones(2)
def step(i):
    if i == 2: object.__setattr__(m, "bias", torch.full((2,), 5.0))
NCALLS = 6
""")

program(F_, "instance_dict_over_parameter", """
EXPECT = "record"
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(2))
    def forward(self, x):
        return x * self.w
m = M()
def make(): return m
def inputs(i): return torch.ones(2)
def step(i):
    if i == 2: m.__dict__["w"] = torch.full((2,), 3.0)
NCALLS = 6
""")

program(F_, "class_attr_over_parameter_name", """
EXPECT = "record"
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(2))
    def forward(self, x):
        return x * self.w
m = M()
def make(): return m
def inputs(i): return torch.ones(2)
def step(i):
    if i == 2: M.w = property(lambda self: torch.full((2,), 7.0))
NCALLS = 6
""")

program(F_, "class_value_over_parameter_name", """
EXPECT = "record"
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(2))
    def forward(self, x):
        return x * self.w
m = M()
def make(): return m
def inputs(i): return torch.ones(2)
def step(i):
    if i == 2: M.w = torch.full((2,), 4.0)   # found by the normal lookup: nn.Module.__getattr__ is not asked
    if i == 4: del M.w
NCALLS = 7
""")

program(F_, "parameter_entry_over_buffer", """
EXPECT = "record"
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("shift", torch.ones(2))
    def forward(self, x):
        return x + self.shift
m = M()
def make(): return m
def inputs(i): return torch.ones(2)
def step(i):
    # nn.Module.__getattr__ searches _parameters before _buffers
    if i == 2: m._parameters["shift"] = nn.Parameter(torch.full((2,), 6.0), requires_grad=False)
NCALLS = 6
""")

program(F_, "getattr_added_to_module_class", """
EXPECT = "record"
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("shift", torch.ones(2))
    def forward(self, x):
        return x + self.shift
def _getattr(self, name):
    if name == "shift":
        return torch.full((2,), 8.0)
    return nn.Module.__getattr__(self, name)
m = M()
def make(): return m
def inputs(i): return torch.ones(2)
def step(i):
    if i == 2: M.__getattr__ = _getattr   # asked first now: a buffer is not found by the normal lookup
    if i == 4: del M.__getattr__
NCALLS = 7
""")

program(F_, "property_on_base_over_instance_attr", """
EXPECT = "record"
class Base:
    pass
class Cfg(Base):
    def __init__(self):
        self.scale = 2.0
C = Cfg()
def f(x):
    return x * C.scale
def make(): return f
def inputs(i): return torch.ones(2)
def step(i):
    if i == 2: Base.scale = property(lambda self: 12.0)
    if i == 4: del Base.scale
NCALLS = 7
""")

program(F_, "getattribute_added_over_instance_attr", """
EXPECT = "record"
class Cfg:
    def __init__(self):
        self.scale = 2.0
def _getattribute(self, name):
    return 5.0 if name == "scale" else object.__getattribute__(self, name)
C = Cfg()
def f(x):
    return x * C.scale
def make(): return f
def inputs(i): return torch.ones(2)
def step(i):
    if i == 2: Cfg.__getattribute__ = _getattribute
    if i == 4: del Cfg.__getattribute__
NCALLS = 7
""")

program(F_, "module_attr_set_with_object_setattr", """
EXPECT = "record"
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
    def forward(self, x):
        return self.lin(x)
m = Block()
def make(): return m
def inputs(i): return torch.ones(1, 2)
def step(i):
    # an instance-dict entry comes before nn.Module.__getattr__'s _modules
    if i == 2: object.__setattr__(m, "lin", nn.Identity())
    if i == 4: del m.__dict__["lin"]
NCALLS = 7
""")

# ---------------------------------------------------------------------------------------------
# BatchNorm's cumulative moving average (momentum=None) in train mode
# ---------------------------------------------------------------------------------------------

program(F_, "batchnorm1d_cumulative_average", """
EXPECT = "dynamic"   # (the factor 1 / num_batches_tracked differs on every call: no record holds)
torch.manual_seed(0)
m = nn.BatchNorm1d(3, momentum=None)
def make(): return m
def inputs(i): return torch.randn(4, 3)
NCALLS = 6
""")

program(F_, "batchnorm2d_cumulative_average", """
EXPECT = "dynamic"
torch.manual_seed(0)
m = nn.BatchNorm2d(2, momentum=None)
def make(): return m
def inputs(i): return torch.randn(2, 2, 3, 3)
NCALLS = 6
""")

program(F_, "batchnorm_cumulative_in_sequential", """
EXPECT = "record"
torch.manual_seed(0)
m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4, momentum=None), nn.ReLU())
def make(): return m
def inputs(i): return torch.randn(5, 3)
def step(i):
    if i == 4: m.eval()   # the running statistics are used from here on (records hit)
NCALLS = 7
""")
