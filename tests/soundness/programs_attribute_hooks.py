"""Objects whose class runs Python code of its own on a lookup: a ``__getattribute__`` that counts,
a ``__class__`` property, a warn-once attribute, a lazy proxy, a metaclass's ``__getattribute__``
that counts the reads of its classes. Eager runs that code once per read the program makes, and
never otherwise; a compiled call, the first (monitored) one included, must run it exactly as
often: the counters are part of the outside state each program compares. The monitor's own type
tests ask the real type, its reads of a class go through ``type``'s descriptors, and the writes a
mock replays on such an object are read past its hook (a remapping hook answers another name than
the one written). What still differs is in docs/limits.md."""
from harness import program

F_ = "attribute_hooks"

program(F_, "counting_getattribute_read_and_put_in_a_list", """
EXPECT = "record"
class Counting:
    n = 0
    def __init__(self): self.scale = 2.0
    def __getattribute__(self, name):
        type(self).n += 1
        return object.__getattribute__(self, name)
OBJ = Counting()
def f(x, obj):
    return x * obj.scale + len([obj])
def make(): return f
def inputs(i): return (torch.ones(3) * i, OBJ)
def state(): return Counting.n
NCALLS = 5
""")

program(F_, "counting_getattribute_in_containers_on_a_module_and_returned", """
EXPECT = "record"
class Tag:
    n = 0
    def __init__(self, w): self.w = w
    def __getattribute__(self, name):
        type(self).n += 1
        return object.__getattribute__(self, name)
class Holder(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.tag = Tag(0.5)
    def forward(self, x, other):
        pair = (self.tag, other)
        table = {"a": self.tag, "b": other}
        items = [other, self.tag]
        y = self.lin(x) * table["a"].w + items[0].w
        return y, pair, items[1]
OTHER = Tag(2.0)
def make(): return Holder()
def inputs(i): return (torch.ones(1, 2) * i, OTHER)
def state(): return Tag.n
NCALLS = 5
""")

program(F_, "class_property_that_counts", """
EXPECT = "record"
class Probe:
    asked = 0
    def __init__(self): self.gain = 3.0
    @property
    def __class__(self):
        type(self).asked += 1
        return Probe
P = Probe()
def f(x, p):
    return x * p.gain + len((p, p))
def make(): return f
def inputs(i): return (torch.ones(2) * i, P)
def step(i):
    if i == 3: P.gain = 1.0
def state(): return Probe.asked
NCALLS = 5
""")

program(F_, "warn_once_deprecated_attribute", """
EXPECT = "record"
WARNED = []
class Options:
    _renamed = {"dropout_rate": "dropout"}
    def __init__(self): self.dropout = 0.25
    def __getattribute__(self, name):
        renamed = object.__getattribute__(self, "_renamed")
        if name in renamed:
            if name not in WARNED: WARNED.append(name)
            name = renamed[name]
        return object.__getattribute__(self, name)
OPTS = Options()
def f(x, opts):
    return F.dropout(x, p=opts.dropout_rate, training=False) * 2, [opts]
def make(): return f
def inputs(i): return (torch.ones(2) * i, OPTS)
def step(i):
    if i == 2: WARNED.clear()
def state(): return list(WARNED)
NCALLS = 4
""")

program(F_, "lazy_proxy_loads_on_first_use", """
EXPECT = "record"
LOADS = []
class Weights:
    def __init__(self): self.scale = 2.0
class LazyProxy:
    def __init__(self, factory): object.__setattr__(self, "_factory", factory); object.__setattr__(self, "_obj", None)
    def __getattribute__(self, name):
        if object.__getattribute__(self, "_obj") is None:
            LOADS.append(name)
            object.__setattr__(self, "_obj", object.__getattribute__(self, "_factory")())
        return getattr(object.__getattribute__(self, "_obj"), name)
PROXY = [LazyProxy(Weights)]
def g(x, w): return x + 1, w
def f(x):
    y, w = g(x, PROXY[0])
    return y * 2, w
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
def step(i):
    if i == 2: PROXY[0] = LazyProxy(Weights)
def state(): return list(LOADS)
NCALLS = 4
""")

program(F_, "class_property_object_passed_to_a_helper_and_returned", """
EXPECT = "record"
class Spoof:
    asked = []
    def __init__(self): self.w = 0.5
    @property
    def __class__(self):
        type(self).asked.append(len(type(self).asked))
        return Spoof
S = Spoof()
def scale(x, s): return x * s.w, s
def f(x):
    y, s = scale(x, S)
    return y + 1, {"s": s}, (s,)
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
def state(): return len(Spoof.asked)
NCALLS = 4
""")

program(F_, "counting_getattribute_objects_in_a_global_table", """
EXPECT = "record"
class Entry:
    hits = 0
    def __init__(self, k): self.k = k
    def __getattribute__(self, name):
        type(self).hits += 1
        return object.__getattribute__(self, name)
TABLE = {"a": Entry(1.0), "b": Entry(2.0)}
def pick(name): return TABLE[name]
def f(x):
    e = pick("a")
    return x * e.k, [e, TABLE["b"]]
def make(): return f
def inputs(i): return (torch.ones(3) * i,)
def state(): return Entry.hits
NCALLS = 4
""")

