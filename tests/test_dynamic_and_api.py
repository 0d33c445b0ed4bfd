"""Dynamic behaviour becomes a readable break (and an eager call), and the public API contract."""
from __future__ import annotations

import logging
import random
import sys

import pytest
import torch
import torch.nn as nn
from conftest import same

import magpy
from magpy.bytecode.resume import supported as splits_supported

SPLITS = splits_supported()


def data_branch(x):
    if x.sum() > 0:
        return x * 2
    return x - 1


def item_use(x):
    return x * x.max().item()


def prints(x):
    # (print of constants, tensors and values read from them, logging and time.sleep are replayed
    # by the mock: tests/test_effects.py; a dict made in the call is not)
    print({"value": 3}, file=sys.stderr)
    return x + 1


def shuffles(x):
    order = [1.0, 2.0, 3.0]
    random.shuffle(order)   # (random draws and clock readings are repeated by the mock: tests/test_redraw.py)
    return x * order[0]


@pytest.mark.parametrize("fn, reason", [
    (prints, "print"),
    (shuffles, "shuffle"),
])
def test_dynamic_programs_split_with_reason_and_stay_correct(fn, reason):
    ex = magpy.explain(fn)(torch.randn(4))
    said = ex.break_reasons + [s for s in ex.splits if s.startswith("split at")]
    # (as compile records the call: on 3.11+ the continuation after the split holds the graph)
    assert ex.graph_count == (1 if SPLITS else 0) and ex.dynamic
    assert len(said) == 1 and reason in said[0]
    assert "test_dynamic_and_api.py:" in said[0]   # the user's file and line
    cm = magpy.compile(fn, backend="eager")
    for i in range(3):
        x = torch.randn(4)
        random.seed(i)
        got = cm(x)
        random.seed(i)
        assert same(got, fn(x))
    st = magpy.stats(cm)
    if SPLITS:
        # split at the operation (magpy.splits): the code after it is a continuation, monitored
        # in the first call too; later calls are hits of both
        assert st.monitor_runs == 1 and st.splits == 1 and st.guard_hits == 2 and st.fallbacks == 0
        assert st.resumed_monitor_runs >= 1
    else:
        # the first call is a miss whose monitor run breaks; the second is monitored once more (the
        # first call may have been special, an initialisation) and breaks too; the third is a fallback
        assert st.monitor_runs == 2 and st.guard_misses == 2 and st.fallbacks == 1 and len(st.break_reasons) == 2


@pytest.mark.parametrize("fn, assumed", [(data_branch, "the truth of `gt`"), (item_use, None)])
def test_tensor_value_reads_compile_with_assumptions(fn, assumed):
    # A branch on a tensor value is assumed (checked after the graph runs); a float read that only
    # flows into operators is lifted into the graph (magpy.monitor.scalars, tests/test_scalar_reads.py).
    ex = magpy.explain(fn)(torch.ones(4))
    assert ex.graph_count == 1 and ex.break_reasons == [] and not ex.dynamic
    if assumed is None:
        assert ex.assumptions == []
    else:
        assert len(ex.assumptions) == 1 and assumed in ex.assumptions[0] and "test_dynamic_and_api.py:" in ex.assumptions[0]
        assert "Values read from tensors and assumed (1)" in str(ex)
    cm = magpy.compile(fn, backend="eager")
    for _ in range(3):
        x = torch.randn(4)
        assert same(cm(x), fn(x))
    assert magpy.stats(cm).fallbacks == 0


def test_explain_reports_graph_guards_and_ops():
    m = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
    ex = magpy.explain(m)(torch.randn(2, 4))
    assert ex.graph_count == 1 and ex.break_reasons == [] and ex.op_count == 2 and not ex.dynamic
    assert "Tensor dtype=torch.float32" in ex.guards
    assert "Graph count: 1" in str(ex)


def test_compile_errors_are_clear():
    with pytest.raises(magpy.BackendError, match="unknown backend"):
        magpy.compile(lambda x: x, backend="no-such-backend")
    with pytest.raises(TypeError, match="expects a function"):
        magpy.compile(3)
    with pytest.raises(TypeError, match="unknown options"):
        magpy.compile(lambda x: x, backend="eager", fullgraph=True)
    try:
        import torch_xla  # noqa: F401
    except ImportError:
        with pytest.raises(magpy.BackendError, match="torch_xla"):
            magpy.compile(lambda x: x, backend="xla")


def test_callable_backend_protocol_and_reset():
    seen = []

    def backend(gm, example_inputs):
        seen.append((gm, [tuple(t.shape) for t in example_inputs]))
        return gm.forward

    cm = magpy.compile(lambda x: torch.sin(x) + 1, backend=backend)
    x = torch.randn(3)
    assert same(cm(x), torch.sin(x) + 1)
    cm(x)
    assert len(seen) == 1 and seen[0][1] == [(3,)]
    magpy.reset()
    cm(x)
    assert len(seen) == 2 and magpy.stats(cm).monitor_runs == 1


