"""The slow tests' own stage: ``./reproduce.sh test`` leaves the tests marked slow (the ParityBench
corpus, the fuzzer's bounded passes, end-to-end sweeps) to ``./reproduce.sh test-slow``, which CI runs
after it and which fails when one of them does not run; together they are the whole suite.
"""
from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_ci_runs_the_suite_and_then_its_slow_tests() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    lines = [line for line in ci.splitlines() if line.startswith("./reproduce.sh")]
    assert lines[:2] == ["./reproduce.sh test", "./reproduce.sh test-slow"]   # (set -e: either failing fails CI)
    script = (ROOT / "reproduce.sh").read_text()
    assert re.search(r'test\)\n.*ruff check .*\n.*pytest -q "\$\{WORKERS\[@\]\}" -m "not slow"', script)
    assert re.search(r'test-slow\)\n(.*\n)*?.*pytest -q "\$\{WORKERS\[@\]\}" -m slow', script)


def _fake_venv(tmp_path: Path, summary: str) -> Path:
    """A venv whose python has torch and the project installed and whose pytest prints ``summary``."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    failed = "failed" in summary or "no tests ran" in summary
    python.write_text(f'#!/bin/sh\ncase "$*" in *pytest*) echo "{summary}"; exit {int(failed)};; esac\nexit 0\n')
    python.chmod(python.stat().st_mode | stat.S_IEXEC)
    stamp = venv / ".magpy-installed"
    stamp.touch()
    later = (ROOT / "pyproject.toml").stat().st_mtime + 10
    os.utime(stamp, (later, later))   # (installed after the last change of pyproject.toml: nothing to install)
    return venv


@pytest.mark.parametrize(("summary", "passes"), [
    ("12 passed, 4456 deselected in 500.0s", True),
    ("11 passed, 1 skipped, 4456 deselected in 480.0s", False),
    ("11 passed, 1 failed, 4456 deselected in 480.0s", False),
    ("no tests ran in 0.1s", False)])
def test_the_slow_stage_passes_only_when_every_slow_test_ran_and_passed(tmp_path: Path, summary: str,
                                                                       passes: bool) -> None:
    env = {**os.environ, "MAGPY_VENV": str(_fake_venv(tmp_path, summary))}
    env.pop("PYTHON", None)
    proc = subprocess.run([str(ROOT / "reproduce.sh"), "test-slow"], capture_output=True, text=True, env=env,
                          timeout=120)
    assert (proc.returncode == 0) == passes, proc.stderr
    assert ("slow tests: FAILED" in proc.stderr) != passes


def test_the_longest_tests_are_marked_slow() -> None:
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           "-m", "slow", "tests/test_paritybench.py", "tests/fuzz"],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    slow = [line for line in proc.stdout.splitlines() if "::" in line]
    assert any("test_corpus_run_matches_what_the_programs_declare" in t for t in slow), proc.stdout[-500:]
    assert any(t.startswith("tests/fuzz/") for t in slow), proc.stdout[-500:]
