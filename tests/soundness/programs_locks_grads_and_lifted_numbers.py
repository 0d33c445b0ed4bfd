"""Adversarial programs against the README's claims and ordinary user code: ``with lock:`` blocks
(and other synchronisation objects), ``.grad`` reads and compiled ``zero_grad``/optimizer steps,
``is_compiling`` and raising torch state getters, lifted sizes that escape into keys, attribute
names and lookups (KeyError/AttributeError that keep sizes lifted), Python numbers that change
between calls, closures, registries, caches keyed by sizes, and loops over changing lengths."""
from harness import program

F_ = "locks_grads_and_lifted_numbers"

# ---------------------------------------------------------------------------------------------
# locks
# ---------------------------------------------------------------------------------------------

program(F_, "lock_block_with_counter", """
EXPECT = "dynamic"   # a lock taken in the call: the call runs eagerly (README, soundness limits)
NCALLS = 5
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.lock = threading.Lock()
        self.calls = 0
    def forward(self, x):
        with self.lock:
            self.calls += 1
            y = x * 2
        return y + 1
m = M()
def make(): return m
def inputs(i): return (torch.ones(2) * i,)
def state(): return m.lock.locked(), m.calls
""")

program(F_, "lock_block_around_a_split", """
# a split (heapq.heappush, an unannotated native) inside `with lock:`; the heap grows on every
# call, so no record is served (see rlock_block_around_a_split for the served case)
EXPECT = "dynamic"
NCALLS = 5
import heapq
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.lock = threading.Lock()
        self.heap = []
    def forward(self, x):
        with self.lock:
            y = x * 2
            heapq.heappush(self.heap, len(self.heap))
            z = y + len(self.heap)
        return z
m = M()
def make(): return m
def inputs(i): return (torch.ones(2) * i,)
def state(): return m.lock.locked(), list(m.heap)
""")

program(F_, "rlock_block_around_a_split", """
EXPECT = "dynamic"   # a lock taken in the call: the call runs eagerly (README, soundness limits)
NCALLS = 5
import bisect
LOCK = threading.RLock()
EDGES = [0.5, 1.5, 2.5]
def f(x):
    with LOCK:
        y = x.sum() * 1
        k = bisect.bisect(EDGES, 1.0)
        out = x * k
    return out
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
def state(): return LOCK._is_owned()
""")

program(F_, "lock_block_raises_inside", """
EXPECT = "dynamic"   # a lock taken in the call: the call runs eagerly (README, soundness limits)
NCALLS = 5
LOCK = threading.Lock()
LOG = []
def f(x, k):
    try:
        with LOCK:
            LOG.append(k)
            if k > 2:
                raise ValueError("big")
            y = x * k
    except ValueError:
        y = x * 0
    return y
def make(): return f
def inputs(i): return (torch.ones(2), [1, 2, 3, 4, 1][i])
def state(): return LOCK.locked(), list(LOG)
""")

program(F_, "nested_rlock_blocks", """
EXPECT = "dynamic"   # a lock taken in the call: the call runs eagerly (README, soundness limits)
NCALLS = 4
LOCK = threading.RLock()
COUNT = [0]
def inner(x):
    with LOCK:
        COUNT[0] += 1
        return x + COUNT[0]
def f(x):
    with LOCK:
        y = inner(x)
    return inner(y)
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
def state(): return LOCK._is_owned(), COUNT[0]
""")

# ---------------------------------------------------------------------------------------------
# .grad reads
# ---------------------------------------------------------------------------------------------

program(F_, "grad_read_after_backward_inside_the_call", """
# backward inside the call, then `.grad` of a parameter: the value after the backward, not the
# one the call started with.
EXPECT = "split"
NCALLS = 5
w = nn.Parameter(torch.ones(3))
def f(x):
    loss = (w * x).sum()
    loss.backward()
    g = w.grad
    return g * 1.0
def make(): return f
def inputs(i): return (torch.full((3,), float(i + 1)),)
""")

program(F_, "manual_sgd_reads_grads", """
EXPECT = "record"
NCALLS = 6
lin = nn.Linear(3, 2)
def sgd(lr):
    with torch.no_grad():
        for p in lin.parameters():
            if p.grad is not None:
                p.add_(p.grad, alpha=-lr)
    return lin.weight.sum()
def make(): return sgd
def inputs(i): return (0.1,)
def step(i):
    lin.zero_grad(set_to_none=(i == 3))
    if i != 3:
        lin(torch.ones(1, 3) * (i + 1)).sum().backward()
""")

program(F_, "grad_stored_outside_identity", """
EXPECT = "record"
NCALLS = 6
w = nn.Parameter(torch.ones(3))
class Holder: pass
H = Holder()
H.last = None
def f(x):
    H.last = w.grad
    return x * 2
def make(): return f
def inputs(i): return (torch.ones(3),)
def step(i):
    if i in (1, 3):
        w.grad = None
    (w * (i + 1)).sum().backward()
def state(): return H.last is w.grad
""")

program(F_, "grad_scaled_in_place_in_the_call", """
EXPECT = "record"
NCALLS = 5
lin = nn.Linear(2, 2)
def clip(maxn):
    total = 0.0
    for p in lin.parameters():
        total = total + p.grad.norm() ** 2
    total = total ** 0.5
    scale = torch.clamp(maxn / (total + 1e-6), max=1.0)
    for p in lin.parameters():
        p.grad.mul_(scale)
    return total
def make(): return clip
def inputs(i): return (0.5,)
def step(i):
    lin.zero_grad(set_to_none=(i % 2 == 0))
    lin(torch.ones(1, 2) * (i + 1)).sum().backward()
""")

program(F_, "optimizer_step_compiled", """
EXPECT = "dynamic"   # MagPy is more conservative than it could be: record would do
NCALLS = 5
lin = nn.Linear(3, 2)
opt = torch.optim.SGD(lin.parameters(), lr=0.1, momentum=0.9, foreach=False)
def upd():
    opt.step()
    return lin.weight.sum()
def make(): return upd
def inputs(i): return ()
def step(i):
    opt.zero_grad()
    lin(torch.ones(1, 3) * (i + 1)).sum().backward()
def state(): return [dict(v) for v in opt.state.values()]
""")

