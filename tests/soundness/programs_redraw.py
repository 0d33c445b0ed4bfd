"""Random numbers drawn by the program (Python's ``random``, numpy's global generator, a
generator held by the module): the mock draws them again in the program's order, so the
outputs *and the generators' states afterwards* must be eager's, with the seed, the
probabilities, the generator objects and the arguments changed between calls."""
from harness import program

F_ = "redraw"

_STATE = """
import random
def state():
    return random.getstate(), np.random.get_state()[1].tolist()[:4], np.random.get_state()[2]
"""

program(F_, "jitter_scale_and_flip", """
import random
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.p = 0.5
    def forward(self, x):
        x = self.lin(x) * random.uniform(0.9, 1.1)
        if random.random() < self.p:
            x = x.flip(1)
        return x
m = M()
def make(): return m
def step(i):
    random.seed(i // 2)
    m.p = 0.5 if i < 4 else 0.9
def inputs(i): return (torch.ones(2, 4) * i,)
NCALLS = 8
""" + _STATE)

program(F_, "randint_indexes_and_is_returned", """
import random
table = [1.0, 2.0, 3.0, 4.0]
def f(x):
    k = random.randint(0, 3)
    return x * table[k], k
def make(): return f
def step(i):
    random.seed(i % 3)
    table[1] = 2.0 + i % 3
def inputs(i): return (torch.ones(3),)
NCALLS = 8
""" + _STATE)

program(F_, "numpy_rand_into_operators", """
def f(x):
    a = np.random.rand()
    b = np.random.uniform(-1.0, 1.0)
    return x * a + b
def make(): return f
def step(i): np.random.seed(i % 3)
def inputs(i): return (torch.arange(4.0),)
NCALLS = 6
""" + _STATE)

program(F_, "draw_sets_a_size", """
import random
def f(x):
    n = random.randint(1, 3)
    return torch.zeros(n) + x.sum()
def make(): return f
def step(i): random.seed(i)
def inputs(i): return (torch.ones(2),)
NCALLS = 8
""" + _STATE)

program(F_, "module_generator_replaced", """
import random
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.rng = random.Random(0)
    def forward(self, x):
        return x + self.rng.gauss(0.0, 1.0)
m = M()
def make(): return m
def step(i):
    if i == 3:
        m.rng = random.Random(42)
def inputs(i): return (torch.zeros(3),)
NCALLS = 6
def state(): return m.rng.getstate()
""")

program(F_, "numpy_generator_on_module", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.gen = np.random.default_rng(3)
    def forward(self, x):
        return x * self.gen.random()
m = M()
def make(): return m
def step(i):
    if i == 2:
        m.gen = np.random.default_rng(7)
def inputs(i): return (torch.ones(2),)
NCALLS = 5
def state(): return m.gen.bit_generator.state["state"]
""")

program(F_, "draw_arguments_from_outside", """
import random
class Cfg:
    lo = 0.0
    hi = 1.0
def f(x):
    return x * random.uniform(Cfg.lo, Cfg.hi)
def make(): return f
def step(i):
    random.seed(0)
    Cfg.hi = 1.0 + i % 2
def inputs(i): return (torch.ones(2),)
NCALLS = 6
""" + _STATE)

program(F_, "unused_draw_still_advances", """
import random
def f(x):
    random.random()
    return x + 1
def make(): return f
def step(i): random.seed(i)
def inputs(i): return (torch.ones(2),)
NCALLS = 4
""" + _STATE)

program(F_, "draw_with_inplace_buffer_update", """
import random
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("acc", torch.zeros(3))
    def forward(self, x):
        if random.random() < 0.5:
            self.acc += x
        else:
            self.acc -= x
        return self.acc * 1
m = M()
def make(): return m
def step(i): random.seed(i)
def inputs(i): return (torch.ones(3) * (i + 1),)
NCALLS = 8
""" + _STATE)

program(F_, "choice_of_tuple_and_random_drop", """
import random
SCALES = (0.5, 1.0, 2.0)
def f(x):
    s = random.choice(SCALES)
    keep = random.random() > 0.3
    return x * s if keep else x
def make(): return f
def step(i): random.seed(i)
def inputs(i): return (torch.ones(2),)
NCALLS = 8
""" + _STATE)

program(F_, "pinned_choice_of_modules_and_mask", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.lins = nn.ModuleList(nn.Linear(4, 4) for _ in range(4))
        self.prob = 0.5
    def forward(self, x):
        for i in np.random.choice(len(self.lins), 2, replace=False):
            x = self.lins[i](x)
        keep = np.random.choice([True, False], len(x), p=[self.prob, 1 - self.prob])
        return x[torch.tensor(keep)]
m = M()
def make(): return m
def step(i):
    np.random.seed(i % 2 if i < 5 else i)
    m.prob = 0.5 if i < 6 else 0.9
def inputs(i): return (torch.ones(6, 4) * i,)
NCALLS = 8
""" + _STATE)

program(F_, "pinned_draw_list_argument_changes", """
WEIGHTS = [0.2, 0.8]
def f(x):
    k = np.random.choice(2, p=WEIGHTS)
    return x * float(k + 1)
def make(): return f
def step(i):
    np.random.seed(0)
    WEIGHTS[:] = [0.2, 0.8] if i < 2 else [0.9, 0.1]
def inputs(i): return (torch.ones(2),)
NCALLS = 5
""" + _STATE)

program(F_, "rng_state_read_after_random_operators", """
class Rev(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.saved = None
    def forward(self, x):
        y = F.dropout(self.fc(x), 0.5, training=True)
        self.saved = torch.get_rng_state()
        noise = torch.rand_like(y)
        return y + noise, self.saved[:8].clone()
m = Rev()
def make(): return m
def inputs(i): return (torch.randn(2, 4, generator=torch.Generator().manual_seed(i)),)
def step(i):
    if i == 2:
        torch.manual_seed(123)
""")
