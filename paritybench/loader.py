"""Loading one ParityBench file: its helper module, its imports (real or stubbed), its TESTCASES.

A ParityBench file ``test_<owner>_<repo>.py`` holds one GitHub project's code and a list::

    TESTCASES = [(ModuleClass, lambda: ([init args], {init kwargs}),
                  lambda: ([forward args], {forward kwargs}), jit_compiles_flag), ...]

It imports ``_paritybench_helpers`` from the root of the benchmark directory. When the
directory brings its own helper module, that one is used; otherwise the one shipped with our
corpus (``paritybench/corpus/_paritybench_helpers.py``) stands in. Files of our corpus may
also declare what each case is expected to do::

    EXPECTED = {"ClassName": {"dynamic": False, "features": ["enumerate", "super"]}}

where ``dynamic`` says whether the program's behaviour truly changes between calls
(a tensor-dependent branch, ``.item()``, ``random``, ``print``) and ``features`` names the
Python features it exercises. The runner records the declaration beside its measurement.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from .stubs import StubImporter, StubUsage, imported_names

__all__ = ["CORPUS_DIR", "LoadError", "LoadedFile", "TestCase", "find_testfiles", "install_helpers", "load_testfile"]

CORPUS_DIR = Path(__file__).resolve().parent / "corpus"
HELPERS_NAME = "_paritybench_helpers"


class LoadError(Exception):
    """A file is not in ParityBench form (no TESTCASES, malformed entries, bad EXPECTED)."""


@dataclass
class TestCase:
    """One entry of TESTCASES: a module class and the two argument factories."""

    __test__ = False  # not a pytest test class despite the name

    index: int
    name: str  # the class name; ``Name#i`` when a class appears more than once
    module_class: type
    get_init_args: Callable[[], tuple[list[Any], dict[str, Any]]]
    get_forward_args: Callable[[], tuple[list[Any], dict[str, Any]]]
    jit_compiles: Any = None
    expected: dict[str, Any] | None = None
    #: Forward args by call number (0, 1, ...), for cases whose shapes change between calls (the
    #: transformers zoo's); ParityBench's own cases draw every call from ``get_forward_args``.
    get_call_args: Callable[[int], tuple[list[Any], dict[str, Any]]] | None = None


@dataclass
class LoadedFile:
    """A loaded ParityBench file and what loading it needed."""

    path: Path
    module: ModuleType
    cases: list[TestCase]
    helpers: str
    stubs: StubUsage
    helpers_note: str = ""
    load_time_s: float = 0.0
    stubbed_modules: list[str] = field(default_factory=list)


def find_testfiles(directory: str | Path) -> list[Path]:
    """The ``test_*.py`` files directly inside ``directory``, sorted by name."""
    directory = Path(directory)
    if not directory.is_dir():
        raise FileNotFoundError(f"ParityBench directory {str(directory)!r} does not exist or is not a directory")
    return sorted(p for p in directory.glob("test_*.py") if p.is_file())


def install_helpers(directory: Path) -> tuple[str, str]:
    """Make ``import _paritybench_helpers`` work for files of ``directory``.

    The directory's own helper module wins (ParityBench's imports ``paritybench.utils``,
    which :mod:`paritybench.utils` provides, or the checkout's own when there is one, and
    ``torch.testing._internal.jit_utils``, which needs the ``expecttest`` package); without
    one, or when it fails to import, the corpus helper, which offers the same names, is used. The module is
    registered in ``sys.modules`` under its import name, which is what every
    ``from _paritybench_helpers import ...`` line looks up. Returns (path used, note on why
    the directory's own helper was not used, or "").
    """
    own = directory / f"{HELPERS_NAME}.py"
    ours = CORPUS_DIR / f"{HELPERS_NAME}.py"
    if own.is_file():
        try:
            _install_upstream_utils(directory)
            return _load_helpers(own), ""
        except Exception as exc:  # noqa: BLE001 - any failure: say so and use ours
            note = f"{own} failed to import ({type(exc).__name__}: {exc}); using {ours}"
            return _load_helpers(ours), note
    return _load_helpers(ours), ""


def _install_upstream_utils(directory: Path) -> None:
    """ParityBench's helper imports ``paritybench.utils``: inside a ParityBench checkout that is
    the checkout's own module, registered under that name; elsewhere ours stands in."""
    from . import utils

    upstream = utils.upstream_utils(directory)
    if upstream is not None:
        sys.modules["paritybench.utils"] = upstream


def _load_helpers(source: Path) -> str:
    loaded = sys.modules.get(HELPERS_NAME)
    if loaded is not None and getattr(loaded, "__file__", None) == str(source):
        return str(source)
    spec = importlib.util.spec_from_file_location(HELPERS_NAME, source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[HELPERS_NAME] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[HELPERS_NAME]
        raise
    return str(source)


def load_testfile(path: str | Path, importer: StubImporter | None = None) -> LoadedFile:
    """Import one ParityBench file, stubbing the libraries it imports that are unavailable.

    Any exception raised by the file's own top-level code propagates unchanged (the caller
    records it as a load failure); a file without a well-formed TESTCASES raises
    :class:`LoadError`.
    """
    path = Path(path).resolve()
    start = time.perf_counter()
    importer = importer if importer is not None else StubImporter()
    helpers, helpers_note = install_helpers(path.parent)
    source = path.read_text(encoding="utf-8", errors="replace")
    names, pairs = imported_names(source, str(path))
    names = [n for n in names if n != HELPERS_NAME]
    importer.__enter__()  # stays installed: cases import lazily at run time too
    stubbed = importer.prepare(names, pairs)

    module_name = path.stem
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise LoadError(f"{path}: cannot create an import spec")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # ParityBench files look themselves up there
    spec.loader.exec_module(module)
    cases = _read_testcases(module, path)
    return LoadedFile(
        path=path,
        module=module,
        cases=cases,
        helpers=helpers,
        helpers_note=helpers_note,
        stubs=importer.usage,
        load_time_s=time.perf_counter() - start,
        stubbed_modules=stubbed,
    )


def _read_testcases(module: ModuleType, path: Path) -> list[TestCase]:
    raw = getattr(module, "TESTCASES", None)
    if raw is None:
        raise LoadError(f"{path.name}: no TESTCASES list")
    if not isinstance(raw, (list, tuple)):
        raise LoadError(f"{path.name}: TESTCASES is a {type(raw).__name__}, expected a list")
    expected = getattr(module, "EXPECTED", None)
    if expected is not None and not isinstance(expected, dict):
        raise LoadError(f"{path.name}: EXPECTED is a {type(expected).__name__}, expected a dict by class name")

    cases: list[TestCase] = []
    seen: dict[str, int] = {}
    for i, entry in enumerate(raw):
        if isinstance(entry, TestCase):   # made by a program generator (paritybench.zoo)
            cases.append(entry)
            continue
        if not isinstance(entry, (list, tuple)) or len(entry) not in (3, 4):
            raise LoadError(
                f"{path.name}: TESTCASES[{i}] is not (module class, init-args lambda, forward-args lambda[, flag])"
            )
        cls, get_init, get_forward = entry[:3]
        if not isinstance(cls, type):
            raise LoadError(f"{path.name}: TESTCASES[{i}][0] is {cls!r}, not a class")
        if not callable(get_init) or not callable(get_forward):
            raise LoadError(f"{path.name}: TESTCASES[{i}] argument factories must be callables")
        base = cls.__name__
        seen[base] = seen.get(base, 0) + 1
        name = base if seen[base] == 1 else f"{base}#{i}"
        declared = None
        if expected is not None:
            declared = expected.get(name, expected.get(base))
            if declared is not None:
                if not isinstance(declared, dict) or not isinstance(declared.get("dynamic"), bool):
                    raise LoadError(f"{path.name}: EXPECTED[{base!r}] must be a dict with a bool 'dynamic'")
        cases.append(
            TestCase(
                index=i,
                name=name,
                module_class=cls,
                get_init_args=get_init,
                get_forward_args=get_forward,
                jit_compiles=entry[3] if len(entry) == 4 else None,
                expected=declared,
            )
        )
    if expected is not None:
        unknown = set(expected) - {c.name for c in cases} - {c.module_class.__name__ for c in cases}
        if unknown:
            raise LoadError(f"{path.name}: EXPECTED names classes that are not in TESTCASES: {sorted(unknown)}")
    return cases