# ---------------------------------------------------------------------------------------------
# is_compiling and torch getters
# ---------------------------------------------------------------------------------------------

program(F_, "is_compiling_variants", """
EXPECT = "record"
NCALLS = 4
def f(x):
    a = torch.compiler.is_compiling()
    b = torch._dynamo.is_compiling() if hasattr(torch, "_dynamo") else False
    c = torch.compiler.is_dynamo_compiling()
    d = torch.compiler.is_exporting()
    k = 1 + 2 * a + 4 * b + 8 * c + 16 * d
    return x * k
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
""")

program(F_, "transformer_encoder_padding_mask_values_change", """
EXPECT = "dynamic"
NCALLS = 5
torch.manual_seed(0)
enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True), 2,
                            enable_nested_tensor=True)
enc.eval()
def f(x, mask):
    with torch.no_grad():
        return enc(x, src_key_padding_mask=mask)
def make(): return f
MASKS = [[0, 0, 1, 1], [0, 0, 0, 1], [0, 0, 1, 1], [0, 0, 0, 0], [0, 1, 1, 1]]
def inputs(i):
    m = torch.tensor([MASKS[i], [0, 0, 0, 0]], dtype=torch.bool)
    return (torch.randn(2, 4, 8), m)
""")

program(F_, "mha_fast_path_key_padding_changes", """
EXPECT = "record"
NCALLS = 5
torch.manual_seed(0)
mha = nn.MultiheadAttention(8, 2, batch_first=True).eval()
def f(x, mask):
    with torch.no_grad():
        out, _ = mha(x, x, x, key_padding_mask=mask, need_weights=False)
    return out
def make(): return f
MASKS = [[0, 0, 1, 1], [0, 0, 0, 1], [0, 0, 1, 1], [0, 0, 0, 0], [0, 1, 1, 1]]
def inputs(i):
    m = torch.tensor([MASKS[i], [0, 0, 0, 0]], dtype=torch.bool)
    return (torch.randn(2, 4, 8), m)
""")

program(F_, "state_getter_raises_message_used", """
EXPECT = "record"
NCALLS = 4
def f(x):
    try:
        name = torch.cuda.get_device_name(0)
    except Exception as e:
        name = type(e).__name__
    return x * len(name)
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
""")

# ---------------------------------------------------------------------------------------------
# lifted sizes: escapes and lookups
# ---------------------------------------------------------------------------------------------

program(F_, "stride_of_a_lifted_dimension_branches", """
EXPECT = "record"
NCALLS = 6
def f(x):
    s = x.stride(0)
    if s > 4:
        return x * 2
    return x * 3
def make(): return f
SIZES = [2, 3, 6, 7, 3, 8]
def inputs(i): return (torch.ones(3, SIZES[i]),)
""")

program(F_, "transpose_contiguity_follows_a_size", """
EXPECT = "record"
NCALLS = 6
def f(x):
    t = x.t()
    if t.is_contiguous():
        return t * 2
    return t * 3
def make(): return f
SIZES = [2, 3, 1, 4, 1, 5]
def inputs(i): return (torch.ones(SIZES[i], 3),)
""")

program(F_, "int_attributes_of_a_lifted_size", """
EXPECT = "record"
NCALLS = 6
def f(x):
    n = x.shape[0]
    a = n.real
    b = n.numerator
    c = n.bit_length()
    return x * a + b + c
def make(): return f
SIZES = [2, 3, 5, 4, 9, 2]
def inputs(i): return (torch.ones(SIZES[i], 2),)
""")

program(F_, "int_attribute_of_a_lifted_size_branches", """
EXPECT = "dynamic"   # MagPy is more conservative than it could be: record would do
NCALLS = 6
def f(x):
    m = x.shape[0].real
    if m > 3:
        return x * 2
    return x * 3
def make(): return f
SIZES = [2, 3, 5, 4, 1, 6]
def inputs(i): return (torch.ones(SIZES[i], 2),)
""")

program(F_, "shape_index_and_count", """
EXPECT = "record"
NCALLS = 6
def f(x):
    k = x.shape.count(3)
    try:
        j = x.shape.index(4)
    except ValueError:
        j = -1
    return x * k + j
def make(): return f
SIZES = [2, 3, 4, 5, 3, 4]
def inputs(i): return (torch.ones(SIZES[i], 3),)
""")

program(F_, "math_prod_and_sum_of_shape", """
EXPECT = "record"
NCALLS = 6
import math
def f(x):
    p = math.prod(x.shape)
    s = sum(x.shape)
    hi = max(x.shape)
    return x.reshape(-1) * p + s + hi
def make(): return f
SIZES = [2, 3, 4, 5, 3, 4]
def inputs(i): return (torch.ones(SIZES[i], 3),)
""")

program(F_, "mask_cache_keyed_by_length", """
# the usual causal-mask cache: a global dict keyed by the sequence length
EXPECT = "dynamic"
NCALLS = 7
_MASKS = {}
def f(x):
    n = x.shape[1]
    if n not in _MASKS:
        _MASKS[n] = torch.triu(torch.full((n, n), float("-inf")), 1)
    return x + _MASKS[n]
def make(): return f
SIZES = [3, 4, 5, 3, 6, 4, 2]
def inputs(i): return (torch.ones(2, SIZES[i], SIZES[i]),)
def state(): return sorted(_MASKS)
""")

program(F_, "mask_cache_get_keyed_by_length", """
EXPECT = "dynamic"
NCALLS = 7
_MASKS = {}
def f(x):
    n = x.shape[1]
    m = _MASKS.get(n)
    if m is None:
        m = _MASKS[n] = torch.tril(torch.ones(n, n))
    return x * m
def make(): return f
SIZES = [3, 4, 5, 3, 6, 4, 2]
def inputs(i): return (torch.ones(2, SIZES[i], SIZES[i]),)
def state(): return sorted(_MASKS)
""")

