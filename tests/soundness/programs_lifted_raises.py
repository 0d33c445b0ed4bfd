"""Exceptions in runs that follow changing sizes. An operation that raised while the run followed
lifted sizes used to end lifting for good ("whether it raises may follow a number the record does
not guard"), even where it raised on plain data: a `Mapping.get` of a missing name inside
transformers made BERT one record per batch size. An operation whose operands hold no followed
number cannot raise because of one; one whose operands do (a lookup keyed by a lifted size) still
breaks the run."""
from harness import program

F_ = "lifted_raises"

program(F_, "mapping_get_of_a_missing_name_under_changing_batch", """
EXPECT = "record"
NCALLS = 6
import collections.abc
class Config(collections.abc.Mapping):
    def __init__(self, **kw): self._d = dict(kw)
    def __getitem__(self, k): return self._d[k]
    def __iter__(self): return iter(self._d)
    def __len__(self): return len(self._d)
CFG = Config(scale=2.0)
def f(x):
    bias = CFG.get("bias", 0.5)          # KeyError inside, caught by Mapping.get
    return x * CFG["scale"] + bias
def make(): return f
SIZES = [2, 5, 3, 4, 2, 6]
def step(i):
    if i == 4: CFG._d["bias"] = 1.5      # the name appears: the next call must see it
def inputs(i): return (torch.ones(SIZES[i], 3) * i,)
""")

program(F_, "lookup_keyed_by_a_lifted_size_that_raises_on_some_sizes", """
EXPECT = "record"
NCALLS = 6
TABLE = {2: 1.0, 3: 2.0}
def f(x):
    n = x.shape[0]
    try:
        s = TABLE[n]
    except KeyError:
        s = -1.0
    return x * s
def make(): return f
SIZES = [2, 3, 4, 2, 5, 3]
def inputs(i): return (torch.ones(SIZES[i], 2),)
""")

program(F_, "deepcopy_of_a_config_and_a_dict_with_tensor_values_under_changing_batch", """
# copy.deepcopy's memo (keyed by id(), holding the copies) and a dict of tensors: a missing key
# raises KeyError whatever the values hold; the key and the keys decide.
EXPECT = "record"
NCALLS = 6
import copy
class Config:
    def __init__(self):
        self.dims = [4, 8]
        self.name = "enc"
CFG = Config()
def f(x):
    cfg = copy.deepcopy(CFG)            # _keep_alive: memo[id(memo)] raises KeyError, caught
    cache = {0: x * 2, 1: x + 1}
    try:
        extra = cache[2]
    except KeyError:
        extra = x * 0.5
    return cache[0] * cfg.dims[0] + extra * len(cfg.name)
def make(): return f
SIZES = [2, 5, 3, 4, 2, 6]
def step(i):
    if i == 4: CFG.dims = [1, 2]
def inputs(i): return (torch.ones(SIZES[i], 3) * i,)
""")

program(F_, "dict_lookup_keyed_by_a_lifted_size_with_tensor_values", """
# the same lookup, keyed by the changing size itself: whether it raises follows the size,
# which the record must then see (the values being tensors changes nothing).
NCALLS = 6
TABLE = {2: torch.ones(1), 3: torch.full((1,), 2.0)}
def f(x):
    try:
        s = TABLE[x.shape[0]]
    except KeyError:
        s = torch.full((1,), -1.0)
    return x * s
def make(): return f
SIZES = [2, 3, 4, 2, 5, 3]
def inputs(i): return (torch.ones(SIZES[i], 2),)
""")

program(F_, "attribute_missing_on_an_object_made_in_the_call_under_changing_batch", """
# hasattr / getattr / super().__getattribute__ of a name the object lacks: the AttributeError
# follows which attributes it has, not a number it holds (here the changing batch size).
EXPECT = "record"
NCALLS = 6
class Cfg:
    def __init__(self, n):
        self.n = n
    def __getattribute__(self, key):
        return super().__getattribute__(key)
def f(x):
    c = Cfg(x.shape[0])
    extra = c.extra if hasattr(c, "extra") else 0.5
    try:
        other = c.other
    except AttributeError:
        other = 1.5
    return x * c.n + extra + other
def make(): return f
SIZES = [2, 5, 3, 4, 2, 6]
def inputs(i): return (torch.ones(SIZES[i], 3) * i,)
""")

program(F_, "attribute_present_only_for_some_sizes", """
# an attribute set only on some sizes: whether the lookup raises follows the size through the
# branch that set it, which the record guards.
NCALLS = 6
class Cfg:
    pass
def f(x):
    c = Cfg()
    if x.shape[0] > 3:
        c.extra = 2.0
    try:
        e = c.extra
    except AttributeError:
        e = -1.0
    return x * e
def make(): return f
SIZES = [2, 5, 3, 4, 2, 6]
def inputs(i): return (torch.ones(SIZES[i], 3),)
""")
