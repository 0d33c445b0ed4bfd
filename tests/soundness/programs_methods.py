"""Method resolution: instance attributes shadowing methods, forward patched on an instance,
functools.partial replaced, __defaults__/__kwdefaults__ rebound, methods replaced on the class."""
from harness import program

F_ = "methods"

program(F_, "instance_attr_shadows_method", """
class Block(nn.Module):
    def act(self, x):
        return torch.relu(x)
    def forward(self, x):
        return self.act(x) * 2
m = Block()
def make(): return m
def inputs(i): return torch.randn(4)
def step(i):
    if i == 2: m.act = torch.sigmoid
""")

program(F_, "submodule_forward_patched_on_instance", """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.sub = nn.Linear(4, 4)
    def forward(self, x):
        return self.sub(x) + 1
m = Net()
def make(): return m
def inputs(i): return torch.randn(2, 4)
def step(i):
    if i == 2: m.sub.forward = lambda x: x * 0
""")

program(F_, "partial_on_self_replaced", """
class Emb(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = functools.partial(F.normalize, dim=-1)
    def forward(self, x):
        return self.norm(x)
m = Emb()
def make(): return m
def inputs(i): return torch.randn(3, 4)
def step(i):
    if i == 2: m.norm = functools.partial(F.normalize, dim=0)
""")

program(F_, "function_defaults_rebound", """
def scale(x, k=2.0):
    return x * k
def f(x):
    return scale(x) + 1
def make(): return f
def inputs(i): return torch.ones(3)
def step(i):
    if i == 2: scale.__defaults__ = (5.0,)
""")

program(F_, "function_kwdefaults_rebound", """
def attn(q, k, *, temp=1.0):
    return (q @ k.t() / temp).softmax(-1)
def f(q, k):
    return attn(q, k)
def make(): return f
def inputs(i): return (torch.randn(2, 3), torch.randn(2, 3))
def step(i):
    if i == 2: attn.__kwdefaults__ = {"temp": 0.1}
""")

program(F_, "method_replaced_on_class", """
class Block(nn.Module):
    def act(self, x):
        return torch.relu(x)
    def forward(self, x):
        return self.act(x) + 1
m = Block()
def make(): return m
def inputs(i): return torch.randn(4)
def step(i):
    if i == 2: Block.act = lambda self, x: torch.tanh(x) * 5
""")

program(F_, "submodule_class_forward_replaced", """
class Sub(nn.Module):
    def forward(self, x):
        return x * 2
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.sub = Sub()
    def forward(self, x):
        return self.sub(x) + 1
m = Net()
def make(): return m
def inputs(i): return torch.ones(3)
def step(i):
    if i == 2: Sub.forward = lambda self, x: x * -3
""")

program(F_, "bound_method_attr_switched", """
class Router(nn.Module):
    def __init__(self):
        super().__init__()
        self.path = self.fast
    def fast(self, x):
        return x * 2
    def slow(self, x):
        return x.exp()
    def forward(self, x):
        return self.path(x)
m = Router()
def make(): return m
def inputs(i): return torch.ones(3)
def step(i):
    if i == 2: m.path = m.slow
""")

program(F_, "types_methodtype_bound_to_instance", """
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.k = 3.0
    def act(self, x):
        return x
    def forward(self, x):
        return self.act(x) + 1
def scaled_act(self, x):
    return x * self.k
m = Block()
def make(): return m
def inputs(i): return torch.ones(3)
def step(i):
    if i == 2: m.act = types.MethodType(scaled_act, m)
    if i == 3: m.k = -1.0
""")

program(F_, "helper_code_swapped", """
def act(x):
    return torch.relu(x)
def _tanh_act(x):
    return torch.tanh(x)
def f(x):
    return act(x) * 2
def make(): return f
def inputs(i): return torch.randn(4)
def step(i):
    if i == 2: act.__code__ = _tanh_act.__code__
""")

# The compiled callable itself: what `m(x)` / `f(x)` runs must be what the record was built from.

program(F_, "compiled_module_class_swapped", """
class A(nn.Module):
    def forward(self, x):
        return x + 1
class B(A):
    def forward(self, x):
        return x * 100
m = A()
def make(): return m
def inputs(i): return torch.ones(2)
def step(i):
    if i == 2: m.__class__ = B
""")

program(F_, "compiled_module_forward_replaced_on_class", """
class Net(nn.Module):
    def forward(self, x):
        return x + 1
m = Net()
def make(): return m
def inputs(i): return torch.ones(2)
def step(i):
    if i == 2: Net.forward = lambda self, x: x - 5
""")

program(F_, "compiled_module_forward_set_on_instance", """
class Net(nn.Module):
    def forward(self, x):
        return x + 1
m = Net()
def make(): return m
def inputs(i): return torch.ones(2)
def step(i):
    if i == 2: m.forward = lambda x: x * 3
""")

program(F_, "compiled_function_code_replaced", """
def f(x):
    return x + 1
def make(): return f
def inputs(i): return torch.ones(2)
def step(i):
    if i == 2: f.__code__ = (lambda x: x * 7).__code__
""")

program(F_, "compiled_function_defaults_rebound", """
def f(x, k=2.0, *, shift=0.0):
    return x * k + shift
def make(): return f
def inputs(i): return torch.ones(2)
def step(i):
    if i == 2: f.__defaults__ = (5.0,)
    if i == 3: f.__kwdefaults__["shift"] = 1.0
""")

program(F_, "compiled_module_call_overridden_on_class", """
class Net(nn.Module):
    def forward(self, x):
        return x + 1
m = Net()
def make(): return m
def inputs(i): return torch.ones(2)
def step(i):
    if i == 2: Net.__call__ = lambda self, x: self.forward(x) * 10
""")
