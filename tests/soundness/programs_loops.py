"""Loops whose trip count changes between calls (magpy.loops rolls some of them into one body
compiled once): recurrent cells over sequences of changing length, with outside state changed
between calls, and loops whose index, accumulator, iterator or Python state the program
observes, so that rolling them would be wrong."""
from harness import program

F_ = "loops"

_CELL = """
class Cell(nn.Module):
    def __init__(self):
        super().__init__()
        self.ih = nn.Linear(4, 8)
        self.hh = nn.Linear(4, 8)
        self.gain = 1.0
    def forward(self, x, h):
        a, b = (self.ih(x) + self.hh(h)).chunk(2, 1)
        return torch.tanh(a) * torch.sigmoid(b) * self.gain
"""

program(F_, "rnn_over_lengths_weights_changed_between_calls", _CELL + """
class RNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = Cell()
    def forward(self, x, h):
        xs = x.unbind(0)
        outs = []
        for i in range(len(xs)):
            h = self.cell(xs[i], h)
            outs += [h]
        return torch.stack(outs), h
m = RNN()
def make(): return m
def inputs(i):
    g = torch.Generator().manual_seed(i)
    return torch.randn([5, 7, 4, 9, 2, 6][i], 2, 4, generator=g), torch.randn(2, 4, generator=g)
def step(i):
    if i == 4:
        with torch.no_grad():
            m.cell.ih.weight.mul_(0.5)
    if i == 5:
        m.cell.gain = 2.0
NCALLS = 6
""")

program(F_, "cell_swapped_between_calls", _CELL + """
class RNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = Cell()
    def forward(self, x, h):
        for t in range(x.size(0)):
            h = self.cell(x[t], h)
        return h
m = RNN()
other = Cell()
def make(): return m
def inputs(i):
    g = torch.Generator().manual_seed(i)
    return torch.randn([5, 7, 4, 9, 3][i], 2, 4, generator=g), torch.randn(2, 4, generator=g)
def step(i):
    if i == 4:
        m.cell = other
NCALLS = 5
""")

program(F_, "index_selects_a_weight_past_the_lengths_seen", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.early = nn.Linear(3, 3)
        self.late = nn.Linear(3, 3)
    def forward(self, x):
        h = torch.zeros(3)
        xs = x.unbind(0)
        for i in range(len(xs)):
            layer = self.early if i < 6 else self.late
            h = torch.tanh(layer(xs[i]) + h)
        return h
m = M()
def make(): return m
def inputs(i): return (torch.ones([3, 4, 5, 9, 12][i % 5], 3),)
NCALLS = 8
""")

program(F_, "step_counter_written_in_the_loop", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.steps = 0
    def forward(self, x):
        h = torch.zeros(3)
        for t in range(x.size(0)):
            self.steps += 1
            h = h + x[t] * (0.5 if self.steps % 7 == 0 else 1.0)
        return h
m = M()
def make(): return m
def inputs(i): return (torch.ones([3, 4, 5, 9, 4, 3][i], 3),)
def step(i):
    if i == 5: m.steps = 0
NCALLS = 6
""")

program(F_, "history_list_outside_grows", """
history = []
def f(x):
    xs = x.unbind(0)
    h = torch.zeros(3)
    for i in range(len(xs)):
        h = h + xs[i]
        history.append(h)
    return h
def make(): return f
def inputs(i): return (torch.ones([3, 4, 5, 8][i % 4], 3),)
def state(): return len(history)
NCALLS = 7
""")

program(F_, "accumulator_length_decides", """
def f(x):
    xs = x.unbind(0)
    outs = []
    h = torch.zeros(3)
    for i in range(len(xs)):
        h = h + xs[i]
        outs.append(h if len(outs) < 5 else -h)
    return torch.stack(outs)
def make(): return f
def inputs(i): return (torch.ones([3, 4, 5, 8, 11][i % 5], 3),)
NCALLS = 8
""")

program(F_, "decay_schedule_in_a_local", """
def f(x):
    xs = x.unbind(0)
    lr = 1.0
    h = torch.zeros(3)
    for i in range(len(xs)):
        h = h + lr * xs[i]
        lr = lr * 0.5 if lr > 0.2 else lr
    return h
def make(): return f
def inputs(i): return (torch.ones([3, 4, 5, 8][i % 4], 3),)
NCALLS = 7
""")

program(F_, "iterator_shared_across_iterations", """
scales = [1.0, 2.0, 3.0, 4.0, 5.0]
def f(x):
    it = iter(scales)
    h = torch.zeros(3)
    for t in range(x.size(0)):
        h = h + x[t] * next(it, -1.0)
    return h
def make(): return f
def inputs(i): return (torch.ones([3, 4, 5, 8][i % 4], 3),)
NCALLS = 7
""")

