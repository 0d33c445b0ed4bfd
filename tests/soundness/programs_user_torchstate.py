"""Written the ways users write such code, changing outside state between calls: torch process-wide flags and RNG: print options, generators, seeds, default dtype."""
from harness import program

F_ = "user_torchstate"

program(F_, "printoptions_precision_changed_between_calls", """
EXPECT = "record"
LOG = []
def f(x):
    y = x * 2
    LOG.append(str(y))
    return y
def make(): return f
def inputs(i): return (torch.tensor([1.23456789, 2.0]),)
def step(i):
    if i == 2: torch.set_printoptions(precision=2)
    if i == 3: torch.set_printoptions(sci_mode=True)
def state(): return list(LOG)
CLEANUP.append(lambda: torch.set_printoptions(profile="default"))
def _reset(): torch.set_printoptions(profile="default")
""")

program(F_, "printoptions_fstring_of_item", """
EXPECT = "record"
MSGS = []
def f(x):
    loss = (x ** 2).mean()
    MSGS.append(f"loss={loss}")
    return loss
def make(): return f
def inputs(i): return (torch.tensor([1.0 / 3.0, 2.0]),)
def step(i):
    if i == 2: torch.set_printoptions(precision=1)
def state(): return list(MSGS)
CLEANUP.append(lambda: torch.set_printoptions(profile="default"))
""")

program(F_, "numpy_printoptions_in_text", """
EXPECT = "record"
MSGS = []
def f(x):
    a = (x * 3).numpy()
    MSGS.append(np.array2string(a))
    MSGS.append(str(a))
    return x + 1
def make(): return f
def inputs(i): return (torch.tensor([1.0 / 3.0, 2.0]),)
def step(i):
    if i == 2: np.set_printoptions(precision=2)
def state(): return list(MSGS)
CLEANUP.append(lambda: np.set_printoptions(precision=8))
""")

program(F_, "explicit_generator_reseeded_between_calls", """
EXPECT = "dynamic"
G = torch.Generator().manual_seed(0)
def f(x):
    return x + torch.randn(x.shape, generator=G)
def make(): return f
def inputs(i): return (torch.zeros(3),)
def step(i):
    if i == 2: G.manual_seed(0)
def state(): return G.get_state()
""")

program(F_, "generator_state_restored_between_calls", """
EXPECT = "dynamic"
G = torch.Generator().manual_seed(1)
SAVED = G.get_state()
def f(x):
    return x + torch.rand(x.shape, generator=G)
def make(): return f
def inputs(i): return (torch.zeros(3),)
def step(i):
    if i in (2, 3): G.set_state(SAVED)
""")

program(F_, "manual_seed_inside_call_from_attribute", """
EXPECT = "split"
class Net(nn.Module):
    def __init__(self):
        super().__init__(); self.seed = 0
    def forward(self, x):
        torch.manual_seed(self.seed)
        return x + torch.randn_like(x)
NET = Net()
def make(): return NET
def inputs(i): return (torch.zeros(3),)
def step(i):
    if i >= 2: NET.seed = i
def state(): return torch.get_rng_state()
""")

program(F_, "fork_rng_inside_call", """
EXPECT = "dynamic"
def f(x):
    with torch.random.fork_rng():
        torch.manual_seed(7)
        noise = torch.randn_like(x)
    return x + noise + torch.rand_like(x)
def make(): return f
def inputs(i): return (torch.zeros(3),)
def state(): return torch.get_rng_state()
""")

program(F_, "get_set_rng_state_inside_call", """
EXPECT = "split"
def f(x):
    s = torch.get_rng_state()
    a = torch.rand_like(x)
    torch.set_rng_state(s)
    b = torch.rand_like(x)
    return a - b, torch.rand(1)
def make(): return f
def inputs(i): return (torch.zeros(3),)
def state(): return torch.get_rng_state()
""")

program(F_, "initial_seed_read_in_call", """
EXPECT = "split"
def f(x):
    return x + (torch.initial_seed() % 5)
def make(): return f
def inputs(i): return (torch.zeros(3),)
def step(i):
    torch.manual_seed(i if i >= 2 else 0)
""")