program(F_, "text_key_from_size_stored_outside", """
EXPECT = "dynamic"
NCALLS = 6
SEEN = {}
def f(x):
    key = f"b{x.shape[0]}"
    SEEN[key] = SEEN.get(key, 0) + 1
    return x * 2
def make(): return f
SIZES = [2, 3, 4, 5, 3, 4]
def inputs(i): return (torch.ones(SIZES[i], 3),)
""")

program(F_, "setattr_name_from_size", """
EXPECT = "record"
NCALLS = 6
class Rec: pass
R = Rec()
def f(x):
    setattr(R, "seen_%d" % x.shape[0], True)
    return x * 2
def make(): return f
SIZES = [2, 3, 4, 5, 3, 4]
def inputs(i): return (torch.ones(SIZES[i], 3),)
def state(): return sorted(vars(R))
""")

program(F_, "getattr_name_from_size_missing", """
EXPECT = "record"
NCALLS = 6
class Heads:
    head3 = 3.0
    head5 = 5.0
H = Heads()
def f(x):
    name = "head" + str(x.shape[0])
    try:
        s = getattr(H, name)
    except AttributeError:
        s = -1.0
    return x * s
def make(): return f
SIZES = [2, 3, 4, 5, 3, 6]
def inputs(i): return (torch.ones(SIZES[i], 3),)
""")

program(F_, "hasattr_name_from_size", """
EXPECT = "record"
NCALLS = 6
class Heads:
    head3 = 3.0
    head5 = 5.0
def f(x):
    name = f"head{x.shape[0]}"
    if hasattr(Heads, name):
        return x * 2
    return x * 3
def make(): return f
SIZES = [2, 3, 4, 5, 3, 6]
def inputs(i): return (torch.ones(SIZES[i], 3),)
""")

program(F_, "dict_keyerror_on_text_key_from_size", """
EXPECT = "record"
NCALLS = 6
TABLE = {"n3": 3.0, "n5": 5.0}
def f(x):
    try:
        s = TABLE["n%d" % x.shape[0]]
    except KeyError:
        s = -1.0
    return x * s
def make(): return f
SIZES = [2, 3, 4, 5, 3, 6]
def inputs(i): return (torch.ones(SIZES[i], 3),)
""")

program(F_, "dict_made_from_sliced_text_keyerror", """
EXPECT = "record"
NCALLS = 6
def f(x):
    keys = "abcdefg"[:x.shape[0]]
    d = {c: i for i, c in enumerate(keys)}
    try:
        v = d["d"]
    except KeyError:
        v = -1
    return x * v
def make(): return f
SIZES = [2, 3, 4, 5, 3, 6]
def inputs(i): return (torch.ones(SIZES[i], 3),)
""")

program(F_, "dict_keys_from_unrolled_range_keyerror", """
EXPECT = "dynamic"
NCALLS = 6
def f(x):
    d = {}
    for i in range(x.shape[0]):
        d[i] = x[i].sum()
    try:
        v = d[3]
    except KeyError:
        v = torch.zeros(())
    return x * v
def make(): return f
SIZES = [2, 3, 4, 5, 3, 6]
def inputs(i): return (torch.ones(SIZES[i], 3),)
""")

program(F_, "attribute_set_in_loop_over_size", """
EXPECT = "record"
NCALLS = 6
class C: pass
def f(x):
    c = C()
    for i, row in enumerate(x):
        if i == 3:
            c.fourth = row
    try:
        v = c.fourth
    except AttributeError:
        v = torch.zeros(3)
    return x + v
def make(): return f
SIZES = [2, 3, 4, 5, 3, 6]
def inputs(i): return (torch.ones(SIZES[i], 3),)
""")

program(F_, "slots_attribute_set_for_some_sizes", """
EXPECT = "record"
NCALLS = 6
class C:
    __slots__ = ("a", "b")
def f(x):
    c = C()
    c.a = 1.0
    if x.shape[0] % 2 == 0:
        c.b = 2.0
    try:
        v = c.b
    except AttributeError:
        v = -1.0
    return x * (c.a + v)
def make(): return f
SIZES = [2, 3, 4, 5, 3, 6]
def inputs(i): return (torch.ones(SIZES[i], 3),)
""")

program(F_, "namespace_attribute_from_size_loop", """
EXPECT = "dynamic"
NCALLS = 6
def f(x):
    ns = types.SimpleNamespace()
    for i in range(x.shape[0]):
        setattr(ns, "r%d" % i, x[i])
    return getattr(ns, "r3", x[0]) * 2
def make(): return f
SIZES = [2, 3, 4, 5, 3, 6]
def inputs(i): return (torch.ones(SIZES[i], 3) * torch.arange(SIZES[i]).unsqueeze(1),)
""")

# ---------------------------------------------------------------------------------------------
# Python numbers that change between calls (lifted ints and floats)
# ---------------------------------------------------------------------------------------------

program(F_, "lifted_float_power_goes_complex", """
EXPECT = "record"
NCALLS = 6
def f(x, s):
    r = s ** 0.5
    return x * r
def make(): return f
VALS = [4.0, 9.0, 2.0, -4.0, 16.0, -1.0]
def inputs(i): return (torch.ones(2), VALS[i])
""")

program(F_, "lifted_int_negative_power", """
EXPECT = "record"
NCALLS = 6
def f(x, n):
    return x * (2 ** n), 2 ** n
def make(): return f
VALS = [3, 4, 5, -2, 6, -1]
def inputs(i): return (torch.ones(2), VALS[i])
""")

program(F_, "lifted_int_floor_division_and_modulo_negative", """
EXPECT = "record"
NCALLS = 6
def f(x, n):
    q = n // 3
    r = n % 3
    return x * q + r, q, r
def make(): return f
VALS = [7, 8, 10, -7, 11, -5]
def inputs(i): return (torch.ones(2), VALS[i])
""")

program(F_, "lifted_float_modulo_and_int_truncation", """
EXPECT = "record"
NCALLS = 6
import math
def f(x, s):
    a = s % 1.0
    b = int(s)
    c = math.floor(s)
    d = round(s)
    return x * a + b + c + d, a, b, c, d
def make(): return f
VALS = [1.25, 2.5, 3.75, -1.5, 4.5, -2.25]
def inputs(i): return (torch.ones(2), VALS[i])
""")

