"""Written the ways users write such code, changing outside state between calls: dynamic loops: RNN over changing lengths, beam search, early exit on tensor values, convergence loops."""
from harness import program

F_ = "user_loops"

program(F_, "rnn_cell_over_list_of_changing_length", """
EXPECT = "dynamic"
CELL = nn.GRUCell(2, 3)
def f(xs, h):
    outs = []
    for x in xs:
        h = CELL(x, h)
        outs.append(h)
    return torch.stack(outs), h
def make(): return f
def inputs(i): return ([torch.randn(1, 2) for _ in range(2 + i)], torch.zeros(1, 3))
NCALLS = 5
""")

program(F_, "greedy_decode_until_eos_token", """
EXPECT = "record"
EMB = nn.Embedding(5, 4)
OUT = nn.Linear(4, 5)
def f(start, bias):
    tok = start
    toks = []
    for _ in range(6):
        logits = OUT(EMB(tok)) + bias
        tok = logits.argmax(-1)
        toks.append(int(tok))
        if int(tok) == 0:
            break
    return toks
def make(): return f
def inputs(i): return (torch.tensor(1), torch.eye(5)[i % 5] * 10)
NCALLS = 6
""")

program(F_, "beam_search_topk_with_length_penalty", """
EXPECT = "dynamic"
EMB = nn.Embedding(6, 4)
OUT = nn.Linear(4, 6)
ALPHA = [0.6]
def f(start, noise):
    beams = [([int(start)], 0.0)]
    for t in range(3):
        cand = []
        for seq, score in beams:
            lp = torch.log_softmax(OUT(EMB(torch.tensor(seq[-1]))) + noise[t], -1)
            vals, idx = lp.topk(2)
            for v, k in zip(vals.tolist(), idx.tolist()):
                cand.append((seq + [k], score + v))
        cand.sort(key=lambda c: c[1] / (len(c[0]) ** ALPHA[0]), reverse=True)
        beams = cand[:2]
    return beams
def make(): return f
def inputs(i): return (torch.tensor(1), torch.randn(3, 6))
def step(i):
    if i == 3: ALPHA[0] = 2.0
""")

program(F_, "newton_iteration_until_tolerance", """
EXPECT = "dynamic"
TOL = [1e-4]
def f(a):
    x = a.clone()
    it = 0
    while True:
        nx = 0.5 * (x + a / x)
        it += 1
        if (nx - x).abs().max() < TOL[0] or it > 50:
            break
        x = nx
    return nx, it
def make(): return f
def inputs(i): return (torch.tensor([2.0, 9.0]) * (1 + i * 10),)
def step(i):
    if i == 3: TOL[0] = 1e-1
""")

program(F_, "skip_layers_by_enabled_attribute", """
EXPECT = "record"
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.ls = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
        for l in self.ls: l.enabled = True
    def forward(self, x):
        for l in self.ls:
            if not l.enabled:
                continue
            x = l(x)
        return x
NET = Net()
def make(): return NET
def inputs(i): return (torch.ones(1, 2),)
def step(i):
    if i == 2: NET.ls[1].enabled = False
    if i == 3: NET.ls[1].enabled = True
""")

program(F_, "early_exit_on_confidence", """
EXPECT = "record"
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.ls = nn.ModuleList([nn.Linear(3, 3) for _ in range(4)])
        self.thr = 0.9
    def forward(self, x):
        for k, l in enumerate(self.ls):
            x = torch.tanh(l(x))
            p = x.softmax(-1).max()
            if p > self.thr:
                return x, k
        return x, len(self.ls)
NET = Net()
def make(): return NET
def inputs(i): return (torch.randn(1, 3) * (5 if i == 2 else 1),)
def step(i):
    if i == 3: NET.thr = 0.34
""")

