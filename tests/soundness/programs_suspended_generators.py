"""Generators the call leaves unfinished at a yield inside their own ``try``/``with``. Closing one
(when its last reference goes) throws GeneratorExit at the yield: a ``finally`` or ``__exit__``
runs there, inside the call when the call made and dropped the generator, and a record replays
what it does; an ``except`` that cannot catch GeneratorExit runs nothing. A generator still held
after the call (from outside) is closed later, where no record can: the call runs eagerly."""
from harness import program

F_ = "suspended_generators"

program(F_, "finally_of_a_generator_broken_out_of_writes_a_global_the_call_reads", """
EXPECT = "record"
EXPECT_BY_VERSION = {"3.12": "dynamic", "3.13": "dynamic"}   # (sys.monitoring: a close as the frame ends is not followed; eager)
LOG = []
SCALE = 2.0
def stream(x):
    try:
        for i in range(10):
            yield x * i
    finally:
        LOG.append(SCALE)
def f(x):
    for v in stream(x):
        break
    return x * len(LOG)
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
def step(i):
    global SCALE
    LOG.clear()
    if i == 2: SCALE = 5.0
    if i == 3: LOG.append(0.5)
def state(): return list(LOG)
""")

program(F_, "finally_of_a_generator_dropped_as_the_call_ends_changes_a_handler", """
EXPECT = "record"
EXPECT_BY_VERSION = {"3.12": "dynamic", "3.13": "dynamic"}   # (sys.monitoring: a close as the frame ends is not followed; eager)
LOG = []
HANDLER = [lambda log: log.append("a")]
def stream(x):
    try:
        while True:
            yield x + 1
    finally:
        HANDLER[0](LOG)
def f(x):
    g = stream(x)
    return next(g) * 3
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
def step(i):
    LOG.clear()
    if i == 2: HANDLER[0] = lambda log: log.append("b")
def state(): return list(LOG)
""")

program(F_, "contextmanager_generator_dropped_inside_a_helper", """
EXPECT = "dynamic"   # (the context manager object made in the call, which holds the generator,
                     # is kept by the monitor for the run: the generator outlives the call there)
import contextlib
LOG = []
TAG = "a"
@contextlib.contextmanager
def scope():
    LOG.append("enter " + TAG)
    try:
        yield 1
    finally:
        LOG.append("exit " + TAG)
def helper(x):
    g = scope().gen
    return x + next(g)
def f(x):
    return helper(x) * 2
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
def step(i):
    global TAG
    LOG.clear()
    if i == 2: TAG = "b"
def state(): return list(LOG)
""")

program(F_, "partially_zipped_sequence_iterator_closes_through_an_except", """
EXPECT = "record"
EXPECT_BY_VERSION = {"3.10": "dynamic"}   # (3.10: the close through the except clause is not told apart; eager)
from collections.abc import Sequence
class Rows(Sequence):
    def __init__(self, n): self.n = n
    def __len__(self): return self.n
    def __getitem__(self, i):
        if i >= self.n: raise IndexError(i)
        return float(i + 1)
ROWS = Rows(4)
def f(x):
    out = x
    for k, r in zip(range(2), ROWS):
        out = out + r * k
    return out
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
def step(i):
    if i == 2: ROWS.n = 1
""")

program(F_, "generator_kept_alive_outside_stays_suspended", """
EXPECT = "dynamic"
LOG = []
KEPT = []
def stream(x):
    try:
        yield x + 1
        yield x + 2
    finally:
        LOG.append("closed")
def f(x):
    g = stream(x)
    KEPT.append(g)
    return next(g)
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
def step(i):
    if i == 2: KEPT.clear()
def state(): __import__("gc").collect(); return list(LOG)
""")