program(F_, "lifted_float_max_with_signed_zero", """
EXPECT = "record"
NCALLS = 6
def f(x, s):
    m = max(s, 0.0)
    return x / m, m
def make(): return f
VALS = [1.0, 2.0, 3.0, -0.0, 4.0, 0.0]
def inputs(i): return (torch.ones(2), VALS[i])
""")

program(F_, "lifted_float_copysign_and_abs", """
EXPECT = "record"
NCALLS = 6
import math
def f(x, s):
    return x * math.copysign(1.0, s) + abs(s), abs(s)
def make(): return f
VALS = [1.0, 2.0, 3.0, -0.0, 4.0, -5.0]
def inputs(i): return (torch.ones(2), VALS[i])
""")

program(F_, "lifted_float_division_by_zero_caught", """
EXPECT = "record"
NCALLS = 6
def f(x, s):
    try:
        r = 1.0 / s
    except ZeroDivisionError:
        r = 0.0
    return x * r
def make(): return f
VALS = [1.0, 2.0, 4.0, 0.0, 8.0, 0.0]
def inputs(i): return (torch.ones(2), VALS[i])
""")

program(F_, "lifted_float_division_by_zero_uncaught", """
EXPECT = "record"
NCALLS = 6
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.temp = 1.0
        self.seen = 0
    def forward(self, x):
        self.seen += 1
        return x / self.temp + 1.0 / self.temp
m = M()
def make(): return m
def step(i):
    m.temp = [1.0, 2.0, 4.0, 0.0, 8.0, 3.0][i]
def inputs(i): return (torch.ones(2),)
""")

program(F_, "lifted_int_huge_value", """
EXPECT = "record"
NCALLS = 6
def f(x, n):
    k = n * n
    return x * float(k), k
def make(): return f
VALS = [3, 4, 5, 10**10, 6, 2**40]
def inputs(i): return (torch.ones(2), VALS[i])
""")

program(F_, "lifted_float_formatted_and_stored", """
EXPECT = "record"
NCALLS = 6
LOG = []
def f(x, lr):
    LOG.append(f"lr={lr:.3g}")
    return x * lr
def make(): return f
VALS = [0.1, 0.05, 0.025, -0.0, 1e-7, float("inf")]
def inputs(i): return (torch.ones(2), VALS[i])
""")

program(F_, "lifted_int_used_as_list_index", """
EXPECT = "dynamic"
NCALLS = 6
SCALES = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
def f(x, k):
    return x * SCALES[k] * SCALES[-k]
def make(): return f
VALS = [1, 2, 3, 4, 0, 6]
def inputs(i): return (torch.ones(2), VALS[i])
""")

program(F_, "lifted_int_bool_flip", """
EXPECT = "record"
NCALLS = 6
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.step = 0
    def forward(self, x):
        self.step += 1
        if self.step % 2:
            return x * self.step
        return x - self.step
m = M()
def make(): return m
def inputs(i): return (torch.ones(2),)
""")

program(F_, "lifted_float_annealed_temperature_stored", """
EXPECT = "record"
NCALLS = 6
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.t = 1.0
        self.hist = []
    def forward(self, x):
        y = torch.softmax(x / self.t, -1)
        self.t = max(self.t * 0.5, 0.2)
        self.hist.append(self.t)
        return y
m = M()
def make(): return m
def inputs(i): return (torch.arange(3.0),)
""")

program(F_, "lifted_int_shifts_and_bitops", """
EXPECT = "dynamic"   # MagPy is more conservative than it could be: record would do
NCALLS = 6
def f(x, n):
    a = n >> 1
    b = n & 3
    c = n ^ 5
    d = ~n
    return x * (a + b + c + d), (a, b, c, d)
def make(): return f
VALS = [3, 4, 6, -3, 9, -8]
def inputs(i): return (torch.ones(2), VALS[i])
""")

program(F_, "lifted_int_divmod_and_pow_mod", """
EXPECT = "dynamic"
NCALLS = 6
def f(x, n):
    q, r = divmod(n, 4)
    p = pow(n, 2, 5)
    return x * q + r + p, (q, r, p)
def make(): return f
VALS = [3, 4, 6, -3, 9, -8]
def inputs(i): return (torch.ones(2), VALS[i])
""")

program(F_, "lifted_float_is_integer_and_hex", """
EXPECT = "dynamic"
NCALLS = 6
def f(x, s):
    if s.is_integer():
        return x * s
    return x - s
def make(): return f
VALS = [1.5, 2.5, 3.0, 4.5, 5.0, 6.5]
def inputs(i): return (torch.ones(2), VALS[i])
""")

program(F_, "lifted_float_nan_then_comparison", """
EXPECT = "record"
NCALLS = 6
def f(x, s):
    if s > 0.5:
        return x * s
    return x - s
def make(): return f
VALS = [1.0, 2.0, 3.0, float("nan"), 0.1, float("nan")]
def inputs(i): return (torch.ones(2), VALS[i])
""")

program(F_, "lifted_int_to_torch_dtype_arange", """
EXPECT = "record"
NCALLS = 6
def f(x, n):
    t = torch.tensor(n)
    return x * t, t.dtype
def make(): return f
VALS = [3, 4, 5, 2**40, 6, -1]
def inputs(i): return (torch.ones(2), VALS[i])
""")

program(F_, "lifted_int_full_fill_overflow", """
EXPECT = "record"
NCALLS = 6
def f(x, n):
    return x + torch.full((2,), n, dtype=torch.int8)
def make(): return f
VALS = [3, 4, 5, 300, 6, 7]
def inputs(i): return (torch.ones(2, dtype=torch.int8), VALS[i])
""")

# ---------------------------------------------------------------------------------------------
# plain-keyed lookups whose keys follow a lifted size without a comparison
# ---------------------------------------------------------------------------------------------

