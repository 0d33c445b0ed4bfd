"""Natives that read attributes or items of objects in C, where no monitored frame sees the read:
``operator.attrgetter`` as a sort key or mapped over items, ``getattr`` folded over a path,
``str.format`` fields that name attributes. The attribute changes between calls; over objects the
call made, the same natives stay inside the record."""
from harness import program

F_ = "native_readers"

program(F_, "sorted_by_attrgetter_over_outside_items", """
EXPECT = "dynamic"
import operator
class Item:
    def __init__(self, prio, w): self.prio, self.w = prio, w
ITEMS = [Item(2, 1.0), Item(1, 2.0), Item(3, 3.0)]
def f(x):
    return x * sorted(ITEMS, key=operator.attrgetter("prio"))[0].w
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: ITEMS[0].prio = 0
""")

program(F_, "max_by_attrgetter_over_outside_items", """
EXPECT = "dynamic"
import operator
class Item:
    def __init__(self, prio, w): self.prio, self.w = prio, w
ITEMS = [Item(2, 1.0), Item(1, 2.0), Item(3, 3.0)]
def f(x):
    return x * max(ITEMS, key=operator.attrgetter("prio")).w
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: ITEMS[2].prio = -5
""")

program(F_, "sum_of_a_map_of_attrgetter", """
EXPECT = "dynamic"
import operator
class Item:
    def __init__(self, w): self.w = w
ITEMS = [Item(1.0), Item(2.0)]
def f(x):
    return x * sum(map(operator.attrgetter("w"), ITEMS))
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: ITEMS[1].w = 10.0
""")

program(F_, "format_field_names_an_attribute", """
EXPECT = "split"
EXPECT_BY_VERSION = {"3.10": "dynamic"}
class Cfg: pass
CFG = Cfg()
CFG.mode = "add"
def f(x):
    tag = "{0.mode}".format(CFG)
    return x + 1 if tag == "add" else x * 3
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: CFG.mode = "mul"
""")

program(F_, "reduce_getattr_over_a_path", """
EXPECT = "split"
EXPECT_BY_VERSION = {"3.10": "dynamic"}
import functools
class Node: pass
ROOT = Node(); ROOT.child = Node(); ROOT.child.scale = 2.0
def f(x):
    return x * functools.reduce(getattr, ["child", "scale"], ROOT)
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: ROOT.child.scale = 5.0
""")

program(F_, "sorted_by_attrgetter_over_items_made_in_the_call", """
EXPECT = "record"
import operator
class Item:
    def __init__(self, prio, t): self.prio, self.t = prio, t
def f(x, order):
    items = [Item(p, x * k) for k, p in enumerate(order)]
    return sorted(items, key=operator.attrgetter("prio"))[0].t
def make(): return f
def inputs(i): return (torch.randn(3), (3, 1, 2) if i < 2 else (0, 5, 1))
""")
