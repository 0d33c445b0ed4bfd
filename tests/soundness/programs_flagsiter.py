"""Process-wide flags behind properties and modes (torch.backends, anomaly detection, the
default device), seeds set inside forward, augmented assignment on values that change type,
stored bound methods, and iteration over outside containers whose order or length changes."""
from harness import program

F_ = "flagsiter"

program(F_, "backends_flag_read_in_forward", """
def f(x):
    if torch.backends.mkldnn.enabled:
        return x * 2
    return x - 1
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    torch.backends.mkldnn.enabled = (i != 2)
""")

program(F_, "anomaly_detection_branch", """
def f(x):
    if torch.is_anomaly_enabled():
        return x * 3
    return x + 3
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    torch.autograd.set_detect_anomaly(i == 2)
""")

program(F_, "default_device_meta_between_calls", """
def f(x):
    z = torch.zeros(3)
    return z.device.type, x + 1
def make(): return f
def inputs(i): return (torch.randn(3),)
def context(i):
    return torch.device("meta") if i == 2 else contextlib.nullcontext()
""")

program(F_, "seed_attribute_set_inside_forward", """
EXPECT = "split"
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.seed = 0
    def forward(self, x):
        torch.manual_seed(self.seed)
        return x + torch.rand(3)
m = M()
def make(): return m
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: m.seed = 7
""")

program(F_, "counter_starts_as_int_becomes_tensor", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.total = 0
    def forward(self, x):
        self.total += x.sum()
        return x * 2
m = M()
def make(): return m
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: m.total = 0
""")

program(F_, "tuple_and_text_attributes_grown_by_augmented_assignment", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.sizes = ()
        self.log = ""
    def forward(self, x):
        self.sizes += (x.shape[0],)
        self.log += "c"
        return x * len(self.sizes)
m = M()
def make(): return m
def inputs(i): return (torch.randn(2 + i % 2),)
def step(i):
    if i % 2 == 0:
        m.sizes = ()
        m.log = ""
NCALLS = 6
""")

program(F_, "augmented_assignment_into_a_view_of_a_buffer", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("hist", torch.zeros(2, 3))
        self.row = 0
    def forward(self, x):
        self.hist[self.row] += x
        self.row = 1 - self.row
        return self.hist.sum(0)
m = M()
def make(): return m
def inputs(i): return (torch.randn(3),)
""")

program(F_, "list_shared_by_two_modules_grown_in_place", """
SHARED = []
class A(nn.Module):
    def __init__(self, log):
        super().__init__()
        self.log = log
    def forward(self, x):
        self.log += [x.shape[0]]
        return x + len(self.log)
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = A(SHARED)
        self.b = A(SHARED)
    def forward(self, x):
        return self.b(self.a(x))
m = M()
def make(): return m
def inputs(i): return (torch.randn(2),)
def step(i):
    if i == 2: SHARED.clear()
""")

program(F_, "stored_bound_method_outlives_a_class_patch", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = self.double
    def double(self, x):
        return x * 2
    def forward(self, x):
        return self.act(x) + 1
m = M()
def make(): return m
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: M.double = lambda self, x: x * 10     # m.act still holds the old function
    if i == 3: m.act = m.double                      # now it holds the new one
""")

program(F_, "method_bound_with_methodtype_to_the_instance", """
import types
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.k = 2.0
    def forward(self, x):
        return self.transform(x)
def scale(self, x): return x * self.k
def shift(self, x): return x + self.k
m = M()
m.transform = types.MethodType(scale, m)
def make(): return m
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: m.transform = types.MethodType(shift, m)
    if i == 3: m.k = -1.0
""")

program(F_, "callable_config_object", """
class Policy:
    def __init__(self, p):
        self.p = p
    def __call__(self, x):
        return x * self.p
POLICY = Policy(0.5)
def f(x):
    return POLICY(x) + 1
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: POLICY.p = 4.0
    if i == 3: Policy.__call__ = lambda self, x: x - self.p
""")

program(F_, "zip_of_layers_and_a_list_of_scales_that_shrinks", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(3, 3) for _ in range(3)])
        self.scales = [1.0, 0.5, 0.25]
    def forward(self, x):
        for layer, s in zip(self.layers, self.scales):
            x = layer(x) * s
        return x
m = M()
def make(): return m
def inputs(i): return (torch.randn(2, 3),)
def step(i):
    if i == 2: m.scales.pop()
    if i == 3: m.scales[0] = 9.0