program(F_, "zip_truncated_by_lifted_range_then_keyerror", """
EXPECT = "record"
NCALLS = 6
KEYS = ["a", "b", "c", "d", "e", "f", "g"]
def f(x):
    d = dict(zip(KEYS, range(x.shape[0])))
    try:
        v = d["d"]
    except KeyError:
        v = -1
    return x * v
def make(): return f
SIZES = [2, 3, 4, 5, 3, 6]
def inputs(i): return (torch.ones(SIZES[i], 3),)
""")

program(F_, "islice_by_lifted_size_then_keyerror", """
EXPECT = "record"
NCALLS = 6
import itertools
KEYS = ["a", "b", "c", "d", "e", "f", "g"]
def f(x):
    d = dict.fromkeys(itertools.islice(KEYS, x.shape[0]), 1.0)
    try:
        v = d["d"]
    except KeyError:
        v = -1.0
    return x * v
def make(): return f
SIZES = [2, 3, 4, 5, 3, 6]
def inputs(i): return (torch.ones(SIZES[i], 3),)
""")

program(F_, "list_slice_by_lifted_size_then_keyerror", """
EXPECT = "record"
NCALLS = 6
KEYS = ["a", "b", "c", "d", "e", "f", "g"]
def f(x):
    d = {k: 2.0 for k in KEYS[:x.shape[0]]}
    try:
        v = d["d"]
    except KeyError:
        v = -1.0
    return x * v
def make(): return f
SIZES = [2, 3, 4, 5, 3, 6]
def inputs(i): return (torch.ones(SIZES[i], 3),)
""")

program(F_, "deque_maxlen_lifted_then_keyerror", """
EXPECT = "record"
NCALLS = 6
KEYS = ["a", "b", "c", "d", "e", "f", "g"]
def f(x):
    q = collections.deque(KEYS, maxlen=x.shape[0])
    d = dict.fromkeys(q, 3.0)
    try:
        v = d["c"]
    except KeyError:
        v = -1.0
    return x * v
def make(): return f
SIZES = [2, 3, 4, 5, 3, 6]
def inputs(i): return (torch.ones(SIZES[i], 3),)
""")

program(F_, "list_repeat_by_lifted_size_then_stopiteration", """
EXPECT = "record"
NCALLS = 6
def f(x):
    items = ["u"] * x.shape[0]
    it = iter(items)
    total = 0
    for _ in range(4):
        if next(it, None) is None:
            break
        total += 1
    return x * total
def make(): return f
SIZES = [2, 3, 4, 5, 3, 6]
def inputs(i): return (torch.ones(SIZES[i], 3),)
""")

program(F_, "text_repeat_by_lifted_size_then_keyerror", """
EXPECT = "record"
NCALLS = 6
TABLE = {"--": 2.0, "----": 4.0}
def f(x):
    k = "-" * x.shape[0]
    try:
        v = TABLE[k]
    except KeyError:
        v = -1.0
    return x * v
def make(): return f
SIZES = [2, 3, 4, 5, 3, 2]
def inputs(i): return (torch.ones(SIZES[i], 3),)
""")

program(F_, "dict_from_enumerate_shape_swap_keyerror", """
EXPECT = "record"
NCALLS = 6
def f(x):
    d = {v: k for k, v in enumerate(x.shape)}
    try:
        v = d[3]
    except KeyError:
        v = -1
    return x * v
def make(): return f
SIZES = [2, 3, 4, 5, 3, 6]
def inputs(i): return (torch.ones(SIZES[i], 4),)
""")

program(F_, "set_of_lifted_range_membership", """
EXPECT = "record"
NCALLS = 6
def f(x):
    s = set(range(x.shape[0]))
    return x * (3 in s)
def make(): return f
SIZES = [2, 3, 4, 5, 3, 6]
def inputs(i): return (torch.ones(SIZES[i], 3),)
""")

program(F_, "getattr_on_object_picked_by_zip", """
EXPECT = "record"
NCALLS = 6
class A: pass
class B:
    extra = 2.0
OBJS = [A(), A(), A(), B(), B(), B()]
def f(x):
    last = None
    for o, _ in zip(OBJS, range(x.shape[0])):
        last = o
    try:
        v = last.extra
    except AttributeError:
        v = -1.0
    return x * v
def make(): return f
SIZES = [2, 3, 4, 5, 3, 6]
def inputs(i): return (torch.ones(SIZES[i], 3),)
""")

program(F_, "hasattr_on_last_of_sliced_list", """
EXPECT = "record"
NCALLS = 6
class A: pass
class B:
    extra = 2.0
OBJS = [A(), A(), A(), B(), B(), B()]
def f(x):
    o = OBJS[:x.shape[0]][-1]
    return x * (2.0 if hasattr(o, "extra") else 3.0)
def make(): return f
SIZES = [2, 3, 4, 5, 3, 6]
def inputs(i): return (torch.ones(SIZES[i], 3),)
""")

program(F_, "min_of_lifted_size_indexes_tuple_then_getattr", """
EXPECT = "record"
NCALLS = 6
class A: pass
class B:
    extra = 2.0
OBJS = (A(), A(), A(), B(), B(), B())
def f(x):
    o = OBJS[min(x.shape[0], 5)]
    v = getattr(o, "extra", -1.0)
    return x * v
def make(): return f
SIZES = [2, 3, 4, 5, 3, 6]
def inputs(i): return (torch.ones(SIZES[i], 3),)
""")

# ---------------------------------------------------------------------------------------------
# more locks
# ---------------------------------------------------------------------------------------------

program(F_, "lock_held_by_another_thread_while_it_updates", """
# another thread holds the lock and changes the configuration it protects: eager waits at
# `with LOCK:` and reads the new value; a record that does not take the lock reads the old one.
EXPECT = "dynamic"   # a lock taken in the call: the call runs eagerly (README, soundness limits)
NCALLS = 4
import time
LOCK = threading.Lock()
class Cfg: pass
CFG = Cfg()
CFG.scale = 2.0
_T = []
def writer(ready):
    with LOCK:
        ready.set()
        time.sleep(0.3)
        CFG.scale = 5.0
def step(i):
    if i == 2:
        ready = threading.Event()
        t = threading.Thread(target=writer, args=(ready,))
        t.start()
        ready.wait()
        _T.append(t)
def f(x):
    with LOCK:
        s = CFG.scale
    return x * s
def make(): return f
def inputs(i): return (torch.ones(2),)
def state():
    for t in _T: t.join()
    _T.clear()
    return None
""")

