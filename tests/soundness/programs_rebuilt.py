"""Objects the mock rebuilds and values the guards compare: a set made in the call iterates in
the order its history gave it (growth, removals), a defaultdict keeps its factory, a deque its
maxlen, a list subclass its class and attributes; a record made with 0.0 is not served to -0.0
(``str``, ``math.copysign``, ``1/x`` tell them apart), nor one made with NaN to a number."""
from harness import program

F_ = "rebuilt"

program(F_, "int_set_grown_then_shrunk_returned", """
EXPECT = "dynamic"   # (its table comes from its history: not rebuilt, the call runs eagerly)
KEEP = 4
def active(x):
    ids = set()
    for k in range(12):
        ids.add(k * 3 + 1)           # grows the table (resizes), collisions in the small table
    for k in range(KEEP, 12):
        ids.discard(k * 3 + 1)
    return x * len(ids), ids
def make(): return active
def inputs(i): return torch.ones(2)
def post(out, i):
    s = out[1]
    before = list(s)
    s.add(8)                          # where a new element lands shows the table it lives in
    return before, list(s)
""")

program(F_, "str_set_with_history_stored_on_module", """
EXPECT = "dynamic"   # (its table comes from its history: not rebuilt, the call runs eagerly)
TAGS = None
def tag(x):
    global TAGS
    seen = set()
    for k in range(30):
        seen.add("tok%d" % k)
    for k in range(6, 30):
        seen.remove("tok%d" % k)
    TAGS = seen
    return x + 1
def make(): return tag
def inputs(i): return torch.ones(2)
def state(): return list(TAGS) if TAGS is not None else None
""")

program(F_, "small_int_set_returned_then_popped", """
EXPECT = "record"
PORTS = [131, 380, 107]
def ports(x):
    s = set()
    for p in PORTS:
        s.add(p)                      # 380 and 107 collide with 131: where they land depends on the order
    return x.sum(), s
def make(): return ports
def inputs(i): return torch.ones(3)
def post(out, i):
    s = out[1]
    order = list(s)
    return order, [s.pop() for _ in range(len(s))]
""")

program(F_, "small_str_set_returned_then_popped", """
EXPECT = "record"
NAMES = ["alpha", "beta", "gamma", "delta"]
def names(x):
    s = set()
    for n in NAMES:
        s.add(n)
    return x.sum(), s
def make(): return names
def inputs(i): return torch.ones(3)
def post(out, i):
    s = out[1]
    return [s.pop() for _ in range(len(s))]
""")

program(F_, "defaultdict_list_stored_outside", """
EXPECT = "record"
import collections
GROUPS = None
def group(x):
    global GROUPS
    g = collections.defaultdict(list)
    g["a"].append(1)
    GROUPS = g
    return x * 2
def make(): return group
def inputs(i): return torch.ones(2)
def step(i):
    if GROUPS is not None:
        GROUPS["missing"].append(i)   # the caller relies on the factory after the call
def state(): return (type(GROUPS).__name__, getattr(GROUPS, "default_factory", None), dict(GROUPS or {}))
""")

program(F_, "deque_maxlen_returned", """
EXPECT = "record"
import collections
def window(x):
    w = collections.deque(maxlen=3)
    w.append(1)
    w.append(2)
    return x + 1, w
def make(): return window
def inputs(i): return torch.ones(2)
def post(out, i):
    w = out[1]
    for k in range(4):
        w.append(k)
    return type(w).__name__, w.maxlen, list(w)
""")

program(F_, "ordereddict_subclass_move_to_end", """
# (the subclass's native constructor has no annotation: the call splits there and the object is
# made by the continuation; the rebuild of an OrderedDict subclass is tested through the split)
EXPECT = "split"
import collections
class Registry(collections.OrderedDict):
    pass
def order(x):
    d = Registry()
    d["a"] = 1
    d["b"] = 2
    d["c"] = 3
    d.move_to_end("a")
    d.move_to_end("c", last=False)
    d.owner = "order"
    return x * 3, d
def make(): return order
def inputs(i): return torch.ones(2)
def post(out, i):
    d = out[1]
    d.move_to_end("b", last=False)
    return type(d).__name__, list(d.items()), d.owner
""")

