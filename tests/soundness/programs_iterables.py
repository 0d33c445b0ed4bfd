"""Programs written the way users write models, with outside state changed
between calls: ``zip`` of a tensor with an object whose ``__iter__`` is Python (a ModuleList, an
iterable reading its own state: that ``__iter__`` ran unmonitored, a silent wrong result), the
``next()`` of a list iterator inside ``try`` in a run that follows changing sizes, exception
objects returned as outputs, and ``flag is True`` on a tensor argument."""
from harness import program

F_ = "iterables"

program(F_, "zip_tensor_rows_with_a_python_iterable_whose_state_changes", """
EXPECT = "record"
class Scales:
    def __init__(self):
        self.values = [1.0, 2.0, 3.0]
    def __iter__(self):
        return iter(self.values)
scales = Scales()
def f(x):
    return torch.stack([row * s for row, s in zip(x, scales)]).sum(0)
def make(): return f
def inputs(i): return (torch.ones(3, 2) + i,)
def step(i):
    if i == 2:
        scales.values[0] = 5.0
    if i == 4:
        scales.values = [7.0, 8.0]   # (zip stops at the shorter: two rows)
NCALLS = 6
""")

program(F_, "zip_module_list_with_tensor_rows_list_grows", """
EXPECT = "record"
class Heads(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleList([nn.Linear(4, 3), nn.Linear(4, 3)])
    def forward(self, outs):
        return torch.stack([h(o) for h, o in zip(self.heads, outs)]).mean(0)
m = Heads()
def make(): return m
def inputs(i): return (torch.randn(3, 2, 4, generator=torch.Generator().manual_seed(i % 2)),)
def step(i):
    if i == 3:
        m.heads.append(nn.Linear(4, 3))
    if i == 5:
        with torch.no_grad():
            m.heads[0].weight.mul_(2)
NCALLS = 7
""")

program(F_, "next_of_a_list_iterator_after_mask_indexing", """
EXPECT = "record"
def mean(values, empty=0.0):
    it = iter(values)
    try:
        acc = next(it)
    except StopIteration:
        return empty
    n = 1
    for v in it:
        acc = acc + v
        n += 1
    return acc / n
class PresentClassLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.ignore = 255
    def forward(self, p, labels):
        keep = labels != self.ignore
        p = p[keep.nonzero().squeeze(1)]
        labels = labels[keep]
        losses = []
        for c in range(p.shape[1]):
            fg = (labels == c).float()
            if fg.sum() == 0:
                continue
            losses.append((fg - p[:, c]).abs().mean())
        return mean(losses)
m = PresentClassLoss()
LABELS = [[0, 1, 255, 1], [0.5, 0.5, 0.5, 0.5], [2, 2, 255, 255], [0.5, 0.5, 0.5, 0.5], [0, 1, 2, 0]]
def make(): return m
def inputs(i): return (torch.rand(4, 3, generator=torch.Generator().manual_seed(i)), torch.tensor(LABELS[i % 5]))
def step(i):
    if i == 6:
        m.ignore = 2
NCALLS = 9
""")

program(F_, "exception_object_returned_message_from_module_state", """
EXPECT = "record"
class Unsupported(Exception):
    pass
class Loss(nn.Module):
    def __init__(self):
        super().__init__()
        self.order = 4
        self.name = "quartic"
    def forward(self, x):
        if self.order > 2:
            err = NotImplementedError(f"order {self.order} ({self.name}) not implemented")
            extra = Unsupported(self.name)
            extra.partial = x.sum()
            return err, extra
        return (x ** self.order).mean()
m = Loss()
def make(): return m
def inputs(i): return (torch.randn(3, generator=torch.Generator().manual_seed(i)),)
def step(i):
    if i == 2:
        m.name = "fourth"
    if i == 4:
        m.order = 2
NCALLS = 6
""")

program(F_, "identity_of_a_flag_argument_with_true", """
EXPECT = "record"
def f(x, real_flag):
    if real_flag is True:
        x = -x
    return torch.relu(1.0 + x).mean()
FLAGS = [None, True, True, False, None, True]
def make(): return f
def inputs(i):
    flag = FLAGS[i] if FLAGS[i] is not None else torch.rand(2, generator=torch.Generator().manual_seed(i))
    return (torch.randn(4, generator=torch.Generator().manual_seed(i)), flag)
NCALLS = 6
""")

# Adversarial programs against the features above (both were silent wrong results before):

program(F_, "class_attributes_read_through_an_object_made_in_the_call", """
EXPECT = "record"
class Helper:
    scale = 1.0
    def apply(self, x):
        return x * self.scale
class Missing(Exception):
    code = 1
def f(x):
    h = Helper()                 # made in the call: `scale` and `apply` are found on the class
    e = Missing("m")
    return h.apply(x) + e.code
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
def step(i):
    if i == 2:
        Helper.scale = 10.0
    if i == 4:
        Helper.apply = lambda self, x: x - 100
    if i == 5:
        Missing.code = 5
NCALLS = 7
""")

program(F_, "builtin_bound_methods_of_outside_containers", """
EXPECT = "record"
TABLE = {"a": 1}
lookup = TABLE.__getitem__
NAMES = ["x", "y"]
index_of = NAMES.index
def f(x):
    try:
        j = index_of("z")
    except ValueError:
        j = -1
    return x * lookup("a") + j
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2:
        TABLE["a"] = 7
    if i == 4:
        NAMES.append("z")
NCALLS = 6
""")

program(F_, "identity_of_equal_floats_and_strings_from_outside", """
EXPECT = "record"
DEFAULT_EPS = float("1e-5")
MODE = "".join(["tr", "ain"])
class Norm(nn.Module):
    def __init__(self):
        super().__init__()
        self.mode = MODE
    def forward(self, x, eps):
        scale = 2.0 if eps is DEFAULT_EPS else 3.0
        if self.mode is MODE:
            scale = scale + 1
        return x * scale
m = Norm()
OTHER = float("1e-5")   # equal to DEFAULT_EPS, another object
def make(): return m
def inputs(i): return (torch.ones(2), DEFAULT_EPS if i in (1, 2, 5) else OTHER)
def step(i):
    if i == 3:
        m.mode = "".join(["tra", "in"])   # an equal string, another object
NCALLS = 7
""")

program(F_, "iter_set_on_a_list_subclass_between_calls", """
EXPECT = "record"
class Scales(list):
    pass
scales = Scales([1.0, 2.0])
def f(x):
    return torch.stack([r * s for r, s in zip(x, scales)]).sum(0) + sum(scales)
def make(): return f
def inputs(i): return (torch.ones(2, 3) + i,)
def step(i):
    if i == 3:
        Scales.__iter__ = lambda self: iter([5.0, 6.0])
NCALLS = 6
""")
