"""Written the ways users write such code, changing outside state between calls: Python dunders entered from C (sorted/max/in/dict lookup/len/iter/__index__/__float__/isinstance hooks)."""
from harness import program

F_ = "user_dunders"

program(F_, "dict_lookup_with_python_hash_key_mutated", """
EXPECT = "dynamic"
class Key:
    def __init__(s, n): s.n = n
    def __hash__(s): return hash(s.n)
    def __eq__(s, o): return isinstance(o, Key) and s.n == o.n
TABLE = {Key(1): 2.0, Key(2): 3.0}
K = Key(1)
def f(x): return x * TABLE[K]
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 3: K.n = 2
NCALLS = 5
""")

program(F_, "sorted_with_total_ordering_priority_changed", """
EXPECT = "record"
@functools.total_ordering
class Stage:
    def __init__(s, pr, k): s.pr = pr; s.k = k
    def __lt__(s, o): return s.pr < o.pr
    def __eq__(s, o): return s.pr == o.pr
STAGES = [Stage(1, 2.0), Stage(2, 3.0)]
def f(x):
    for s in sorted(STAGES):
        x = x * s.k + 1
    return x
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 3: STAGES[0].pr = 9
NCALLS = 5
""")

program(F_, "dataclass_order_heap_of_tasks", """
EXPECT = "record"
import heapq
@dataclass(order=True)
class Task:
    pr: int
    scale: float = field(compare=False)
TASKS = [Task(1, 2.0), Task(2, 3.0)]
def f(x):
    first = heapq.nsmallest(1, TASKS)[0]
    return x * first.scale
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 3: TASKS[0].pr = 9
NCALLS = 5
""")

program(F_, "python_len_and_iter_protocols", """
EXPECT = "record"
class Bag:
    def __init__(s): s.v = [1.0, 2.0]
    def __len__(s): return len(s.v)
    def __iter__(s): return iter(s.v)
BAG = Bag()
def f(x):
    return x * sum(BAG) / len(BAG)
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 3: BAG.v.append(6.0)
NCALLS = 5
""")

program(F_, "python_index_dunder_for_slicing", """
EXPECT = "dynamic"
class Pos:
    def __init__(s): s.v = 1
    def __index__(s): return s.v
P = Pos()
def f(x):
    return x[: P], x[P]
def make(): return f
def inputs(i): return (torch.arange(5.0),)
def step(i):
    if i == 3: P.v = 3
NCALLS = 5
""")

program(F_, "python_float_dunder_to_math", """
EXPECT = "record"
class Temp:
    def __init__(s): s.v = 4.0
    def __float__(s): return s.v
T = Temp()
def f(x):
    return x / math.sqrt(T)
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 3: T.v = 16.0
NCALLS = 5
""")

program(F_, "abc_register_changes_isinstance", """
EXPECT = "record"
import abc
class Norm(abc.ABC):
    pass
class MyNorm(nn.Module):
    def forward(self, x): return x / x.norm()
NET = nn.Sequential(nn.Linear(2, 2), MyNorm())
def f(x):
    for m in NET:
        if isinstance(m, Norm):
            continue
        x = m(x)
    return x
def make(): return f
def inputs(i): return (torch.ones(1, 2),)
def step(i):
    if i == 3: Norm.register(MyNorm)
NCALLS = 5
""")

program(F_, "runtime_checkable_protocol_attr_added", """
EXPECT = "record"
EXPECT_BY_VERSION = {"3.12": "dynamic", "3.13": "dynamic"}   # (typing.Protocol's isinstance reads attributes statically there)
import typing
@typing.runtime_checkable
class HasScale(typing.Protocol):
    scale: float
class Block(nn.Module):
    def forward(self, x): return x + 1
B = Block()
def f(x):
    y = B(x)
    if isinstance(B, HasScale):
        y = y * B.scale
    return y
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 3: B.scale = 5.0
NCALLS = 5
""")

program(F_, "metaclass_instancecheck_on_tag", """
EXPECT = "record"
class Meta(type):
    def __instancecheck__(cls, inst): return getattr(inst, "tag", None) == "fast"
class Fast(metaclass=Meta): pass
class Impl:
    pass
IMPL = Impl()
def f(x):
    return x * (2 if isinstance(IMPL, Fast) else 3)
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 3: IMPL.tag = "fast"
NCALLS = 5
""")

program(F_, "contains_dunder_over_growing_set", """
EXPECT = "record"
class Allow:
    def __init__(s): s.names = {"relu"}
    def __contains__(s, k): return k in s.names
ALLOW = Allow()
def f(x):
    if "relu" in ALLOW: x = torch.relu(x)
    if "neg" in ALLOW: x = -x
    return x
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 3: ALLOW.names.add("neg")
NCALLS = 5
""")

program(F_, "format_dunder_in_log_line", """
EXPECT = "record"
class Tag:
    def __init__(s): s.v = "a"
    def __format__(s, spec): return s.v.upper()
TAG = Tag()
LOG = []
def f(x):
    LOG.append(f"[{TAG}] {x.sum().item():.2f}")
    return x
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
def step(i):
    if i == 3: TAG.v = "zz"
def state(): return list(LOG)
NCALLS = 5
""")

program(F_, "getattribute_attribute_map_like_hf_config", """
EXPECT = "record"
class Cfg:
    attribute_map = {"hidden_size": "d_model"}
    def __init__(s): s.d_model = 2.0
    def __getattribute__(s, k):
        if k != "attribute_map" and k in type(s).attribute_map:
            k = type(s).attribute_map[k]
        return object.__getattribute__(s, k)
CFG = Cfg()
def f(x): return x * CFG.hidden_size
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2: CFG.d_model = 3.0
    if i == 3: CFG.other = 7.0; Cfg.attribute_map["hidden_size"] = "other"
NCALLS = 5
""")
