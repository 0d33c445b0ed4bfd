"""Written the ways users write such code, changing outside state between calls: strings and formatting of tensors, numpy interop, logging of values."""
from harness import program

F_ = "user_text"

program(F_, "format_spec_from_config", """
EXPECT = "record"
FMT = {"spec": ".2f"}
LOG = []
def f(x):
    m = x.mean()
    LOG.append(format(m.item(), FMT["spec"]))
    return m
def make(): return f
def inputs(i): return (torch.arange(3.0) / 7 + i,)
def step(i):
    if i == 2: FMT["spec"] = ".5e"
def state(): return list(LOG)
""")

program(F_, "cache_key_from_shape_string", """
EXPECT = "dynamic"
CACHE = {}
def f(x):
    key = "x".join(str(s) for s in x.shape)
    if key not in CACHE:
        CACHE[key] = torch.ones(x.shape[-1]) * len(CACHE)
    return x * CACHE[key]
def make(): return f
def inputs(i): return (torch.ones(2, 3 if i < 2 else 4),)
""")

program(F_, "string_join_of_tensor_values_to_list", """
EXPECT = "dynamic"
LINES = []
def f(x):
    vals = x.softmax(-1)
    LINES.append(", ".join(f"{v:.3f}" for v in vals.tolist()))
    return vals
def make(): return f
def inputs(i): return (torch.arange(3.0) * i,)
def state(): return list(LINES)
""")

program(F_, "repr_of_tensor_with_grad_logged", """
EXPECT = "record"
W = torch.ones(2, requires_grad=True)
LOG = []
def f(x):
    y = W * x
    LOG.append(repr(y))
    return y
def make(): return f
def inputs(i): return (torch.full((2,), float(i)),)
def state(): return list(LOG)
""")

program(F_, "percent_format_with_dict", """
EXPECT = "record"
LOG = []
TEMPLATE = ["%(name)s=%(val).3f"]
def f(x):
    s = x.sum()
    LOG.append(TEMPLATE[0] % {"name": "sum", "val": s.item()})
    return s
def make(): return f
def inputs(i): return (torch.arange(3.0) + i / 3,)
def step(i):
    if i == 2: TEMPLATE[0] = "[%(name)s] %(val).1f"
def state(): return list(LOG)
""")

program(F_, "branch_on_formatted_value_text", """
EXPECT = "record"
def f(x):
    s = f"{x.max().item():.1f}"
    if s.endswith(".0"):
        return x * 2
    return x
def make(): return f
def inputs(i): return (torch.tensor([1.0, float(i) + (0.5 if i == 2 else 0.0)]),)
""")

program(F_, "numpy_roundtrip_stored_outside", """
EXPECT = "record"
STORE = {}
def f(x):
    a = x.detach().numpy()
    STORE["a"] = a
    STORE["q"] = np.percentile(a, 50)
    return torch.from_numpy(a * 2)
def make(): return f
def inputs(i): return (torch.arange(4.0) * (i + 1),)
""")

program(F_, "numpy_view_shares_memory_with_input", """
EXPECT = "dynamic"
def f(x):
    a = x.numpy()
    a[0] = 100.0
    return x * 2
def make(): return f
def inputs(i): return (torch.arange(3.0) + i,)
""")

program(F_, "numpy_global_array_mutated_in_place", """
EXPECT = "dynamic"
W = np.array([1.0, 2.0], dtype=np.float32)
def f(x):
    return x * torch.from_numpy(W)
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2: W[0] = 5.0
    if i == 3: W[:] *= 2
""")

program(F_, "tensor_from_numpy_global_then_mutated_after_call", """
EXPECT = "dynamic"
BUF = np.zeros(2, dtype=np.float32)
KEEP = {}
def f(x):
    t = torch.from_numpy(BUF)
    KEEP["t"] = t
    return x + t
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    BUF[:] = i
def state(): return KEEP["t"].clone(), BUF.copy()
""")

program(F_, "as_tensor_of_global_list_values", """
EXPECT = "record"
WEIGHTS = [1.0, 2.0, 3.0]
def f(x):
    return x * torch.as_tensor(WEIGHTS)
def make(): return f
def inputs(i): return (torch.ones(3),)
def step(i):
    if i == 2: WEIGHTS[1] = -2.0
""")

program(F_, "logging_with_percent_args_and_level_change", """
EXPECT = "record"
import logging, io
STREAM = io.StringIO()
_LOGGER = logging.getLogger(__name__ + ".level")
_LOGGER.propagate = False
_H = logging.StreamHandler(STREAM)
_H.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
_LOGGER.handlers[:] = [_H]
_LOGGER.setLevel(logging.INFO)
def f(x):
    m = x.mean()
    _LOGGER.debug("debug %.3f", m.item())
    _LOGGER.info("info %.3f", m.item())
    return m
def make(): return f
def inputs(i): return (torch.arange(3.0) + i,)
def step(i):
    if i == 2: _LOGGER.setLevel(logging.DEBUG)
    if i == 3: _LOGGER.disabled = True
def state(): return STREAM.getvalue()
CLEANUP.append(lambda: _LOGGER.handlers.clear())
""")

program(F_, "print_to_stringio_with_sep_end", """
EXPECT = "record"
import io
BUF = io.StringIO()
SEP = [" "]
def f(x):
    s = x.sum()
    print("sum", s.item(), "n", x.numel(), sep=SEP[0], end="|", file=BUF)
    return s
def make(): return f
def inputs(i): return (torch.arange(3.0) + i,)
def step(i):
    if i == 2: SEP[0] = ","
def state(): return BUF.getvalue()
""")

program(F_, "hash_of_tensor_value_tuple_as_memo_key", """
EXPECT = "dynamic"
MEMO = {}
def f(x):
    key = tuple(x.round().tolist())
    if key in MEMO:
        return MEMO[key]
    y = x * 10
    MEMO[key] = y
    return y
def make(): return f
def inputs(i): return (torch.tensor([1.0, 2.0 + (i // 2)]),)
NCALLS = 5
""")

program(F_, "warnings_warn_with_value_message", """
EXPECT = "record"
import warnings
CAUGHT = []
def f(x):
    m = x.max().item()
    if m > 2:
        warnings.warn(f"large value {m:.2f}")
    return x / m
def make(): return f
def inputs(i): return (torch.arange(2.0) + i,)
def invoke(fn, i):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn(*inputs(i))
    CAUGHT.append([str(x.message) for x in w])
    return out
def state(): return list(CAUGHT)
""")
