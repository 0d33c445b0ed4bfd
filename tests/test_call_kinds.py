"""Figure 12 as a table (magpy.monitor.calls): the checks of ``CallRules._callee_kinds`` name exactly the
kinds of ``FIGURE_12``, in the table's order, and every kind has a handler on the monitor run."""
from __future__ import annotations

import ast
import inspect
import textwrap

from magpy.monitor import Monitor, calls


def _yielded_kinds() -> list[str]:
    tree = ast.parse(textwrap.dedent(inspect.getsource(calls.CallRules._callee_kinds)))
    yields = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Yield)), key=lambda n: (n.lineno, n.col_offset))
    return [n.value.value for n in yields]


def test_checks_name_the_table_kinds_in_order():
    kinds = _yielded_kinds()
    assert len(kinds) == len(set(kinds)), "a kind is named by two checks"
    assert kinds == list(calls.FIGURE_12)
    assert kinds[-1] == "unannotated native"   # (its handler always decides: a break)


def test_every_kind_has_a_handler():
    for kind, handler in calls.FIGURE_12.items():
        method = Monitor.rule(handler)
        assert callable(method), f"{kind}: no handler {handler}"
        assert list(inspect.signature(method).parameters) == ["self", "fs", "c"], handler
        assert method.__doc__, f"{handler} says why in a docstring"
