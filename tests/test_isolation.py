"""The shared worker runner (experiments/isolation.py) that the timing cells and ParityBench use.

Each test starts a worker both ways the artifact does (``Worker.module``: a fresh interpreter, as
a timing cell; ``Worker.call``: a forked function, as a ParityBench file) and checks what the
runner promises: a timeout or Ctrl-C kills every process the worker started, a crash is
described in the words of both result formats, and the memory cap holds in the worker and in
what it starts.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import resource
import signal
import sys
import textwrap
import time
from pathlib import Path

import pytest

from experiments.isolation import Ending, Worker

ROOT = Path(__file__).resolve().parent.parent

PROBE = textwrap.dedent('''
    """A worker's program: python -m isoprobe ACTION ARG."""
    import os, resource, signal, subprocess, sys, time

    def grandchild_then_hang(pid_file):
        child = subprocess.Popen(["sleep", "600"])
        with open(pid_file + ".tmp", "w") as out:
            out.write(str(child.pid))
        os.replace(pid_file + ".tmp", pid_file)
        time.sleep(600)

    def report_caps():
        # os.write: under pytest, sys.stdout of a forked worker is pytest's capture, not fd 1
        os.write(1, f"worker cap {resource.getrlimit(resource.RLIMIT_AS)[0]}\\n".encode())
        child = "import resource; print('child cap', resource.getrlimit(resource.RLIMIT_AS)[0])"
        subprocess.run([sys.executable, "-c", child], check=True)

    def segfault():
        import faulthandler
        faulthandler.disable()  # pytest's, inherited by a forked worker, would print past the log
        os.kill(os.getpid(), signal.SIGSEGV)

    def exit_3():
        sys.exit(3)

    if __name__ == "__main__":
        globals()[sys.argv[1]](*sys.argv[2:])
''')


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory):
    """The probe module, importable here and in a ``Worker.module`` interpreter."""
    folder = tmp_path_factory.mktemp("probe")
    (folder / "isoprobe.py").write_text(PROBE)
    sys.path.insert(0, str(folder))
    import isoprobe

    yield folder, isoprobe
    sys.path.remove(str(folder))
    sys.modules.pop("isoprobe", None)


def start(how: str, probe, action: str, *args: str, log: Path, cap: int | None = None) -> Worker:
    """Start the probe's ``action`` as a module worker or as a forked function worker."""
    folder, module = probe
    if how == "module":
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), str(ROOT)])}
        return Worker.module("isoprobe", [action, *args], log_path=log, mem_limit_bytes=cap, env=env)
    return Worker.call(mp.get_context("fork"), getattr(module, action), args, log_path=log, mem_limit_bytes=cap)


def running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for a reaper that is not us does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_for(predicate, seconds: float = 60) -> bool:
    deadline = time.monotonic() + seconds
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.05)
    return predicate()


@pytest.mark.parametrize("how", ["module", "call"])
def test_a_timeout_kills_the_worker_and_what_it_started(how: str, probe, tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    worker = start(how, probe, "grandchild_then_hang", str(pid_file), log=tmp_path / "log.txt")
    assert wait_for(pid_file.exists), (tmp_path / "log.txt").read_text()
    ending = worker.wait(limit_s=0.5)
    assert ending.status == "timeout" and str(ending) == "worker killed at its 0.5 s time limit"
    assert not worker.alive()
    assert wait_for(lambda: not running(int(pid_file.read_text())), 10), "the grandchild outlived its worker"


@pytest.mark.parametrize("how", ["module", "call"])
def test_ctrl_c_while_waiting_kills_the_worker_and_goes_on(how: str, probe, tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    worker = start(how, probe, "grandchild_then_hang", str(pid_file), log=tmp_path / "log.txt")
    assert wait_for(pid_file.exists), (tmp_path / "log.txt").read_text()

    def ctrl_c(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, ctrl_c)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        with pytest.raises(KeyboardInterrupt):
            worker.wait(limit_s=60)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert not worker.alive()
    assert wait_for(lambda: not running(int(pid_file.read_text())), 10), "the grandchild outlived its worker"


@pytest.mark.parametrize("how", ["module", "call"])
def test_a_crash_is_described_in_the_words_of_both_result_formats(how: str, probe, tmp_path: Path) -> None:
    segfault = start(how, probe, "segfault", log=tmp_path / "log.txt").wait(limit_s=60)
    assert segfault == Ending(-signal.SIGSEGV)
    assert segfault.status == "crash" and str(segfault) == "worker exited with signal SIGSEGV"
    exit_3 = start(how, probe, "exit_3", log=tmp_path / "log.txt").wait(limit_s=60)
    assert exit_3.status == "crash" and str(exit_3) == "worker exited with exit status 3"
    # a worker that exits 0 without its result (sys.exit(0) in a user program) crashed as well
    assert Ending(0).status == "crash" and str(Ending(0)) == "worker exited with exit status 0"


@pytest.mark.parametrize("how", ["module", "call"])
def test_the_memory_cap_holds_in_the_worker_and_what_it_starts(how: str, probe, tmp_path: Path) -> None:
    cap = 2**36  # above what this (torch-importing) test process already maps, so a forked worker runs
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY and hard < cap:
        pytest.skip("the hard address-space limit is below the cap this test sets")
    log = tmp_path / "log.txt"
    ending = start(how, probe, "report_caps", log=log, cap=cap).wait(limit_s=60)
    assert ending.exitcode == 0, log.read_text()
    assert f"worker cap {cap}" in log.read_text() and f"child cap {cap}" in log.read_text()


def test_output_is_appended_to_the_log(probe, tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    log.write_text("an earlier run\n")
    start("module", probe, "report_caps", log=log).wait(limit_s=60)
    assert log.read_text().startswith("an earlier run\n") and "child cap" in log.read_text()