program(F_, "history_list_appended_every_step", """
EXPECT = "record"
HIST = []
def f(xs):
    h = torch.zeros(2)
    for t, x in enumerate(xs):
        h = torch.tanh(h + x)
        HIST.append((t, h.sum().item()))
    return h
def make(): return f
def inputs(i): return (torch.randn(2 + (i % 2), 2),)
def state(): return list(HIST)
""")

program(F_, "python_float_accumulator_returned", """
EXPECT = "dynamic"
def f(xs):
    total = 0.0
    for x in xs:
        total += x.pow(2).sum().item()
    return total / len(xs)
def make(): return f
def inputs(i): return (torch.randn(3 + i, 2),)
""")

program(F_, "loop_count_from_nonzero", """
EXPECT = "record"
def f(x):
    out = torch.zeros(())
    for idx in (x > 0).nonzero().flatten():
        out = out + x[idx] * idx
    return out
def make(): return f
def inputs(i): return (torch.randn(5),)
""")

program(F_, "while_loop_on_python_counter_lifted", """
EXPECT = "record"
class Net(nn.Module):
    def __init__(self):
        super().__init__(); self.lin = nn.Linear(2, 2); self.steps = 2
    def forward(self, x):
        t = 0
        while t < self.steps:
            x = self.lin(x)
            t += 1
        return x
NET = Net()
def make(): return NET
def inputs(i): return (torch.ones(1, 2),)
def step(i): NET.steps = 2 + i
NCALLS = 6
""")

program(F_, "loop_over_dict_items_insertion_order", """
EXPECT = "record"
HEADS = {"a": nn.Linear(2, 2), "b": nn.Linear(2, 2)}
def f(x):
    for k, m in HEADS.items():
        x = m(x) * (2 if k == "a" else 1)
    return x
def make(): return f
def inputs(i): return (torch.ones(1, 2),)
def step(i):
    if i == 2: HEADS["a"] = HEADS.pop("a")
""")

program(F_, "ordereddict_move_to_end_reorders_layers", """
EXPECT = "record"
LAYERS = collections.OrderedDict(relu=torch.relu, neg=torch.neg, exp=torch.exp)
def f(x):
    for fn in LAYERS.values():
        x = fn(x)
    return x
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: LAYERS.move_to_end("relu")
    if i == 3: LAYERS.move_to_end("exp", last=False)
""")

program(F_, "rolled_loop_then_length_changes_to_one", """
EXPECT = "record"
CELL = nn.RNNCell(2, 2)
def f(x):
    h = torch.zeros(x.shape[1], 2)
    for t in range(x.shape[0]):
        h = CELL(x[t], h)
    return h
def make(): return f
def inputs(i): return (torch.randn([3, 4, 5, 1, 0, 6][i], 1, 2),)
NCALLS = 6
""")

program(F_, "break_on_tensor_value_inside_rollable_loop", """
EXPECT = "record"
def f(x):
    h = torch.zeros(2)
    for t in range(x.shape[0]):
        h = h + x[t]
        if h.sum() > 3:
            break
    return h
def make(): return f
def inputs(i): return (torch.ones(3 + i, 2) * [0.2, 0.2, 2.0, 0.2, 0.5, 0.2][i],)
NCALLS = 6
""")

program(F_, "deque_of_recent_states_maxlen", """
EXPECT = "record"
RECENT = collections.deque(maxlen=3)
def f(x):
    RECENT.append(x.detach() * 2)
    return torch.stack(list(RECENT)).mean(0)
def make(): return f
def inputs(i): return (torch.full((2,), float(i)),)
NCALLS = 6
""")

program(F_, "heapq_topk_of_python_floats", """
EXPECT = "split"
import heapq
BEST = []
def f(x):
    s = x.sum().item()
    heapq.heappush(BEST, s)
    if len(BEST) > 2:
        heapq.heappop(BEST)
    return x * BEST[0]
def make(): return f
def inputs(i): return (torch.full((2,), float([3, 1, 4, 1, 5][i])),)
def state(): return list(BEST)
NCALLS = 5
""")
