"""Code that runs when an object made in the call dies: a class's ``__del__``,
``weakref.finalize``, a generator dropped unfinished inside its ``try``/``with`` (closing it
runs ``finally``/``__exit__``). Eager runs that code on every call. A record never makes the
object, so the call splits at what makes a ``__del__``/finalizer object ("split"); a generator
the call drops is closed where eager closes it, inside the call, so its handler is monitored
and replayed ("record"). The controls next to them (a generator run to its end, one dropped
at a yield no handler covers) are recorded."""
from harness import program

F_ = "finalizers_and_dropped_generators"

program(F_, "temporary_with_a_del_that_logs", """
EXPECT = "split"   # (the call that makes the object is where the call splits: it runs every call)
DELLOG = []
class Tmp:
    def __init__(self, t): self.t = t
    def __del__(self): DELLOG.append(1)
def f(x):
    o = Tmp(x * 2)
    return o.t + 1
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
def state(): __import__("gc").collect(); return len(DELLOG)
""")

program(F_, "weakref_finalize_on_a_made_object", """
EXPECT = "split"   # (the call that makes the object is where the call splits: it runs every call)
import weakref
FIN = []
class Box: pass
def f(x):
    b = Box()
    weakref.finalize(b, FIN.append, 1)
    return x * 2
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
def state(): __import__("gc").collect(); return len(FIN)
""")

program(F_, "generator_dropped_inside_try_finally", """
EXPECT = "record"   # (closed as the call ends: its handler is part of the call)
EXPECT_BY_VERSION = {"3.12": "dynamic", "3.13": "dynamic"}   # (sys.monitoring: a close as the frame ends is not followed; eager)
LOG = []
def stream(x):
    try:
        for i in range(10):
            yield x * i
    finally:
        LOG.append("closed")
def f(x):
    g = stream(x)
    a = next(g); b = next(g)
    return a + b
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
def state(): __import__("gc").collect(); return list(LOG)
""")

program(F_, "generator_dropped_inside_with", """
EXPECT = "record"   # (closed as the call ends: its handler is part of the call)
EXPECT_BY_VERSION = {"3.12": "dynamic", "3.13": "dynamic"}   # (sys.monitoring: a close as the frame ends is not followed; eager)
LOG = []
class Scope:
    def __enter__(self): LOG.append("enter"); return self
    def __exit__(self, *exc): LOG.append("exit"); return False
def stream(x):
    with Scope():
        yield x + 1
        yield x + 2
def f(x):
    return next(stream(x)) * 2
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
def state(): __import__("gc").collect(); return list(LOG)
""")

program(F_, "generator_run_to_its_end_inside_try_finally", """
EXPECT = "record"
LOG = []
def stream(x):
    try:
        for i in range(3):
            yield x * i
    finally:
        LOG.append("closed")
def f(x):
    return sum(stream(x))
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
def state(): return list(LOG)
""")

program(F_, "first_parameter_from_a_dropped_generator", """
EXPECT = "record"
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
    def forward(self, x):
        p = next(self.parameters())
        return self.fc(x.to(p.dtype))
m = M()
def make(): return m
def inputs(i): return (torch.randn(2, 3, generator=torch.Generator().manual_seed(i)),)
""")
