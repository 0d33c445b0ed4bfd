"""What a user meets first: ``./reproduce.sh help``, and errors that name the function called.

``reproduce.sh`` answers ``help`` without building an environment; an API misuse names the API
function the user called.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

import magpy

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("word", ["help", "--help", "-h"])
def test_reproduce_help_lists_the_commands_without_building_a_venv(tmp_path: Path, word: str) -> None:
    venv = tmp_path / "venv"
    env = {**os.environ, "MAGPY_VENV": str(venv)}
    proc = subprocess.run([str(ROOT / "reproduce.sh"), word], env=env, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    for command in ("setup", "demo", "test", "bench", "fig1|fig15|table2|fig16|fig17|fig18", "table3", "all"):
        assert f"./reproduce.sh {command} " in proc.stdout
    assert not venv.exists() and proc.stderr == ""


def test_explain_of_a_non_callable_names_explain() -> None:
    with pytest.raises(TypeError, match=r"^magpy\.explain expects a function or torch\.nn\.Module, got int$"):
        magpy.explain(42)
