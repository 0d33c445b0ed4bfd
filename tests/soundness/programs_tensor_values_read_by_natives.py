"""Native code that reads the values of tensors it gets from an iterator, a dict view, a native
key or a container given to numpy: ``any(l > 2 for l in losses)``, ``sum(map(bool, x > 2))``,
``filter(lambda r: r.sum() > 2, x)``, ``max(d, key=d.get)``,
``sorted(d.items(), key=itemgetter(1))``, ``np.mean([l1, l2])``. The truth, order or number it
takes is read in C, where the monitor sees no ``__bool__``: a tensor value read by a native,
dynamic (no split where the native's operands are made in the call). Controls beside them:
the same natives over Python numbers are recorded."""
from harness import program

F_ = "tensor_values_read_by_natives"

_X = "def inputs(i): return (torch.tensor([[1.0, 0.5], [3.0, 0.5], [-1.0, 0.5], [1.0, 0.5], [3.0, 0.5]][i]),)\nNCALLS = 5\n"

program(F_, "any_of_a_generator_over_rows", """
EXPECT = "dynamic"
def f(per_sample_loss):
    if any(l > 2.0 for l in per_sample_loss):
        return per_sample_loss.clamp(max=2.0)
    return per_sample_loss
def make(): return f
""" + _X)

program(F_, "all_of_a_generator_over_unbound_rows", """
EXPECT = "dynamic"
def f(x):
    return x * 2 if all(r.sum() > 0 for r in x.unbind(0)) else x - 1
def make(): return f
""" + _X)

program(F_, "filter_with_a_predicate_over_tensor_rows", """
EXPECT = "dynamic"
def f(x):
    return len(list(filter(lambda r: r.sum() > 2, x))) + x
def make(): return f
""" + _X)

program(F_, "sum_of_map_bool_over_a_mask", """
EXPECT = "record"   # (each bool() is called from MagPy's monitored applier: values read and checked)
def f(x):
    return x * sum(map(bool, x > 2))
def make(): return f
""" + _X)

program(F_, "max_of_a_dict_by_its_get", """
EXPECT = "dynamic"
def f(x):
    scores = {"cls": x[0], "reg": x[1]}
    best = max(scores, key=scores.get)
    return x * (2 if best == "cls" else 3)
def make(): return f
""" + _X)

program(F_, "sorted_items_by_itemgetter_and_max_of_values", """
EXPECT = "dynamic"
import operator
def f(x):
    scores = {"cls": x[0], "reg": x[1]}
    order = [k for k, _ in sorted(scores.items(), key=operator.itemgetter(1))]
    return x * (2 if order[0] == "cls" else 3) + max(scores.values())
def make(): return f
""" + _X)

program(F_, "numpy_mean_of_a_list_of_losses", """
EXPECT = "split"   # (np.mean runs every call, on the losses the prefix's graph computed)
def f(x):
    losses = [(c ** 2).mean() for c in x.chunk(2)]
    return x.sum(), float(np.mean(losses))
def make(): return f
""" + _X)

program(F_, "any_and_max_over_python_numbers_are_recorded", """
EXPECT = "record"
WEIGHTS = {"cls": 0.5, "reg": 2.0}
def f(x):
    best = max(WEIGHTS, key=WEIGHTS.get)
    scale = sum(map(float, [1, 2])) if any(w > 1 for w in WEIGHTS.values()) else 1.0
    return x * scale * WEIGHTS[best]
def make(): return f
def step(i):
    if i == 3: WEIGHTS["cls"] = 5.0
""" + _X)

program(F_, "user_wrapper_made_with_functools_wraps_of_a_torch_function", """
EXPECT = "record"
import functools
CALLS = []
@functools.wraps(F.gelu)
def gelu(x, approximate="none"):
    CALLS.append(1)
    return F.gelu(x, approximate="tanh")
@functools.wraps(torch.sigmoid)
def sigmoid(x):
    return torch.sigmoid(x) * 2
def scaled(func, k=3.0):
    @functools.wraps(func)
    def wrapped(*a): return func(*a) * k
    return wrapped
class M(nn.Module):
    def forward(self, x): return gelu(x) + sigmoid(x) + scaled(torch.sin)(x)
m = M()
def make(): return m
def inputs(i): return (torch.tensor([0.5, -1.0]) * (i + 1),)
def state(): return len(CALLS)
""")

