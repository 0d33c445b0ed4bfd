"""Aliasing: values read after in-place updates through another view, argument mutated through a
view, buffers with view attributes, returned views mutated by the caller, metadata mutation."""
from harness import program

F_ = "aliasing"

program(F_, "read_after_update_through_view", """
class Step(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("state", torch.zeros(2, 2))
    def forward(self, x):
        v = self.state.view(-1)
        v[0] += 1
        if self.state[0, 0] > 2:
            return x * 10
        return x
m = Step()
def make(): return m
def inputs(i): return torch.ones(2)
NCALLS = 5
""")

program(F_, "argument_mutated_through_view", """
def f(x):
    y = x.view(2, 2)
    y.add_(1)
    return x.sum()
def make(): return f
def inputs(i): return torch.zeros(4)
""")

program(F_, "buffer_view_attribute", """
class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.ones(4))
        self.head = self.buf[:2]
    def forward(self, x):
        self.buf.mul_(2)
        return x + self.head
m = Head()
def make(): return m
def inputs(i): return torch.zeros(2)
def step(i):
    if i == 2: m.buf = torch.ones(4)   # the view attribute still points at the old storage
""")

program(F_, "returned_view_mutated_by_caller", """
class Buf(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.zeros(4))
    def forward(self, x):
        self.buf.add_(x)
        return self.buf[:2]
m = Buf()
def make(): return m
def inputs(i): return torch.ones(4)
def post(out, i):
    out.add_(100)
    return m.buf.clone()
""")

program(F_, "transpose_view_inplace_arg", """
def f(x):
    xt = x.t()
    xt[0].mul_(-1)
    return xt.contiguous()
def make(): return f
def inputs(i): return torch.arange(6.0).view(2, 3)
""")

program(F_, "unsqueeze_inplace_arg_metadata", """
def f(x):
    x.unsqueeze_(0)
    return x.shape[0] * x
def make(): return f
def inputs(i): return torch.ones(3)
""")

program(F_, "input_aliases_buffer", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mem", torch.ones(3))
    def forward(self, x):
        self.mem.mul_(2)
        return x + 1
m = M()
def make(): return m
def inputs(i): return m.mem if i == 2 else torch.ones(3)
""")

program(F_, "diagonal_view_inplace", """
def add_eye_(a, eps):
    a.diagonal().add_(eps)
    return a.trace()
def make(): return add_eye_
def inputs(i): return (torch.zeros(3, 3), 0.5 * (i + 1))
""")

program(F_, "arg_data_replaced", """
def f(x):
    x.data = torch.zeros(2)
    return x + 1
def make(): return f
def inputs(i): return torch.ones(3)
""")

program(F_, "arg_requires_grad_set_inplace", """
EXPECT = "dynamic"
def f(x):
    x.requires_grad_()
    return (x * 2).sum()
def make(): return f
def inputs(i): return torch.ones(3)
def post(out, i):
    out.backward()
    return out.requires_grad
""")

program(F_, "resize_inplace_arg", """
def f(x):
    x.resize_(2, 2)
    return x.shape[0] + x.sum() * 0
def make(): return f
def inputs(i): return torch.ones(4)
""")

program(F_, "return_input_identity", """
def maybe_cast(x):
    if x.dtype == torch.float32:
        return x
    return x.float()
def make(): return maybe_cast
def inputs(i): return torch.ones(3)
def post(out, i): return None
""")