program(F_, "returns_the_list_of_steps", """
def f(x):
    xs = x.unbind(0)
    outs = []
    for i in range(len(xs)):
        outs += [xs[i].sum()]
    return outs
def make(): return f
def inputs(i): return (torch.arange(3.0 * [3, 4, 5, 8][i % 4]).reshape(-1, 3),)
NCALLS = 7
""")

program(F_, "break_when_the_state_is_large", """
def f(x):
    xs = x.unbind(0)
    h = torch.zeros(3)
    for i in range(len(xs)):
        if h.abs().sum() > 12:
            break
        h = h + xs[i]
    return h
def make(): return f
def inputs(i): return (torch.ones([3, 4, 5, 8, 2][i], 3),)
NCALLS = 5
""")

program(F_, "two_loops_over_the_same_sequence", """
def f(x):
    xs = x.unbind(0)
    h = torch.zeros(3)
    for i in range(len(xs)):
        h = h + xs[i]
    g = torch.zeros(3)
    for i in range(len(xs)):
        g = g * 0.5 + xs[i] * h
    return h, g
def make(): return f
def inputs(i): return (torch.randn([3, 4, 5, 8, 6][i], 3, generator=torch.Generator().manual_seed(i)),)
NCALLS = 5
""")

program(F_, "global_config_read_in_the_loop_changes", """
CFG = {"scale": 1.0}
def f(x):
    h = torch.zeros(3)
    for t in range(x.size(0)):
        h = h + x[t] * CFG["scale"]
    return h
def make(): return f
def inputs(i): return (torch.ones([3, 4, 5, 8, 6][i], 3),)
def step(i):
    if i == 3:
        CFG["scale"] = 3.0
NCALLS = 5
""")

program(F_, "bidirectional_rnn_over_lengths", _CELL + """
class BiRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.fwd = Cell()
        self.bwd = Cell()
    def forward(self, x, h):
        xs = x.unbind(0)
        f, b = h, h
        outs_f, outs_b = [], []
        for i in range(len(xs)):
            f = self.fwd(xs[i], f)
            outs_f.append(f)
        for i in reversed(range(len(xs))):
            b = self.bwd(xs[i], b)
            outs_b.append(b)
        return torch.cat([torch.stack(outs_f), torch.stack(outs_b[::-1])], -1)
m = BiRNN()
def make(): return m
def inputs(i):
    g = torch.Generator().manual_seed(i)
    return torch.randn([5, 7, 4, 9, 6, 9, 6, 5][i], 2, 4, generator=g), torch.randn(2, 4, generator=g)
def step(i):
    if i == 3:
        m.bwd.gain = 0.5
NCALLS = 8
""")

program(F_, "enumerate_with_position_scale_changed_between_calls", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.decay = 0.9
    def forward(self, x):
        h = torch.zeros(2, 3)
        for t, x_t in enumerate(x.unbind(1)):
            h = torch.tanh(self.lin(x_t) + h * self.decay) * (t + 1)
        return h
m = M()
def make(): return m
def inputs(i): return (torch.randn(2, [4, 6, 3, 8, 5][i], 3, generator=torch.Generator().manual_seed(i)),)
def step(i):
    if i == 3:
        m.decay = 0.5
NCALLS = 5
""")

program(F_, "stride_two_over_time_with_outside_list_of_weights", """
weights = [torch.ones(3), torch.full((3,), 2.0)]
def f(x):
    h = torch.zeros(3)
    for t in range(0, x.size(0), 2):
        h = h * 0.5 + x[t] * weights[0]
    return h
def make(): return f
def inputs(i): return (torch.randn([5, 7, 4, 9, 6][i], 3, generator=torch.Generator().manual_seed(i)),)
def step(i):
    if i == 3:
        weights[0] = torch.full((3,), -1.0)
NCALLS = 5
""")

program(F_, "masked_rnn_zip_with_a_mask_threshold_changed", _CELL + """
class MaskedRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = Cell()
        self.threshold = 0.0
    def forward(self, x, m, h):
        outs = []
        for x_t, m_t in zip(x.unbind(0), m.unbind(0)):
            new = self.cell(x_t, h)
            h = torch.where(m_t > self.threshold, new, h)
            outs.append(h)
        return torch.stack(outs), h
rnn = MaskedRNN()
def make(): return rnn
def inputs(i):
    g = torch.Generator().manual_seed(i)
    t = [5, 7, 4, 9, 6][i]
    return torch.randn(t, 2, 4, generator=g), torch.randn(t, 2, 1, generator=g), torch.randn(2, 4, generator=g)
def step(i):
    if i == 3:
        rnn.threshold = 0.5
NCALLS = 5
""")
