"""numpy on static values: x / np.sqrt(d), np.float64 constants, numpy arrays mutated in place,
numpy integers as shapes."""
from harness import program

F_ = "numpy"

program(F_, "divide_by_np_sqrt_d", """
class Attn(nn.Module):
    def __init__(self):
        super().__init__()
        self.d = 4
    def forward(self, q, k):
        return (q @ k.t() / np.sqrt(self.d)).softmax(-1)
m = Attn()
def make(): return m
def inputs(i): return (torch.randn(2, 4), torch.randn(2, 4))
def step(i):
    if i == 2: m.d = 64
""")

program(F_, "np_float64_global_constant", """
SCALE = np.float64(0.5)
def f(x):
    return x * SCALE
def make(): return f
def inputs(i): return torch.ones(3)
def step(i):
    global SCALE
    if i == 2: SCALE = np.float64(-3.0)
def post(out, i): return out.dtype
""")

program(F_, "np_float32_attr", """
class Gain(nn.Module):
    def __init__(self):
        super().__init__()
        self.gain = np.float32(2.0)
    def forward(self, x):
        return x * self.gain + np.log(self.gain)
m = Gain()
def make(): return m
def inputs(i): return torch.ones(2)
def step(i):
    if i == 2: m.gain = np.float32(8.0)
""")

program(F_, "numpy_table_mutated_in_place", """
class Lut(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    def forward(self, x):
        return x * torch.tensor(self.table)
m = Lut()
def make(): return m
def inputs(i): return torch.ones(3)
def step(i):
    if i == 2: m.table[1] = -10.0
""")

program(F_, "from_numpy_shared_memory", """
ARR = np.ones(3, dtype=np.float32)
def f(x):
    return x + torch.from_numpy(ARR)
def make(): return f
def inputs(i): return torch.zeros(3)
def step(i):
    if i == 2: ARR[:] = 5.0
""")

program(F_, "np_int_as_shape", """
class Fold(nn.Module):
    def __init__(self):
        super().__init__()
        self.groups = np.int64(2)
    def forward(self, x):
        return x.reshape(self.groups, -1).sum(0)
m = Fold()
def make(): return m
def inputs(i): return torch.arange(6.0)
def step(i):
    if i == 2: m.groups = np.int64(3)
""")

program(F_, "np_pi_and_cos_schedule", """
class Cosine(nn.Module):
    def __init__(self):
        super().__init__()
        self.t = 0
        self.T = 10
    def forward(self, x):
        w = 0.5 * (1 + np.cos(np.pi * self.t / self.T))
        return x * w
m = Cosine()
def make(): return m
def inputs(i): return torch.ones(2)
def step(i): m.t = i * 3
""")