def test_compiled_module_reaches_the_module():
    m = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    cm = magpy.compile(m, backend="eager")
    assert cm.eval() is cm and not m.training
    x = torch.randn(3, 4)
    assert same(cm(x), m(x))
    assert cm.training is False and cm.state_dict().keys() == m.state_dict().keys()
    cm.train()
    assert m.training


def test_profile_counts_guard_and_mock_time():
    cm = magpy.compile(lambda x: x * 2, backend="eager", profile=True)
    x = torch.randn(2)
    for _ in range(4):
        cm(x)
    st = magpy.stats(cm)
    assert st.matched_calls == 3 and st.guard_time_s > 0 and st.mock_time_s > 0


def test_logging_channels(caplog):
    magpy._logging.configure("guards,recompiles")
    try:
        with caplog.at_level(logging.INFO, logger="magpy"):
            cm = magpy.compile(lambda x, k: x * k, backend="eager")
            cm(torch.randn(2), 2)
            cm(torch.randn(2), 3)
    finally:
        magpy._logging.configure("")
    text = caplog.text
    assert "guards of record" in text and "recompiling" in text


def test_records_are_reused_most_recent_first():
    cm = magpy.compile(lambda x, k: x * k, backend="eager")
    x = torch.randn(2)
    for k in (1, 2, 1, 2, 1):
        assert same(cm(x, k), x * k)
    st = magpy.stats(cm)
    assert st.monitor_runs == 2 and st.records == 2 and st.guard_hits == 3


def test_user_annotation_makes_a_native_function_compilable():
    import os
    import zlib

    def f(x, tag):
        # (os's natives touch the process and files: never run as pure by their inputs)
        return x * len(os.fspath(tag))

    x = torch.randn(3)
    ex = magpy.explain(f)(x, "a")
    said = ex.break_reasons + [s for s in ex.splits if s.startswith("split at")]   # (a split on 3.11+)
    assert ex.graph_count == (1 if SPLITS else 0) and "fspath" in said[0] and not ex.dynamic   # (the continuation's)
    magpy.annotate(os.fspath, pure_closure=True)
    try:
        cm = magpy.compile(f, backend="eager")
        for tag in ("a", "a", "bb"):
            assert same(cm(x, tag), f(x, tag))
        st = magpy.stats(cm)
        assert st.break_reasons == [] and st.monitor_runs == 2   # the string argument is guarded
    finally:
        from magpy.annotations import REGISTRY

        REGISTRY._by_id.pop(id(os.fspath), None)
    with pytest.raises(TypeError, match="unknown properties"):
        magpy.annotate(zlib.crc32, pure=True)


def test_internal_error_warns_once_and_runs_eagerly(caplog):
    import zlib

    def boom(args, kwargs):
        raise RuntimeError("annotation bug")

    magpy.annotate(zlib.crc32, relation=boom)
    try:
        def f(x):
            return x + zlib.crc32(b"abc")

        cm = magpy.compile(f, backend="eager")
        x = torch.randn(2)
        with caplog.at_level(logging.WARNING, logger="magpy"):
            for _ in range(3):
                assert same(cm(x), f(x))
        warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 1 and "internal MagPy error" in warnings[0].getMessage()
    finally:
        from magpy.annotations import REGISTRY

        REGISTRY._by_id.pop(id(zlib.crc32), None)


def test_unsupported_python_is_a_clear_error(monkeypatch):
    import magpy.config as config  # (where magpy.compile checks the running Python)

    monkeypatch.setattr(config, "SUPPORTED_BYTECODE", ((3, 99),))
    with pytest.raises(magpy.UnsupportedPython, match="3.99"):
        magpy.compile(lambda x: x, backend="eager")


def test_demo_runs_and_matches_eager(capsys):
    from magpy import demo

    demo.main(["--backend", "eager", "--calls", "3"])
    out = capsys.readouterr().out
    assert "Graph count: 1" in out and "match eager: True" in out


def test_an_existing_tracer_survives_compilation():
    import sys

    def tracer(frame, event, arg):
        return None

    old = sys.gettrace()
    sys.settrace(tracer)
    try:
        cm = magpy.compile(lambda x: x * 2, backend="eager")
        cm(torch.randn(2))
        cm(torch.randn(2))
        assert sys.gettrace() is tracer      # a debugger or coverage tool keeps working
    finally:
        sys.settrace(old)


