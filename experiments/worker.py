"""The process that measures one cell: ``python -m experiments.worker spec.json result.json``.

Started by :func:`experiments.cells.run_cell` as an isolated worker (:mod:`experiments.isolation`
caps its address space before this module runs; run by hand, it runs uncapped). It seeds torch,
turns off autograd (every experiment is inference), runs
``experiments.runners.<spec["runner"]>.measure`` and writes one JSON row. Every Python-level
failure becomes a row: ``unavailable`` when a required package is missing
(``compilers.Unavailable``), ``error`` for any other exception, with the exception's type and
message; the full traceback goes to the cell's log.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

log = logging.getLogger("experiments.worker")


def _short(err: BaseException) -> str:
    lines = [line for line in str(err).strip().splitlines() if line.strip()]
    message = lines[0] if lines else ""
    return f"{type(err).__name__}: {message}"[:500]


def measure(spec: dict[str, Any]) -> dict[str, Any]:
    """Run the spec's runner and return its row, with status and error filled in."""
    from experiments.compilers import Unavailable

    start = time.monotonic()
    try:
        import torch

        if spec.get("threads"):
            torch.set_num_threads(int(spec["threads"]))
        torch.manual_seed(spec.get("seed", 0))
        runner = importlib.import_module(f"experiments.runners.{spec['runner']}")
        with torch.no_grad():
            row = {"status": "ok", "error": "", **runner.measure(spec)}
    except Unavailable as err:
        row = {"status": "unavailable", "error": str(err)}
    except MemoryError as err:
        traceback.print_exc()
        limit = spec.get("mem_limit_bytes")
        row = {"status": "error", "error": f"MemoryError: out of memory (cell cap {limit} bytes) {err}"[:500]}
    except Exception as err:  # a compiler failing on a model is a result, not a crash of the sweep
        traceback.print_exc()
        row = {"status": "error", "error": _short(err)}
    row["worker_s"] = round(time.monotonic() - start, 3)
    return row


def main(argv: list[str]) -> int:
    """Entry point: read the spec, measure, write the row atomically."""
    if len(argv) != 2:
        print("usage: python -m experiments.worker SPEC.json RESULT.json", file=sys.stderr)
        return 2
    spec_path, result_path = Path(argv[0]), Path(argv[1])
    spec = json.loads(spec_path.read_text())
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s: %(message)s")
    log.info("cell %s", spec.get("cell_id"))
    row = measure(spec)
    log.info("status %s %s", row["status"], row.get("error", ""))
    tmp = result_path.with_suffix(".tmp")
    tmp.write_text(json.dumps(row, default=_jsonable))
    os.replace(tmp, result_path)
    return 0


def _jsonable(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    return str(value)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
