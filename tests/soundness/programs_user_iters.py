"""Written the ways users write such code, changing outside state between calls: itertools, generators, functools.partial/reduce, operator module, map/filter."""
from harness import program

F_ = "user_iters"

program(F_, "itertools_count_global_step", """
EXPECT = "split"
COUNTER = itertools.count()
def f(x):
    k = next(COUNTER)
    return x * (k + 1)
def make(): return f
def inputs(i): return (torch.ones(2),)
""")

program(F_, "itertools_cycle_of_scales", """
EXPECT = "split"
SCALES = itertools.cycle([1.0, 2.0, 3.0])
def f(x):
    return x * next(SCALES)
def make(): return f
def inputs(i): return (torch.ones(2),)
NCALLS = 5
""")

program(F_, "partial_object_replaced", """
EXPECT = "record"
ACT = [functools.partial(F.leaky_relu, negative_slope=0.1)]
def f(x):
    return ACT[0](x)
def make(): return f
def inputs(i): return (torch.randn(4),)
def step(i):
    if i == 2: ACT[0] = functools.partial(F.leaky_relu, negative_slope=0.5)
    if i == 3: ACT[0] = functools.partial(F.elu, alpha=2.0)
""")

program(F_, "partial_args_mutated_via_setstate", """
EXPECT = "record"
P = functools.partial(torch.clamp, min=0.0)
def f(x):
    return P(x)
def make(): return f
def inputs(i): return (torch.randn(4),)
def step(i):
    if i == 2: P.__setstate__((torch.clamp, (), {"min": -0.5}, None))
""")

program(F_, "partial_keywords_dict_mutated", """
EXPECT = "record"
P = functools.partial(torch.clamp, min=0.0)
def f(x):
    return P(x)
def make(): return f
def inputs(i): return (torch.randn(4),)
def step(i):
    if i == 2: P.keywords["min"] = -0.5
""")

program(F_, "reduce_mul_over_global_list", """
EXPECT = "record"
FACTORS = [1.0, 2.0]
def f(x):
    return functools.reduce(operator.mul, FACTORS, x)
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2: FACTORS.append(3.0)
    if i == 3: FACTORS[0] = 0.5
""")

program(F_, "attrgetter_sorted_layers", """
EXPECT = "dynamic"
class L(nn.Module):
    def __init__(self, pr, k):
        super().__init__(); self.priority = pr; self.k = k
    def forward(self, x): return x * self.k + self.k
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.ls = nn.ModuleList([L(1, 2.0), L(2, 3.0)])
    def forward(self, x):
        for l in sorted(self.ls, key=operator.attrgetter("priority")):
            x = l(x)
        return x
NET = Net()
def make(): return NET
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2: NET.ls[0].priority = 5
""")

program(F_, "itemgetter_global_index", """
EXPECT = "split"
GET = [operator.itemgetter(0)]
def f(xs):
    return GET[0](xs) * 2
def make(): return f
def inputs(i): return ([torch.ones(2), torch.zeros(2)],)
def step(i):
    if i == 2: GET[0] = operator.itemgetter(1)
""")

program(F_, "methodcaller_name_changed", """
EXPECT = "split"
CALL = [operator.methodcaller("sum")]
def f(x):
    return CALL[0](x)
def make(): return f
def inputs(i): return (torch.arange(4.0),)
def step(i):
    if i == 2: CALL[0] = operator.methodcaller("mean")
    if i == 3: CALL[0] = operator.methodcaller("sum", 0, keepdim=True)
""")

program(F_, "generator_made_in_call_pipeline", """
EXPECT = "record"
def layers(x, n):
    for k in range(n):
        x = x * 2 + k
        yield x
N = [3]
def f(x):
    return torch.stack(list(layers(x, N[0]))).sum(0)
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2: N[0] = 4
""")

program(F_, "islice_of_module_list", """
EXPECT = "record"
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.ls = nn.ModuleList([nn.Linear(2, 2) for _ in range(4)])
        self.depth = 2
    def forward(self, x):
        for l in itertools.islice(self.ls, self.depth):
            x = l(x)
        return x
NET = Net()
def make(): return NET
def inputs(i): return (torch.ones(1, 2),)
def step(i):
    if i == 2: NET.depth = 3
""")

program(F_, "accumulate_running_sum_python", """
EXPECT = "record"
W = [1.0, 2.0, 3.0]
def f(x):
    return [x * c for c in itertools.accumulate(W)]
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2: W[1] = -1.0
""")

program(F_, "zip_strict_length_mismatch_raises", """
EXPECT = "record"
SC = [1.0, 2.0]
def f(xs):
    return [x * s for x, s in zip(xs, SC, strict=True)]
def make(): return f
def inputs(i): return ([torch.ones(2), torch.ones(2)],)
def step(i):
    if i == 2: SC.append(3.0)
    if i == 3: SC.pop()
""")

program(F_, "map_lambda_over_global_scales", """
EXPECT = "record"
SC = [1.0, 2.0]
def f(x):
    return sum(map(lambda s: x * s, SC))
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2: SC[:] = [3.0, 4.0, 5.0]
""")

program(F_, "filter_enabled_names", """
EXPECT = "record"
ENABLED = {"relu": True, "neg": False}
OPS = {"relu": torch.relu, "neg": torch.neg}
def f(x):
    for name in filter(ENABLED.get, ["relu", "neg"]):
        x = OPS[name](x)
    return x
def make(): return f
def inputs(i): return (torch.randn(4),)
def step(i):
    if i == 2: ENABLED["neg"] = True
""")

program(F_, "generator_outside_resumed_each_call", """
EXPECT = "split"
def schedule():
    k = 1.0
    while True:
        k = k * 0.5
        yield k
SCHED = schedule()
def f(x):
    return x * next(SCHED)
def make(): return f
def inputs(i): return (torch.ones(2),)
NCALLS = 5
""")

program(F_, "generator_send_protocol", """
EXPECT = "split"
def averager():
    tot = 0.0; n = 0; avg = None
    while True:
        v = yield avg
        tot += v; n += 1; avg = tot / n
AVG = averager(); next(AVG)
def f(x):
    m = AVG.send(3.0)
    return x * m
def make(): return f
def inputs(i): return (torch.ones(2),)
""")

program(F_, "singledispatch_registered_later", """
EXPECT = "dynamic"
@functools.singledispatch
def prep(v): return v
@prep.register
def _(v: list): return torch.tensor(v)
def f(x, extra):
    return x + prep(extra)
def make(): return f
def inputs(i): return (torch.ones(2), 1.5)
def step(i):
    if i == 2:
        @prep.register
        def _(v: float): return v * 100
""")