""")

program(F_, "enumerate_with_an_outside_start", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(3, 3) for _ in range(2)])
        self.offset = 1
    def forward(self, x):
        for k, layer in enumerate(self.layers, start=self.offset):
            x = layer(x) * k
        return x
m = M()
def make(): return m
def inputs(i): return (torch.randn(2, 3),)
def step(i):
    if i == 2: m.offset = 3
""")

program(F_, "reversed_modulelist_after_an_append", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(3, 3), nn.Tanh()])
    def forward(self, x):
        for layer in reversed(self.layers):
            x = layer(x)
        return x
m = M()
def make(): return m
def inputs(i): return (torch.randn(2, 3),)
def step(i):
    if i == 2: m.layers.append(nn.Sigmoid())
""")

program(F_, "map_and_chain_over_outside_lists", """
import itertools
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = [nn.Linear(3, 3)]
        self.b = [nn.ReLU(), nn.Linear(3, 3)]
    def forward(self, x):
        outs = list(map(lambda l: l(x), itertools.chain(self.a, self.b)))
        return torch.stack(outs).sum(0)
m = M()
def make(): return m
def inputs(i): return (torch.randn(2, 3),)
def step(i):
    if i == 2: m.b.reverse()
    if i == 3: m.a.append(nn.Sigmoid())
""")

program(F_, "dict_items_order_changed_by_reinsertion", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.weights = {"a": 2.0, "b": 3.0}
    def forward(self, x):
        for k, v in self.weights.items():
            x = x * v + len(k) * 0.1 + (1.0 if k == "a" else -1.0)
        return x
m = M()
def make(): return m
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2:
        v = m.weights.pop("a")
        m.weights["a"] = v
""")

program(F_, "intflag_combination_in_a_config", """
class Feat(enum.IntFlag):
    SCALE = 1
    SHIFT = 2
CFG = {"feat": Feat.SCALE}
def f(x):
    feat = CFG["feat"]
    if feat & Feat.SCALE:
        x = x * 2
    if Feat.SHIFT in feat:
        x = x + 1
    return x
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: CFG["feat"] = Feat.SCALE | Feat.SHIFT
    if i == 3: CFG["feat"] = Feat(0)
""")

program(F_, "fork_rng_inside_forward", """
EXPECT = "dynamic"
def f(x):
    with torch.random.fork_rng():
        torch.manual_seed(1)
        noise = torch.rand(3)
    return x + noise + torch.rand(3)
def make(): return f
def inputs(i): return (torch.randn(3),)
""")

program(F_, "partialmethod_on_the_class", """
EXPECT = "dynamic"
import functools
class M(nn.Module):
    def scale(self, x, k):
        return x * k
    double = functools.partialmethod(scale, k=2.0)
    def forward(self, x):
        return self.double(x)
m = M()
def make(): return m
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: M.double = functools.partialmethod(M.scale, k=5.0)
""")

program(F_, "state_getter_that_raises_caught", """
# transformers' is_cuda_stream_capturing(): a torch getter that raises on a build without
# CUDA (returns False with one), caught by the library. Whether it raises is process state:
# the record guards it.
_real = torch.cuda.is_current_stream_capturing
CLEANUP.append(lambda: setattr(torch.cuda, "is_current_stream_capturing", _real))
def capturing():
    try:
        return torch.cuda.is_current_stream_capturing()
    except Exception:
        return False
def f(x):
    if capturing():
        return x - 1
    return x + 1
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    torch.cuda.is_current_stream_capturing = _real if i != 2 else (lambda: True)
""")

program(F_, "parameter_grad_read_in_forward", """
# `.grad` read in a forward (Module._apply of `module.to(dtype)` reads every parameter's):
# None guarded as None; a gradient is read through `p.grad` on every call, so a backward, an
# in-place scaling or a new gradient tensor between calls is seen.
lin = nn.Linear(3, 3)
def f(x):
    g = lin.weight.grad
    if g is None:
        return lin(x)
    return lin(x) + g.sum()
def make(): return f
def inputs(i): return (torch.ones(2, 3) * i,)
NCALLS = 6
def step(i):
    if i == 2:
        lin.weight.grad = torch.ones(3, 3)
    if i == 4:
        lin.weight.grad.mul_(2)
    if i == 5:
        lin.weight.grad = torch.full((3, 3), 0.5)
""")
