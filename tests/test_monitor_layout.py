"""The monitor package's layout: small files with one job each, and imports that
keep the contract objects free of the run (FrameState needs no Monitor; nothing in the monitor
imports the code generator)."""
import ast
import pathlib

MONITOR = pathlib.Path(__file__).resolve().parent.parent / "magpy" / "monitor"


def _imports(path: pathlib.Path) -> set[str]:
    """Modules a file imports when it runs (imports under ``if TYPE_CHECKING:`` included: they
    are edges of the import graph a reader follows too), relative names resolved in magpy."""
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = ["magpy", "monitor"][: 3 - node.level] if node.level <= 2 else []
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            found.add(mod)
            found.update(f"{mod}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def test_every_monitor_file_is_small():
    sizes = {p.name: len(p.read_text().splitlines()) for p in MONITOR.glob("*.py")}
    assert {"run.py", "frame.py", "reads.py", "attrs.py", "rules.py", "ops.py"} <= set(sizes)
    assert all(n <= 800 for n in sizes.values()), sizes


def test_contract_and_reads_do_not_import_the_run():
    for name in ("frame.py", "reads.py", "attrs.py", "rules.py", "ops.py"):
        imports = _imports(MONITOR / name)
        assert "magpy.monitor.run" not in imports, name
        assert "magpy.monitor" not in imports, name   # (the package imports the run)
    assert not {i for i in _imports(MONITOR / "frame.py") if i.startswith("magpy.monitor")}


def test_no_monitor_file_imports_codegen_or_api():
    for path in MONITOR.glob("*.py"):
        imports = _imports(path)
        assert not {i for i in imports if i.split(".")[:2] in (["magpy", "codegen"], ["magpy", "api"])}, path.name


def test_reads_are_where_the_run_makes_guards():
    """The update rules and the run core make no source and no guard: they ask the reads."""
    for name in ("run.py", "rules.py", "ops.py"):
        tree = ast.parse((MONITOR / name).read_text())
        made = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                and (n.func.id.endswith("Guard") or n.func.id.endswith("Source"))}
        assert not made, (name, made)


def test_the_monitor_is_composed_not_mixed():
    """The run's rules are objects of their own: the Monitor and every rule class derive from
    nothing but ``object``, and every public method of a rule is reachable on the run."""
    from magpy.dynamic import WATCHERS
    from magpy.monitor import Monitor, RunSwitches, rulebook

    assert Monitor.__mro__ == (Monitor, object)
    for rule_class in rulebook.RULE_CLASSES:
        assert rule_class.__mro__ == (rule_class, object), rule_class
    mon = Monitor((lambda: None).__code__, {}, {}, switches=RunSwitches(watchers=WATCHERS))
    for rule, rule_class in zip(mon.rules, rulebook.RULE_CLASSES):
        assert type(rule) is rule_class
        for name in rulebook.rule_methods(rule_class):
            assert callable(getattr(mon, name)), (rule_class.__name__, name)


def _self_names(cls: ast.ClassDef) -> set[str]:
    """The attributes ``self.<name>`` the methods of ``cls`` read or write."""
    return {n.attr for n in ast.walk(cls) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
            and n.value.id == "self"}


def test_each_rule_names_what_it_uses_of_the_others():
    """A rule reaches the run's state through ``self.run`` and the other rules only through the
    names its ``USES`` lists: every ``self.<name>`` in its source is its own, ``run``, or listed."""
    import inspect

    from magpy.monitor import rulebook

    for rule_class in rulebook.RULE_CLASSES:
        tree = ast.parse(inspect.getsource(rule_class))
        own = set(vars(rule_class)) | {"run", "handlers"}
        stray = _self_names(tree.body[0]) - own - set(rule_class.USES)
        assert not stray, (rule_class.__name__, sorted(stray))
        unused = set(rule_class.USES) - _self_names(tree.body[0])
        assert not unused, (rule_class.__name__, sorted(unused))


def test_quiet_instructions_are_none_the_monitor_reads_at_every_event():
    """The instructions a quiet frame may skip (magpy.monitor.frame.QUIET_OPNAMES / QUIET_TESTS)
    are none of those the run looks at whatever their rule: protocol lookups, `with` entries,
    calls, subscripts, loop steps, returns and yields, what iterates or unpacks a value, what
    hashes one; and no loop watcher takes a move for a use of a value."""
    from magpy.breaks import SUBSCRIPT_EVENTS
    from magpy.dynamic import loops
    from magpy.monitor import frame, rules
    from magpy.objmodel import PROTOCOL_EVENTS

    looked_at = (PROTOCOL_EVENTS | frame.CALL_EVENTS | frame.WITH_ENTRIES | frame.NUMPY_OPAQUE_EVENTS
                 | frame.TEXT_OPAQUE_EVENTS | SUBSCRIPT_EVENTS | rules._HASHING
                 | {"FOR_ITER", "RETURN_VALUE", "RETURN_CONST", "YIELD_VALUE", "KW_NAMES"})
    assert not (frame.QUIET_OPNAMES | frame.QUIET_TESTS) & looked_at
    assert frame.QUIET_OPNAMES <= loops._NO_OPERANDS
    assert frame.ALL_EVENTS < frame.NO_MOVES < frame.NO_MOVES_OR_TESTS
