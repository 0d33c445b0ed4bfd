"""Tensor metadata read in Python: is_leaf, grad_fn is None, requires_grad, tensor subclasses,
dtype / contiguity / ndim branches, parameters frozen between calls."""
from harness import program

F_ = "metadata"

program(F_, "is_leaf_branch", """
def f(x):
    if x.is_leaf:
        return x * 2
    return x * 3
def make(): return f
def inputs(i):
    x = torch.ones(3, requires_grad=True)
    return x if i % 2 == 0 else x * 1
""")

program(F_, "grad_fn_is_none_branch", """
EXPECT = "dynamic"
def detach_if_needed(x):
    if x.grad_fn is None:
        return x + 1
    return x.detach() - 1
def make(): return detach_if_needed
def inputs(i):
    x = torch.ones(3, requires_grad=True)
    return x if i in (0, 2) else x.exp()
""")

program(F_, "requires_grad_branch", """
class Maybe(nn.Module):
    def __init__(self):
        super().__init__()
        self.ck = 0
    def forward(self, x):
        if x.requires_grad:
            self.ck += 1
            return x * 2
        return x * 10
m = Maybe()
def make(): return m
def inputs(i): return torch.ones(3, requires_grad=(i >= 2))
""")

program(F_, "tensor_subclass_input", """
class Tagged(torch.Tensor):
    pass
def f(x):
    if isinstance(x, Tagged):
        return x * 0
    return x + 1
def make(): return f
def inputs(i):
    x = torch.ones(3)
    return x.as_subclass(Tagged) if i == 2 else x
def post(out, i): return type(out).__name__
""")

program(F_, "dtype_branch", """
def f(x):
    if x.dtype == torch.float64:
        return x * 2
    return x.float() + 1
def make(): return f
def inputs(i): return torch.ones(3, dtype=torch.float64 if i == 2 else torch.float32)
""")

program(F_, "contiguity_branch", """
def f(x):
    if not x.is_contiguous():
        x = x.contiguous() * -1
    return x.view(-1)
def make(): return f
def inputs(i):
    x = torch.arange(6.0).view(2, 3)
    return x.t() if i == 2 else x.view(3, 2)
""")

program(F_, "parameter_frozen_between_calls", """
m = nn.Linear(3, 2)
def make(): return m
def inputs(i): return torch.randn(4, 3)
def step(i):
    if i == 2: m.weight.requires_grad_(False)
    if i == 3: m.bias.requires_grad_(False)
def post(out, i): return out.requires_grad
""")

program(F_, "tensor_subclass_parameter_torch_function", """
class Scaled(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        out = super().__torch_function__(func, types, args, kwargs or {})
        return out
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.ones(3)
    def forward(self, x):
        return x * self.w
m = Net()
def make(): return m
def inputs(i): return torch.ones(3)
def step(i):
    if i == 2: m.w = (torch.ones(3) * 4).as_subclass(Scaled)
def post(out, i): return type(out).__name__
""")

program(F_, "stride_based_reshape", """
def flat(x):
    if x.stride(-1) != 1:
        return x.reshape(-1) * 2
    return x.view(-1)
def make(): return flat
def inputs(i):
    x = torch.arange(6.0).view(2, 3)
    return x[:, ::2] if i == 2 else x[:1]
""")

program(F_, "subclass_torch_function_log", """
LOG = []
class Logged(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        LOG.append(getattr(func, "__name__", str(func)))
        return super().__torch_function__(func, types, args, kwargs or {})
w = torch.randn(2, 3)
def f(x):
    return (x * 2 + w).sum(0)
def make(): return f
def inputs(i): return torch.randn(2, 3).as_subclass(Logged)
def state(): return list(LOG)
""")

program(F_, "attribute_set_on_a_tensor_object_between_calls", """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.ones(3))
    def forward(self, x):
        scale = 3.0 if getattr(self.buf, "_flag", False) else 1.0
        extra = 1.0 if hasattr(x, "_tag") else 0.0
        return x * self.buf * scale + extra + float(isinstance(self.buf, nn.Parameter))
m = Net()
def make(): return m
X = torch.randn(3)
def inputs(i): return X
def step(i):
    if i == 2: m.buf._flag = True
    if i == 3: X._tag = 1
""")

program(F_, "requires_grad_written_in_forward", """
def f(x, flag):
    mask = torch.triu(torch.ones(3, 3))
    mask.requires_grad = False
    x.requires_grad = flag
    return (x * mask).sum(), x.requires_grad
def make(): return f
X = torch.randn(3, 3)
def inputs(i): return (X, i >= 2)
""")

program(F_, "attribute_set_on_a_parameter_read_by_load_attr", """
# `self.weight.fast` (MAML-style fast weights kept on the parameter object): None at first, then
# a tensor, then a different tensor, then another shape's weights are not used; read with a plain
# attribute load in forward.
import torch.nn.functional as F
class MetaLinear(nn.Linear):
    def __init__(self):
        super().__init__(4, 3)
        self.weight.fast = None
        self.bias.fast = None
    def forward(self, x):
        if self.weight.fast is not None and self.bias.fast is not None:
            return F.linear(x, self.weight.fast, self.bias.fast)
        return super().forward(x)
m = MetaLinear()
def make(): return m
def inputs(i): return torch.randn(2, 4, generator=torch.Generator().manual_seed(i))
def step(i):
    g = torch.Generator().manual_seed(10 + i)
    if i == 1:
        m.weight.fast = torch.randn(3, 4, generator=g)
        m.bias.fast = torch.randn(3, generator=g)
    if i == 3:
        m.weight.fast = m.weight.fast * 2
    if i == 4:
        m.bias.fast = None
NCALLS = 5
""")
