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
EXPECT = "dynamic"
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
def step(i): m.t = (i % 3) * 3
NCALLS = 6
""")

program(F_, "numpy_sum_of_array_mutated_in_place", """
class Anchors(nn.Module):
    def __init__(self):
        super().__init__()
        self.sizes = np.arange(6.0)
    def forward(self, x):
        k = float(np.sum(self.sizes)) + np.add.reduce(self.sizes) + float(self.sizes.astype(np.float32).reshape(-1, 1)[5, 0])
        return x * k
m = Anchors()
def make(): return m
def inputs(i): return torch.ones(3)
def step(i):
    if i == 2: m.sizes[2] = 100.0
    if i == 3: m.sizes = np.arange(7.0)
""")

program(F_, "linspace_made_in_the_call_to_tensor", """
def f(x, n):
    g = np.linspace(0, 1, n)
    return x[:n] * torch.from_numpy(g).float() + torch.tensor(np.arange(n), dtype=torch.float32)
def make(): return f
def inputs(i): return (torch.randn(6), 4 if i < 3 else 5)
""")

program(F_, "array_written_through_a_tensor_that_shares_its_memory", """
EXPECT = "dynamic"
def f(x):
    a = np.zeros(3)
    t = torch.from_numpy(a)
    t.add_(x)
    return x * float(a.sum())
def make(): return f
def inputs(i): return torch.randn(3)
""")

program(F_, "ufunc_out_writes_an_array_from_outside", """
EXPECT = "dynamic"
BUF = np.zeros(3)
def f(x):
    np.add(np.ones(3), 1.0, out=BUF)
    return x + 1
def make(): return f
def inputs(i): return torch.randn(3)
def step(i):
    if i == 2: BUF[:] = -1.0
def post(out, i): return BUF.copy()
""")

program(F_, "index_with_an_array_shuffled_between_calls", """
class Permute(nn.Module):
    def __init__(self):
        super().__init__()
        self.indices = np.arange(3, -1, -1)
    def forward(self, x):
        return x[:, self.indices] * 2
m = Permute()
def make(): return m
def inputs(i): return torch.randn(2, 4)
def step(i):
    if i == 2: m.indices[:] = np.array([1, 3, 0, 2])
""")
