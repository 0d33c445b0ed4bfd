from harness import program
F_ = "rt_lru"

program(F_, "hit_then_graph_raises", """
# cached hit before a graph op that raises on some values: eager counted the hit
import functools
@functools.lru_cache(maxsize=None)
def k(n):
    return n * 2
def f(x, idx):
    a = k(3)
    return x[idx] * a
def make(): return f
def inputs(i): return (torch.randn(4), torch.tensor([1, 2]) if i != 2 else torch.tensor([1, 9]))
NCALLS = 5
def state(): return k.cache_info()
""")

program(F_, "cache_info_read_inside", """
import functools
@functools.lru_cache(maxsize=None)
def k(n):
    return n * 2
def f(x):
    a = k(3)
    h = k.cache_info().hits
    return x * a + h
def make(): return f
def inputs(i): return (torch.randn(4),)
NCALLS = 5
def state(): return k.cache_info()
""")

program(F_, "cache_info_read_after_hit_in_branch", """
import functools
@functools.lru_cache(maxsize=2)
def k(n):
    return n * 2
def f(x):
    if x.sum() > 0:
        k(1)
    info = k.cache_info()
    return x * info.hits + info.currsize
def make(): return f
def inputs(i): return (torch.randn(4) + (3 if i % 2 else -3),)
NCALLS = 6
def step(i):
    if i == 0: k(1)
def state(): return k.cache_info()
""")

program(F_, "cached_list_mutated_inside", """
import functools
@functools.lru_cache(maxsize=None)
def reg(name):
    return []
def f(x):
    r = reg("a")
    r.append(1)
    return x * len(r)
def make(): return f
def inputs(i): return (torch.randn(4),)
NCALLS = 5
def step(i):
    if i == 3: reg.cache_clear()
def state(): return reg.cache_info(), list(reg("a")) if False else None
""")

program(F_, "cached_list_mutated_outside", """
import functools
HOLD = []
@functools.lru_cache(maxsize=None)
def reg(name):
    l = [1.0]
    HOLD.append(l)
    return l
def f(x):
    return x * sum(reg("a"))
def make(): return f
def inputs(i): return (torch.randn(4),)
NCALLS = 5
def step(i):
    if i == 2: HOLD[0].append(5.0)
def state(): return reg.cache_info()
""")

program(F_, "cache_clear_inside_call", """
import functools
C = [0]
@functools.lru_cache(maxsize=None)
def k(n):
    C[0] += 1
    return n * 2
def f(x):
    a = k(3)
    k.cache_clear()
    return x * a
def make(): return f
def inputs(i): return (torch.randn(4),)
def state(): return k.cache_info(), C[0]
""")

program(F_, "bool_and_int_and_float_keys", """
import functools
@functools.lru_cache(maxsize=None)
def k(n):
    return repr(n)
V = [1.0]
def f(x):
    return x * len(k(V[0]))
def make(): return f
def inputs(i): return (torch.randn(4),)
NCALLS = 6
def step(i):
    if i == 0: k(1)
    if i == 2: V[0] = True
    if i == 3: V[0] = 1
    if i == 4: k.cache_clear(); k(True)
    if i == 5: V[0] = 1.0
def state(): return k.cache_info()
""")

program(F_, "lru_order_three_keys_branch_then_evict", """
import functools
COMPUTED = []
@functools.lru_cache(maxsize=3)
def c(k):
    COMPUTED.append(k)
    return k * 0.5
def f(x):
    y = x * c(1)
    if x.sum() > 0:
        y = y + c(2)
    else:
        y = y + c(3)
    return y + c(1)
def make(): return f
def inputs(i): return (torch.randn(3) + (2.0 if i in (1, 2, 5) else -2.0),)
NCALLS = 8
def step(i):
    if i == 0: c(2); c(3)
    if i in (3, 6): c(4)
def state(): return c.cache_info(), list(COMPUTED)
""")

program(F_, "hash_reads_global", """
import functools
CFG = {"k": 1}
class Key:
    def __hash__(self): return hash(CFG["k"])
    def __eq__(self, o): return isinstance(o, Key)
KEY = Key()
@functools.lru_cache(maxsize=None)
def c(k):
    return float(CFG["k"])
def f(x):
    return x * c(KEY)
def make(): return f
def inputs(i): return (torch.randn(3),)
NCALLS = 5
def step(i):
    if i == 2: CFG["k"] = 7
def state(): return c.cache_info()
""")

program(F_, "hit_before_raise_in_python", """
import functools
@functools.lru_cache(maxsize=None)
def k(n):
    return n * 2
LIM = [10]
def f(x):
    a = k(3)
    if x.shape[0] > LIM[0]:
        raise ValueError("too big")
    return x * a
def make(): return f
def inputs(i): return (torch.randn(4),)
NCALLS = 5
def step(i):
    if i == 3: LIM[0] = 2
def state(): return k.cache_info()
""")

program(F_, "hit_then_item_raises", """
import functools
@functools.lru_cache(maxsize=None)
def k(n):
    return n * 2
def f(x):
    a = k(3)
    v = x.sum()
    if v > 100:
        pass
    torch._assert(v.abs() < 50, "big")
    return x * a
def make(): return f
def inputs(i): return (torch.randn(4) * (1 if i != 2 else 100),)
NCALLS = 5
def state(): return k.cache_info()
""")

program(F_, "cached_tensor_inplace", """
import functools
@functools.lru_cache(maxsize=None)
def table(n):
    return torch.ones(n)
def f(x):
    t = table(x.shape[0])
    t.add_(1)
    return x * t
def make(): return f
def inputs(i): return (torch.randn(4),)
NCALLS = 5
def step(i):
    if i == 3: table.cache_clear()
def state(): return table.cache_info(), table(4).clone()
""")
