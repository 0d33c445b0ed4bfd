"""Writes whose class runs Python code of its own: a ``__setattr__`` that logs, a data
descriptor's ``__set__``, a ``__delattr__``, on objects made in the call and on objects from
outside. That code is part of the program: its effects happen on every call, and a write
through a data descriptor never runs its ``__get__``."""
from harness import program

F_ = "attribute_write_hooks"

program(F_, "setattr_hook_of_an_object_made_in_the_call", """
EXPECT = "record"
LOG = []
COUNT = torch.zeros(1)
class State: pass
ST = State(); ST.last = None
class Logged:
    def __setattr__(self, k, v):
        LOG.append(k); COUNT.add_(1); ST.last = k
        object.__setattr__(self, k, v)
def f(x):
    o = Logged()
    o.y = x * 2
    o.z = 3
    return o.y + o.z
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
def step(i):
    if i == 2: LOG.clear()
def state(): return list(LOG), COUNT.item(), ST.last
""")

program(F_, "setattr_hook_in_init_of_a_made_module_like_object", """
EXPECT = "record"
SEEN = []
class Config:
    def __init__(self, scale):
        self.scale = scale
        self.shift = 1.0
    def __setattr__(self, k, v):
        SEEN.append(k)
        super().__setattr__(k, v)
def f(x):
    c = Config(2.0)
    return x * c.scale + c.shift
def make(): return f
def inputs(i): return (torch.full((3,), float(i)),)
def state(): return list(SEEN)
""")

program(F_, "descriptor_set_and_delattr_on_made_objects", """
EXPECT = "record"
LOG = []
class Desc:
    def __set__(self, obj, v): LOG.append(("dset", v)); obj.__dict__["_d"] = v
    def __get__(self, obj, typ=None): return obj.__dict__.get("_d", 0) if obj is not None else self
class HasDesc:
    d = Desc()
class DelA:
    def __init__(self): self.a = 1
    def __delattr__(self, k): LOG.append(("del", k)); object.__delattr__(self, k)
def f(x):
    o = HasDesc(); o.d = 3
    p = DelA(); del p.a
    return x * o.d
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
def state(): return list(LOG)
""")

program(F_, "descriptor_set_on_an_outside_object_never_gets", """
EXPECT = "record"
LOG = []
class Desc:
    def __set__(self, obj, v): LOG.append(("set", v)); obj.__dict__["_d"] = v
    def __get__(self, obj, typ=None):
        LOG.append("get"); return obj.__dict__.get("_d", 0) if obj is not None else self
class W: d = Desc()
O = W()
def f(x):
    O.d = 5
    return x * 2
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
def step(i):
    if i == 2: O.__dict__["_d"] = -1
def state(): return list(LOG), O.__dict__.get("_d")
""")

program(F_, "setattr_hook_of_an_outside_object_with_a_changing_value", """
EXPECT = "record"
class Tracker:
    def __init__(self): object.__setattr__(self, "history", [])
    def __setattr__(self, k, v):
        self.history.append((k, float(v)))
        object.__setattr__(self, k, v)
T = Tracker()
def f(x, lr):
    T.lr = lr
    return x * T.lr
def make(): return f
def inputs(i): return (torch.ones(2), [0.1, 0.1, 0.2, 0.1][i])
def state(): return list(T.history), T.__dict__.get("lr")
""")

program(F_, "partial_changed_in_place_by_setstate", """
EXPECT = "record"
import functools
def scale(x, k): return x * k
def shift(x, k): return x - k
p = functools.partial(scale)
def f(x): return p(x, 2.0)
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
def step(i):
    if i == 2: p.__setstate__((shift, (), {}, None))
    if i == 3: p.__setstate__((scale, (), {}, None))
NCALLS = 5
""")

program(F_, "torch_function_mode_that_logs_around_the_call", """
EXPECT = "dynamic"
from torch.overrides import TorchFunctionMode
LOG = []
class LogMode(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        LOG.append(getattr(func, "__name__", "?"))
        return func(*args, **(kwargs or {}))
def f(x): return x * 2 + 1
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
def context(i): return LogMode()
def state(): return list(LOG)
""")
