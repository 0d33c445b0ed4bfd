"""The artifact's one runner for isolated worker processes: start, cap, watch, kill, describe.

Both kinds of measurement run code that may hang, crash or eat all memory, so each piece runs in
a :class:`Worker` process. A worker runs in its own session (so a kill reaches every process it
started, e.g. compile workers), under an address-space cap (``RLIMIT_AS``, inherited by those
processes), with stdout and stderr appended to a log file. The parent waits for it against a time
limit; :meth:`Worker.stop` kills the whole session (on a timeout, on Ctrl-C, or to sweep up what a
finished worker left behind) and returns an :class:`Ending` in the words both result formats use.

Workers start one of two ways, and both stay on purpose:

* :meth:`Worker.module` runs ``python -m MODULE ARG...`` in a fresh interpreter: a timing cell
  (:mod:`experiments.cells`) must not inherit a warm process's threads, allocator or caches;
* :meth:`Worker.call` runs a function in a :mod:`multiprocessing` process: ParityBench
  (:mod:`paritybench.runner`) forks one per file from a server that has already imported torch,
  since thousands of files cannot each afford seconds of imports.

What an ending means for a unit of work (its time limit, its ``timeout``/``crash`` record) is
:mod:`experiments.units`'s; what follows (a new worker for the stages left) is the caller's. :func:`interrupt_on_sigterm` makes ``scancel``/``docker stop`` end a run
as Ctrl-C does, so the same code kills the sessions on the way out.

    >>> import tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> log = Path(tmp.name) / "log.txt"
    >>> worker = Worker.module("json.tool", ["--help"], log_path=log, mem_limit_bytes=2**30)
    >>> worker.wait(limit_s=60).exitcode, str(Ending(-11)), str(Ending(None, limit_s=4))
    (0, 'worker exited with signal SIGSEGV', 'worker killed at its 4 s time limit')
    >>> "usage" in log.read_text()
    True
    >>> tmp.cleanup()
"""

from __future__ import annotations

import multiprocessing.context
import os
import resource
import runpy
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Ending", "Worker", "cap_memory", "interrupt_on_sigterm"]


@dataclass(frozen=True)
class Ending:
    """How a worker ended: its exit code (negative: the signal that killed it), or, with
    ``limit_s``, that it was killed for running past that many seconds."""

    exitcode: int | None
    limit_s: float | None = None

    @property
    def status(self) -> str:
        """``timeout`` or ``crash``: the word both result formats use for a worker that ended
        without its result (exit status 0 included: a worker must say it finished, not just exit)."""
        return "timeout" if self.limit_s is not None else "crash"

    def __str__(self) -> str:
        if self.limit_s is not None:
            return f"worker killed at its {self.limit_s:g} s time limit"
        if self.exitcode is None:
            return "worker ended with no exit status"
        if self.exitcode < 0:
            try:
                return f"worker exited with signal {signal.Signals(-self.exitcode).name}"
            except ValueError:
                return f"worker exited with signal {-self.exitcode}"
        return f"worker exited with exit status {self.exitcode}"


class Worker:
    """A worker process in its own session, under a memory cap, writing to a log file."""

    def __init__(self, process: subprocess.Popen | multiprocessing.process.BaseProcess, log_path: Path) -> None:
        self._process = process
        self.pid: int = process.pid
        self.log_path = log_path

    @classmethod
    def module(cls, name: str, args: Sequence[Any], *, log_path: Path, mem_limit_bytes: int | None,
               env: dict[str, str] | None = None, python: str | None = None) -> Worker:
        """Start ``python -m name args...`` in a fresh interpreter (``python``, else ours; with ``env``, else ours)."""
        command = [python or sys.executable, "-m", __name__, str(mem_limit_bytes or 0), name, *map(str, args)]
        with open(log_path, "ab") as log:
            process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                       start_new_session=True, env=env)
        return cls(process, log_path)

    @classmethod
    def call(cls, context: multiprocessing.context.BaseContext, target: Callable[..., object],
             args: Sequence[Any], *, log_path: Path, mem_limit_bytes: int | None, name: str | None = None) -> Worker:
        """Start ``target(*args)`` in a process of ``context`` (a forkserver's: it starts warm)."""
        process = context.Process(target=_enter, args=(target, tuple(args), str(log_path), mem_limit_bytes),
                                  name=name)
        process.start()
        return cls(process, log_path)

    def alive(self) -> bool:
        """Whether the worker is still running."""
        return self.exitcode() is None

    def exitcode(self) -> int | None:
        """The worker's exit code (negative: the signal that killed it); None while it runs."""
        if isinstance(self._process, subprocess.Popen):
            return self._process.poll()
        return self._process.exitcode

    def wait(self, limit_s: float) -> Ending:
        """Wait up to ``limit_s`` seconds for the worker to end, then stop it and say how it ended.

        On any exception while waiting (Ctrl-C) the session is killed and the exception goes on."""
        try:
            self._join(limit_s)
        except BaseException:
            self.stop()
            raise
        return self.stop(limit_s if self.alive() else None)

    def stop(self, limit_s: float | None = None) -> Ending:
        """Kill whatever still runs in the worker's session, reap the worker and say how it ended.

        ``limit_s``: the worker is stopped for running past that many seconds (a timeout)."""
        self._kill_session()
        self._join(None)
        return Ending(self.exitcode(), limit_s)

    def log_tail(self, chars: int) -> str:
        """The last ``chars`` characters of the worker's log."""
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def _join(self, timeout: float | None) -> None:
        if isinstance(self._process, subprocess.Popen):
            try:
                self._process.wait(timeout)
            except subprocess.TimeoutExpired:
                pass
        else:
            self._process.join(timeout)

    def _kill_session(self) -> None:
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except ProcessLookupError:  # the session is empty, or a forked worker has not made it yet
            pass
        if self.alive():  # not reaped yet, so the pid is still the worker's
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def cap_memory(limit_bytes: int | None) -> None:
    """Cap this process's address space (``RLIMIT_AS``; processes it starts inherit the cap).

    ``None`` or ``0``: no cap. The hard limit is left as it is, so the cap never exceeds what
    the process was already allowed."""
    if not limit_bytes or limit_bytes <= 0:
        return
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = limit_bytes if hard == resource.RLIM_INFINITY else min(limit_bytes, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def interrupt_on_sigterm() -> None:
    """Make SIGTERM (``scancel``, ``docker stop``, ``kill``) raise KeyboardInterrupt, as Ctrl-C does:
    the worker sessions are then killed on the way out (they get neither signal themselves)."""
    signal.signal(signal.SIGTERM, _raise_interrupt)


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _enter(target: Callable[..., object], args: tuple, log_path: str, mem_limit_bytes: int | None) -> None:
    """A :meth:`Worker.call` process's first acts: its own session, output to the log, the cap."""
    os.setsid()
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    cap_memory(mem_limit_bytes)
    target(*args)


if __name__ == "__main__":  # a Worker.module process: python -m experiments.isolation CAP MODULE ARG...
    cap_memory(int(sys.argv[1]))
    sys.argv = sys.argv[2:]
    runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
