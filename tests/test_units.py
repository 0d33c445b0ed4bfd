"""The unit of work both kinds of measurement share (experiments/units.py): when a recorded result
is kept, and how a unit that overran its time limit or lost its worker is recorded.

An experiment cell and a ParityBench stage resume by the same rule and record a timeout or a
crash in the same words; these tests hold the rule and the words, and check that both runners
reach them.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time
from pathlib import Path

import pytest

from experiments import units
from experiments.isolation import Ending, Worker
from experiments.units import TimedUnit, identity_changes, reuse, source_digest, unfinished


def _package(root: Path, text: str) -> None:
    package = root / "unitpkg"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / "model.py").write_text(text)


# -- identity: settings and the code that ran -----------------------------------------------------


def test_a_source_edit_changes_the_identity_so_the_result_is_not_kept(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The same settings on edited code are another identity: a cell refuses, a stage reruns."""
    _package(tmp_path, "LAYERS = 10\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    settings = {"repeat": 5, "model": {"name": "lstm"}}
    before = {**settings, "source": source_digest(["unitpkg"])}
    result = {"status": "ok"}
    assert reuse(result, before, {**settings, "source": source_digest(["unitpkg"])}, on_change="refuse").action == "skip"

    (tmp_path / "unitpkg" / "model.py").write_text("LAYERS = 11\n")  # same names, same size: only the content
    after = {**settings, "source": source_digest(["unitpkg"])}
    assert after["source"] != before["source"]
    change = (f"source: {before['source']} recorded, {after['source']} requested",)
    assert reuse(result, before, after, on_change="refuse") == units.Reuse("refuse", change)
    assert reuse(result, before, after, on_change="rerun") == units.Reuse("rerun", change)
    # compiled leftovers are not source
    (tmp_path / "unitpkg" / "__pycache__").mkdir()
    (tmp_path / "unitpkg" / "__pycache__" / "model.py").write_text("stale\n")
    assert source_digest(["unitpkg"]) == after["source"]


def test_paritybench_stage_builds_follow_a_source_edit(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """ParityBench's stage identity is the same digest as the cells': an edit reruns every stage."""
    from paritybench.compilers import stage_builds
    from paritybench.runner import stage_reuse

    _package(tmp_path, "def f():\n    return 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    real = units.source_digest
    monkeypatch.setattr(units, "source_digest", lambda packages, exclude=(): real(["unitpkg"], exclude))
    builds = stage_builds(["magpy"])
    recorded = {stage: {"status": "ok", "build": build} for stage, build in builds.items()}
    assert stage_reuse(recorded["magpy"], "magpy", stage_builds(["magpy"])).action == "skip"
    (tmp_path / "unitpkg" / "model.py").write_text("def f():\n    return 2\n")
    assert stage_reuse(recorded["magpy"], "magpy", stage_builds(["magpy"])).action == "rerun"
    assert stage_reuse(recorded["eager"], "eager", stage_builds(["magpy"])).action == "rerun"   # (one identity)


def test_the_resume_rule() -> None:
    ok, failed = {"status": "ok"}, {"status": "timeout"}
    same = {"repeat": 5}
    assert reuse(None, None, same, on_change="refuse").action == "run"
    assert reuse(ok, same, same, on_change="refuse", force=True).action == "rerun"
    assert reuse(failed, same, same, on_change="refuse").action == "skip"
    assert reuse(failed, same, same, on_change="refuse", retry_failed=True).action == "rerun"
    assert reuse(ok, same, same, on_change="refuse", retry_failed=True).action == "skip"
    assert reuse(ok, None, same, on_change="refuse").changes == ("settings: not recorded (measured by an older harness)",)
    assert identity_changes({"a": {"b": 1}, "c": 2}, {"a": {"b": 3}, "c": 4}, ignore=("c",)) == \
        ["a.b: 1 recorded, 3 requested"]


# -- time limit and the record of an unfinished unit ----------------------------------------------


def _sleep() -> None:
    time.sleep(600)


def _segfault() -> None:
    import faulthandler

    faulthandler.disable()
    os.write(1, b"last words\n")  # (sys.stdout of a forked worker is pytest's capture, not fd 1)
    os.kill(os.getpid(), signal.SIGSEGV)


def _start(target, log: Path) -> Worker:
    return Worker.call(mp.get_context("fork"), target, (), log_path=log, mem_limit_bytes=None)


def test_a_unit_past_its_limit_is_killed_and_recorded_as_a_timeout(tmp_path: Path) -> None:
    unit = TimedUnit(_start(_sleep, tmp_path / "log.txt"), limit_s=0.5)
    assert unit.poll() is None
    ending = unit.wait()
    assert not unit.worker.alive()
    assert unfinished(ending) == {"status": "timeout", "error_class": "Timeout",
                                  "error": "worker killed at its 0.5 s time limit"}


def test_the_limit_counts_from_the_unit_in_flight(tmp_path: Path) -> None:
    """A worker running several units gives each the whole limit, from that unit's start."""
    start = [time.time()]
    unit = TimedUnit(_start(_sleep, tmp_path / "log.txt"), limit_s=5, started=lambda: start[0])
    try:
        assert unit.poll(now=start[0] + 4) is None
        start[0] += 4   # the next unit started
        assert unit.poll(now=start[0] + 4) is None and unit.worker.alive()
        ending = unit.poll(now=start[0] + 6)
        assert ending is not None and unfinished(ending)["status"] == "timeout"
        with pytest.raises(ValueError, match="polled"):
            unit.wait()
    finally:
        unit.worker.stop()


def test_a_worker_that_dies_is_recorded_as_a_crash_with_its_last_words(tmp_path: Path) -> None:
    worker = _start(_segfault, tmp_path / "log.txt")
    ending = TimedUnit(worker, limit_s=60).wait()
    record = unfinished(ending, worker.log_tail(100))
    assert record["status"] == "crash" and record["error_class"] == "Crash"
    assert record["error"].startswith("worker exited with signal SIGSEGV before finishing; log tail: ")
    assert "last words" in record["error"]
    assert unfinished(Ending(0)) == {"status": "crash", "error_class": "Crash",
                                     "error": "worker exited with exit status 0 before finishing"}
