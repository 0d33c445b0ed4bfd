"""Module call semantics: an overridden __call__ (data-aware init), forward pre/post hooks on the
compiled module or a submodule registered before/after compiling, removed again, backward hooks."""
from harness import program

F_ = "callsem"

program(F_, "overridden_call_data_init_submodule", """
class DataInitScale(nn.Module):
    def __init__(self):
        super().__init__()
        self.initialized = False
        self.scale = nn.Parameter(torch.ones(4))
    def __call__(self, x):
        if not self.initialized:
            with torch.no_grad():
                self.scale.copy_(1.0 / (x.std(0) + 1e-3))
            self.initialized = True
        return super().__call__(x)
    def forward(self, x):
        return x * self.scale
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = DataInitScale()
        self.lin = nn.Linear(4, 4)
    def forward(self, x):
        return self.lin(self.norm(x))
m = Net()
def make(): return m
def inputs(i): return torch.randn(8, 4) * (i + 1)
""")

program(F_, "overridden_call_on_compiled_module", """
class Counted(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.calls = 0
    def __call__(self, *args, **kwargs):
        self.calls += 1
        return super().__call__(*args, **kwargs) * 2
    def forward(self, x):
        return self.lin(x)
m = Counted()
def make(): return m
def inputs(i): return torch.randn(2, 3)
""")

program(F_, "forward_hook_on_compiled_after_compile", """
m = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
H = []
def make(): return m
def inputs(i): return torch.randn(2, 4)
def step(i):
    if i == 2: H.append(m.register_forward_hook(lambda mod, inp, out: out + 100))
""")

program(F_, "forward_pre_hook_on_submodule_after_compile", """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 2)
    def forward(self, x):
        return self.b(torch.relu(self.a(x)))
m = Net()
H = []
def make(): return m
def inputs(i): return torch.randn(2, 4)
def step(i):
    if i == 2: H.append(m.b.register_forward_pre_hook(lambda mod, args: (args[0] * 0,)))
""")

program(F_, "forward_hook_on_submodule_before_compile", """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.feats = []
        self.a.register_forward_hook(lambda mod, inp, out: self.feats.append(out.detach()))
    def forward(self, x):
        return self.a(x).sum(-1)
m = Net()
def make(): return m
def inputs(i): return torch.randn(2, 4)
""")

program(F_, "hook_registered_then_removed", """
m = nn.Sequential(nn.Linear(3, 3), nn.Tanh())
H = []
def make(): return m
def inputs(i): return torch.randn(2, 3)
def step(i):
    if i == 1: H.append(m[0].register_forward_hook(lambda mod, inp, out: out * -1))
    if i == 3: H.pop().remove()
NCALLS = 5
""")

program(F_, "forward_hook_counts_calls_on_submodule", """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(3, 3)
        self.calls = 0
    def forward(self, x):
        return self.enc(self.enc(x))
m = Net()
def bump(mod, inp, out):
    m.calls += 1
def make(): return m
def inputs(i): return torch.randn(2, 3)
def step(i):
    if i == 1: m.enc.register_forward_hook(bump)
NCALLS = 7
""")

program(F_, "hook_on_top_before_compile", """
m = nn.Linear(3, 3)
LOG = []
m.register_forward_pre_hook(lambda mod, args: LOG.append(tuple(args[0].shape)))
def make(): return m
def inputs(i): return torch.randn(i + 1, 3)
""")

program(F_, "forward_hook_with_kwargs", """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Linear(3, 3)
    def forward(self, x):
        return self.inner(x)
m = Net()
def hook(mod, args, kwargs, out):
    return out * 3
def make(): return m
def inputs(i): return torch.randn(2, 3)
def step(i):
    if i == 2: m.inner.register_forward_hook(hook, with_kwargs=True)
""")

program(F_, "full_backward_hook_on_submodule", """
EXPECT = "split"
EXPECT_BY_VERSION = {"3.10": "record"}   # (no splits on 3.10: a record for the path the run took)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 3)
        self.b = nn.Linear(3, 1)
        self.bw = 0
    def forward(self, x):
        return self.b(torch.relu(self.a(x)))
m = Net()
def count(mod, gin, gout):
    m.bw += 1
def make(): return m
def inputs(i): return torch.randn(2, 3, requires_grad=True)
def step(i):
    if i == 2: m.a.register_full_backward_hook(count)
def post(out, i):
    out.sum().backward()
    g = [p.grad.clone() for p in m.parameters()]
    m.zero_grad()
    return g
""")

program(F_, "state_dict_load_between_calls", """
m = nn.Linear(3, 3)
SD = {k: v * 0 + 0.5 for k, v in m.state_dict().items()}
def make(): return m
def inputs(i): return torch.ones(2, 3)
def step(i):
    if i == 2: m.load_state_dict(SD)
""")

