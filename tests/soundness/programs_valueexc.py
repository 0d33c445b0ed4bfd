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

program(F_, "broadcast_mismatch_caught_shapes_and_parameter_change", """
# `try: x = x + self.pos_embed / except: resize it` (ViT-style position embeddings): whether the
# add raises follows the shapes; the input length changes between calls, and the parameter is
# replaced by one of another length. An integer floor division by a tensor that may hold a zero
# raises on values.
import torch.nn.functional as F
class Pos(nn.Module):
    def __init__(self):
        super().__init__()
        self.pos_embed = nn.Parameter(torch.randn(1, 16, 4, generator=torch.Generator().manual_seed(0)))
        self.resized = 0
    def forward(self, x, d):
        try:
            x = x + self.pos_embed
        except RuntimeError:
            n = self.pos_embed.shape[1]
            s = int(n ** 0.5)
            side = int(x.shape[1] ** 0.5)
            p = self.pos_embed.reshape(1, s, s, 4).permute(0, 3, 1, 2)
            x = x + F.interpolate(p, size=(side, side), mode="bilinear").flatten(2).transpose(1, 2)
            self.resized += 1
        try:
            q = torch.tensor([7, 9]) // d
        except RuntimeError:
            q = torch.zeros(2, dtype=torch.long)
        return x * 2, q
m = Pos()
def make(): return m
def inputs(i):
    n = [16, 9, 16, 16, 9, 25][i]
    d = torch.tensor([1, 0]) if i in (1, 4) else torch.tensor([2, 3])
    return torch.randn(2, n, 4, generator=torch.Generator().manual_seed(i)), d
def step(i):
    if i == 3:
        m.pos_embed = nn.Parameter(torch.randn(1, 9, 4, generator=torch.Generator().manual_seed(9)))
def state(): return m.resized
NCALLS = 6
""")
