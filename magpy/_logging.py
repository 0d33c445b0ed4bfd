"""Logging channels: ``MAGPY_LOGS=guards,graph,recompiles,breaks`` (like TORCH_LOGS for Dynamo).

Everything goes through the standard ``logging`` module under the ``magpy`` logger;
each channel is a child logger (``magpy.guards``...) switched to INFO by the variable, and
to WARNING otherwise (a program's ``logging.basicConfig(level=logging.INFO)`` leaves them quiet).
"""
from __future__ import annotations

import logging
import os

CHANNELS = ("guards", "graph", "recompiles", "breaks", "mock")
log = logging.getLogger("magpy")


def channel(name: str) -> logging.Logger:
    return logging.getLogger(f"magpy.{name}")


def configure(spec: str | None = None) -> None:
    """Enable the channels named in ``spec`` (default: the MAGPY_LOGS variable)."""
    spec = os.environ.get("MAGPY_LOGS", "") if spec is None else spec
    names = [s.strip() for s in spec.split(",") if s.strip()]
    if "all" in names:
        names = list(CHANNELS)
    unknown = [n for n in names if n not in CHANNELS]
    if unknown:
        log.warning("MAGPY_LOGS: unknown channels %s (known: %s)", unknown, ", ".join(CHANNELS))
    if names and not log.handlers:
        h = logging.StreamHandler()
        h.setFormatter(logging.Formatter("[magpy.%(name)s] %(message)s".replace("magpy.%(name)s", "%(name)s")))
        log.addHandler(h)
    for n in CHANNELS:
        if n in names:
            channel(n).setLevel(logging.INFO)
        else:   # (off unless asked for: a program's logging.basicConfig(level=INFO) would turn them on)
            channel(n).setLevel(logging.WARNING)
