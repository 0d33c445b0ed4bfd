"""The guard's fast path (checks skipped while dict version tags are unchanged): every way users
change held state between calls must still be seen, including ways that bypass __setattr__."""
from harness import program

F_ = "fastpath"

program(F_, "module_dict_written_directly", """
class Norm(nn.Module):
    def __init__(self):
        super().__init__()
        self.eps = 1e-5
        self.scale = 2.0
    def forward(self, x):
        return x * self.scale + self.eps
m = Norm()
def make(): return m
def inputs(i): return torch.randn(4)
def step(i):
    if i == 2: m.__dict__["scale"] = 3.0
""")

program(F_, "train_eval_toggle_every_call", """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.drop = nn.Dropout(0.5)
        self.bn = nn.BatchNorm1d(4)
    def forward(self, x):
        return self.bn(self.drop(self.lin(x)))
m = Net()
NCALLS = 5
def make(): return m
def inputs(i): return torch.randn(3, 4)
def step(i):
    m.train(i % 2 == 1)
""")

program(F_, "parameter_replaced", """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
    def forward(self, x):
        return self.lin(x)
m = Net()
def make(): return m
def inputs(i): return torch.randn(2, 4)
def step(i):
    if i == 2: m.lin.weight = nn.Parameter(torch.ones(4, 4))
    if i == 3: m.lin.bias = None
""")

program(F_, "parameter_data_swapped_and_frozen", """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
    def forward(self, x):
        return self.lin(x).sum()
m = Net()
def make(): return m
def inputs(i): return torch.randn(2, 4)
def step(i):
    if i == 1:
        with torch.no_grad(): m.lin.weight.mul_(2)
    if i == 2: m.lin.weight.data = torch.zeros(4, 4)
    if i == 3: m.lin.weight.requires_grad_(False)
""")

program(F_, "submodule_swapped_in_modulelist", """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4)])
    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return x
m = Net()
def make(): return m
def inputs(i): return torch.randn(2, 4)
def step(i):
    if i == 2: m.blocks[1] = nn.Tanh()
    if i == 3: m.blocks.append(nn.Sigmoid())
""")

program(F_, "library_function_monkeypatched", """
util = new_module("user_util_fp")
util.act = torch.relu
def act_user(x):
    return util.act(x)
class Net(nn.Module):
    def forward(self, x):
        return act_user(x) + 1
m = Net()
def make(): return m
def inputs(i): return torch.randn(4)
def step(i):
    if i == 2: util.act = torch.tanh
    if i == 3: util.__dict__["act"] = torch.sigmoid
""")

program(F_, "class_method_replaced_via_setattr", """
class Block(nn.Module):
    def act(self, x):
        return x + 1
    def forward(self, x):
        return self.act(x) * 2
class Sub(Block):
    pass
m = Sub()
def make(): return m
def inputs(i): return torch.randn(4)
def step(i):
    if i == 2: setattr(Block, "act", lambda self, x: x - 1)
    if i == 3: Sub.act = lambda self, x: x * 10
""")

program(F_, "hook_added_to_inner_module_then_removed", """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)
    def forward(self, x):
        return self.b(self.a(x))
m = Net()
H = []
NCALLS = 5
def make(): return m
def inputs(i): return torch.randn(2, 4)
def step(i):
    if i == 2: H.append(m.b.register_forward_pre_hook(lambda mod, args: (args[0] * 0,)))
    if i == 4: H.pop().remove()
""")

program(F_, "buffer_registered_and_deleted", """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("shift", torch.ones(4))
    def forward(self, x):
        s = getattr(self, "shift", None)
        return x if s is None else x + s
m = Net()
def make(): return m
def inputs(i): return torch.randn(4)
def step(i):
    if i == 2: del m.shift
    if i == 3: m.register_buffer("shift", torch.full((4,), 5.0))
""")

program(F_, "instance_dict_replaced", """
class Cfg:
    def __init__(self):
        self.k = 2.0
cfg = Cfg()
class Net(nn.Module):
    def forward(self, x):
        return x * cfg.k
m = Net()
def make(): return m
def inputs(i): return torch.randn(4)
def step(i):
    if i == 2: cfg.__dict__ = {"k": 7.0}
""")

program(F_, "global_config_dict_mutated", """
CFG = {"mult": 2.0, "bias": True}
class Net(nn.Module):
    def forward(self, x):
        y = x * CFG["mult"]
        return y + 1 if CFG["bias"] else y
m = Net()
def make(): return m
def inputs(i): return torch.randn(4)
def step(i):
    if i == 1: CFG["mult"] = 3.0
    if i == 3: CFG["bias"] = False
""")
