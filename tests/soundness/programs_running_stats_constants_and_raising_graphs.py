"""Small programs, each written out as a user would, that pin three behaviours: the undo log of a
failed speculative record restores running statistics that batch/instance norm update without
moving their version counters; a float argument equal to a constant of the code is not read as
that constant; a count written before an operator raises is replayed when the record's graph
raises on the call's inputs."""
from harness import program

F_ = "running_stats_constants_and_raising_graphs"

program(F_, "batchnorm_train_with_a_logged_int_argument", """
# The int argument changes, gets lifted, and the record for it is speculative (the log line
# assumes its value). On a later call the assumption fails and the undo log must restore every
# tensor the graph wrote, including the running statistics that batch_norm updates without moving
# their version counters.
LOG = []
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(4)
    def forward(self, x, step):
        h = self.bn(x)
        LOG.append(repr(step))
        return h
m = M()
def make(): return m
SCHED = [1, 1, 0, 2, 0, 2, 0]
def inputs(i): return (torch.randn(3, 4, generator=torch.Generator().manual_seed(i % 2)), SCHED[i])
NCALLS = 7
EXPECT = "record"
""")

program(F_, "instance_norm_running_stats_with_a_changing_scale", """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.InstanceNorm1d(4, track_running_stats=True)
    def forward(self, x, scale):
        h = self.norm(x) * scale
        LOG.append(repr(scale))
        return h
LOG = []
m = M()
def make(): return m
SCHED = [1, 1, 2, 3, 2, 3]
def inputs(i): return (torch.randn(2, 4, 5, generator=torch.Generator().manual_seed(i % 2)), SCHED[i])
NCALLS = 6
EXPECT = "record"
""")

program(F_, "float_argument_equal_to_a_code_constant", """
# The compiler shares equal float constants across a module's code objects: the schedule's 1.0 is
# the very object of the 1.0 in forward. Once the argument changes it is a graph input, followed by
# identity, and the constant must not be read as the argument (copysign(1.0, s) became
# copysign(s, s), and 0.0 then gave a zero output).
SCALES = [0.0, 0.0, 1.0, 1.0, 0.0, 1.0]
GAINS = [None, None, None, 2, 2, 2]
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
    def forward(self, x, s, g):
        h = self.lin(x) * math.copysign(1.0, s)
        return h if g is None else h * g
m = M()
def make(): return m
def inputs(i): return (torch.randn(3, 4, generator=torch.Generator().manual_seed(i % 2)), SCALES[i], GAINS[i])
NCALLS = 6
EXPECT = "record"
""")

program(F_, "counter_written_before_an_operator_raises", """
# A record whose graph raises on this call's inputs (a memo entry of another shape): eager counted
# the call before the failing add; the compiled call must too (it propagated the graph's error
# before replaying the count).
_MEMO = {}
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.count = 0
    def forward(self, x, scale):
        h = self.lin(x).repeat(1, int(abs(scale)) % 3 + 1)
        self.count += 1
        h = h + self.count
        key = id(x)
        if key not in _MEMO:
            _MEMO[key] = h * 2
        return h + _MEMO[key]
m = M()
def make(): return m
XS = [torch.randn(3, 4) for _ in range(2)]
SCALES = [-2.0, 2.0, 2.0, 2.0, -0.0, 2.0]
def inputs(i): return (XS[i % 2], SCALES[i])
def state(): return m.count, len(_MEMO)
NCALLS = 6
EXPECT = "record"
""")