program(F_, "list_subclass_with_slots_returned", """
EXPECT = "record"
class Batch(list):
    __slots__ = ("tag",)
    origin = "batch"
    def __init__(self, tag):
        self.tag = tag
def collect(x):
    b = Batch("train")
    b.append(1)
    return x - 1, b
def make(): return collect
def inputs(i): return torch.ones(2)
def post(out, i):
    b = out[1]
    return type(b).__name__, list(b), getattr(b, "tag", "<missing>"), b.origin
""")

program(F_, "float_arg_signed_zero_formatted", """
EXPECT = "record"
import math
LOG = []
def scale(x, s):
    LOG.append("scale=%s sign=%s" % (s, math.copysign(1.0, s)))
    return x * 2
def make(): return scale
def inputs(i): return (torch.ones(2), -0.0 if i >= 2 else 0.0)
def state(): return list(LOG)
""")

program(F_, "float_arg_signed_zero_reciprocal", """
EXPECT = "record"
import math
def inv(x, s):
    try:
        r = math.copysign(math.inf, s)
    except ZeroDivisionError:
        r = 0.0
    return x * 0 + (1.0 if r > 0 else -1.0)
def make(): return inv
def inputs(i): return (torch.ones(2), -0.0 if i >= 2 else 0.0)
""")

program(F_, "tensor_item_signed_zero_formatted", """
EXPECT = "record"
LOG = []
def report(x):
    v = x.min().item()
    LOG.append(f"low={v} bits={v.hex()}")
    return x + 1
def make(): return report
def inputs(i): return torch.zeros(3) if i < 2 else torch.zeros(3) * -1.0
def state(): return list(LOG)
""")

program(F_, "nan_config_values", """
EXPECT = "record"
import math
cfg = new_module("sound_rebuilt_cfg_nan", "EPS = float('nan')\\nRANGE = (float('nan'), 2.0)")
def norm(x):
    e = cfg.EPS
    lo, hi = cfg.RANGE
    bound = hi if lo != lo else lo
    if e != e:
        return x * 0 + math.copysign(7.0, e) + bound
    return x / (x.abs().sum() + e) + bound
def make(): return norm
def inputs(i): return torch.ones(3)
def step(i):
    if i == 2: cfg.EPS = -math.nan          # a NaN with the sign bit set
    if i == 4: cfg.EPS = 1e-5
    if i == 5: cfg.RANGE = (float("nan"), 2.0)   # another NaN object
    if i == 6: cfg.EPS = float("nan")
NCALLS = 9
""")

program(F_, "float_tuple_config_signed_zero", """
EXPECT = "record"
import math
cfg = new_module("sound_rebuilt_cfg_tuple", "SHIFT = (0.0, 1.0)")
def shift(x):
    a, b = cfg.SHIFT
    return x * math.copysign(1.0, a) + b
def make(): return shift
def inputs(i): return torch.ones(2)
def step(i):
    if i == 2: cfg.SHIFT = (-0.0, 1.0)
""")

program(F_, "int_tuple_config_bool_vs_int", """
EXPECT = "record"
cfg = new_module("sound_rebuilt_cfg_bool", "FLAGS = (1, 2)")
LOG = []
def flags(x):
    LOG.append(repr(cfg.FLAGS[0]))
    return x * cfg.FLAGS[1]
def make(): return flags
def inputs(i): return torch.ones(2)
def step(i):
    if i == 2: cfg.FLAGS = (True, 2)
def state(): return list(LOG)
""")

program(F_, "dict_keys_bool_vs_int", """
EXPECT = "record"
cfg = new_module("sound_rebuilt_cfg_keys", "TABLE = {1: 2.0, 0.0: 1.0}")
LOG = []
def lookup(x):
    for k, v in cfg.TABLE.items():
        LOG.append(repr(k))
        x = x * v
    return x
def make(): return lookup
def inputs(i): return torch.ones(2)
def step(i):
    if i == 2: cfg.TABLE = {True: 2.0, 0.0: 1.0}
    if i == 4: cfg.TABLE = {True: 2.0, -0.0: 1.0}
NCALLS = 6
def state(): return list(LOG)
""")

program(F_, "deque_subclass_items_and_attribute_changed", """
EXPECT = "record"
import collections
class History(collections.deque):
    pass
H = History([0], maxlen=3)
H.total = 0
def track(x):
    s = sum(H)                 # reads it whole
    H.append(len(H) + s)       # then changes its items
    H.total = s                # and an attribute of it
    return x * s
def make(): return track
def inputs(i): return torch.ones(2)
def step(i):
    if i == 3: H.clear()
NCALLS = 6
def state(): return type(H).__name__, H.maxlen, list(H), H.total
""")
