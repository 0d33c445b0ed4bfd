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
