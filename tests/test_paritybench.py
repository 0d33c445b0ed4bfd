"""The ParityBench coverage runner: stubs, loading, timeouts, crashes, resuming, and our corpus.

The corpus test runs the whole runner (eager + MagPy + TorchDynamo + TorchScript, two jobs)
over ``paritybench/corpus`` and checks the aggregate against what each file declares in its
``EXPECTED``: every case runs in eager mode, declared-dynamic cases are classified dynamic,
declared-static cases static, and the result files have the documented columns.
"""

from __future__ import annotations

import csv
import json
import re
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from experiments.compare import difference
from paritybench.cli import PARITYBENCH_HINT, main
from paritybench.evaluate import RunConfig
from paritybench.loader import CORPUS_DIR, LoadError, find_testfiles, load_testfile
from paritybench.report import CASE_COLUMNS, TABLE3_COLUMNS, reason_key, write_reports
from paritybench.runner import RunConfigMismatch, RunOptions, run
from paritybench.stubs import StubImporter, is_stub
from paritybench.worker import read_events

HELPERS = '''
MARKER = "from-the-user-directory"


class _mock_config(dict):
    def __getattr__(self, name):
        return self[name]


def patch_functional():
    pass
'''


def write(directory: Path, name: str, body: str) -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(body))
    return path


def stages_of(out: Path, stem: str) -> dict[tuple[str, str], dict]:
    """(case, stage) -> result, from a file's event log."""
    return {
        (e["case"], e["stage"]): e["result"]
        for e in read_events(out / "files" / f"{stem}.jsonl")
        if e.get("event") == "stage"
    }


def quiet_run(opts: RunOptions) -> Path:
    return run(opts, progress=lambda line: None)


# -- stubs ---------------------------------------------------------------------------------------
@pytest.fixture
def clean_modules():
    """Forget the fake libraries, helper modules and test files a test imported or stubbed."""
    before = set(sys.modules)
    meta_path = list(sys.meta_path)
    yield
    ours = ("magpy_", "_paritybench_helpers", "test_")
    for name in set(sys.modules) - before:
        if name.startswith(ours):
            del sys.modules[name]
    sys.meta_path[:] = meta_path


def test_stub_importer_stands_in_for_missing_modules_and_records_use(clean_modules):
    importer = StubImporter()
    stubbed = importer.prepare(["magpy_no_such_lib", "magpy_no_such_lib.models", "math"])
    assert stubbed == ["magpy_no_such_lib"]  # math is real; the submodule is covered by its parent
    with importer:
        import magpy_no_such_lib.models as models
        from magpy_no_such_lib import transforms

        class Net(models.ResNet):  # subclassing a stand-in works
            def __init__(self):
                super().__init__(depth=3)
                self.own = 1

        net = Net()
        assert net.own == 1 and is_stub(net.anything)
        resnet = models.resnet50(pretrained=False)
        assert list(resnet) == [] and len(resnet) == 0

        @transforms.register
        def kept():  # a stubbed decorator leaves the function alone
            return 7

        assert kept() == 7
        with pytest.raises(ModuleNotFoundError):  # names the file did not import stay missing
            import magpy_other_missing_lib  # noqa: F401
    accesses = importer.usage.accesses["magpy_no_such_lib.models"]
    assert {"ResNet", "resnet50", "resnet50()"} <= accesses
    assert {"transforms", "transforms.register()"} <= importer.usage.accesses["magpy_no_such_lib"]


