"""The paper's experiments (§8) as Hydra configs, runners and plots.

``./reproduce.sh fig1|fig15|table2|fig16|fig17|fig18 [overrides]`` runs ``python -m experiments.run``;
see experiments/README.md for what each command reproduces and where results land.

Modules: :mod:`experiments.run` (Hydra entry), :mod:`experiments.plan` (config -> plan),
:mod:`experiments.cells` (per-cell process isolation), :mod:`experiments.worker` (the cell process),
:mod:`experiments.isolation` (the one runner of isolated worker processes, ParityBench's too),
:mod:`experiments.units` (the one resume rule and time-limit record of a unit of work: a cell, a ParityBench stage),
:mod:`experiments.compilers` (the approaches compared; ParityBench's stages compile through it too), :mod:`experiments.measure` (timing),
:mod:`experiments.compare` (the one output comparator, also ParityBench's, models.timing's and the
tests'), :mod:`experiments.runners` (one per kind of measurement), :mod:`experiments.results` (run
directories), :mod:`experiments.plot` (figures from CSVs), :mod:`experiments.estimate` (GPU run times from measured cells).
"""
