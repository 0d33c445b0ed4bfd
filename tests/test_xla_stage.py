"""The XLA cell of the support matrix, from the default suite (which has no torch_xla).

``tests/test_xla.py`` runs only in ``./reproduce.sh test-xla`` (``.venv-xla``); these tests check that
the stage exists, that CI runs it, that it fails when it cannot run all its tests (no venv, a
skipped test), and that the experiments run their torch_xla cells in that venv.
"""
from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from experiments import cells

ROOT = Path(__file__).resolve().parent.parent


def test_ci_runs_the_xla_stage_and_fails_with_it() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^\./reproduce\.sh test-xla \|\| status=1$", ci, re.M)
    assert ci.rstrip().endswith('exit "$status"')
    assert "tests/test_xla.py" in (ROOT / "reproduce.sh").read_text()
    assert (ROOT / "tests" / "test_xla.py").exists()


def test_the_default_suite_leaves_test_xla_to_its_stage() -> None:
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           str(ROOT / "tests" / "test_xla.py")], capture_output=True, text=True, cwd=ROOT,
                          env={k: v for k, v in os.environ.items() if k != "MAGPY_XLA_STAGE"}, timeout=120)
    assert "no tests collected" in proc.stdout + proc.stderr, proc.stdout[-500:]


def _fake_venv(tmp_path: Path, script: str) -> Path:
    venv = tmp_path / "venv-xla"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text("#!/bin/sh\n" + script)
    python.chmod(python.stat().st_mode | stat.S_IEXEC)
    return venv


def _test_xla(venv: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "MAGPY_XLA_VENV": str(venv)}
    return subprocess.run([str(ROOT / "reproduce.sh"), "test-xla"], capture_output=True, text=True, env=env,
                          timeout=120)


def test_the_stage_fails_when_its_venv_cannot_be_built(tmp_path: Path) -> None:
    proc = _test_xla(_fake_venv(tmp_path, "exit 1\n"))   # no torch_xla, and nothing installs into it
    assert proc.returncode != 0
    assert "test-xla: FAILED" in proc.stderr


@pytest.mark.parametrize(("summary", "passes"), [("9 passed in 80.0s", True), ("8 passed, 1 skipped in 70.0s", False),
                                                 ("8 passed, 1 failed in 70.0s", False), ("no tests ran in 0.1s", False)])
def test_the_stage_passes_only_when_every_test_ran_and_passed(tmp_path: Path, summary: str, passes: bool) -> None:
    failed = "failed" in summary
    venv = _fake_venv(tmp_path, f'case "$*" in *pytest*) echo "{summary}"; exit {int(failed)};; esac\nexit 0\n')
    proc = _test_xla(venv)
    assert (proc.returncode == 0) == passes, proc.stderr
    assert ("XLA tests: FAILED" in proc.stderr) != passes


def test_torch_xla_cells_run_in_the_xla_venv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    xla = {"name": "lazytensor-xla", "frontend": "lazytensor", "backend": "xla", "requires": ["torch_xla"]}
    eager = {"name": "eager", "frontend": "eager", "backend": None, "requires": []}
    monkeypatch.setenv("MAGPY_XLA_VENV", str(tmp_path / "none"))
    assert cells.cell_python(xla) == sys.executable   # no XLA venv: unavailable here, as before
    assert cells.missing_in(sys.executable, xla, "cpu") == ["torch_xla"]
    venv = _fake_venv(tmp_path, "echo 'ImportError: no torch here' >&2; exit 1\n")
    monkeypatch.setenv("MAGPY_XLA_VENV", str(venv))
    python = str(venv / "bin" / "python")
    assert cells.cell_python(xla) == python and cells.cell_python(eager) == sys.executable
    # a venv that cannot say what it has makes the cell unavailable, with its reason
    missing = cells.missing_in(python, xla, "cpu")
    assert len(missing) == 1 and "its venv fails" in missing[0] and "ImportError: no torch here" in missing[0]
