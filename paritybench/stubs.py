"""Stand-ins for the libraries a ParityBench file imports but this machine cannot.

A ParityBench file opens with one long import line (``import ..., tensorflow, torchaudio,
torchvision, ...``) whether or not the project uses those libraries in the classes under
test. A library that is not installed, or that raises while importing (torchvision on a
CPU-only torch does), would stop the whole file from loading. :class:`StubImporter` turns
each such import into a :class:`StubModule` so the file loads; the test cases that really
need the library then fail in eager mode, which is a result like any other.

Only names the file itself imports are ever stubbed (found by reading its syntax tree),
never an optional dependency that torch or numpy probes for with ``try: import x``, so
library code keeps seeing the truth. Every stub records which of its attributes were
read and called, so a report can say which results depended on a stand-in.

    >>> usage = StubUsage()
    >>> importer = StubImporter(usage)
    >>> importer.prepare(["surely_not_installed_lib"])
    ['surely_not_installed_lib']
    >>> with importer:
    ...     import surely_not_installed_lib as lib
    ...     _ = lib.models.resnet50(pretrained=False)
    >>> sorted(usage.accesses["surely_not_installed_lib"])
    ['models', 'models.resnet50', 'models.resnet50()']
"""

from __future__ import annotations

import ast
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import inspect
import sys
import types
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["StubImporter", "StubModule", "StubUsage", "imported_names", "is_stub"]


class StubUsage:
    """What the stubs of one process handed out: per stubbed module, the attribute paths read.

    A path is dotted from the module (``models.resnet50``); a call appends ``()``; an
    attribute that was missing from a real module and got a stub is recorded under the real
    module's name.
    """

    def __init__(self) -> None:
        self.modules: dict[str, str] = {}  # stubbed name -> why (the import error)
        self.accesses: dict[str, set[str]] = {}

    def add_module(self, name: str, why: str) -> None:
        self.modules[name] = why
        self.accesses.setdefault(name, set())

    def record(self, module: str, path: str) -> None:
        self.accesses.setdefault(module, set()).add(path)

    def snapshot(self) -> dict[str, set[str]]:
        """A copy to diff against later (see :meth:`since`)."""
        return {k: set(v) for k, v in self.accesses.items()}

    def since(self, before: dict[str, set[str]]) -> dict[str, list[str]]:
        """Accesses made after ``before`` was taken, as sorted lists (JSON-ready)."""
        out = {}
        for module, paths in self.accesses.items():
            new = paths - before.get(module, set())
            if new:
                out[module] = sorted(new)
        return out

    def as_json(self) -> dict[str, Any]:
        return {
            "modules": dict(sorted(self.modules.items())),
            "accesses": {k: sorted(v) for k, v in sorted(self.accesses.items())},
        }


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


class _StubMeta(type):
    """Metaclass of stub objects: a stub is a class, so user code may subclass it.

    ``class FIDInceptionA(torchvision.models.inception.InceptionA)`` is common in
    ParityBench; a stub that were a plain instance could not be a base class.
    """

    def __getattr__(cls, name: str) -> Any:
        if _is_dunder(name):
            raise AttributeError(name)
        return _child(cls, name)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if "_stub_path" in cls.__dict__ and _is_decoration(args, kwargs):
            cls._stub_usage.record(cls._stub_module, f"{cls._stub_path}()")
            return args[0]
        return super().__call__(*args, **kwargs)

    def __repr__(cls) -> str:
        return f"<stub {cls._stub_module}.{cls._stub_path}>" if cls._stub_path else f"<stub {cls._stub_module}>"

    # Class-level arithmetic or iteration on a stub would otherwise raise deep inside user
    # code with an unhelpful message; these keep module-level constants loadable.
    def __iter__(cls) -> Iterator[Any]:
        return iter(())

    def __len__(cls) -> int:
        return 0

    def __getitem__(cls, item: Any) -> Any:
        return _child(cls, "[]")