program(F_, "lock_in_caller_split_in_helper", """
EXPECT = "dynamic"   # a lock taken in the call: the call runs eagerly (README, soundness limits)
NCALLS = 5
import bisect
LOCK = threading.Lock()
EDGES = [0.5, 1.5, 2.5]
def helper(x):
    return x * bisect.bisect(EDGES, 1.0)
def f(x):
    with LOCK:
        y = helper(x)
    return y + 1
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
def state(): return LOCK.locked()
""")

program(F_, "lock_released_before_split", """
EXPECT = "dynamic"   # a lock taken in the call: the call runs eagerly (README, soundness limits)
NCALLS = 5
import bisect
LOCK = threading.Lock()
EDGES = [0.5, 1.5, 2.5]
def f(x):
    with LOCK:
        y = x * 2
    k = bisect.bisect(EDGES, 1.0)
    return y + k
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
def state(): return LOCK.locked()
""")

# ---------------------------------------------------------------------------------------------
# zero_grad and grads compiled
# ---------------------------------------------------------------------------------------------

program(F_, "zero_grad_compiled_set_to_none_false", """
EXPECT = "dynamic"   # MagPy is more conservative than it could be: record would do
NCALLS = 5
lin = nn.Linear(3, 2)
def zg():
    lin.zero_grad(set_to_none=False)
    return lin.weight.sum()
def make(): return zg
def inputs(i): return ()
def step(i):
    lin(torch.ones(1, 3) * (i + 1)).sum().backward()
""")

program(F_, "zero_grad_compiled_set_to_none", """
EXPECT = "dynamic"   # MagPy is more conservative than it could be: record would do
NCALLS = 5
lin = nn.Linear(3, 2)
def zg():
    lin.zero_grad()
    return lin.weight.sum()
def make(): return zg
def inputs(i): return ()
def step(i):
    if i != 2:
        lin(torch.ones(1, 3) * (i + 1)).sum().backward()
""")

program(F_, "grad_aliases_another_parameter", """
EXPECT = "record"
NCALLS = 5
a = nn.Parameter(torch.ones(3))
b = nn.Parameter(torch.full((3,), 2.0))
def f():
    with torch.no_grad():
        b.mul_(2)
    return a.grad * 1
def make(): return f
def inputs(i): return ()
def step(i):
    with torch.no_grad():
        b.fill_(2.0)
    if i == 3:
        a.grad = b.detach()
    else:
        a.grad = torch.full((3,), float(i))
""")

# ---------------------------------------------------------------------------------------------
# ordinary user code
# ---------------------------------------------------------------------------------------------

program(F_, "closure_counter_and_cell_rebinding", """
EXPECT = "dynamic"   # MagPy is more conservative than it could be: record would do
NCALLS = 6
def make_counter():
    count = 0
    scale = [1.0]
    def f(x):
        nonlocal count
        count += 1
        return x * scale[0] + count
    def bump(v): scale[0] = v
    return f, bump
f_, bump = make_counter()
def make(): return f_
def step(i):
    if i == 3: bump(3.0)
def inputs(i): return (torch.ones(2),)
def state(): return f_.__closure__[0].cell_contents
""")

program(F_, "closure_cell_replaced_function", """
EXPECT = "record"
NCALLS = 6
def outer():
    act = torch.relu
    def f(x):
        return act(x) * 2
    def set_act(a):
        nonlocal act
        act = a
    return f, set_act
f_, set_act = outer()
def make(): return f_
def step(i):
    if i == 2: set_act(torch.tanh)
    if i == 4: set_act(lambda t: t - 1)
def inputs(i): return (torch.linspace(-1, 1, 4),)
""")

program(F_, "generator_in_call_yields_sizes", """
EXPECT = "record"
NCALLS = 6
def dims(x):
    for d in x.shape:
        yield d
def f(x):
    total = 0
    for d in dims(x):
        total = total + d
    return x * total
def make(): return f
SIZES = [2, 3, 4, 5, 3, 6]
def inputs(i): return (torch.ones(SIZES[i], 3),)
""")

program(F_, "generator_outside_advanced_per_call", """
EXPECT = "split"
NCALLS = 5
def sched():
    v = 1.0
    while True:
        yield v
        v *= 0.5
G = sched()
def f(x):
    return x * next(G)
def make(): return f
def inputs(i): return (torch.ones(2),)
""")

program(F_, "registry_dict_of_activations_changes", """
EXPECT = "record"
NCALLS = 6
ACTS = {"act": torch.relu}
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.kind = "act"
    def forward(self, x):
        return ACTS[self.kind](self.lin(x))
m = M()
def make(): return m
def step(i):
    if i == 2: ACTS["act"] = torch.sigmoid
    if i == 3: ACTS["other"] = torch.tanh; m.kind = "other"
    if i == 5: del ACTS["act"]
def inputs(i): return (torch.linspace(-1, 1, 6).reshape(2, 3),)
""")

program(F_, "registry_decorator_populated_between_calls", """
EXPECT = "record"
NCALLS = 6
REG = {}
def register(name):
    def deco(fn):
        REG[name] = fn
        return fn
    return deco
@register("a")
def _a(x): return x + 1
def f(x):
    out = x
    for name in sorted(REG):
        out = REG[name](out)
    return out
def make(): return f
def step(i):
    if i == 2:
        register("b")(lambda x: x * 3)
    if i == 4:
        register("a")(lambda x: x - 10)
def inputs(i): return (torch.ones(2),)
""")

program(F_, "module_attribute_number_type_changes", """
EXPECT = "record"
NCALLS = 7
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.k = 2
    def forward(self, x):
        return x * self.k, self.k * 2, type(self.k * 2).__name__
m = M()
def make(): return m
def step(i):
    m.k = [2, 3, 4, 2.5, True, 5, -0.0][i]
def inputs(i): return (torch.ones(2),)
""")

