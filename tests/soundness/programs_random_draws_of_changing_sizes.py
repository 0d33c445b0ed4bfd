"""Random draws whose arguments follow sizes that change between calls: ``random.sample``,
``choice``, ``shuffle``, ``randrange`` and numpy's ``randint`` of a population whose size comes
from a lifted tensor dimension (the seed is set before each call), shifts drawn for
``torch.roll``, and ``torch.distributions.kl_divergence``, whose dispatch memo is a dict torch
fills on the first use of each pair of types."""
from harness import program

F_ = "random_draws_of_changing_sizes"

program(F_, "sample_rows_of_changing_batch", """
import random
def f(x):
    idx = random.sample(range(x.shape[0]), 2)
    return x[idx] * 2, idx
def make(): return f
def inputs(i): return torch.arange([5, 7, 4, 9, 6, 8][i] * 3.0).view(-1, 3)
def step(i): random.seed(i % 3)
NCALLS = 6
EXPECT = "dynamic"
""")

# Draws whose arguments are sizes that change between calls: the mock draws again with the
# call's sizes (same generator, same order), so one record serves every batch size.
program(F_, "randrange_and_randint_of_changing_sizes", """
import random
def f(x):
    k = random.randrange(x.shape[0])
    j = random.randint(1, x.shape[1] // 2 + 1)
    return x[k] * j + random.uniform(0.0, 1.0), k, j
def make(): return f
def inputs(i): return torch.arange([5, 7, 4, 9, 6, 8, 3][i] * [4, 6, 8, 6, 4, 2, 5][i] * 1.0).view([5, 7, 4, 9, 6, 8, 3][i], -1)
def step(i): random.seed(i % 3)
NCALLS = 7
EXPECT = "record"
""")

program(F_, "numpy_randint_of_changing_batch_into_state", """
class Drop(nn.Module):
    def __init__(self):
        super().__init__()
        self.picked = []
    def forward(self, x):
        k = np.random.randint(x.shape[0])
        self.picked.append(k)
        if k > 2:
            return x[k] - 1
        return x[k] * 3
m = Drop()
def make(): return m
def inputs(i): return torch.randn([6, 3, 8, 5, 7, 4][i], 2, generator=torch.Generator().manual_seed(i))
def step(i): np.random.seed(i % 2)
NCALLS = 6
EXPECT = "record"
""")

# `random.choice(range(n))` of a lifted size: the mock builds the range again from the call's
# sizes and draws from it. The same range iterated afterwards keeps its count followed (a later
# use of it must not see the run's length).
program(F_, "choice_of_range_of_changing_batch", """
import random
class Pick(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 2)
    def forward(self, x):
        rows = range(x.shape[0])
        k = random.choice(rows)
        j = random.choice(range(1, x.shape[0], 2))
        total = x[0] * 0
        for r in rows:
            total = total + x[r] * r
        return self.lin(x[k] + x[j] + total)
m = Pick()
def make(): return m
def inputs(i): return torch.arange([5, 7, 4, 9, 6, 8][i] * 3.0).view(-1, 3)
def step(i): random.seed(i % 3)
NCALLS = 6
EXPECT = "record"
""")

# The bound is a module attribute that changes every call (lifted as a value) plus a size: the
# mock draws with the attribute the guard fetched this call.
program(F_, "randrange_of_changing_attribute", """
import random
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.n = 3
    def forward(self, x):
        k = random.randrange(self.n)
        j = random.randint(0, self.n + x.shape[0])
        return x * k + j, k
m = M()
def make(): return m
def inputs(i): return torch.ones([2, 3, 4, 5, 2, 3, 6, 2][i], 2)
def step(i):
    m.n = [3, 5, 2, 7, 4, 9, 6, 8][i]
    random.seed(i % 2)
NCALLS = 8
EXPECT = "record"
""")

# Jitter augmentation: shifts drawn from `random` (or read from a tensor) passed to `torch.roll`,
# which moves values and never changes the shape: the number is an input of the graph.
program(F_, "roll_by_drawn_shifts", """
import random
class Jitter(nn.Module):
    def __init__(self, j):
        super().__init__()
        self.j = j
    def forward(self, x):
        h = random.randint(-self.j, self.j)
        w = random.randint(-self.j, self.j)
        y = torch.roll(torch.roll(x, shifts=h, dims=2), shifts=w, dims=3)
        k = int(x[0, 0, 0, 0].item() * 10) % 4
        return torch.roll(y, shifts=(k, -h), dims=(3, 2)), h
m = Jitter(40)
def make(): return m
def inputs(i): return torch.rand(1, 2, 5, 6, generator=torch.Generator().manual_seed(i % 3))
def step(i): random.seed(i)
NCALLS = 6
EXPECT = "record"
""")

program(F_, "shuffle_list_of_changing_length", """
import random
def f(x):
    order = list(range(x.shape[1]))
    random.shuffle(order)
    return x[:, order]
def make(): return f
def inputs(i): return torch.arange(2.0 * [5, 7, 4, 9, 6][i]).view(2, -1)
def step(i): random.seed(i % 2)
NCALLS = 5
EXPECT = "dynamic"
""")

# kl_divergence looks the pair of types up in `_KL_MEMOIZE`, and on a miss scans `_KL_REGISTRY`
# (a dict keyed by pairs of classes) and fills the memo. Here the memo is emptied before every
# call (as `register_kl` does), so every call takes the scan; at call 3 a more specific KL is
# registered for a subclass, which the record made from the scan must not answer.
program(F_, "kl_divergence_dispatch_scans_the_registry", """
import torch.distributions as D
from torch.distributions import kl as KL
class Wide(D.Normal):
    pass
def _kl_wide(p, q):
    return 2.0 * KL._kl_normal_normal(p, q)
CLEANUP.append(lambda: (KL._KL_REGISTRY.pop((Wide, D.Normal), None), KL._KL_MEMOIZE.clear()))
class Latent(nn.Module):
    def __init__(self):
        super().__init__()
        self.mu = nn.Linear(4, 3)
    def forward(self, x):
        p = Wide(self.mu(x), torch.ones(3))
        q = D.Normal(torch.zeros(3), torch.ones(3) * 2)
        return KL.kl_divergence(p, q).sum(-1)
m = Latent()
def make(): return m
def inputs(i): return torch.randn(2, 4, generator=torch.Generator().manual_seed(i))
def step(i):
    if i == 3:
        KL.register_kl(Wide, D.Normal)(_kl_wide)
    KL._KL_MEMOIZE.clear()
NCALLS = 5
EXPECT = "record"
""")
