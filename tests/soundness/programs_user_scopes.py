"""Written the ways users write such code, changing outside state between calls: weakrefs, contextvars, threading.local, registries keyed by identity, globals() access."""
from harness import program

F_ = "user_scopes"

program(F_, "contextvar_set_between_calls", """
EXPECT = "split"
import contextvars
SCALE = contextvars.ContextVar("scale", default=1.0)
def f(x):
    return x * SCALE.get()
def make(): return f
def inputs(i): return (torch.ones(3),)
def step(i):
    if i == 2: SCALE.set(4.0)
def CLEANUP_(): pass
""")

program(F_, "contextvar_set_and_reset_inside_call", """
EXPECT = "record"
import contextvars
PHASE = contextvars.ContextVar("phase", default="train")
SEEN = []
def inner(x):
    SEEN.append(PHASE.get())
    return x * (2 if PHASE.get() == "eval" else 1)
def f(x):
    tok = PHASE.set("eval")
    try:
        y = inner(x)
    finally:
        PHASE.reset(tok)
    return y + inner(x)
def make(): return f
def inputs(i): return (torch.ones(3),)
def state(): return list(SEEN), PHASE.get()
""")

program(F_, "contextvar_run_in_copied_context", """
EXPECT = "dynamic"
import contextvars
V = contextvars.ContextVar("v", default=0)
def f(x):
    ctx = contextvars.copy_context()
    def g():
        V.set(V.get() + 1)
        return x * V.get()
    y = ctx.run(g)
    return y, V.get()
def make(): return f
def inputs(i): return (torch.ones(3),)
def step(i):
    if i == 2: V.set(5)
""")

program(F_, "threading_local_flag", """
EXPECT = "record"
TL = threading.local()
TL.mode = "a"
def f(x):
    if getattr(TL, "mode", "a") == "a":
        return x + 1
    return x - 1
def make(): return f
def inputs(i): return (torch.ones(3),)
def step(i):
    if i == 2: TL.mode = "b"
    if i == 3: del TL.mode
NCALLS = 5
""")

program(F_, "weakvalue_registry_entry_dies", """
EXPECT = "record"
import gc
class Adapter:
    def __init__(self, s): self.s = s
REG = weakref.WeakValueDictionary()
_KEEP = [Adapter(3.0)]
REG["a"] = _KEEP[0]
def f(x):
    a = REG.get("a")
    if a is None:
        return x
    return x * a.s
def make(): return f
def inputs(i): return (torch.ones(3),)
def step(i):
    if i == 2:
        _KEEP.clear(); gc.collect()
    if i == 3:
        _KEEP.append(Adapter(7.0)); REG["a"] = _KEEP[0]
NCALLS = 5
""")

program(F_, "weakkey_dict_keyed_by_module", """
EXPECT = "record"
SCALES = weakref.WeakKeyDictionary()
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
    def forward(self, x):
        return self.lin(x) * SCALES.get(self.lin, 1.0)
NET = Net()
def make(): return NET
def inputs(i): return (torch.ones(1, 2),)
def step(i):
    if i == 2: SCALES[NET.lin] = 3.0
    if i == 3: SCALES[NET.lin] = 0.5
""")

program(F_, "weakref_to_parent_module_dies", """
EXPECT = "record"
import gc
class Parent:
    def __init__(self, k): self.k = k
_P = [Parent(2.0)]
class Child(nn.Module):
    def __init__(self):
        super().__init__()
        self.parent = weakref.ref(_P[0])
    def forward(self, x):
        p = self.parent()
        return x * (p.k if p is not None else -1.0)
NET = Child()
def make(): return NET
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2: _P.clear(); gc.collect()
""")

program(F_, "weakset_of_active_layers", """
EXPECT = "dynamic"
ACTIVE = weakref.WeakSet()
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 2); self.b = nn.Linear(2, 2)
    def forward(self, x):
        for m in (self.a, self.b):
            if m in ACTIVE:
                x = m(x)
        return x, len(ACTIVE)
NET = Net()
ACTIVE.add(NET.a)
def make(): return NET
def inputs(i): return (torch.ones(1, 2),)
def step(i):
    if i == 2: ACTIVE.add(NET.b)
    if i == 3: ACTIVE.discard(NET.a)
""")

program(F_, "globals_dict_lookup_by_name", """
EXPECT = "dynamic"
SCALE_A = 1.0
SCALE_B = 2.0
WHICH = ["A"]
def f(x):
    return x * globals()["SCALE_" + WHICH[0]]
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    global SCALE_A
    if i == 1: SCALE_A = 5.0
    if i == 2: WHICH[0] = "B"
""")

program(F_, "sys_modules_self_lookup", """
EXPECT = "record"
GAIN = 1.0
def f(x):
    mod = sys.modules[__name__]
    return x * getattr(mod, "GAIN")
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    global GAIN
    if i == 2: GAIN = 3.0
""")

program(F_, "id_keyed_registry_of_tensors", """
EXPECT = "record"
_MASKS = {}
W = torch.ones(3)
def f(x):
    m = _MASKS.get(id(W))
    return x * W * (m if m is not None else 1)
def make(): return f
def inputs(i): return (torch.ones(3),)
def step(i):
    global W
    if i == 1: _MASKS[id(W)] = torch.tensor([1.0, 0.0, 1.0])
    if i == 2: W = torch.full((3,), 2.0)
""")

program(F_, "vars_of_object_iterated", """
EXPECT = "record"
class Coefs:
    def __init__(self): self.a = 1.0; self.b = 2.0
C = Coefs()
def f(x):
    out = x
    for k, v in vars(C).items():
        out = out + v
    return out, sorted(vars(C))
def make(): return f
def inputs(i): return (torch.zeros(2),)
def step(i):
    if i == 2: C.c = 10.0
    if i == 3: del C.a
""")

program(F_, "dir_based_dispatch", """
EXPECT = "dynamic"
class Ops:
    def op_relu(self, x): return torch.relu(x)
OPS = Ops()
def f(x):
    for name in sorted(n for n in dir(OPS) if n.startswith("op_")):
        x = getattr(OPS, name)(x)
    return x
def make(): return f
def inputs(i): return (torch.randn(4),)
def step(i):
    if i == 2: Ops.op_neg = lambda self, x: -x
""")