program(F_, "module_submodule_swapped_between_calls", """
EXPECT = "record"
NCALLS = 6
torch.manual_seed(0)
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 3)
        self.norm = nn.Identity()
    def forward(self, x):
        return self.norm(self.body(x))
m = M()
def make(): return m
def step(i):
    if i == 2: m.norm = nn.LayerNorm(3)
    if i == 4: m.body = nn.Sequential(nn.Linear(3, 3), nn.ReLU())
    if i == 5: m.norm.eps = 0.5
def inputs(i): return (torch.randn(2, 3),)
""")

program(F_, "inplace_on_buffer_with_changing_batch", """
EXPECT = "record"
NCALLS = 6
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("acc", torch.zeros(3))
        self.register_buffer("n", torch.zeros((), dtype=torch.long))
    def forward(self, x):
        self.acc += x.sum(0)
        self.n += x.shape[0]
        return self.acc / self.n
m = M()
def make(): return m
SIZES = [2, 3, 4, 5, 3, 6]
def inputs(i): return (torch.ones(SIZES[i], 3) * i,)
""")

program(F_, "inplace_on_argument_view_slices_by_length", """
EXPECT = "record"
NCALLS = 6
def f(x, buf):
    n = x.shape[0]
    buf[:n].add_(x)
    buf[n:].mul_(0.5)
    return buf.sum()
def make(): return f
SIZES = [2, 3, 4, 5, 3, 6]
def inputs(i): return (torch.ones(SIZES[i]), torch.ones(8))
""")

program(F_, "python_list_history_with_item", """
EXPECT = "dynamic"
NCALLS = 6
HIST = []
def f(x):
    loss = (x * x).mean()
    HIST.append(loss.item())
    if len(HIST) > 3:
        HIST.pop(0)
    return loss * sum(HIST)
def make(): return f
def inputs(i): return (torch.ones(3) * (i + 1),)
""")

program(F_, "kwargs_default_mutable_cache", """
EXPECT = "dynamic"   # MagPy is more conservative than it could be: record would do
NCALLS = 6
def f(x, _cache={}):
    n = x.shape[0]
    _cache["last"] = n
    _cache["count"] = _cache.get("count", 0) + 1
    return x * _cache["count"]
def make(): return f
SIZES = [2, 3, 4, 5, 3, 6]
def inputs(i): return (torch.ones(SIZES[i]),)
def state(): return dict(f.__defaults__[0])
""")

program(F_, "sequence_length_positional_slice", """
EXPECT = "record"
NCALLS = 6
torch.manual_seed(0)
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.pos = nn.Parameter(torch.randn(16, 4))
        self.max_len = 16
    def forward(self, x):
        t = x.shape[1]
        if t > self.max_len:
            raise ValueError("too long")
        return x + self.pos[:t]
m = M()
def make(): return m
SIZES = [3, 5, 7, 17, 9, 4]
def inputs(i): return (torch.ones(2, SIZES[i], 4),)
""")

# ---------------------------------------------------------------------------------------------
# other synchronisation objects
# ---------------------------------------------------------------------------------------------

program(F_, "lock_enter_value_used", """
EXPECT = "dynamic"   # a lock taken in the call: the call runs eagerly (README, soundness limits)
NCALLS = 4
LOCK = threading.RLock()
def f(x):
    with LOCK as got:
        y = x * (2 if got else 3)
    return y
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
def state(): return LOCK._is_owned()
""")

program(F_, "semaphore_block", """
EXPECT = "dynamic"   # a lock taken in the call: the call runs eagerly (README, soundness limits)
NCALLS = 4
SEM = threading.BoundedSemaphore(2)
def f(x):
    with SEM:
        y = x * 2
    return y
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
def state(): return SEM._value
""")

program(F_, "condition_block_with_counter", """
EXPECT = "dynamic"   # a lock taken in the call: the call runs eagerly (README, soundness limits)
NCALLS = 4
COND = threading.Condition()
N = [0]
def f(x):
    with COND:
        N[0] += 1
        COND.notify_all()
    return x * N[0]
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
def state(): return N[0], COND._lock.locked() if hasattr(COND._lock, "locked") else None
""")

program(F_, "lock_split_at_outside_iterator_loop", """
EXPECT = "dynamic"   # a lock taken in the call: the call runs eagerly (README, soundness limits)
NCALLS = 4
LOCK = threading.Lock()
def f(x, it):
    out = x
    with LOCK:
        for v in it:
            out = out + v
    return out
def make(): return f
def inputs(i): return (torch.ones(2), iter([1.0, 2.0, float(i)]))
def state(): return LOCK.locked()
""")

program(F_, "lru_cached_property_raises_attributeerror_by_size", """
EXPECT = "record"
NCALLS = 6
import functools
class Cfg:
    def __init__(self, n):
        self.n = n
    @property
    @functools.lru_cache(maxsize=None)
    def extra(self):
        if self.n % 2:
            raise AttributeError("extra")
        return 2.0
def f(x):
    c = Cfg(x.shape[0])
    try:
        e = c.extra
    except AttributeError:
        e = -1.0
    return x * e
def make(): return f
SIZES = [2, 3, 4, 5, 3, 6]
def inputs(i): return (torch.ones(SIZES[i], 3),)
""")

# ---------------------------------------------------------------------------------------------
# loops over changing lengths
# ---------------------------------------------------------------------------------------------

program(F_, "rnn_loop_with_index_scaled_state", """
EXPECT = "record"
NCALLS = 6
torch.manual_seed(0)
cell = nn.RNNCell(3, 4)
def f(x):
    h = torch.zeros(x.shape[0], 4)
    for t in range(x.shape[1]):
        h = cell(x[:, t] * (t + 1), h)
    return h
def make(): return f
SIZES = [3, 5, 4, 6, 2, 7]
def inputs(i): return (torch.randn(2, SIZES[i], 3),)
""")

program(F_, "while_loop_step_two_odd_lengths", """
EXPECT = "record"
NCALLS = 6
def f(x):
    acc = torch.zeros(x.shape[1])
    t = 0
    while t < x.shape[0]:
        acc = acc + x[t]
        t += 2
    return acc
def make(): return f
SIZES = [4, 5, 6, 7, 3, 8]
def inputs(i): return (torch.arange(SIZES[i] * 2.0).reshape(SIZES[i], 2),)
""")

