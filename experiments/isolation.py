"""What the artifact's two process-isolation frameworks share: the memory cap a worker puts on
itself and the words for how a worker died.

The timing experiments run each cell in its own ``python -m experiments.worker`` process
(:mod:`experiments.cells`); ParityBench runs each file in a forked worker that records its stages
as it goes and is restarted after a death (:mod:`paritybench.runner`). Both cap the worker's
address space the same way and report a worker that died without a result the same way.

    >>> describe_exit(-11), describe_exit(3)
    ('signal SIGSEGV', 'exit status 3')
"""

from __future__ import annotations

import resource
import signal

__all__ = ["cap_memory", "describe_exit"]


def cap_memory(limit_bytes: int | None) -> None:
    """Cap this process's address space (``RLIMIT_AS``; processes it starts inherit the cap).

    ``None`` or ``0``: no cap. The hard limit is left as it is (only lowered to nothing), so the
    cap never exceeds what the process was already allowed."""
    if not limit_bytes or limit_bytes <= 0:
        return
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = limit_bytes if hard == resource.RLIM_INFINITY else min(limit_bytes, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def describe_exit(returncode: int | None) -> str:
    """How a worker process ended, from its exit code (negative: the signal that killed it)."""
    if returncode is None:
        return "no exit status"
    if returncode < 0:
        try:
            return f"signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"signal {-returncode}"
    return f"exit status {returncode}"