program(F_, "counting_metaclass_getattribute_class_values_type_tests_and_methods", """
EXPECT = "record"
class Counted(type):
    def __getattribute__(cls, name):
        type.__getattribute__(Counted, "reads").append(name)
        return super().__getattribute__(name)
    reads = []
class Cfg(metaclass=Counted):
    scale = 2.0
    def shift(self, x): return x + 1
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.cfg = Cfg()
    def forward(self, x):
        y = self.lin(x) * Cfg.scale + self.cfg.shift(x)
        return y, isinstance(self.cfg, Cfg), [self.cfg]
def make(): return Net()
def inputs(i): return (torch.ones(2, 3) * i,)
def state(): return list(type.__getattribute__(Counted, "reads"))
NCALLS = 5
""")

program(F_, "metaclass_getattribute_class_value_and_bases_changed_between_calls", """
EXPECT = "record"
class Registry(type):
    def __getattribute__(cls, name):
        return super().__getattribute__({"gain": "scale"}.get(name, name))
class Low:
    offset = 1.0
class High:
    offset = 5.0
class Cfg(Low, metaclass=Registry):
    scale = 2.0
def f(x):
    return x * Cfg.gain + Cfg.offset
def make(): return f
def inputs(i): return (torch.ones(3) * i,)
def step(i):
    if i == 2: Cfg.scale = 3.0
    if i == 3: Cfg.__bases__ = (High,)
def state(): return (type.__getattribute__(Cfg, "scale"), type.__getattribute__(Cfg, "__bases__"))
NCALLS = 5
""")

program(F_, "counting_metaclass_getattribute_class_value_read_twice", """
EXPECT = "record"
READS = []
class Counted(type):
    def __getattribute__(cls, name):
        READS.append(name)
        return super().__getattribute__(name)
class Cfg(metaclass=Counted):
    scale = 2.0
def f(x):
    return x * Cfg.scale + Cfg.scale
def make(): return f
def inputs(i): return (torch.ones(3) * i,)
def state(): return list(READS)
NCALLS = 4
""")

program(F_, "counting_config_getattribute_that_remaps_names", """
EXPECT = "record"
READS = []
class Config:
    attribute_map = {"hidden": "hidden_size"}
    def __init__(self): self.hidden_size = 3; self.scale = 2.0
    def __getattribute__(self, key):
        READS.append(key)
        if key != "attribute_map" and key in super().__getattribute__("attribute_map"):
            key = super().__getattribute__("attribute_map")[key]
        return super().__getattribute__(key)
    def shift(self, x): return x + 1
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.config = Config()
        self.lin = nn.Linear(4, 4)
    def forward(self, x):
        return self.lin(x)[:, :self.config.hidden] * self.config.scale + self.config.shift(x)[:, :3]
def make(): return Net()
def inputs(i): return (torch.ones(2, 4) * i,)
def state(): return list(READS)
NCALLS = 4
""")

program(F_, "config_getattribute_values_and_name_map_changed_between_calls", """
EXPECT = "record"
class Config:
    attribute_map = {"hidden": "hidden_size"}
    def __init__(self): self.hidden_size = 3; self.width = 2; self.scale = 2.0
    def __getattribute__(self, key):
        if key != "attribute_map" and key in super().__getattribute__("attribute_map"):
            key = super().__getattribute__("attribute_map")[key]
        return super().__getattribute__(key)
CFG = Config()
def f(x):
    return x[:CFG.hidden] * CFG.scale
def make(): return f
def inputs(i): return (torch.arange(6.0) + i,)
def step(i):
    if i == 1: CFG.scale = 3.0
    if i == 2: Config.attribute_map = {"hidden": "width"}
    if i == 3: CFG.width = 4
def state(): return (CFG.scale, dict(Config.attribute_map))
NCALLS = 5
""")

program(F_, "counting_config_getattribute_on_an_object_the_call_writes_and_deletes", """
EXPECT = "record"
READS = []
class Config:
    def __init__(self): self.scale = 2.0; self.tmp = 0
    def __getattribute__(self, key):
        READS.append(key)
        return super().__getattribute__(key)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.config = Config()
    def forward(self, x):
        y = x * self.config.scale
        self.config.last = y
        self.config.mode = "seen"
        del self.config.tmp
        self.config.tmp = 1
        return y + 1
def make(): return Net()
def inputs(i): return (torch.ones(2, 4) * i,)
def state(): return list(READS)
NCALLS = 4
""")

program(F_, "remapping_config_getattribute_on_an_object_the_call_writes_under_a_mapped_name", """
EXPECT = "record"
class Config:
    attribute_map = {"hidden": "hidden_size"}
    def __init__(self): self.hidden_size = 3; self.hidden = 1
    def __getattribute__(self, key):
        if key != "attribute_map" and key in super().__getattribute__("attribute_map"):
            key = super().__getattribute__("attribute_map")[key]
        return super().__getattribute__(key)
CFG = Config()
def f(x):
    CFG.hidden = 2          # stored under "hidden"; every read of it answers hidden_size
    return x[:CFG.hidden] * 2.0
def make(): return f
def inputs(i): return (torch.arange(6.0) + i,)
def state(): return (object.__getattribute__(CFG, "__dict__").copy(), CFG.hidden)
NCALLS = 4
""")