def test_stub_importer_replaces_modules_whose_import_raises(tmp_path, monkeypatch, clean_modules):
    pkg = tmp_path / "magpy_broken_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from . import part\n")
    (pkg / "part.py").write_text("raise RuntimeError('needs a CUDA build')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importer = StubImporter()
    assert importer.prepare(["magpy_broken_pkg"]) == ["magpy_broken_pkg"]
    assert "RuntimeError: needs a CUDA build" in importer.usage.modules["magpy_broken_pkg"]
    assert not any(name.startswith("magpy_broken_pkg.") for name in sys.modules)  # half-import purged
    with importer:
        import magpy_broken_pkg

    assert is_stub(magpy_broken_pkg.ops.nms)


def test_stub_importer_fills_names_missing_from_installed_modules(clean_modules):
    importer = StubImporter()
    importer.prepare(["torch"], [("torch.nn", "magpy_removed_layer"), ("torch.nn", "Linear")])
    from torch.nn import Linear, magpy_removed_layer

    assert Linear is torch.nn.modules.linear.Linear
    assert is_stub(magpy_removed_layer)
    assert "magpy_removed_layer (missing from the installed module)" in importer.usage.accesses["torch.nn"]
    del torch.nn.magpy_removed_layer


# -- loading ---------------------------------------------------------------------------------------
def test_load_a_parity_bench_dir_given_by_path_uses_its_own_helpers(tmp_path, clean_modules):
    write(tmp_path, "_paritybench_helpers.py", HELPERS)
    write(
        tmp_path,
        "test_someone_project.py",
        """
        import sys
        _module = sys.modules[__name__]
        del sys
        from _paritybench_helpers import _mock_config, patch_functional, MARKER
        import math, torch, magpy_absent_vision_lib
        import torch.nn as nn
        patch_functional()


        class Scale(nn.Module):
            def __init__(self, cfg):
                super().__init__()
                self.factor = cfg.factor

            def forward(self, x):
                return x * self.factor

        TESTCASES = [(Scale, lambda: ([_mock_config(factor=2.0)], {}), lambda: ([torch.ones(2)], {}), True)]
        """,
    )
    (tmp_path / "not_a_test.py").write_text("raise SystemExit\n")
    assert [p.name for p in find_testfiles(tmp_path)] == ["test_someone_project.py"]
    loaded = load_testfile(tmp_path / "test_someone_project.py")
    assert loaded.helpers == str(tmp_path / "_paritybench_helpers.py")
    assert loaded.module.MARKER == "from-the-user-directory"
    assert loaded.stubbed_modules == ["magpy_absent_vision_lib"]
    (case,) = loaded.cases
    assert case.name == "Scale" and case.jit_compiles is True and case.expected is None
    args, kwargs = case.get_init_args()
    assert torch.equal(case.module_class(*args, **kwargs)(torch.ones(2)), torch.full((2,), 2.0))


def test_a_dir_without_helpers_gets_ours(tmp_path, clean_modules):
    write(
        tmp_path,
        "test_plain.py",
        """
        from _paritybench_helpers import _mock_config, _mock_layer, patch_functional
        import torch
        patch_functional()
        TESTCASES = [(torch.nn.ReLU, lambda: ([], {}), lambda: ([torch.ones(1)], {}), True)]
        """,
    )
    loaded = load_testfile(tmp_path / "test_plain.py")
    assert loaded.helpers == str(CORPUS_DIR / "_paritybench_helpers.py") and loaded.helpers_note == ""


def test_a_helper_module_that_cannot_import_is_replaced_by_ours_with_a_note(tmp_path, clean_modules):
    write(tmp_path, "_paritybench_helpers.py", "import magpy_missing_expecttest\n")
    write(
        tmp_path,
        "test_plain.py",
        """
        from _paritybench_helpers import _mock_config, _paritybench_base, _fails_compile
        import torch
        TESTCASES = [(torch.nn.ReLU, lambda: ([], {}), lambda: ([torch.ones(1)], {}), True)]
        """,
    )
    loaded = load_testfile(tmp_path / "test_plain.py")
    assert loaded.helpers == str(CORPUS_DIR / "_paritybench_helpers.py")
    assert "ModuleNotFoundError" in loaded.helpers_note and str(tmp_path) in loaded.helpers_note


# ParityBench's own helper module begins like this (its unittest base class needs expecttest).
UPSTREAM_HELPERS = """
from torch.testing._internal.jit_utils import JitTestCase
from paritybench.utils import INDUCTOR_TOL, get_cosine_and_fp64_outputs, \\
    patch_torch_manual_seed, reset_rng_state, wrap_args, wrap_kwargs
patch_torch_manual_seed()
class _mock_config(dict):
    __getattr__ = dict.__getitem__
TOL = INDUCTOR_TOL
"""

PLAIN_TEST = """
from _paritybench_helpers import _mock_config
import torch
TESTCASES = [(torch.nn.ReLU, lambda: ([], {}), lambda: ([torch.ones(1)], {}), True)]
"""


@pytest.fixture
def restore_manual_seed():
    seed_fn = torch.manual_seed
    utils = sys.modules.get("paritybench.utils")
    yield
    torch.manual_seed = seed_fn
    if utils is not None:
        sys.modules["paritybench.utils"] = utils


def test_parity_benchs_own_helper_module_loads(tmp_path, clean_modules, restore_manual_seed):
    write(tmp_path, "_paritybench_helpers.py", UPSTREAM_HELPERS)
    write(tmp_path, "test_plain.py", PLAIN_TEST)
    loaded = load_testfile(tmp_path / "test_plain.py")
    assert loaded.helpers == str(tmp_path / "_paritybench_helpers.py") and loaded.helpers_note == ""
    helpers = sys.modules["_paritybench_helpers"]
    assert helpers.TOL == pytest.approx(1e-3)
    # ParityBench fixes torch.manual_seed; the runner's own seeding still gives each call new inputs.
    from paritybench.evaluate import seed_all

    torch.manual_seed(1)
    a = torch.rand(3)
    torch.manual_seed(2)
    assert torch.equal(a, torch.rand(3))
    seed_all(1)
    a = torch.rand(3)
    seed_all(2)
    assert not torch.equal(a, torch.rand(3))


def test_inside_a_parity_bench_checkout_its_own_utils_are_used(tmp_path, clean_modules, restore_manual_seed):
    write(tmp_path / "paritybench", "utils.py", """
        INDUCTOR_TOL = 0.25
        def get_cosine_and_fp64_outputs(model, args): return False, None
        def patch_torch_manual_seed(): pass
        def reset_rng_state(): pass
        def wrap_args(args, device): return args
        def wrap_kwargs(kwargs, device): return kwargs
        """)
    gen = tmp_path / "generated"
    write(gen, "_paritybench_helpers.py", UPSTREAM_HELPERS)
    write(gen, "test_plain.py", PLAIN_TEST)
    loaded = load_testfile(gen / "test_plain.py")
    assert loaded.helpers_note == "" and sys.modules["_paritybench_helpers"].TOL == 0.25


@pytest.mark.parametrize(
    "body, message",
    [
        ("X = 1\n", "no TESTCASES"),
        ("TESTCASES = [(1, 2)]\n", r"TESTCASES\[0\] is not"),
        ("TESTCASES = [(1, lambda: 0, lambda: 0, True)]\n", "not a class"),
        (
            "import torch\nTESTCASES = [(torch.nn.ReLU, lambda: ([], {}), lambda: ([], {}), True)]\n"
            "EXPECTED = {'Other': {'dynamic': False}}\n",
            "not in TESTCASES",
        ),
        (
            "import torch\nTESTCASES = [(torch.nn.ReLU, lambda: ([], {}), lambda: ([], {}), True)]\n"
            "EXPECTED = {'ReLU': {'dynamic': 'no'}}\n",
            "bool 'dynamic'",
        ),
    ],
)
def test_malformed_files_are_rejected_with_a_reason(tmp_path, clean_modules, body, message):
    path = write(tmp_path, "test_bad.py", body)
    with pytest.raises(LoadError, match=message):
        load_testfile(path)


def unpadded(markdown: str) -> str:
    """A markdown table without tabulate's column padding, so rows can be matched as text."""
    return re.sub(r" {2,}", " ", markdown)


# -- comparing -------------------------------------------------------------------------------------
def test_difference_names_where_outputs_depart():
    a = {"logits": torch.ones(2, 3), "aux": [torch.zeros(1), 3, "tag"]}
    assert difference(a, {"logits": torch.ones(2, 3), "aux": [torch.zeros(1), 3, "tag"]}) is None
    assert "shape" in difference(a, {"logits": torch.ones(3, 2), "aux": a["aux"]})
    assert difference(a, {"logits": a["logits"], "aux": [torch.zeros(1), 4, "tag"]}) == "output['aux'][1]: 3 vs 4"
    assert "list vs tuple" in difference([1], (1,))
    assert difference(torch.tensor([float("nan")]), torch.tensor([float("nan")])) is None


def test_reason_keys_group_messages_that_differ_only_in_numbers_and_paths():
    one = reason_key("Fallback", "unsupported instruction X (/a/b/model.py:12 in forward)")
    two = reason_key("Fallback", "unsupported instruction X (/c/d/other.py:99 in forward)")
    assert one == two == "Fallback: unsupported instruction X (<file> in forward)"


# -- the runner: crashes, hangs, memory, resuming ---------------------------------------------------
MISBEHAVING = """
import os, signal, time, torch
import torch.nn as nn


class Fine(nn.Module):
    def forward(self, x):
        return x * 2


class Hangs(nn.Module):
    def forward(self, x):
        while True:
            time.sleep(0.05)


class Segfaults(nn.Module):
    def forward(self, x):
        os.kill(os.getpid(), signal.SIGSEGV)


class Greedy(nn.Module):
    def forward(self, x):
        block = bytearray(3 * 2 ** 30)  # over the 2 GiB cap
        return x + len(block)


class Flaky(nn.Module):
    calls = 0

    def forward(self, x):
        type(self).calls += 1
        return x + type(self).calls


class AlsoFine(nn.Module):
    def forward(self, x):
        return x - 1


ONE = lambda: ([torch.ones(2)], {})
TESTCASES = [(c, lambda: ([], {}), ONE, True) for c in (Fine, Hangs, Segfaults, Greedy, Flaky, AlsoFine)]
"""


def test_hangs_crashes_and_memory_hogs_become_results_and_the_run_goes_on(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    write(src, "test_misbehaving.py", MISBEHAVING)
    out = tmp_path / "out"
    opts = RunOptions(
        directory=src, out=out, config=RunConfig(compilers=("torchscript",)), jobs=1, timeout_s=4, memory_gb=2
    )
    quiet_run(opts)
    got = stages_of(out, "test_misbehaving")
    assert got[("Fine", "eager")]["status"] == "ok" and got[("Fine", "torchscript")]["status"] == "ok"
    assert got[("Hangs", "eager")]["status"] == "timeout"
    assert (got[("Hangs", "eager")]["error_class"], got[("Hangs", "eager")]["error"]) == \
        ("Timeout", "worker killed at its 4 s time limit")   # experiments.units.unfinished, as a cell's row
    assert got[("Segfaults", "eager")]["status"] == "crash"
    assert "signal SIGSEGV" in got[("Segfaults", "eager")]["error"]   # the words of the experiments' crash rows
    assert got[("Greedy", "eager")]["error_class"] == "MemoryError"
    assert got[("Flaky", "eager")]["status"] == "nondeterministic"
    assert got[("AlsoFine", "eager")]["status"] == "ok" and got[("AlsoFine", "torchscript")]["status"] == "ok"
    for case in ("Hangs", "Segfaults", "Greedy", "Flaky"):
        assert got[(case, "torchscript")]["status"] == "not_run"

    table = write_reports(out)
    assert (table.cases, table.eager_failed, table.nondeterministic) == (2, 3, 1)
    rows = list(csv.DictReader(open(out / "cases.csv")))
    assert {r["class"]: r["kind"] for r in rows}["Hangs"] == "eager_failed"


def test_a_timeout_while_replaying_eager_blames_that_case_only(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    mark = tmp_path / "slow"
    write(src, "test_replay.py", f"""
    import os, time
    import torch
    import torch.nn as nn

    time.sleep(0.5)   # a file that takes a moment to load, as real ones do


    class SlowOnReplay(nn.Module):
        def forward(self, x):
            if os.path.exists({str(mark)!r}):
                time.sleep(60)
            return x * 2


    class Fast(nn.Module):
        def forward(self, x):
            time.sleep(0.3)
            return x * 3

    TESTCASES = [(SlowOnReplay, lambda: ([], {{}}), lambda: ([torch.ones(2)], {{}}), True),
                 (Fast, lambda: ([], {{}}), lambda: ([torch.ones(2)], {{}}), True)]
    """)
    out = tmp_path / "out"
    cfg = RunConfig(compilers=("torchscript",))
    old = {"eager": "torch T", "torchscript": "torch T; old"}
    quiet_run(RunOptions(directory=src, out=out, config=cfg, builds=old, timeout_s=20))
    mark.write_text("")
    quiet_run(RunOptions(directory=src, out=out, config=cfg, builds={**old, "torchscript": "torch T; new"},
                         timeout_s=3))
    got = stages_of(out, "test_replay")
    assert got[("SlowOnReplay", "torchscript")]["status"] == "timeout"   # the stage the replay was for
    fast = got[("Fast", "torchscript")]       # it really ran (TorchScript rejects time.sleep)
    assert fast["status"] == "error" and "sleep" in fast["error"] and fast["build"] == "torch T; new"


def test_a_rerun_skips_recorded_stages_and_redoes_changed_files(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    body = """
    import torch
    import torch.nn as nn


    class Double(nn.Module):
        def forward(self, x):
            return x * 2


    class Triple(nn.Module):
        def forward(self, x):
            return x * 3

    TESTCASES = [(Double, lambda: ([], {}), lambda: ([torch.ones(2)], {}), True),
                 (Triple, lambda: ([], {}), lambda: ([torch.ones(2)], {}), True)]
    """
    write(src, "test_a.py", body)
    write(src, "test_b.py", body)
    out = tmp_path / "out"
    cfg = RunConfig(compilers=("torchscript",))
    quiet_run(RunOptions(directory=src, out=out, config=cfg, limit=1))
    assert (out / "files" / "test_a.jsonl").exists() and not (out / "files" / "test_b.jsonl").exists()

    # Simulate an interruption: drop the last recorded stage (and the end marker) of test_a.
    log_a = out / "files" / "test_a.jsonl"
    lines = log_a.read_text().splitlines(keepends=True)
    assert json.loads(lines[-1])["event"] == "end"
    dropped = json.loads(lines[-2])
    assert (dropped["case"], dropped["stage"]) == ("Triple", "torchscript")
    log_a.write_text("".join(lines[:-2]))

    lines_seen = []
    run(RunOptions(directory=src, out=out, config=cfg, jobs=2), progress=lines_seen.append)
    starts = [e for e in read_events(log_a) if e.get("event") == "stage_start"]
    # Only Triple ran again: its eager stage as a replay for the reference, then the missing stage.
    assert [(e["case"], e["stage"], e.get("replay", False)) for e in starts[-2:]] == [
        ("Triple", "eager", True),
        ("Triple", "torchscript", False),
    ]
    assert stages_of(out, "test_a")[("Triple", "torchscript")]["status"] == "ok"
    assert (out / "files" / "test_b.jsonl").exists()

    lines_seen.clear()
    run(RunOptions(directory=src, out=out, config=cfg), progress=lines_seen.append)
    assert "2 already finished, 0 to run" in lines_seen[0]

    write(src, "test_b.py", body.replace("x * 3", "x * 4"))
    lines_seen.clear()
    run(RunOptions(directory=src, out=out, config=cfg), progress=lines_seen.append)
    assert any("test_b changed" in line for line in lines_seen)

    with pytest.raises(RunConfigMismatch, match=r"\(calls: \d+ recorded, 5 requested\); pass --fresh"):
        run(RunOptions(directory=src, out=out, config=RunConfig(compilers=("torchscript",), calls=5)),
            progress=lambda line: None)

    # Another compiler joins the directory: only its stages run, the union is recorded.
    lines_seen.clear()
    run(RunOptions(directory=src, out=out, config=RunConfig(compilers=("dynamo",))), progress=lines_seen.append)
    assert "0 already finished, 2 to run" in lines_seen[0]
    assert json.loads((out / "run.json").read_text())["config"]["compilers"] == ["dynamo", "torchscript"]
    assert {s for (_, s) in stages_of(out, "test_a")} == {"eager", "dynamo", "torchscript"}


def test_stages_made_by_another_build_run_again_and_only_those(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    write(src, "test_a.py", """
    import torch
    import torch.nn as nn


    class Double(nn.Module):
        def forward(self, x):
            return x * 2

    TESTCASES = [(Double, lambda: ([], {}), lambda: ([torch.ones(2)], {}), True)]
    """)
    out = tmp_path / "out"
    cfg = RunConfig(compilers=("magpy", "torchscript"))
    builds = {"eager": "torch T", "magpy": "torch T; magpy OLD", "torchscript": "torch T"}
    quiet_run(RunOptions(directory=src, out=out, config=cfg, builds=dict(builds)))
    assert stages_of(out, "test_a")[("Double", "magpy")]["build"] == "torch T; magpy OLD"

    lines_seen = []
    run(RunOptions(directory=src, out=out, config=cfg, builds={**builds, "magpy": "torch T; magpy NEW"}),
        progress=lines_seen.append)
    assert any("1 recorded stages were made by another build" in line for line in lines_seen)
    starts = [(e["case"], e["stage"]) for e in read_events(out / "files" / "test_a.jsonl") if e.get("event") == "stage_start"]
    assert starts[-2:] == [("Double", "eager"), ("Double", "magpy")]  # eager only replayed for the reference
    assert starts.count(("Double", "torchscript")) == 1
    assert stages_of(out, "test_a")[("Double", "magpy")]["build"] == "torch T; magpy NEW"

    lines_seen.clear()
    run(RunOptions(directory=src, out=out, config=cfg, builds={**builds, "magpy": "torch T; magpy NEW"}),
        progress=lines_seen.append)
    assert "1 already finished, 0 to run" in lines_seen[-1]


def test_every_stage_build_is_torch_and_a_digest_of_the_measured_sources():
    from paritybench.compilers import stage_builds

    builds = stage_builds(["magpy", "dynamo"])
    assert set(builds) == {"eager", "magpy", "dynamo"}
    assert len(set(builds.values())) == 1 and " sources " in builds["magpy"]
    assert len(builds["magpy"].split()[-1]) == 16
    assert stage_builds(["magpy"]) == {k: builds[k] for k in ("eager", "magpy")}


def test_a_file_that_fails_to_load_is_recorded_not_fatal(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    write(src, "test_broken.py", "import torch\nraise ValueError('bad project code')\n")
    out = quiet_run(RunOptions(directory=src, out=tmp_path / "out", config=RunConfig(compilers=("torchscript",))))
    (load,) = [e for e in read_events(out / "files" / "test_broken.jsonl") if e["event"] == "load"]
    assert (load["ok"], load["error_class"], load["error"]) == (False, "ValueError", "bad project code")
    table = write_reports(out)
    assert (table.files, table.files_failed_to_load, table.cases) == (1, 1, 0)
    with open(out / "table3.csv", newline="") as fh:   # the paper's row beside ours
        t3 = list(csv.DictReader(fh))
    assert [(r["compiler"], r["source"]) for r in t3] == [("TorchScript", "this run"), ("TorchScript", "paper")]
    assert (t3[1]["cases"], t3[1]["static_cases"], t3[1]["failed_cases"], t3[1]["fail_rate"]) == ("1421", "1191", "769", "0.6450")


def test_table3_without_parity_bench_dir_says_where_to_get_it(monkeypatch, capsys):
    monkeypatch.delenv("PARITYBENCH_DIR", raising=False)
    with pytest.raises(SystemExit) as exc:
        main(["table3"])
    assert "PARITYBENCH_DIR is not set" in str(exc.value)
    assert "github.com/jansel/pytorch-jit-paritybench" in PARITYBENCH_HINT and "generated/" in PARITYBENCH_HINT


def test_a_missing_dir_is_named_without_the_parity_bench_dir_hint(tmp_path):
    missing = tmp_path / "nonexistent"
    with pytest.raises(SystemExit) as exc:
        main(["run", "--dir", str(missing)])
    assert str(exc.value) == f"paritybench: --dir names {missing}, which is not a directory"


# -- our corpus ------------------------------------------------------------------------------------
def test_corpus_declares_every_case_and_is_big_enough(clean_modules):
    files = find_testfiles(CORPUS_DIR)
    cases = []
    for path in files:
        loaded = load_testfile(path)
        undeclared = [c.name for c in loaded.cases if c.expected is None]
        assert not undeclared, f"{path.name}: no EXPECTED entry for {undeclared}"
        cases += loaded.cases
    assert len(files) >= 200 and len(cases) >= 500
    families = {p.name.split("_")[1] for p in files}
    assert {"builtins", "oop", "side", "typing", "dynamic", "models", "numpy", "torchlib", "hooks"} <= families
    # Convention: the truly dynamic programs, and only they, live in test_dynamic_*.py.
    for case in cases:
        in_dynamic_file = case.module_class.__module__.startswith("test_dynamic_")
        assert case.expected["dynamic"] == in_dynamic_file, f"{case.module_class.__module__}::{case.name}"
    assert sum(c.expected["dynamic"] for c in cases) >= 50


@pytest.mark.slow
def test_corpus_run_matches_what_the_programs_declare(tmp_path):
    out = tmp_path / "corpus"
    opts = RunOptions(directory=CORPUS_DIR, out=out, config=RunConfig(backend="eager"), jobs=2, timeout_s=120)
    quiet_run(opts)
    table = write_reports(out)

    rows = list(csv.DictReader(open(out / "cases.csv", newline="")))
    assert list(rows[0].keys()) == CASE_COLUMNS
    with open(out / "table3.csv", newline="") as fh:
        t3 = list(csv.reader(fh))
    assert t3[0] == TABLE3_COLUMNS and [r[2] for r in t3[1:]] == ["TorchScript", "TorchDynamo", "MagPy"] * 2
    assert [r[5] for r in t3[1:]] == ["this run"] * 3 + ["paper"] * 3
    assert "| Cases | Static cases | Compiler | Failed cases | Fail rate |" in unpadded((out / "table3.md").read_text())
    assert "## MagPy" in (out / "failures.md").read_text()
    with open(out / "coverage.csv", newline="") as fh:
        cov = list(csv.DictReader(fh))
    assert [r["compiler"] for r in cov] == ["TorchScript", "TorchDynamo", "MagPy"]
    assert len({r["cases"] for r in cov}) == 1   # every compiler over the same eager-runnable cases
    assert "## Every eager-runnable case" in (out / "table3.md").read_text()

    assert len(rows) >= 500
    not_eager = [f"{r['file']}::{r['class']}: {r['eager_error']}" for r in rows if r["eager_status"] != "ok"]
    assert not not_eager, "corpus programs must run in eager mode:\n" + "\n".join(not_eager)
    assert all(r["magpy_status"] != "error" or r["magpy_error_class"] != "ImportError" for r in rows)
    assert table.static_cases + table.dynamic_cases == table.cases == len(rows)

    # A case declared static must be classified static. A case declared dynamic (it reads tensor
    # values, prints, draws random numbers...) is either flagged dynamic or compiled and correct:
    # MagPy lifts and speculates on values read from tensors and replays prints (magpy.monitor.scalars).
    wrong = [
        f"{r['file']}::{r['class']}: declared {r['expected']}, classified {r['kind']} "
        f"({r['magpy_dynamic_reason'] or r['magpy_error'] or r['magpy_status']})"
        for r in rows
        if r["kind"] != r["expected"] and not (r["expected"] == "dynamic" and r["magpy_status"] == "ok")
    ]
    assert not wrong, f"{len(wrong)} cases classified against their declaration:\n" + "\n".join(wrong)
    # Whatever the classification, MagPy never returns what eager does not (a dynamic case that is
    # compiled must be correct on every call, one that is not must run eagerly).
    wrong_results = [f"{r['file']}::{r['class']}: {r['magpy_error']}" for r in rows if r["magpy_status"] == "wrong"]
    assert not wrong_results, "MagPy results differ from eager:\n" + "\n".join(wrong_results)

    loads = [e for p in (out / "files").glob("*.jsonl") for e in read_events(p) if e.get("event") == "load"]
    assert all(e["ok"] for e in loads)
    assert all("torchvision" in e["stubs"]["modules"] for e in loads)  # the preamble imports it; it cannot load here


def test_uninitialised_buffers_are_compared_as_left_alone():
    """`torch.FloatTensor(n)` holds whatever memory it got: two fresh copies differ, so a buffer the
    reference never touched must be judged by "left as it was", while real changes still count."""
    import torch

    from paritybench.evaluate import EagerTrace

    ref = EagerTrace([], {"junk": torch.tensor([1e25]), "w": torch.tensor([2.0])},
                     {"junk": torch.tensor([1e25]), "w": torch.tensor([1.0])})
    same_junk_untouched = EagerTrace([], {"junk": torch.tensor([-3.0]), "w": torch.tensor([2.0])},
                                     {"junk": torch.tensor([-3.0]), "w": torch.tensor([1.0])})
    junk_changed = EagerTrace([], {"junk": torch.tensor([0.0]), "w": torch.tensor([2.0])},
                              {"junk": torch.tensor([-3.0]), "w": torch.tensor([1.0])})
    w_wrong = EagerTrace([], {"junk": torch.tensor([-3.0]), "w": torch.tensor([5.0])},
                         {"junk": torch.tensor([-3.0]), "w": torch.tensor([1.0])})
    assert ref.difference(same_junk_untouched, 1e-4, 1e-5) is None
    assert ref.difference(junk_changed, 1e-4, 1e-5) is not None
    assert ref.difference(w_wrong, 1e-4, 1e-5) is not None


def test_the_every_case_table_counts_what_magpy_set_apart_for_every_compiler():
    from paritybench.report import _every_case_section, summarize

    def row(file, kind, magpy, dynamo):
        return {"file": file, "class": "C", "kind": kind, "magpy_status": magpy, "dynamo_status": dynamo}

    rows = [row("a", "static", "ok", "ok"), row("a", "dynamic", "fallback", "ok"),
            row("b", "static", "wrong", "error"), row("b", "eager_failed", "ok", "ok")]
    table = summarize(rows, [], ["magpy", "dynamo"])
    assert table.static_cases == 2 and table.failed == {"magpy": 1, "dynamo": 1}   # MagPy's own split
    assert table.all_statuses["magpy"] == {"ok": 1, "fallback": 1, "wrong": 1}
    assert table.all_statuses["dynamo"] == {"ok": 2, "error": 1}
    assert table.projects == 2 and table.projects_passing == {"magpy": 0, "dynamo": 1}
    text = unpadded("\n".join(_every_case_section(table)))
    assert "3 cases in 2 projects" in text
    assert "| TorchDynamo | 2 (66.7%) | 0 | 0 | 0 | 1 | 0 | 1 (50.0%) |" in text
    assert "| MagPy | 1 (33.3%) | 0 | 1 | 1 | 0 | 0 | 0 (0.0%) |" in text


def test_table3_carries_the_papers_rows_beside_ours():
    from paritybench.report import _table3_md, summarize

    rows = [{"file": "a", "class": "C", "kind": "static", "expected": "", "magpy_status": "ok", "dynamo_status": "error",
             "torchscript_status": "error"}]
    table = summarize(rows, [], ["magpy", "dynamo", "torchscript"])
    text = unpadded(_table3_md(table, rows, [], {}, []))
    assert "| 1 | 1 | TorchScript | 1 | 100.0% |" in text and "| | | MagPy | 0 | 0.0% |" in text
    assert "| 1421 | 1191 | TorchScript (paper) | 769 | 64.5% |" in text
    assert "| | | TorchDynamo (paper) | 272 | 22.8% |" in text and "| | | MagPy (paper) | 79 | 6.6% |" in text
    assert "(paper) rows: the MagPy paper's Table 3" in text


def test_a_compiler_starts_from_the_references_initial_state():
    """Uninitialised parameters (nn.Parameter(torch.FloatTensor(n))) differ per build: the
    compiler's module copies the reference's initial state, so garbage never reads as 'wrong'."""
    from paritybench.evaluate import EagerTrace, build_like
    from paritybench.loader import TestCase

    builds = []

    class Garbage(torch.nn.Module):
        def __init__(self):
            super().__init__()
            builds.append(1)
            self.w = torch.nn.Parameter(torch.full((3,), float(len(builds))))
            self.register_buffer("b", torch.full((2,), -float(len(builds))))

        def forward(self, x):
            return x * self.w

    case = TestCase(0, "Garbage", Garbage, lambda: ([], {}), lambda: ([torch.ones(3)], {}))
    ref = EagerTrace(calls=[], state=None, initial={"w": torch.full((3,), 7.0), "b": torch.zeros(2)})
    m = build_like(case, RunConfig(backend="eager"), ref)
    assert torch.equal(m.w, torch.full((3,), 7.0)) and torch.equal(m.b, torch.zeros(2))
    assert isinstance(m.w, torch.nn.Parameter) and m.w.requires_grad


def test_a_table_over_part_of_the_files_says_so(tmp_path):
    src = tmp_path / "src"
    body = """
    import torch
    import torch.nn as nn

    class Double(nn.Module):
        def forward(self, x):
            return x * 2

    TESTCASES = [(Double, lambda: ([], {}), lambda: ([torch.ones(2)], {}), True)]
    """
    for name in ("test_a.py", "test_b.py", "test_c.py"):
        write(src, name, body)
    out = tmp_path / "out"
    cfg = RunConfig(compilers=("torchscript",))
    quiet_run(RunOptions(directory=src, out=out, config=cfg, limit=1))
    write_reports(out)
    assert "covers 1 of the 3 test files" in (out / "table3.md").read_text()
    quiet_run(RunOptions(directory=src, out=out, config=cfg))
    write_reports(out)
    assert "Partial" not in (out / "table3.md").read_text()
