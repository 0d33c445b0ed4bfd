"""Exceptions that depend on tensor values: cholesky on a matrix that is PD on some calls and not
others, singular solves, out-of-range indices, cholesky_ex info checks."""
from harness import program

F_ = "valueexc"

program(F_, "cholesky_try_except", """
class Whiten(nn.Module):
    def __init__(self):
        super().__init__()
        self.fallbacks = 0
    def forward(self, a):
        try:
            L = torch.linalg.cholesky(a)
        except RuntimeError:
            self.fallbacks += 1
            L = torch.linalg.cholesky(a + 10 * torch.eye(a.shape[0]))
        return L
m = Whiten()
def make(): return m
def inputs(i):
    a = torch.eye(3) * 2
    if i == 2: a[0, 0] = -1.0
    return a
""")

program(F_, "cholesky_raises_uncaught", """
def f(a):
    return torch.linalg.cholesky(a).sum()
def make(): return f
def inputs(i):
    a = torch.eye(3)
    if i == 1: a[1, 1] = -5.0
    return a
""")

program(F_, "singular_solve_fallback", """
def solve(a, b):
    try:
        return torch.linalg.solve(a, b)
    except RuntimeError:
        return torch.linalg.lstsq(a, b.unsqueeze(-1)).solution.squeeze(-1) * 0
def make(): return solve
def inputs(i):
    a = torch.eye(3) if i != 2 else torch.zeros(3, 3)
    return (a, torch.ones(3))
""")

program(F_, "embedding_index_out_of_range", """
class Emb(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(5, 3)
        self.oov = 0
    def forward(self, idx):
        try:
            return self.emb(idx)
        except IndexError:
            self.oov += 1
            return self.emb(idx.clamp(max=4))
m = Emb()
def make(): return m
def inputs(i): return torch.tensor([1, 7 if i == 2 else 2])
""")

program(F_, "cholesky_ex_info_check", """
def f(a):
    L, info = torch.linalg.cholesky_ex(a)
    if info.item() != 0:
        return torch.zeros_like(a)
    return L
def make(): return f
def inputs(i):
    a = torch.eye(2) * 3
    if i == 2: a[1, 1] = -1
    return a
""")

program(F_, "try_except_inplace_before_failure", """
class Robust(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("attempts", torch.zeros(()))
    def forward(self, a):
        try:
            self.attempts += 1
            return torch.linalg.cholesky(a)
        except RuntimeError:
            return torch.eye(a.shape[0])
m = Robust()
def make(): return m
def inputs(i): return torch.eye(2) * (-1 if i == 1 else 1)
""")
