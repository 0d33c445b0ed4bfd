"""Module attributes: a user config module, a monkeypatched function in a user util module,
os.environ flags read in forward, nested namespaces, patched torch functions."""
from harness import program

F_ = "modattr"

program(F_, "config_module_scale_and_act", """
cfg = new_module("cfg", '''
SCALE = 2.0
ACT = "relu"
''')
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
    def forward(self, x):
        act = getattr(F, cfg.ACT)
        return act(self.lin(x)) * cfg.SCALE
m = Block()
def make(): return m
def inputs(i): return torch.randn(2, 4)
def step(i):
    if i == 1: cfg.SCALE = 0.5
    if i == 2: cfg.ACT = "gelu"
""")

program(F_, "util_function_monkeypatched", """
utils = new_module("utils", '''
def act(x):
    return torch.relu(x)
''')
class Block(nn.Module):
    def forward(self, x):
        return utils.act(x) + 1
m = Block()
def make(): return m
def inputs(i): return torch.randn(4)
def step(i):
    if i == 2: utils.act = lambda x: torch.tanh(x) * 3
""")

program(F_, "util_function_global_inside_util_rebound", """
utils = new_module("utils", '''
EPS = 1e-5
def rms(x):
    return x / (x.pow(2).mean() + EPS).sqrt()
''')
def f(x):
    return utils.rms(x)
def make(): return f
def inputs(i): return torch.full((4,), 1e-3)
def step(i):
    if i == 2: utils.EPS = 1.0
""")

program(F_, "os_environ_flag", """
class Debug(nn.Module):
    def forward(self, x):
        if os.environ.get("SOUND_DEBUG_ZERO") == "1":
            return x * 0
        return x + 1
m = Debug()
def make(): return m
def inputs(i): return torch.ones(3)
def step(i):
    if i == 2: os.environ["SOUND_DEBUG_ZERO"] = "1"
    if i == 3: os.environ.pop("SOUND_DEBUG_ZERO")
NCALLS = 5
""")

program(F_, "os_environ_int_setting", """
def topk_mean(x):
    k = int(os.environ.get("SOUND_TOPK", "2"))
    return x.topk(k).values.mean()
def make(): return topk_mean
def inputs(i): return torch.arange(6.0)
def step(i):
    if i == 2: os.environ["SOUND_TOPK"] = "4"
""")

program(F_, "nested_namespace_config", """
cfg = new_module("cfg", '''
model = types.SimpleNamespace(hidden_scale=1.0, use_bias=True)
''')
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.b = nn.Parameter(torch.ones(3))
    def forward(self, x):
        y = x * cfg.model.hidden_scale
        if cfg.model.use_bias:
            y = y + self.b
        return y
m = Net()
def make(): return m
def inputs(i): return torch.ones(3)
def step(i):
    if i == 1: cfg.model.hidden_scale = 3.0
    if i == 2: cfg.model = types.SimpleNamespace(hidden_scale=-1.0, use_bias=False)
""")

program(F_, "patched_torch_functional", """
_orig_gelu = F.gelu
def fast_gelu(x, approximate="none"):
    return x * torch.sigmoid(1.702 * x)
class Block(nn.Module):
    def forward(self, x):
        return F.gelu(x)
m = Block()
def make(): return m
def inputs(i): return torch.randn(4)
def step(i):
    F.gelu = fast_gelu if i >= 2 else _orig_gelu
CLEANUP.append(lambda: setattr(F, "gelu", _orig_gelu))
""")

program(F_, "global_alias_from_import_rebound", """
utils = new_module("utils", '''
def norm(x):
    return x / x.norm()
''')
norm = utils.norm
def f(x):
    return norm(x) * 2
def make(): return f
def inputs(i): return torch.ones(4)
def step(i):
    global norm
    if i == 2: norm = lambda x: x - x.mean()
""")

program(F_, "config_dict_in_module", """
cfg = new_module("cfg", '''
OPTS = {"dropout": 0.0, "scale": 1.0}
''')
def f(x):
    return F.dropout(x, cfg.OPTS["dropout"], training=True) * cfg.OPTS["scale"]
def make(): return f
def inputs(i): return torch.ones(4)
def step(i):
    if i == 2: cfg.OPTS["scale"] = 7.0
""")

program(F_, "global_later_shadows_a_builtin", """
class Net(nn.Module):
    def forward(self, xs):
        return torch.stack(xs).sum(0) * len(xs)
m = Net()
def make(): return m
def inputs(i): return ([torch.ones(2), torch.ones(2)],)
def step(i):
    if i == 2: globals()["len"] = lambda seq: 10
""")

program(F_, "builtin_rebound_in_builtins", """
# This program's functions get a builtins dict of their own, so rebinding `round` in it stays in
# this world (the same as `builtins.round = ...` for a program with the real builtins).
__builtins__ = dict(vars(__import__("builtins")))
class Net(nn.Module):
    def forward(self, x):
        return x * round(2.4)
m = Net()
def make(): return m
def inputs(i): return torch.ones(2)
def step(i):
    if i == 2: __builtins__["round"] = lambda v: 7
""")
