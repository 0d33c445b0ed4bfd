"""Lifted sizes and shapes that follow tensor values: a lifted batch size that becomes 1
(``squeeze()`` drops it), a 0-d tensor used as a size (``torch.zeros(n)``), shapes that follow
values (``F.one_hot`` without ``num_classes``, ``to_sparse``), a Python sequence sliced with a
tensor bound, and a size returned inside a namedtuple on the lifting call."""
from harness import program

F_ = "sizes_from_tensor_values"

program(F_, "squeeze_after_the_batch_size_is_lifted_then_batch_1", """
EXPECT = "record"
def f(x):
    s = x.squeeze()
    return s + 1, s.dim(), tuple(s.shape), s.mT.shape if s.dim() >= 2 else None
def make(): return f
def inputs(i): return (torch.ones([2, 3, 1, 1, 4, 1][i], 3),)
NCALLS = 6
""")

program(F_, "zero_d_tensor_used_as_a_size", """
EXPECT = "record"
def f(ids):
    n = ids.max() + 1                # a tensor
    table = torch.zeros(n, 2)
    rows = table.shape[0]
    return table, rows, [f"bucket{i}" for i in range(rows)]
def make(): return f
def inputs(i): return (torch.tensor([[0, 1, 2], [0, 1, 2], [0, 3, 1], [5, 0, 0]][i]),)
""")

program(F_, "zero_d_tensor_as_size_of_expand_topk_full_new_zeros", """
EXPECT = "record"
def f(x, k):
    a = x.new_zeros(k).shape[0]
    b = x[:1].expand(k, 3).shape[0]
    c = x.sum(1).topk(k).values.shape[0]
    d = torch.full((k,), 2.0).shape[0]
    e = torch.eye(k).shape
    return a, b, c, d, e
def make(): return f
def inputs(i): return (torch.ones(5, 3), torch.tensor([2, 2, 3, 4, 1][i]))
NCALLS = 5
""")

program(F_, "one_hot_without_num_classes", """
EXPECT = "record"
def f(labels):
    n_cls = F.one_hot(labels).shape[1]
    return torch.ones(n_cls) / n_cls
def make(): return f
def inputs(i): return (torch.tensor([[0, 1, 2], [0, 1, 2], [0, 3, 1], [5, 0, 0]][i]),)
""")

program(F_, "to_sparse_stored_values", """
EXPECT = "record"
def f(x):
    return x.to_sparse().indices().shape[1]
def make(): return f
def inputs(i): return (torch.tensor([[0., 1., 2.], [0., 1., 2.], [0., 0., 1.], [5., 1., 3.]][i]),)
""")

program(F_, "python_list_sliced_with_a_tensor_bound", """
EXPECT = "split"
VOCAB = ["<s>", "the", "cat", "sat", "on", "mat", "</s>"]
def f(lengths):
    words = VOCAB[: lengths[0]]
    return " ".join(words), VOCAB[lengths[1]], ("a", "b", "c", "d")[1:lengths[1] + 1], "abcdef"[lengths[1]:]
def make(): return f
def inputs(i): return (torch.tensor([[3, 1], [3, 1], [5, 2], [2, 2], [7, 0], [3, 1]][i]),)
NCALLS = 6
""")

program(F_, "size_in_a_namedtuple_on_the_lifting_call", """
EXPECT = "record"
NT = collections.namedtuple("NT", "out n")
def f(x):
    return NT(x + 1, x.shape[0])
def make(): return f
def invoke(f, i):
    r = f(*inputs(i))
    return r, type(r.n).__name__, type(r).__name__
def inputs(i): return (torch.ones([2, 2, 3, 4][i]),)
""")

program(F_, "int_read_from_a_tensor_used_as_a_size", """
EXPECT = "record"
def f(x):
    n = int(x.sum().item())
    return torch.zeros(n).shape, torch.arange(x.sum()).shape
def make(): return f
def inputs(i): return (torch.tensor([[1., 1.], [1., 1.], [2., 1.], [1., 1.]][i]),)
""")

program(F_, "int_argument_lifted_then_used_as_a_size", """
EXPECT = "record"
def f(x, n):
    return torch.zeros(n).shape, x + n
def make(): return f
def inputs(i): return (torch.ones(2), [2, 3, 4, 5, 6][i])
NCALLS = 5
""")

program(F_, "python_list_items_assigned_and_deleted_with_tensor_bounds", """
EXPECT = "dynamic"
def f(t):
    y = t * 2
    items = [1, 2, 3, 4, 5]
    items[:t[0]] = [0]
    del items[t[1]:]
    return y, items
def make(): return f
def inputs(i): return (torch.tensor([[2, 3], [2, 3], [1, 2], [3, 1]][i]),)
""")