program(F_, "reverse_range_step_two", """
EXPECT = "record"
NCALLS = 6
def f(x):
    acc = torch.zeros(x.shape[1])
    for t in range(x.shape[0] - 1, -1, -2):
        acc = acc * 0.5 + x[t]
    return acc
def make(): return f
SIZES = [4, 5, 6, 7, 3, 8]
def inputs(i): return (torch.arange(SIZES[i] * 2.0).reshape(SIZES[i], 2),)
""")

program(F_, "loop_with_first_iteration_special", """
EXPECT = "dynamic"
NCALLS = 6
def f(x):
    acc = None
    for t in range(x.shape[0]):
        acc = x[t] if t == 0 else acc * 0.9 + x[t]
    return acc
def make(): return f
SIZES = [4, 5, 6, 7, 3, 8]
def inputs(i): return (torch.arange(SIZES[i] * 2.0).reshape(SIZES[i], 2),)
""")

program(F_, "loop_over_zip_shortest_changes", """
EXPECT = "dynamic"   # MagPy is more conservative than it could be: record would do
NCALLS = 6
def f(xs, ms):
    acc = torch.zeros(2)
    for x, m in zip(xs, ms):
        acc = acc * m.sum() + x
    return acc
def make(): return f
A = [4, 5, 6, 4, 7, 5]
B = [5, 4, 6, 6, 3, 5]
def inputs(i): return (torch.ones(A[i], 2) * 0.5, torch.full((B[i], 1), 0.5))
""")

program(F_, "empty_and_single_batches", """
EXPECT = "record"
NCALLS = 7
def f(x):
    n = x.shape[0]
    y = x.sum(0) / max(n, 1)
    return y, n
def make(): return f
SIZES = [3, 4, 0, 5, 1, 0, 6]
def inputs(i): return (torch.ones(SIZES[i], 3),)
""")

program(F_, "split_chunks_count_follows_size", """
EXPECT = "record"
NCALLS = 6
def f(x):
    parts = torch.split(x, 2)
    return torch.stack([p.sum() for p in parts]), len(parts)
def make(): return f
SIZES = [4, 5, 6, 7, 3, 8]
def inputs(i): return (torch.ones(SIZES[i]),)
""")

program(F_, "loop_appends_to_outside_list", """
EXPECT = "record"
NCALLS = 6
TRACE = []
def f(x):
    h = torch.zeros(2)
    for t in range(x.shape[0]):
        h = torch.tanh(h + x[t])
        TRACE.append(t)
    return h
def make(): return f
SIZES = [4, 5, 6, 4, 3, 8]
def inputs(i): return (torch.ones(SIZES[i], 2) * 0.1,)
""")

program(F_, "lifted_size_stored_on_module_then_read_next_call", """
EXPECT = "record"
NCALLS = 6
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.last_len = 0
    def forward(self, x):
        prev = self.last_len
        self.last_len = x.shape[0]
        return x.sum() * prev
m = M()
def make(): return m
SIZES = [4, 5, 6, 4, 3, 8]
def inputs(i): return (torch.ones(SIZES[i]),)
""")

program(F_, "lifted_size_in_closure_made_in_call_returned", """
EXPECT = "record"
NCALLS = 6
def f(x):
    n = x.shape[0]
    def scale(t):
        return t * n
    return scale(x), scale
def make(): return f
SIZES = [4, 5, 6, 4, 3, 8]
def inputs(i): return (torch.ones(SIZES[i]),)
def post(out, i): return out[1](torch.ones(1))
""")

program(F_, "lock_state_read_inside_block", """
EXPECT = "dynamic"   # a lock taken in the call: the call runs eagerly (README, soundness limits)
NCALLS = 4
LOCK = threading.Lock()
def f(x):
    with LOCK:
        busy = LOCK.locked()
        again = LOCK.acquire(blocking=False)
    return x * (1 + busy + 2 * again)
def make(): return f
def inputs(i): return (torch.ones(2) * i,)
def state(): return LOCK.locked()
""")

program(F_, "lock_taken_in_helper_module_forward_with_print", """
EXPECT = "dynamic"   # a lock taken in the call: the call runs eagerly (README, soundness limits)
NCALLS = 4
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.lock = threading.Lock()
    def forward(self, x):
        with self.lock:
            y = self.lin(x)
            print("mean", round(float(y.mean()), 3))
        return y
m = M()
def make(): return m
def inputs(i): return (torch.ones(1, 2) * i,)
def state(): return m.lock.locked()
""")

program(F_, "grad_read_through_getattr_and_hasattr", """
EXPECT = "split"   # MagPy is more conservative than it could be: record would do
NCALLS = 6
w = nn.Parameter(torch.ones(3))
def f(x):
    g = getattr(w, "grad")
    h = hasattr(w, "grad")
    if g is None:
        return x * h
    return x * g + h
def make(): return f
def inputs(i): return (torch.ones(3),)
def step(i):
    if i == 2:
        (w * 2).sum().backward()
    if i == 4:
        w.grad = None
    if i == 5:
        (w * 3).sum().backward()
""")

program(F_, "grad_of_parameter_in_list_made_in_call", """
EXPECT = "record"
NCALLS = 6
lin = nn.Linear(2, 2)
def f(x):
    ps = [p for p in lin.parameters()]
    total = x.sum() * 0
    for p in ps:
        if p.grad is not None:
            total = total + p.grad.abs().sum()
    return total
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i % 2 == 1:
        lin.zero_grad(set_to_none=True)
    else:
        lin(torch.ones(1, 2) * (i + 1)).sum().backward()
""")

program(F_, "two_lifted_arguments_loaded_together", """
EXPECT = "record"
NCALLS = 6
def f(x, n, m):
    return x * (n - m), m - n, n * n
def make(): return f
VALS = [(3, 1), (4, 2), (5, 9), (10**10, 7), (6, 6), (2**40, -3)]
def inputs(i): return (torch.ones(2), *VALS[i])
""")
