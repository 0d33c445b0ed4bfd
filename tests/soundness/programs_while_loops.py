"""``while`` loops on a counter over a length that changes between calls (rolled into one body):
the step, the start or the bound read from outside and changed between calls, a loop that writes
outside state, an early exit on tensor values, the counter returned."""
from harness import program

F_ = "while_loops"

_SEQ = """
lin = nn.Linear(8, 4)
def inputs(i):
    g = torch.Generator().manual_seed(i)
    return torch.randn(3 + i % 4, 2, 4, generator=g), torch.zeros(2, 4)
NCALLS = 7
"""

program(F_, "step_read_from_a_global_changed_between_calls", _SEQ + """
STEP = 1
def f(xs, h):
    t = 0
    while t < xs.size(0):
        h = torch.tanh(lin(torch.cat([xs[t], h], -1)))
        t += STEP
    return h
def make(): return f
def step(i):
    global STEP
    if i == 4: STEP = 2
""")

program(F_, "bound_capped_by_an_attribute_changed_between_calls", _SEQ + """
class Cfg: max_steps = 100
cfg = Cfg()
def f(xs, h):
    t = 0
    while t < min(xs.size(0), cfg.max_steps):
        h = torch.tanh(lin(torch.cat([xs[t], h], -1)))
        t += 1
    return h
def make(): return f
def step(i):
    if i == 4: cfg.max_steps = 2
""")

program(F_, "start_passed_as_an_argument", """
EXPECT = "record"
lin = nn.Linear(8, 4)
def inputs(i):
    g = torch.Generator().manual_seed(i)
    return torch.randn(4 + i % 3, 2, 4, generator=g), torch.zeros(2, 4), (0, 0, 1, 0, 2, 0, 0)[i]
NCALLS = 7
def f(xs, h, start):
    t = start
    while t < xs.size(0):
        h = torch.tanh(lin(torch.cat([xs[t], h], -1)))
        t += 1
    return h, t
def make(): return f
""")

program(F_, "loop_appends_to_an_outside_log", _SEQ + """
LOG = []
def f(xs, h):
    t = 0
    while t < xs.size(0):
        h = torch.tanh(lin(torch.cat([xs[t], h], -1)))
        LOG.append(t)
        t += 1
    return h
def make(): return f
def state(): return list(LOG)
""")

program(F_, "early_exit_on_a_tensor_value", _SEQ + """
LIMIT = [50.0]
def f(xs, h):
    t = 0
    while t < xs.size(0):
        if h.abs().sum() > LIMIT[0]:
            break
        h = torch.tanh(lin(torch.cat([xs[t], h], -1))) * 4
        t += 1
    return h, t
def make(): return f
def step(i):
    if i == 3: LIMIT[0] = 5.0
""")

program(F_, "counter_returned_and_used_as_an_index_after", _SEQ + """
def f(xs, h):
    t = 0
    outs = []
    while t < xs.size(0):
        h = torch.tanh(lin(torch.cat([xs[t], h], -1)))
        outs.append(h)
        t += 1
    return torch.stack(outs)[t - 1], t
def make(): return f
""")

program(F_, "lstm_while_loop_with_tuple_state_that_breaks_on_a_tensor_value", """
EXPECT = "record"
N = 4
SEEDS = [2, 16, 0, 16, 2]
class Stopper(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(N, N)
        self.limit = 1.5
    def forward(self, xs, h):
        t = 0
        state = (h, torch.zeros_like(h))
        while t < xs.size(0):
            state = self.cell(xs[t], state)
            h = state[0] + 0.1 * t
            if h.abs().sum() > self.limit:
                break   # leaves the cell's own (h, c) in `state`
            state = (h, state[1])
            t += 1
        return state
def make(): return Stopper()
def inputs(i):
    g = torch.Generator().manual_seed(SEEDS[i])
    return (torch.randn(3, 2, N, generator=g), torch.randn(2, N, generator=g) * 0.5)
NCALLS = 5
""")
