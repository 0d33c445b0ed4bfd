"""The shape of the ``magpy`` package, checked by scanning its source.

* no import cycle between modules of ``magpy`` (every import statement counts, also inside
  functions and under ``TYPE_CHECKING``: a cycle hidden in a function is still a cycle);
* no module over 800 lines;
* no module uses another module's private names: neither ``from .x import _name`` /
  ``x._name`` on an imported module, nor an attribute ``obj._name`` whose name only other
  modules of ``magpy`` define (a caller reaching into another module's object).
  Private names of torch or CPython (``torch._C``, ``sys._getframe``) are not ours and are allowed;
* guards are made where values are read: only the monitor's reads (``monitor/reads.py``,
  ``monitor/attrs.py``) construct a guard of :mod:`magpy.guards`; code generation only derives
  the guard code's own forms of guards the run made (batched identity checks, dict snapshots,
  alias checks through :func:`magpy.guards.alias_guards`).
* the monitor imports no feature module (the dynamic watchers and the split are handed to a run
  in its ``RunSwitches``), and codegen, ``magpy.dynamic`` and the API use the monitor only through
  what the ``magpy.monitor`` package exports.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "magpy"
MAX_LINES = 800


def _modules() -> dict[str, Path]:
    mods = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        mods[".".join(parts)] = path
    return mods


MODULES = _modules()
TREES = {name: ast.parse(path.read_text(), str(path)) for name, path in MODULES.items()}


def _package_of(name: str) -> str:
    return name if MODULES[name].name == "__init__.py" else name.rsplit(".", 1)[0]


def _imports(name: str) -> list[tuple[str, str | None, int]]:
    """(imported module, imported name or None, line) for every import in module ``name``."""
    found = []
    for node in ast.walk(TREES[name]):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = _package_of(name)
                for _ in range(node.level - 1):
                    base = base.rsplit(".", 1)[0]
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            for alias in node.names:
                full = f"{target}.{alias.name}"
                if full in MODULES:
                    found.append((full, None, node.lineno))
                elif target in MODULES:
                    found.append((target, alias.name, node.lineno))
        elif isinstance(node, ast.Import):
            found += [(a.name, None, node.lineno) for a in node.names if a.name in MODULES]
    return found


def _cycles() -> list[list[str]]:
    edges = {m: {t for t, _, _ in _imports(m) if t != m and not m.startswith(t + ".")} for m in MODULES}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for m in MODULES:
        if m not in index:
            visit(m)
    return found


def _defined_private(name: str) -> set[str]:
    """Private names a module defines: functions, classes, assignments, attributes it stores."""
    names = set()
    for node in ast.walk(TREES[name]):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.attr)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name.split(".")[0])
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


def test_no_import_cycle_inside_magpy():
    assert _cycles() == []


def test_no_module_over_800_lines():
    long = {name: n for name, path in MODULES.items() if (n := len(path.read_text().splitlines())) > MAX_LINES}
    assert long == {}


def test_no_module_uses_another_modules_private_names():
    defined = {m: _defined_private(m) for m in MODULES}
    owners: dict[str, set[str]] = defaultdict(set)
    for m, names in defined.items():
        for n in names:
            owners[n].add(m)
    problems = []
    for m in MODULES:
        aliases = {}
        # (modules from outside magpy bound by `import x`: `sys._getframe` is CPython's name, not ours)
        foreign = {a.asname or a.name.split(".")[0] for node in ast.walk(TREES[m]) if isinstance(node, ast.Import)
                   for a in node.names if a.name not in MODULES}
        for target, imported, line in _imports(m):
            if imported and imported.startswith("_") and not imported.startswith("__"):
                problems.append(f"{m}:{line} imports {target}.{imported}")
        for node in ast.walk(TREES[m]):
            if isinstance(node, ast.alias) and node.name in MODULES:
                aliases[node.asname or node.name] = node.name
            if not (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")):
                continue
            if node.attr in defined[m]:
                continue
            if isinstance(node.value, ast.Name) and node.value.id in foreign and node.value.id not in aliases:
                continue
            if owners.get(node.attr):
                problems.append(f"{m}:{node.lineno} uses {node.attr} (defined in {', '.join(sorted(owners[node.attr]))})")
    assert problems == []


#: The stages after a monitor run and the features built on it: the monitor imports none of them
#: (they are handed to a run through :class:`magpy.monitor.RunSwitches`: watchers, the split).
FEATURES = ("magpy.dynamic", "magpy.codegen", "magpy.splits", "magpy.continuation", "magpy.pipeline", "magpy.api",
            "magpy.cache", "magpy.check", "magpy.check_access", "magpy.check_compare", "magpy.report",
            "magpy.backends", "magpy.adaptive", "magpy.replay_plan", "magpy.trace")


def _within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def test_the_monitor_imports_no_feature_module():
    found = [f"{m}:{line} imports {target}" for m in MODULES if _within(m, ("magpy.monitor",))
             for target, _, line in _imports(m) if _within(target, FEATURES)]
    assert found == []


def test_codegen_dynamic_and_the_api_use_the_monitor_through_its_package():
    """What codegen, the dynamic watchers and passes and the API need of the monitor is what the
    ``magpy.monitor`` package exports, never one of its modules."""
    found = [f"{m}:{line} imports {target}" for m in MODULES
             if _within(m, ("magpy.codegen", "magpy.dynamic", "magpy.api"))
             for target, _, line in _imports(m) if target.startswith("magpy.monitor.")]
    assert found == []


#: Modules that may construct a guard (see the module docstring).
GUARD_MAKERS = {"magpy.guards", "magpy.monitor.reads", "magpy.monitor.entry", "magpy.monitor.attrs",
                "magpy.codegen.guard", "magpy.codegen.guard_batch"}


def test_guards_are_made_by_the_reads():
    guard_types = {n.name for n in ast.walk(TREES["magpy.guards"]) if isinstance(n, ast.ClassDef)}
    guard_types |= {"guard_for_object"}
    made = []
    for m in MODULES:
        if m in GUARD_MAKERS:
            continue
        for node in ast.walk(TREES[m]):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
                if name in guard_types:
                    made.append(f"{m}:{node.lineno} makes a {name}")
    assert made == []


def test_the_trace_names_the_type_of_every_field():
    """What the stages after a monitor run read is typed: no field of the Trace is ``Any``."""
    from magpy.trace import Trace

    untyped = [name for name, ann in Trace.__annotations__.items() if "Any" in str(ann)]
    assert untyped == []