def _is_decoration(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """A call with exactly one function or class: a stubbed decorator applied to a definition."""
    return len(args) == 1 and not kwargs and (inspect.isfunction(args[0]) or inspect.isclass(args[0]))


def _child(parent: Any, name: str) -> Any:
    """The stub for ``parent.name``, created once and cached on the parent."""
    cache = parent.__dict__.get("_stub_children")
    if cache is None:  # a user class deriving from a stub: give it its own cache
        cache = {}
        type.__setattr__(parent, "_stub_children", cache)
    if name in cache:
        parent._stub_usage.record(parent._stub_module, cache[name]._stub_path)
        return cache[name]
    path = f"{parent._stub_path}.{name}" if parent._stub_path else name
    stub = _make_stub(parent._stub_module, path, parent._stub_usage)
    cache[name] = stub
    parent._stub_usage.record(parent._stub_module, path)
    return stub


def _make_stub(module: str, path: str, usage: StubUsage) -> type:
    return _StubMeta(
        path.rpartition(".")[2] or module,
        (_StubBase,),
        {"_stub_module": module, "_stub_path": path, "_stub_usage": usage, "_stub_children": {}},
    )


class _StubBase:
    """Instances of stub classes: absorb attribute reads, calls and iteration.

    Calling a stub (class or instance) with exactly one function or class and nothing else
    returns it unchanged, so a stubbed decorator (``@some_lib.register``) leaves the user's
    definition in place.
    """

    _stub_module = ""
    _stub_path = ""
    _stub_usage: StubUsage

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        cls = type(self)
        if "_stub_path" in cls.__dict__:  # a direct stub, not a user subclass of one
            cls._stub_usage.record(cls._stub_module, f"{cls._stub_path}()")

    def __getattr__(self, name: str) -> Any:
        if _is_dunder(name):
            raise AttributeError(name)
        return _child(type(self), name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _is_decoration(args, kwargs):
            return args[0]
        return type(self)()

    def __iter__(self) -> Iterator[Any]:
        return iter(())

    def __len__(self) -> int:
        return 0

    def __getitem__(self, item: Any) -> Any:
        return _child(type(self), "[]")()

    def __repr__(self) -> str:
        return f"<stub instance {self._stub_module}.{self._stub_path}>"


def is_stub(obj: Any) -> bool:
    """True for a stub module, stub class or stub instance."""
    return isinstance(obj, (StubModule, _StubBase)) or isinstance(obj, _StubMeta)


class StubModule(types.ModuleType):
    """A module whose every public attribute is a stub; a package, so submodules import too."""

    def __init__(self, name: str, usage: StubUsage) -> None:
        super().__init__(name, f"stub for the unavailable module {name!r}")
        self.__path__: list[str] = []
        self.__version__ = "0.0.0"
        self._stub_module = name
        self._stub_path = ""
        self._stub_usage = usage
        self._stub_children: dict[str, type] = {}

    def __getattr__(self, name: str) -> Any:
        if _is_dunder(name):
            raise AttributeError(name)
        if name in self._stub_children:
            self._stub_usage.record(self._stub_module, name)
            return self._stub_children[name]
        stub = _make_stub(self._stub_module, name, self._stub_usage)
        self._stub_children[name] = stub
        self._stub_usage.record(self._stub_module, name)
        return stub


class StubImporter(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves the chosen module names (and everything below them) to :class:`StubModule`.

    Use :meth:`prepare` with the names a file imports: it tries each for real and keeps for
    stubbing exactly those that are missing or raise while importing. Entering the importer
    (``with importer:``) puts it first on ``sys.meta_path``; it answers only for the names
    :meth:`prepare` chose.
    """

    def __init__(self, usage: StubUsage | None = None) -> None:
        self.usage = usage if usage is not None else StubUsage()
        self.stubbed: set[str] = set()

    # -- deciding what to stub ------------------------------------------------------------
    def prepare(self, names: Iterable[str], from_names: Iterable[tuple[str, str]] = ()) -> list[str]:
        """Import each dotted name for real; stub those that fail. Returns the stubbed names.

        ``from_names`` holds ``(module, attribute)`` pairs of ``from module import attribute``:
        when the real module lacks the attribute and it is no submodule either (a name that
        an old library version had), the attribute becomes a stub on the real module.
        """
        newly: list[str] = []
        for name in sorted(set(names), key=lambda n: (n.count("."), n)):
            if self._covers(name) or name in sys.modules:
                continue
            try:
                importlib.import_module(name)
            except BaseException as exc:  # noqa: BLE001 - any failure while importing means "unavailable"
                if isinstance(exc, KeyboardInterrupt):
                    raise
                _forget(name)
                self.stubbed.add(name)
                self.usage.add_module(name, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
                newly.append(name)
        for module_name, attr in from_names:
            if attr == "*" or self._covers(module_name):
                continue
            module = sys.modules.get(module_name)
            if module is None or hasattr(module, attr):
                continue
            submodule = f"{module_name}.{attr}"
            try:
                importlib.import_module(submodule)
                continue
            except ImportError:
                _forget(submodule)
            stub = _make_stub(module_name, attr, self.usage)
            setattr(module, attr, stub)
            self.usage.record(module_name, f"{attr} (missing from the installed module)")
        return newly

    def _covers(self, fullname: str) -> bool:
        parts = fullname.split(".")
        return any(".".join(parts[:i]) in self.stubbed for i in range(1, len(parts) + 1))

    # -- import protocol ------------------------------------------------------------------
    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if not self._covers(fullname):
            return None
        return importlib.util.spec_from_loader(fullname, self, is_package=True)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        self.usage.accesses.setdefault(spec.name, set())
        return StubModule(spec.name, self.usage)

    def exec_module(self, module: types.ModuleType) -> None:
        pass  # nothing to run: attributes appear on demand

    def __enter__(self) -> StubImporter:
        if self not in sys.meta_path:
            sys.meta_path.insert(0, self)
        return self

    def __exit__(self, *exc: object) -> None:
        if self in sys.meta_path:
            sys.meta_path.remove(self)


def _forget(name: str) -> None:
    """Drop a half-imported module and its submodules so the stub can take their place."""
    for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
        del sys.modules[key]


def imported_names(source: str, filename: str = "<file>") -> tuple[list[str], list[tuple[str, str]]]:
    """Absolute imports anywhere in ``source``: the dotted module names, and ``from`` pairs.

    For ``import a.b.c`` the names are ``a``, ``a.b``, ``a.b.c`` (so a missing submodule of
    an installed package is found); for ``from a.b import c`` they are ``a``, ``a.b`` and the
    pair ``("a.b", "c")``. Relative imports are left out: a ParityBench file is one module.
    """
    tree = ast.parse(source, filename)
    names: set[str] = set()
    pairs: list[tuple[str, str]] = []

    def add_dotted(dotted: str) -> None:
        parts = dotted.split(".")
        for i in range(1, len(parts) + 1):
            names.add(".".join(parts[:i]))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add_dotted(alias.name)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            add_dotted(node.module)
            pairs.extend((node.module, alias.name) for alias in node.names)
    names.discard("__future__")
    return sorted(names), pairs
