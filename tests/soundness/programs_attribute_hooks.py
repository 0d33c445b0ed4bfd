"""Objects whose class runs Python code of its own on a lookup: a ``__getattribute__`` that counts,
a ``__class__`` property, a warn-once attribute, a lazy proxy, a metaclass's ``__getattribute__``
that counts the reads of its classes. Eager runs that code once per read the program makes, and
never otherwise; a compiled call, the first (monitored) one included, must run it exactly as
often: the counters are part of the outside state each program compares. A hook that only reads
(a config that remaps names) is compiled through: the monitor's own type tests ask the real type,
its reads of a class go through ``type``'s descriptors, and the writes a mock replays on such an
object are read past its hook (a remapping hook answers another name than the one written). A
hook that does more (counts, logs the names, warns, loads) is an effect per lookup that no record
replays as eager does (a guard reads a name once however often the program does; builtins such as
``hasattr``, ``vars``, ``copy`` run it unmonitored): a call that reads such an object runs eagerly
(EXPECT "dynamic", or "split" where the read comes after a graph's worth of work)."""
from harness import program

F_ = "attribute_hooks"

program(F_, "counting_getattribute_read_and_put_in_a_list", """
EXPECT = "dynamic"
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
EXPECT = "dynamic"
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
EXPECT = "dynamic"
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
EXPECT = "dynamic"
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
EXPECT = "dynamic"
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
EXPECT = "dynamic"
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
EXPECT = "dynamic"
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
EXPECT = "dynamic"
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
EXPECT = "dynamic"
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


# The classes several programs below share (each program's world gets its own copy of them).
_LOGGING_CONFIG = """
READS = []
class Config:
    def __init__(self, **kw):
        for k, v in kw.items(): setattr(self, k, v)
    def __getattribute__(self, key):
        READS.append(key)
        return super().__getattribute__(key)
"""
_LOGGING_METACLASS = """
MREADS = []
class Counting(type):
    def __getattribute__(cls, key):
        MREADS.append(key)
        return super().__getattribute__(key)
class K(metaclass=Counting):
    scale = 2.0
    n = 3
"""
_REMAPPING_CONFIG = """
class Config:
    attribute_map = {"hidden": "hidden_size", "layers": "n_layers"}
    def __init__(self, **kw):
        for k, v in kw.items(): setattr(self, k, v)
    def __getattribute__(self, key):
        if key != "attribute_map" and key in type(self).attribute_map:
            key = type(self).attribute_map[key]
        return super().__getattribute__(key)
"""

program(F_, "counting_config_getattribute_on_an_object_the_call_writes_and_deletes", """
EXPECT = "dynamic"
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

program(F_, "logging_getattribute_config_read_as_a_loop_count_with_hasattr_and_getattr_defaults", """
EXPECT = "dynamic"
""" + _LOGGING_CONFIG + """CFG = Config(n_layers=3, act="relu")
def f(x):
    for _ in range(CFG.n_layers):
        x = x * 2 if getattr(CFG, "act", "gelu") == "relu" else x
    if hasattr(CFG, "dropout"):
        x = x * 0
    return x + getattr(CFG, "missing", 1.0)
def make(): return f
def inputs(i): return (torch.ones(3) * i,)
def state(): return list(READS)
""")

program(F_, "logging_getattribute_configs_in_a_list_argument_found_by_identity", """
EXPECT = "dynamic"
""" + _LOGGING_CONFIG + """A = Config(scale=2.0); B = Config(scale=3.0)
def f(x, cfgs):
    out = x
    for c in cfgs:
        if c is not A:
            out = out * c.scale
    return out, isinstance(cfgs[0], Config), cfgs.index(B)
def make(): return f
def inputs(i): return (torch.ones(3) * i, [A, B])
def state(): return list(READS)
""")

program(F_, "logging_getattribute_config_read_through_vars_and_its_dict", """
EXPECT = "dynamic"
""" + _LOGGING_CONFIG + """CFG = Config(a=1.0, b=2.0)
def f(x):
    d = vars(CFG)
    return x * d["a"] + CFG.__dict__["b"] + len(CFG.__dict__)
def make(): return f
def inputs(i): return (torch.ones(3) * i,)
def state(): return list(READS)
""")

program(F_, "logging_getattribute_config_on_a_module_and_one_made_in_the_call", """
EXPECT = "split"
""" + _LOGGING_CONFIG + """class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.cfg = Config(scale=0.5, use_bias=True)
    def forward(self, x):
        tmp = Config(k=2)
        y = self.lin(x) * self.cfg.scale * tmp.k
        self.cfg.last_k = tmp.k
        return y if self.cfg.use_bias else y - 1
def make(): return Net()
def inputs(i): return (torch.ones(2, 3) * i,)
def state(): return list(READS)
""")

program(F_, "logging_getattribute_config_as_a_dict_key_and_a_set_member", """
EXPECT = "dynamic"
""" + _LOGGING_CONFIG + """CFG = Config(w=2.0)
TABLE = {}
def f(x):
    TABLE[CFG] = TABLE.get(CFG, 0) + 1
    s = {CFG}
    return x * CFG.w + (CFG in s)
def make(): return f
def inputs(i): return (torch.ones(3) * i,)
def state(): return (list(READS), list(TABLE.values()))
""")

program(F_, "logging_getattribute_config_copied_with_copy_copy", """
EXPECT = "dynamic"
""" + _LOGGING_CONFIG + """import copy
CFG = Config(w=2.0)
def f(x):
    c = copy.copy(CFG)
    c.w = 5.0
    return x * c.w + CFG.w
def make(): return f
def inputs(i): return (torch.ones(3) * i,)
def state(): return (list(READS), CFG.__dict__.copy())
""")

program(F_, "logging_getattribute_config_method_and_property_reading_it_again", """
EXPECT = "dynamic"
""" + _LOGGING_CONFIG + """class Cfg2(Config):
    @property
    def double(self): return self.w * 2
    def scaled(self, x): return x * self.w
CFG = Cfg2(w=2.0)
def f(x):
    return CFG.scaled(x) + CFG.double
def make(): return f
def inputs(i): return (torch.ones(3) * i,)
def state(): return list(READS)
""")

program(F_, "logging_metaclass_getattribute_repeated_reads_hasattr_and_getattr_default", """
EXPECT = "dynamic"
""" + _LOGGING_METACLASS + """def f(x):
    for _ in range(K.n):
        x = x * K.scale
    if hasattr(K, "missing"):
        x = x * 0
    return x + getattr(K, "other", 1.0) + K.scale
def make(): return f
def inputs(i): return (torch.ones(3) * i,)
def state(): return list(MREADS)
""")

program(F_, "logging_metaclass_getattribute_class_in_a_list_argument_instantiated", """
EXPECT = "dynamic"
""" + _LOGGING_METACLASS + """def f(x, classes):
    k = classes[0]()
    return x * type(k).scale + len(classes)
def make(): return f
def inputs(i): return (torch.ones(3) * i, [K])
def state(): return list(MREADS)
""")

program(F_, "remapping_config_read_as_a_loop_count_with_hasattr_and_getattr_defaults", """
EXPECT = "record"
""" + _REMAPPING_CONFIG + """CFG = Config(n_layers=3, hidden_size=4, act="relu")
def f(x):
    for _ in range(CFG.layers):
        x = x * 2 if getattr(CFG, "act", "gelu") == "relu" else x + 1
    if hasattr(CFG, "dropout"):
        x = x * CFG.dropout
    return x[:CFG.hidden] + getattr(CFG, "missing", 1.0)
def make(): return f
def inputs(i): return (torch.ones(6) * i,)
def step(i):
    if i == 1: CFG.n_layers = 2
    if i == 2: CFG.dropout = 0.5
    if i == 3: Config.attribute_map["layers"] = "hidden_size"
    if i == 4: CFG.act = "gelu"; CFG.missing = 3.0
NCALLS = 6
""")

program(F_, "remapping_configs_in_a_list_argument_as_dict_keys_and_copied", """
EXPECT = "split"
""" + _REMAPPING_CONFIG + """import copy
A = Config(hidden_size=2); B = Config(hidden_size=3)
TABLE = {}
def f(x, cfgs):
    out = x
    for c in cfgs:
        TABLE[c] = TABLE.get(c, 0) + 1
        out = out[:c.hidden] * c.hidden_size if c is not A else out
    d = copy.copy(cfgs[-1]); d.hidden_size = 1
    return out * d.hidden, isinstance(cfgs[0], Config), cfgs.index(B)
def make(): return f
def inputs(i): return (torch.ones(6) * i, [A, B] if i % 2 == 0 else [B, A])
def step(i):
    if i == 3: B.hidden_size = 2
def state(): return (sorted(TABLE.values()), A.__dict__.copy(), B.__dict__.copy())
NCALLS = 5
""")

program(F_, "remapping_config_read_through_vars_a_method_and_a_property", """
EXPECT = "record"
""" + _REMAPPING_CONFIG + """class Cfg2(Config):
    @property
    def double(self): return self.hidden * 2
    def scaled(self, x): return x * self.hidden
CFG = Cfg2(hidden_size=2)
def f(x):
    d = vars(CFG)
    return CFG.scaled(x) + CFG.double + d["hidden_size"] + len(CFG.__dict__)
def make(): return f
def inputs(i): return (torch.ones(3) * i,)
def step(i):
    if i == 2: CFG.hidden_size = 5
    if i == 3: CFG.extra = 1
NCALLS = 5
""")

program(F_, "remapping_config_on_a_module_written_and_one_made_in_the_call", """
EXPECT = "record"
""" + _REMAPPING_CONFIG + """class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.cfg = Config(hidden_size=2, use_bias=True)
    def forward(self, x):
        tmp = Config(hidden_size=3)
        y = self.lin(x)[:, :self.cfg.hidden] * tmp.hidden
        self.cfg.hidden = tmp.hidden - 1
        self.cfg.last = y.sum()
        return y if self.cfg.use_bias else y - 1
def make(): return Net()
def inputs(i): return (torch.ones(2, 3) * i,)
def state(): return None
NCALLS = 5
""")

program(F_, "remapping_metaclass_class_value_read_repeatedly_and_changed_between_calls", """
EXPECT = "record"
class Remap(type):
    def __getattribute__(cls, key):
        return super().__getattribute__("value" if key == "alias" else key)
class K(metaclass=Remap):
    value = 2.0
    n = 3
def f(x):
    for _ in range(K.n):
        x = x * K.alias
    return x + getattr(K, "other", 1.0) + hasattr(K, "missing") + K.value
def make(): return f
def inputs(i): return (torch.ones(3) * i,)
def step(i):
    if i == 1: K.value = 3.0
    if i == 2: K.n = 1
    if i == 3: K.other = 5.0
NCALLS = 5
""")
