"""Written the ways users write such code, changing outside state between calls: natives that read attributes/values, lru_cache, modes entered in the call, check mode."""
from harness import program

F_ = "user_natives"

program(F_, "sorted_by_python_key_of_attribute", """
EXPECT = "record"
class Head(nn.Module):
    def __init__(self, order, k):
        super().__init__(); self.order = order; self.k = k
    def forward(self, x): return x * self.k + 1
HEADS = [Head(0, 2.0), Head(1, 3.0)]
def f(x):
    for h in sorted(HEADS, key=lambda h: h.order):
        x = h(x)
    return x
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2: HEADS[0].order = 5
""")

program(F_, "max_over_dict_by_value", """
EXPECT = "record"
SCORES = {"a": 1.0, "b": 2.0}
MODS = {"a": torch.relu, "b": torch.neg}
def f(x):
    best = max(SCORES, key=SCORES.get)
    return MODS[best](x)
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: SCORES["a"] = 5.0
""")

program(F_, "getattr_default_on_module_flag", """
EXPECT = "record"
NET = nn.Linear(2, 2)
def f(x):
    y = NET(x)
    if getattr(NET, "use_act", False):
        y = torch.relu(y)
    return y
def make(): return f
def inputs(i): return (torch.randn(1, 2),)
def step(i):
    if i == 2: NET.use_act = True
    if i == 3: del NET.use_act
""")

program(F_, "isinstance_against_registry_tuple", """
EXPECT = "record"
NORM_TYPES = [nn.LayerNorm]
NET = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2), nn.Linear(2, 2))
def f(x):
    for m in NET:
        if isinstance(m, tuple(NORM_TYPES)):
            continue
        x = m(x)
    return x
def make(): return f
def inputs(i): return (torch.randn(3, 2),)
def step(i):
    if i == 2: NORM_TYPES.append(nn.BatchNorm1d)
""")

program(F_, "lru_cache_on_method_keyed_by_self", """
EXPECT = "record"
class Pos(nn.Module):
    def __init__(self):
        super().__init__(); self.base = 10000.0
    @functools.lru_cache(maxsize=4)
    def freqs(self, n):
        return torch.arange(n) / self.base
    def forward(self, x):
        return x + self.freqs(x.shape[-1])
NET = Pos()
def make(): return NET
def inputs(i): return (torch.zeros(3),)
def step(i):
    if i == 2: NET.base = 1.0
    if i == 3: Pos.freqs.cache_clear()
def state(): return Pos.freqs.cache_info()
NCALLS = 5
""")

program(F_, "lru_cache_returning_mutable_list", """
EXPECT = "record"
@functools.lru_cache(None)
def dims():
    return [0]
def f(x):
    return x.sum(dims())
def make(): return f
def inputs(i): return (torch.ones(2, 3),)
def step(i):
    if i == 2: dims().append(1)
""")

program(F_, "lru_cache_returning_tensor_mutated", """
EXPECT = "record"
@functools.lru_cache(None)
def table(n):
    return torch.arange(float(n))
def f(x):
    return x + table(3)
def make(): return f
def inputs(i): return (torch.zeros(3),)
def step(i):
    if i == 2: table(3).add_(10)
""")

program(F_, "cache_decorator_functools_cache", """
EXPECT = "record"
CALLS = []
@functools.cache
def coef(k):
    CALLS.append(k)
    return k * 0.5
K = [2]
def f(x):
    return x * coef(K[0])
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2: K[0] = 3
    if i == 3: K[0] = 2
def state(): return list(CALLS)
""")

program(F_, "custom_torch_function_mode_entered_in_call", """
EXPECT = "dynamic"
from torch.overrides import TorchFunctionMode
SEEN = []
class Count(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        SEEN.append(getattr(func, "__name__", "?"))
        return func(*args, **(kwargs or {}))
def f(x):
    with Count():
        y = x * 2 + 1
    return y
def make(): return f
def inputs(i): return (torch.ones(2),)
def state(): return list(SEEN)
""")

program(F_, "autocast_entered_inside_call", """
EXPECT = "record"
LIN = nn.Linear(4, 4)
def f(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = LIN(x)
    return y.float(), y.dtype
def make(): return f
def inputs(i): return (torch.ones(2, 4),)
""")

program(F_, "sdpa_kernel_flag_context", """
EXPECT = "record"
def f(q):
    return F.scaled_dot_product_attention(q, q, q, is_causal=True)
def make(): return f
def inputs(i): return (torch.randn(1, 2, 3, 4),)
""")

program(F_, "einsum_equation_from_config_string", """
EXPECT = "record"
CFG = {"eq": "ij,jk->ik"}
def f(a, b):
    return torch.einsum(CFG["eq"], a, b)
def make(): return f
def inputs(i): return (torch.randn(2, 2), torch.randn(2, 2))
def step(i):
    if i == 2: CFG["eq"] = "ij,kj->ik"
""")

program(F_, "copy_deepcopy_of_config_in_call", """
EXPECT = "record"
import copy
BASE = {"w": [1.0, 2.0]}
def f(x):
    c = copy.deepcopy(BASE)
    c["w"][0] *= 3
    return x * c["w"][0] + c["w"][1]
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2: BASE["w"][1] = 7.0
""")

program(F_, "json_roundtrip_of_config", """
EXPECT = "split"
import json
CFG = {"k": 2.0}
def f(x):
    c = json.loads(json.dumps(CFG))
    return x * c["k"]
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2: CFG["k"] = 5.0
""")

program(F_, "struct_pack_unpack_scale", """
EXPECT = "record"
import struct
RAW = [struct.pack("f", 2.0)]
def f(x):
    (s,) = struct.unpack("f", RAW[0])
    return x * s
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2: RAW[0] = struct.pack("f", 4.0)
""")

program(F_, "bisect_bucket_of_sequence_length", """
EXPECT = "dynamic"
import bisect
EDGES = [2, 4, 8]
PADS = [0.0, 1.0, 2.0, 3.0]
def f(x):
    b = bisect.bisect_left(EDGES, x.shape[0])
    return x + PADS[b]
def make(): return f
def inputs(i): return (torch.ones([1, 3, 5, 9, 3][i]),)
def step(i):
    if i == 4: EDGES[1] = 3
NCALLS = 5
""")
