"""Augmented assignment (`+=` and friends) on what the call does not own: buffers returned to
the caller, views of parameters, items of outside lists and dicts, masked elements, closure
cells and globals; and the `+=` eager refuses (leaf tensors that require grad, overlapping
memory, a dtype or a shape it cannot write), which must raise the same error compiled."""
from harness import program

F_ = "augassign"

program(F_, "buffer_returned_then_changed_by_the_next_call", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("acc", torch.zeros(3))
    def forward(self, x):
        out = self.acc
        out += x
        return out
m = M()
def make(): return m
def inputs(i): return (torch.randn(3),)
""")

program(F_, "iadd_on_a_view_of_a_parameter_under_no_grad", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(2, 3))
    def forward(self, x):
        with torch.no_grad():
            t = self.w.T
            t += 0.5
        return x @ self.w.T
m = M()
def make(): return m
def inputs(i): return (torch.randn(4, 3),)
""")

program(F_, "iadd_on_items_of_outside_list_and_dict", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.hist = [torch.zeros(3), torch.zeros(3)]
        self.stats = {"n": 0, "sum": 0.0}
    def forward(self, x):
        self.hist[-1] += x
        self.stats["n"] += 1
        self.stats["sum"] += 2.5
        return self.hist[-1] * self.stats["n"]
m = M()
def make(): return m
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: m.hist.append(torch.ones(3))
""")

program(F_, "masked_iadd_with_an_outside_mask", """
MASK = torch.tensor([True, False, True])
def f(x):
    x = x.clone()
    x[MASK] += 1
    return x
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: MASK[1] = True
""")

program(F_, "iadd_into_a_closure_cell_and_a_global", """
COUNT = 0
def make_f():
    total = torch.zeros(3)
    def f(x):
        global COUNT
        nonlocal total
        total += x
        COUNT += 1
        return total * COUNT
    return f
F = make_f()
def make(): return F
def inputs(i): return (torch.randn(3),)
def state(): return (COUNT, F.__closure__[0].cell_contents.clone())
""")

program(F_, "swap_of_two_buffers_every_call", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("a", torch.zeros(3))
        self.register_buffer("b", torch.ones(3))
    def forward(self, x):
        self.a, self.b = self.b, self.a
        self.a += x
        return self.a - self.b
m = M()
def make(): return m
def inputs(i): return (torch.randn(3),)
""")

program(F_, "iadd_on_a_leaf_that_requires_grad_raises", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(3))
        self.hot = False
    def forward(self, x):
        if self.hot:
            self.w += x          # RuntimeError in eager (leaf requires grad, grad mode on)
        return self.w * x
m = M()
def make(): return m
def inputs(i): return (torch.randn(3),)
def step(i):
    m.hot = (i == 2)
""")

program(F_, "iadd_into_an_expanded_tensor_raises", """
def f(x, b):
    e = b.expand(3, 3) if x.shape[0] == 3 else b.repeat(3, 1)
    e += x
    return e
def make(): return f
def inputs(i):
    # (call 2 adds into the expanded tensor and raises; the others add a row into the repeated one)
    n = 3 if i == 2 else 2
    return (torch.randn(n, 3)[:n] if n == 3 else torch.randn(1, 3), torch.randn(1, 3))
""")

program(F_, "iadd_float_into_an_integer_buffer_raises_when_fractional", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(3, dtype=torch.long))
    def forward(self, x, step):
        self.count += step
        return x * self.count
m = M()
def make(): return m
def inputs(i): return (torch.randn(3), 1 if i != 2 else 0.5)
""")

program(F_, "iadd_that_would_broadcast_to_a_new_shape_raises", """
def f(x, y):
    x = x.clone()
    x += y
    return x
def make(): return f
def inputs(i): return (torch.randn(3), torch.randn(3) if i != 2 else torch.randn(2, 3))
""")

program(F_, "iadd_on_a_numpy_array_attribute", """
EXPECT = "dynamic"
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.running = np.zeros(3)
    def forward(self, x):
        self.running += 1.0
        return x * torch.from_numpy(self.running).float()
m = M()
def make(): return m
def inputs(i): return (torch.randn(3),)
""")

program(F_, "imul_and_ipow_on_an_outside_float_and_tensor", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.temp = 1.0
        self.register_buffer("decay", torch.tensor([1.0, 2.0]))
    def forward(self, x):
        self.temp *= 0.9
        self.decay **= 0.5
        return x / self.temp * self.decay
m = M()
def make(): return m
def inputs(i): return (torch.randn(2),)
""")