program(F_, "default_dtype_changed_tensor_made_in_call", """
EXPECT = "record"
def f(x):
    b = torch.tensor([0.1, 0.2])
    return x.to(b.dtype) + b, b.dtype
def make(): return f
def inputs(i): return (torch.zeros(2, dtype=torch.float64),)
def step(i):
    if i == 2: torch.set_default_dtype(torch.float64)
    if i == 3: torch.set_default_dtype(torch.float32)
""")

program(F_, "num_threads_read_in_call", """
EXPECT = "record"
def f(x):
    return x * torch.get_num_threads()
def make(): return f
def inputs(i): return (torch.ones(2),)
_N = torch.get_num_threads()
def step(i):
    if i == 2: torch.set_num_threads(1)
    if i == 3: torch.set_num_threads(_N)
CLEANUP.append(lambda: torch.set_num_threads(_N))
""")

program(F_, "anomaly_mode_toggled", """
EXPECT = "record"
def f(x):
    y = x * 2
    if torch.is_anomaly_enabled():
        y = y + 100
    return y
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2: torch.autograd.set_detect_anomaly(True)
    if i == 3: torch.autograd.set_detect_anomaly(False)
CLEANUP.append(lambda: torch.autograd.set_detect_anomaly(False))
""")

program(F_, "grad_enabled_flag_from_global", """
EXPECT = "record"
TRAIN = [True]
W = torch.ones(2, requires_grad=True)
def f(x):
    with torch.set_grad_enabled(TRAIN[0]):
        y = x * W
    return y, y.requires_grad
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2: TRAIN[0] = False
""")

program(F_, "dropout_then_bernoulli_rng_order", """
EXPECT = "record"
P = [0.5]
def f(x):
    m = torch.bernoulli(torch.full_like(x, P[0]))
    return F.dropout(x, 0.2) * m, torch.randint(0, 10, (2,))
def make(): return f
def inputs(i): return (torch.ones(4),)
def step(i):
    if i == 2: P[0] = 0.9
def state(): return torch.get_rng_state()
""")

program(F_, "randperm_of_batch_size", """
EXPECT = "record"
def f(x):
    idx = torch.randperm(x.shape[0])
    return x[idx]
def make(): return f
def inputs(i): return (torch.arange(float(3 + i)),)
def state(): return torch.get_rng_state()
""")

program(F_, "python_random_instance_on_module_reseeded", """
EXPECT = "record"
import random
class Aug(nn.Module):
    def __init__(self):
        super().__init__(); self.rng = random.Random(0)
    def forward(self, x):
        if self.rng.random() < 0.5:
            x = x.flip(0)
        return x * self.rng.uniform(0.5, 1.5)
NET = Aug()
def make(): return NET
def inputs(i): return (torch.arange(3.0),)
def step(i):
    if i == 3: NET.rng.seed(0)
def state(): return NET.rng.getstate()
NCALLS = 6
""")

program(F_, "numpy_global_random_reseeded", """
EXPECT = "record"
def f(x):
    return x * np.random.rand()
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    np.random.seed(3 if i >= 2 else 0)   # both worlds share numpy's global generator: seed each turn
def state(): return np.random.get_state()[2], float(np.random.rand())
""")

program(F_, "deterministic_flag_read", """
EXPECT = "record"
def f(x):
    if torch.are_deterministic_algorithms_enabled():
        return x.cumsum(0)
    return x * 2
def make(): return f
def inputs(i): return (torch.ones(3),)
def step(i):
    if i == 2: torch.use_deterministic_algorithms(True)
    if i == 3: torch.use_deterministic_algorithms(False)
""")

program(F_, "matmul_precision_string_read", """
EXPECT = "record"
def f(x):
    return x * (1 if torch.get_float32_matmul_precision() == "highest" else 2)
def make(): return f
def inputs(i): return (torch.ones(3),)
def step(i):
    if i == 2: torch.set_float32_matmul_precision("high")
""")

program(F_, "flush_denormal_toggled", """
EXPECT = "record"
def f(x):
    return x * 1e-30
def make(): return f
def inputs(i): return (torch.full((2,), 1e-10),)
def step(i):
    if i == 2: torch.set_flush_denormal(True)
    if i == 3: torch.set_flush_denormal(False)
CLEANUP.append(lambda: torch.set_flush_denormal(False))
""")
