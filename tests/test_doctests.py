"""The docstring examples of magpy/ and experiments/ run, and say what they show.

Every ``>>>`` line in those packages must be an example that doctest finds and runs (an example in a
comment, or in the docstring of an object doctest does not visit, fails here rather than go unrun);
an illustrative snippet that cannot run here is written without ``>>>``. A module whose import
needs a package this environment lacks (hydra, pandas for the experiments) is skipped with the
package's name in the reason.
"""
from __future__ import annotations

import doctest
import importlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("magpy", "experiments")
_PROMPT = re.compile(r"^\s*>>>( |$)", re.MULTILINE)


def _modules_with_examples() -> list[tuple[str, Path]]:
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if _PROMPT.search(path.read_text()):
                parts = path.relative_to(ROOT).with_suffix("").parts
                name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
                found.append((name, path))
    return found


MODULES = _modules_with_examples()


def test_examples_found():
    # The scan itself works: the packages do have examples (a broken glob would pass every module).
    assert len(MODULES) >= 10


@pytest.mark.parametrize("name,path", MODULES, ids=[name for name, _ in MODULES])
def test_docstring_examples(name: str, path: Path):
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name is None or e.name.split(".")[0] in PACKAGES:
            raise
        pytest.skip(f"{name} imports {e.name}, which is not installed here")
    tests = doctest.DocTestFinder(exclude_empty=True).find(module)
    found = sum(len(t.examples) for t in tests)
    prompts = len(_PROMPT.findall(path.read_text()))
    assert found == prompts, (
        f"{path.relative_to(ROOT)} has {prompts} '>>>' lines but doctest finds {found} examples: an example "
        "outside a docstring doctest visits never runs (write an illustrative snippet without '>>>')")
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    out = io.StringIO()
    for test in tests:
        runner.run(test, out=out.write)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, out.getvalue()
