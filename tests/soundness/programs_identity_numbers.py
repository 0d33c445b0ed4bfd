"""``id()`` of objects the call makes: a new number every call, in eager too. A memo keyed by it
inside the call (``copy.deepcopy``'s) is fine; the number reaching anything that outlives the call
(an outside dict's key, an output, a guard) is not. Also ``copy.deepcopy`` of outside objects whose
state changes between calls."""
from harness import program

F_ = "identity_numbers"

program(F_, "deepcopy_of_an_outside_config_sees_its_changed_fields", """
EXPECT = "record"
import copy
class Config:
    def __init__(self):
        self.layers = 2
        self.scale = 0.5
        self.names = ["a", "b"]
CFG = Config()
def f(x):
    c = copy.deepcopy(CFG)
    c.layers = c.layers + 1
    return x * c.scale * c.layers + len(c.names)
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2:
        CFG.scale = 2.0
        CFG.names.append("c")
""")

program(F_, "deepcopy_of_a_shared_list_keeps_sharing_inside_the_copy", """
EXPECT = "record"
import copy
SHARED = [1, 2]
HOLDER = {"a": SHARED, "b": SHARED}
def f(x):
    c = copy.deepcopy(HOLDER)
    c["a"].append(3)          # the copy's two entries are one list, as in the original
    return x + len(c["b"]), HOLDER
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2:
        HOLDER["b"] = [7]
""")

program(F_, "copy_of_the_copy_is_returned", """
EXPECT = "record"
import copy
class Settings:
    def __init__(self): self.k = 3
S = Settings()
def f(x):
    s = copy.deepcopy(S)
    s.k += 1
    return x * s.k, s
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: S.k = 10
""")

# (The tables below are held in a closure: the harness would otherwise compare their keys, which
# are addresses, different in the eager and the compiled world by nature.)
program(F_, "id_of_a_made_object_stored_in_an_outside_dict", """
EXPECT = "dynamic"
def _table():
    seen = {}
    return lambda: seen
SEEN = _table()
KEEP = []
def f(x):
    o = [x.shape[0]]
    KEEP.append(o)            # kept alive: every call's number is new
    SEEN()[id(o)] = len(SEEN())
    return x + len(SEEN())
def make(): return f
def inputs(i): return (torch.randn(3),)
def state(): return sorted(SEEN().values())
""")

program(F_, "id_of_a_made_object_looked_up_in_an_outside_dict", """
EXPECT = "split"
def _table():
    table = {}
    return lambda: table
TABLE = _table()
KEEP = []
def f(x):
    o = object()
    KEEP.append(o)
    hit = TABLE().get(id(o))
    TABLE()[id(o)] = 1
    return x + (0 if hit is None else 1) + len(TABLE())
def make(): return f
def inputs(i): return (torch.randn(3),)
def state(): return len(TABLE())
""")

program(F_, "id_of_a_made_object_returned", """
EXPECT = "split"
KEEP = []
def f(x):
    o = [1]
    KEEP.append(o)
    return x + 1, id(o)
def make(): return f
def inputs(i): return (torch.randn(3),)
def invoke(f, i):
    out, number = f(*inputs(i))
    return out, number == id(KEEP[-1])   # the number names this call's object
""")

program(F_, "ids_compared_inside_the_call", """
EXPECT = "split"   # (a memo of the program's own may be iterated, ordered: only copy's memos are followed)
def f(x, n):
    items = [object() for _ in range(n)]
    memo = {id(o): k for k, o in enumerate(items)}
    first = items[0]
    return x + memo[id(first)] + len(memo)
def make(): return f
def inputs(i): return (torch.randn(3), 3)
""")

program(F_, "objects_ordered_by_id_in_native_code", """
EXPECT = "split"
def _kept():
    kept = []
    return lambda: kept                 # (held in a closure: the harness compares state() only)
KEEP = _kept()
def f(x):
    a = ['a']; b = ['b']; c = ['c']
    s = sorted([c, a, b], key=id)       # an order of addresses: new on every call
    KEEP().append(s)
    return x + 1
def make(): return f
def inputs(i): return (torch.randn(3),)
def state(): return [[id(o) for o in s] == sorted(id(o) for o in s) for s in KEEP()]
""")

program(F_, "a_branch_on_ids_of_objects_made_in_the_call", """
EXPECT = "split"
KEEP = []
OUT = [1, 2]
def f(x):
    o = [1]
    KEEP.append(o)
    return x - 1 if id(o) < id(OUT) else x + 1
def make(): return f
def inputs(i): return (torch.ones(3),)
def invoke(f, i):
    out = f(*inputs(i))
    return bool(out[0] == 0) == (id(KEEP[-1]) < id(OUT))
""")

program(F_, "deepcopy_of_an_object_with_slots_sees_a_changed_slot", """
EXPECT = "split"
import copy
class S:
    __slots__ = ("a",)
    def __init__(self): self.a = 1.0
O = S()
def f(x):
    return x * copy.deepcopy(O).a
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 1: O.a = 4.0
""")

program(F_, "deepcopy_after_the_class_gains_getstate", """
EXPECT = "split"
EXPECT_BY_VERSION = {"3.10": "record"}   # (no splits on 3.10: records until the class changes, then eager)
import copy
class C:
    def __init__(self): self.v = 1.0; self.w = 2.0
O = C()
def f(x):
    c = copy.deepcopy(O)
    return x * c.v + getattr(c, "w", 100.0)
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: C.__getstate__ = lambda self: {"v": self.v}
""")

program(F_, "deepcopy_after_the_class_gains_setstate", """
EXPECT = "record"
import copy
class C:
    def __init__(self): self.v = 1.0
O = C()
def f(x):
    return x * copy.deepcopy(O).v
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: C.__setstate__ = lambda self, st: setattr(self, "v", 50.0)
""")

program(F_, "copy_after_the_class_gains_copy", """
EXPECT = "record"
import copy
class C:
    def __init__(self): self.v = 1.0
class D:
    v = 8.0
O = C()
def f(x):
    return x * copy.copy(O).v
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: C.__copy__ = lambda self: D()
""")

program(F_, "deepcopy_of_a_config_holding_a_set_that_changes_between_calls", """
# A configuration with a set of names, deep-copied in the call (as `config.to_dict()` does): the
# copy's set is a new one with the original's values, which change between calls.
EXPECT = "record"
import copy
class Config:
    def __init__(self):
        self.skip = {"norm", "bias"}
        self.frozen = frozenset({"emb"})
        self.width = 2
CFG = Config()
def f(x):
    c = copy.deepcopy(CFG)
    c.skip.add("head")                        # the copy's own set: the original keeps its values
    return x * len(c.skip) + len(c.frozen) * c.width, sorted(c.skip), c.skip is CFG.skip
def make(): return f
def inputs(i): return (torch.randn(3),)
NCALLS = 6
def step(i):
    if i == 2: CFG.skip.add("proj")
    if i == 3: CFG.frozen = frozenset({"emb", "pos"})
    if i == 4: CFG.skip.discard("norm"); CFG.skip.add("gate")   # same size, other values
def state(): return sorted(CFG.skip), sorted(CFG.frozen)
""")

program(F_, "deepcopy_of_a_set_of_objects_splits_at_the_copy", """
# A set of mutable objects: its reduction hands them on (not values): the call splits there.
EXPECT = "split"
import copy
class Tag:
    def __init__(self, n): self.n = n
FIRST = Tag(1)
TAGS = {FIRST, Tag(2)}
def f(x):
    c = copy.deepcopy(TAGS)
    return x * sum(t.n for t in c)
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: FIRST.n = 10
""")
