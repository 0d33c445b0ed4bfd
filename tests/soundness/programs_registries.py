"""Registries keyed by identity (classes, tuples of classes, functions), read by ``dict.get`` and
other natives, with entries added or changed between calls: a registry in the style of
``torch.distributions.kl``'s, a dispatch table of functions, a table of per-function settings."""
from harness import program

F_ = "registries"

program(F_, "get_on_a_class_keyed_registry_sees_an_added_entry", """
EXPECT = "record"
class Base: pass
class Child(Base): pass
def plus(x): return x + 1
def times(x): return x * 3
REG = {Base: plus}
def f(x, kind):
    fn = REG.get(kind)
    if fn is None:
        return x - 1
    return fn(x)
def make(): return f
def inputs(i): return (torch.randn(3), Child)
def step(i):
    if i == 2: REG[Child] = times
""")

program(F_, "get_on_a_class_keyed_registry_sees_a_changed_entry", """
EXPECT = "record"
class Base: pass
def plus(x): return x + 1
def times(x): return x * 3
REG = {Base: plus}
def f(x):
    return REG.get(Base, plus)(x)
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: REG[Base] = times
""")

program(F_, "get_on_a_registry_keyed_by_pairs_of_classes", """
EXPECT = "record"
class P: pass
class Q: pass
def kl_pq(a, b): return (a - b).abs().sum()
def kl_other(a, b): return (a * b).sum()
KL = {(P, Q): kl_pq}
def f(a, b):
    fn = KL.get((P, Q))
    return fn(a, b) if fn is not None else a.sum()
def make(): return f
def inputs(i): return (torch.randn(3), torch.randn(3))
def step(i):
    if i == 1: KL[(P, Q)] = kl_other
    if i == 3: del KL[(P, Q)]
""")

program(F_, "get_on_a_function_keyed_table_of_settings", """
EXPECT = "record"
def gelu(x): return torch.nn.functional.gelu(x)
SCALE = {gelu: 1.0}
def f(x):
    return gelu(x) * SCALE.get(gelu, 0.5)
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 1: SCALE[gelu] = 4.0
    if i == 3: SCALE.clear()
""")

program(F_, "get_with_a_key_made_in_the_call_reads_the_registry_whole", """
EXPECT = "record"
class Base: pass
REG = {(Base, 1): 2.0}
def f(x):
    key = (Base, len(x.shape))
    return x * REG.get(key, -1.0)
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: REG[(Base, 1)] = 7.0
""")