program(F_, "map_of_an_outside_dicts_get_and_a_lists_getitem", """
EXPECT = "record"
class MultiTaskLoss(nn.Module):
    def __init__(self):
        super().__init__(); self.loss_weights = {"cls": 1.0, "box": 1.0}; self.scales = [1.0, 1.0]
    def forward(self, cls_loss, box_loss):
        w = list(map(self.loss_weights.get, ["cls", "box"]))
        k = list(map(self.scales.__getitem__, [0, 1]))
        return w[0] * k[0] * cls_loss + w[1] * k[1] * box_loss
m = MultiTaskLoss()
def make(): return m
def inputs(i): return (torch.tensor(1.0), torch.tensor(2.0))
def step(i):
    if i == 2: m.loss_weights["box"] = 5.0; m.scales[0] = 0.5
NCALLS = 5
""")

program(F_, "map_of_an_outside_lists_append", """
EXPECT = "split"
import collections
HIST = []
def f(x):
    collections.deque(map(HIST.append, [1, 2]), maxlen=0)
    return x + len(HIST)
def make(): return f
def inputs(i): return (torch.ones(2),)
""")

program(F_, "set_discard_of_an_absent_name_is_a_read", """
EXPECT = "record"
SEEN = {"a", "b"}
def f(x):
    SEEN.discard("zz")       # absent: nothing changes
    SEEN.add("a")            # present: nothing changes
    return x * len(SEEN)
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2: SEEN.add("zz")    # now the discard removes it
    if i == 3: SEEN.discard("a") # now the add adds it
def state(): return sorted(SEEN)
NCALLS = 5
""")

program(F_, "check_message_made_from_tensor_values_used_only_when_the_check_fails", """
# A check helper written as transformers writes one: the message is an f-string of the tensor,
# made on every call, asked `callable(msg)` and wrapped, read only when the condition fails.
# Calls whose values differ share the record; the call whose check fails raises eager's text.
EXPECT = "record"
def check(cond, msg, error_type=ValueError):
    if not callable(msg):
        def msg_callable():
            return msg
    else:
        msg_callable = msg
    assert isinstance(msg, str) and type(msg) is str
    if not cond:
        raise error_type(msg_callable())
def f(x):
    d = x * 2 + 1
    check(bool((d >= 0).all()), f"negative values {d}")
    return d.sqrt()
def make(): return f
def inputs(i): return (torch.rand(4) if i != 4 else -torch.rand(4) - 1,)
NCALLS = 6
""")

program(F_, "text_of_tensor_values_whose_length_is_read", """
# `len(text)` reads what the values made: the record holds only for text of that length.
EXPECT = "record"
def f(x):
    s = f"{x.sum().item():.1f}"
    return x * len(s)
def make(): return f
def inputs(i): return (torch.ones(3) * [1, 1, 40, 1, 400][i],)
NCALLS = 5
""")

program(F_, "check_message_formatted_from_a_tensor_that_requires_grad", """
# A training step's check message: the f-string of an intermediate that requires grad names its
# grad_fn; the graph (run op by op) makes the same text, which the failing call raises.
EXPECT = "record"
def check(cond, msg):
    fn = msg if callable(msg) else (lambda: msg)
    if not cond:
        raise ValueError(fn())
lin = nn.Linear(3, 3)
def f(x):
    d = lin(x) * 2
    check(bool((d.abs() < 100).all()), f"values out of range {d}")
    return d.sum()
def make(): return f
def inputs(i): return (torch.randn(2, 3) * (1 if i != 3 else 1000),)
NCALLS = 5
def post(out, i):
    out.backward()
    g = lin.weight.grad.clone()
    lin.zero_grad()
    return g
""")

program(F_, "text_of_a_tensor_value_made_under_a_context_variable_set_in_the_call", """
# np.errstate (a context variable) set around the formatting: text of a tensor's value reads no
# context variable, so the graph makes it; text of a numpy value under np.printoptions does read
# one, so that call is dynamic (see the next program).
EXPECT = "record"
LOG = []
def f(x):
    with np.errstate(all="ignore"):
        s = f"{x.sum().item():.3f}"
    LOG.append(s)
    return x * 2
def make(): return f
def inputs(i): return (torch.randn(3),)
NCALLS = 4
def state(): return list(LOG)
""")

program(F_, "text_of_a_numpy_value_under_numpy_print_options_set_in_the_call", """
# numpy's print options are a context variable: text of a numpy value made under options the call
# set would be made by the graph under the caller's.
EXPECT = "dynamic"
LOG = []
def f(x):
    a = x.detach().numpy()
    with np.printoptions(precision=2):
        s = f"{a}"
    LOG.append(s)
    return x * 2
def make(): return f
def inputs(i): return (torch.randn(3),)
NCALLS = 4
def state(): return list(LOG)
""")