program(F_, "submodule_hooks_at_compile_time_hit", """
SEEN = []
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)
    def forward(self, x):
        return self.b(torch.relu(self.a(x)))
m = Net()
SCALE = [2.0]
m.a.register_forward_pre_hook(lambda mod, args: (args[0] * SCALE[0],))
m.b.register_forward_hook(lambda mod, args, out: out + 1)
m.b.register_forward_hook(lambda mod, args, out: SEEN.append(out.shape[0]))
H = []
NCALLS = 6
def make(): return m
def inputs(i): return torch.randn(3, 4)
def state(): return list(SEEN)
def step(i):
    if i == 2: SCALE[0] = 5.0
    if i == 3: H.append(m.a.register_forward_hook(lambda mod, args, out: out * 0))
    if i == 5: H.pop().remove()
""")

program(F_, "equalized_lr_pre_hook_on_the_compiled_module", """
class EqualLR:
    def __init__(self, name):
        self.name = name
    def __call__(self, module, inputs):
        w = getattr(module, self.name + "_orig")
        setattr(module, self.name, w * (2 / w.size(1)) ** 0.5)
m = nn.Linear(4, 3)
w = m.weight
del m._parameters["weight"]
m.register_parameter("weight_orig", nn.Parameter(w.data))
HOOK = EqualLR("weight")
m.register_forward_pre_hook(HOOK)
LOG, H = [], []
def make(): return m
def inputs(i): return torch.randn(2, 4)
def step(i):
    if i == 1:
        with torch.no_grad(): m.weight_orig.mul_(2)
    if i == 3: H.append(m.register_forward_hook(lambda mod, inp, out: LOG.append(out.sum().item()) or out * 3))
def post(out, i): return list(LOG)
""")

program(F_, "backward_hooks_on_a_submodule_with_gradients_off_and_on", """
seen = []
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 3)
        self.gate = nn.Identity()
        self.gate.register_full_backward_hook(lambda m, gi, go: seen.append(("bw", tuple(go[0].shape))))
    def forward(self, x):
        return self.gate(self.a(x)).relu() * 2
m = M()
def make(): return m
def inputs(i): return (torch.randn(2, 3, generator=torch.Generator().manual_seed(i), requires_grad=(i == 3)),)
def context(i): return torch.no_grad() if i != 3 else contextlib.nullcontext()
def post(out, i):
    if i == 3:
        out.sum().backward()
    return None
def step(i):
    if i == 2:
        m.gate.register_forward_hook(lambda mod, a, out: out + 1)
def state(): return seen
NCALLS = 5
""")


# -- a forward pre-hook with kwargs changes the dict Module.__call__ hands it (its own **kwargs) ------
# (was a fallback: "changes a dict whose origin MagPy did not see in place")

program(F_, "a_kwargs_pre_hook_edits_the_call_kwargs_from_an_outside_setting", """
EXPECT = "record"
SETTINGS = {"need_weights": False, "scale": 1.0}
class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
    def forward(self, x, need_weights=True, scale=2.0):
        y = self.lin(x) * scale
        return (y, y.sum()) if need_weights else (y, None)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()
        self.inner.register_forward_pre_hook(self._hook, with_kwargs=True)
    @staticmethod
    def _hook(module, args, kwargs):
        kwargs["need_weights"] = SETTINGS["need_weights"]
        kwargs.setdefault("scale", SETTINGS["scale"])
        return (args[0] + 1,), kwargs
    def forward(self, x):
        out, w = self.inner(x)
        out2, _ = self.inner(x, scale=3.0)
        return out + out2, w is None
NET = Net()
def make(): return NET
def inputs(i): return (torch.randn(2, 3, generator=torch.Generator().manual_seed(i)),)
def step(i):
    if i == 2:
        SETTINGS["need_weights"] = True
    if i == 4:
        SETTINGS["scale"] = -1.0
NCALLS = 6
""")

program(F_, "unhashable_callable_objects", """
# Callable objects whose class defines __eq__ and no __hash__ (torch.distributions' transforms):
# the call is their class's __call__, followed like any Python function; a field changed between
# calls is seen.
class Scale:
    def __init__(self, k): self.k = k
    def __eq__(self, other): return isinstance(other, Scale) and other.k == self.k
    def __call__(self, x): return x * self.k
S = Scale(2.0)
def f(x):
    g = torch.distributions.gumbel.Gumbel(torch.tensor(0.0), torch.tensor(1.0))
    noise = g.sample(x.shape)                      # transforms: _InverseTransform(ExpTransform)...
    t = torch.distributions.transforms.ExpTransform().inv
    return S(x) + t(x.abs() + 1) + noise * 0
def make(): return f
def inputs(i): return (torch.randn(3, generator=torch.Generator().manual_seed(i)),)
def step(i):
    if i == 2: S.k = -1.0
""")