def test_as_op_node_annotation_puts_the_call_in_the_graph():
    """AsOpNode: a function MagPy would otherwise look into becomes one operator node; the graph
    calls it on every matched call. (Unannotated, its numpy code is followed too: the array is a
    value read from tensors, so the call is one graph either way, with a different record.)"""
    calls = []

    def numpy_clip(t):
        calls.append(1)
        return torch.from_numpy(t.detach().numpy().clip(-0.5, 0.5).copy())

    def f(x):
        return numpy_clip(x * 2) + 1

    x = torch.randn(4)
    ex = magpy.explain(f)(x)                          # unannotated: numpy nodes in the graph
    assert ex.graph_count == 1 and "numpy" in ex.graph.code and "numpy_clip" not in ex.graph.code
    magpy.annotate(numpy_clip, as_op_node="function")
    calls.clear()
    try:
        cm = magpy.compile(f, backend="eager")
        for _ in range(3):
            x = torch.randn(4)
            assert same(cm(x), f(x))
        st = magpy.stats(cm)
        assert st.break_reasons == [] and st.graph_count == 1 and st.guard_hits == 2
        assert len(calls) == 6   # three eager calls, three compiled ones (one monitored, two matched)
    finally:
        from magpy.annotations import REGISTRY

        REGISTRY._by_id.pop(id(numpy_clip), None)
    with pytest.raises(TypeError, match="as_op_node"):
        magpy.annotate(numpy_clip, as_op_node="module")


def test_monitor_run_does_not_keep_every_activation_alive():
    """A monitor run executes the program for real; it must not hold each intermediate tensor
    (peak memory would be the sum of all activations instead of eager's working set)."""
    import weakref

    refs = []

    def f(x):
        for _ in range(20):
            x = torch.tanh(x * 1.5)
            refs.append(weakref.ref(x))
        return x, sum(r() is not None for r in refs)

    x = torch.randn(64)
    _, alive_eager = f(x)
    refs.clear()
    _, alive_monitored = magpy.compile(f, backend="eager")(x)   # the first call is the monitor run
    assert alive_eager <= 2 and alive_monitored <= 2, (alive_eager, alive_monitored)


def test_tensor_operation_inside_try_is_speculated_on_and_records_outlive_a_later_break():
    """A tensor operation inside ``try``/``except`` (a Cholesky with a fallback): with the eager
    graph, which raises where eager raises, the record holds for calls on which the graph does
    not raise; a call that raises is a miss, its monitor run takes the ``except`` path for real
    and is dynamic, and from then on the record still serves the calls it matches while the
    others run eagerly."""
    class Whiten(torch.nn.Module):
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

    def mat(i):
        a = torch.eye(3) * 2
        if i in (2, 4):
            a[0, 0] = -1.0   # not positive definite
        return a

    m, ref = Whiten(), Whiten()
    cm = magpy.compile(m, backend="eager")
    for i in range(6):
        assert same(cm(mat(i)), ref(mat(i)))
        assert m.fallbacks == ref.fallbacks
    st = magpy.stats(cm)
    assert (st.monitor_runs, st.guard_hits, st.fallbacks, st.unheld) == (2, 3, 1, 2), st
    assert "raised" in st.break_reasons[0]

    # a compiled kernel need not raise where eager's operator does: dynamic with other backends
    ex = magpy.compile(Whiten(), backend=lambda gm, example: gm.forward)
    ex(mat(0))
    assert magpy.stats(ex).graph_count == 0 and "inside `try`" in magpy.stats(ex).break_reasons[0]


def test_a_first_call_that_breaks_is_monitored_once_more():
    """Data-aware initialisation on the first call (``bool(flag.item())`` decides to initialise,
    the module writes its parameters through ``.data`` in an order ``random.shuffle`` picks,
    which is dynamic): that call breaks, the next one is monitored again and compiles; a
    function that breaks twice runs eagerly from then on."""
    class Init(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.ones(3))
            self.flag = torch.nn.Parameter(torch.tensor(0, dtype=torch.uint8), requires_grad=False)
            self.ready = None

        def forward(self, x):
            if self.ready is None:
                self.ready = bool(self.flag.item())
            if not self.ready:
                random.shuffle([0, 1])
                self.w.data[...] = x.mean(0).detach()   # data-aware init
                self.flag.data[...] = 1
                self.ready = True
            return x * self.w

    m, ref = Init(), Init()
    cm = magpy.compile(m, backend="eager")
    for i in range(4):
        x = torch.randn(2, 3) + i
        assert same(cm(x), ref(x))
    assert same(m.w, ref.w)
    st = magpy.stats(cm)
    assert (st.monitor_runs, st.guard_hits, st.fallbacks) == (2, 2, 0) and len(st.break_reasons) == 1, st
