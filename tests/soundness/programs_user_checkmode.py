"""Written the ways users write such code, changing outside state between calls: check mode (magpy.compile(..., check=True)): eager runs and MagPy's answer is compared; outside state must be eager's once."""
from harness import program

F_ = "user_checkmode"

_HEAD = '''
TOP_COMPILE = False
EXPECT = "dynamic"
import magpy as _magpy
def _checked(target):
    c = COMPILE(target)
    if c is target:
        return target
    return _magpy.compile(target, backend="eager", check=True)
'''

program(F_, "check_mode_training_step_updates_once", _HEAD + """
NET = nn.Linear(2, 1)
OPT = torch.optim.SGD(NET.parameters(), lr=0.1)
def step_fn(x):
    OPT.zero_grad()
    loss = NET(x).pow(2).sum()
    loss.backward()
    OPT.step()
    return loss.detach()
def make(): return _checked(step_fn)
def inputs(i): return (torch.ones(3, 2),)
NCALLS = 5
""")

program(F_, "check_mode_appends_and_prints_once", _HEAD + """
import io
BUF = io.StringIO()
LOG = []
def g(x):
    LOG.append(x.sum().item())
    print("s", round(x.sum().item(), 3), file=BUF)
    return x * len(LOG)
def make(): return _checked(g)
def inputs(i): return (torch.ones(2) * i,)
def state(): return BUF.getvalue()
NCALLS = 5
""")

program(F_, "check_mode_rng_draws_once", _HEAD + """
import random
def g(x):
    return x + torch.randn_like(x) + random.random()
def make(): return _checked(g)
def inputs(i): return (torch.zeros(3),)
def state(): return torch.get_rng_state(), random.getstate()[1][:4]
def step(i): random.seed(i)
NCALLS = 5
""")

program(F_, "check_mode_outside_iterator_consumed_once", _HEAD + """
IT = iter(range(100))
def g(x):
    return x * next(IT)
def make(): return _checked(g)
def inputs(i): return (torch.ones(2),)
def state(): return next(iter([0]))
NCALLS = 5
""")

program(F_, "check_mode_batchnorm_stats_once", _HEAD + """
NET = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
def make(): return _checked(NET)
def inputs(i): return (torch.randn(4, 2),)
NCALLS = 5
""")

program(F_, "check_mode_raise_after_write", _HEAD + """
S = {"n": 0}
def g(x):
    S["n"] += 1
    if S["n"] == 3:
        raise ValueError("third")
    return x * S["n"]
def make(): return _checked(g)
def inputs(i): return (torch.ones(2),)
NCALLS = 5
""")
