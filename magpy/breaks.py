"""The exception that ends compilation of one call (a break, paper §3).

Raised anywhere in the monitor run (:mod:`magpy.monitor`, :mod:`magpy.calls`,
:mod:`magpy.tensor_ops`); the run catches it, adds the user's file and line, and the call
completes eagerly.
"""
from __future__ import annotations


class BreakCompile(Exception):
    """Compilation of this call stops here; ``reason`` is shown to users."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason
