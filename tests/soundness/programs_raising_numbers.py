"""Numbers that change between calls and make an operation raise for some values: `int(nan)`,
`math.log(0.0)`, `1 / 0.0` inside a `try` (found by the fuzzer: a float argument that changed was
followed as a graph input, a call with NaN recorded the except path, and later finite values were
served by that record). Whether the operation raises follows the number, so a record made where it
raised must hold only for numbers that raise the same way: the run breaks (the next run guards the
number) instead of recording the except path."""
from harness import program

F_ = "raising_numbers"

program(F_, "int_of_nan_inside_try", """
EXPECT = "record"
def repeat(t, v):
    for _ in range(int(abs(v)) % 3):
        t = t + 1
    return t
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
    def forward(self, x, s):
        h = self.lin(x)
        try:
            h = repeat(h, s)
        except (ValueError, ZeroDivisionError):
            h = h - 1
        return h
m = M()
SCHED = [1.5, 2.5, float('nan'), float('nan'), 0.5, float('nan'), 4.5, 4.5, 0.5, 0.5]
def make(): return m
def inputs(i): return (torch.randn(3, 4, generator=torch.Generator().manual_seed(i % 2)), SCHED[i])
NCALLS = 10
""")

program(F_, "log_of_zero_inside_try", """
EXPECT = "record"
import math
def f(x, eps):
    try:
        scale = -math.log(eps)
    except ValueError:
        scale = 0.0
    return x * scale + eps
SCHED = [0.5, 0.25, 0.0, 0.0, 0.125, 0.0, 0.5, 0.5]
def make(): return f
def inputs(i): return (torch.ones(3), SCHED[i])
NCALLS = 8
""")

program(F_, "division_by_a_changing_count_inside_try", """
EXPECT = "record"
class Avg(nn.Module):
    def forward(self, x, n):
        try:
            w = 1.0 / n
        except ZeroDivisionError:
            w = 0.0
        return x * w
m = Avg()
SCHED = [2, 3, 0, 0, 4, 0, 5, 5]
def make(): return m
def inputs(i): return (torch.ones(2, 2), SCHED[i])
NCALLS = 8
""")
