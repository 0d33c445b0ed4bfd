"""One runner per kind of measurement.

Each runner module provides three functions::

    cells(plan) -> list[spec]          parent side: the sweep's cells, in order (no torch work)
    measure(spec) -> dict              worker side: measure one cell, return its row fields
    summarize(raw) -> DataFrame        parent side: the experiment's table from raw.csv's rows

| runner      | experiments  | measures                                                          |
| ----------- | ------------ | ----------------------------------------------------------------- |
| `inference` | fig1, fig15  | latency of static-shape inference per model x compiler x batch    |
| `graphs`    | table2       | number of operator graphs per model x approach                    |
| `breakdown` | fig16        | MagPy monitor-run and matched-run time breakdown                  |
| `dynamic`   | fig17, fig18 | latency over a stream of inputs with changing shapes or paths     |
"""
