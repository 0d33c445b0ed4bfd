"""Command line: ``python -m paritybench run|table3|report``.

    python -m paritybench run    [--dir PATH] [flags]   # default PATH: our corpus
    python -m paritybench table3 [flags]                # PATH from $PARITYBENCH_DIR
    python -m paritybench zoo    [--models a,b] [--train] [flags]   # the transformers model zoo
    python -m paritybench report --out DIR              # rewrite the tables of a finished run

Flags: ``--compilers magpy,dynamo,torchscript --jobs N --limit K --filter TEXT --timeout S
--out DIR | --run-id ID --backend eager|inductor --calls N --memory-gb G --seed N --fresh``, and
``--launcher slurm|local --shards N`` to run shards as submitit jobs (:mod:`paritybench.launch`).
Results go to ``results/table3/<run-id>/`` (run id by default ``<dir name>-<backend>``; the
zoo's go to ``results/zoo/transformers-<version>-<backend>[-train]/``); a rerun with the same
flags resumes where the last one stopped.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .evaluate import ALL_COMPILERS, BACKENDS, RunConfig
from .launch import LAUNCHERS, LaunchOptions, launch
from .loader import CORPUS_DIR
from .report import write_reports
from .runner import RunConfigMismatch, RunOptions, refuse_foreign, run

RESULTS_ROOT = Path(__file__).resolve().parent.parent / "results" / "table3"
ZOO_ROOT = RESULTS_ROOT.parent / "zoo"
PARITYBENCH_HINT = (
    "set PARITYBENCH_DIR to the generated/ directory of ParityBench: "
    "git clone https://github.com/jansel/pytorch-jit-paritybench and use its generated/ folder "
    "(the paper used commit b219ee7), e.g. PARITYBENCH_DIR=$PWD/pytorch-jit-paritybench/generated"
)


def _compilers(text: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in ALL_COMPILERS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown compiler(s) {unknown or text!r}; choose from {','.join(ALL_COMPILERS)}")
    return names


def _add_run_flags(p: argparse.ArgumentParser, dir_help: str) -> None:
    p.add_argument("--dir", type=Path, default=None, help=dir_help)
    p.add_argument("--compilers", type=_compilers, default=ALL_COMPILERS, help="comma-separated (default: all three)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="files run in parallel (default: CPU count)")
    p.add_argument("--limit", type=int, default=None, help="only the first K files (sorted by name)")
    p.add_argument("--filter", dest="name_filter", default=None, help="only cases whose 'file::class' contains this text")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds one stage (eager or one compiler) may take")
    p.add_argument("--out", type=Path, default=None, help="run directory (default: results/table3/<run-id>)")
    p.add_argument("--run-id", default=None, help="name of the run directory under results/table3/")
    p.add_argument("--backend", choices=BACKENDS, default="eager", help="backend for MagPy and TorchDynamo")
    p.add_argument("--calls", type=int, default=3, help="calls per compiled module (default 3)")
    p.add_argument("--memory-gb", type=float, default=8.0, help="address-space cap per worker, 0 for none")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--grad", action="store_true", help="run with autograd on (default: under torch.no_grad())")
    p.add_argument("--fresh", action="store_true", help="discard earlier results in the run directory")
    p.add_argument("--launcher", choices=("none", *LAUNCHERS), default="none",
                   help="shard the run over submitit jobs: slurm, or local (this machine); default: none")
    p.add_argument("--shards", type=int, default=4, help="jobs for --launcher (files split round robin)")
    p.add_argument("--partition", default=None, help="Slurm partition for --launcher slurm")
    p.add_argument("--job-timeout-min", type=int, default=600, help="time limit of one --launcher job, minutes")
    p.add_argument("--job-mem-gb", type=float, default=32.0, help="memory of one --launcher slurm job")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m paritybench", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    _add_run_flags(sub.add_parser("run", help="run a directory of ParityBench-format files"), "default: paritybench/corpus")
    _add_run_flags(sub.add_parser("table3", help="run $PARITYBENCH_DIR and write Table 3"), "default: $PARITYBENCH_DIR")
    zoo = sub.add_parser("zoo", help="run every base model type of the installed transformers (paritybench.zoo)")
    _add_run_flags(zoo, "unused: the zoo writes its programs into <out>/programs")
    zoo.add_argument("--models", default=None,
                     help="comma-separated model types (default: every base model type of transformers)")
    zoo.add_argument("--train", action="store_true",
                     help="a training step per call (train mode, backward, optimizer step) instead of inference")
    rep = sub.add_parser("report", help="rewrite cases.csv/table3/failures of a run directory")
    rep.add_argument("--out", type=Path, required=True)
    return parser


def _zoo_options(args: argparse.Namespace) -> RunOptions:
    """The zoo's run: one generated program per model type in ``<out>/programs``."""
    try:
        import transformers

        from .zoo import base_model_types, write_programs
    except ImportError as exc:
        raise SystemExit(f"paritybench zoo: needs transformers ({exc}); run ./reproduce.sh setup") from None
    if args.dir is not None:
        raise SystemExit("paritybench zoo: --dir is not used (the zoo's programs are generated); use --out")
    known = base_model_types()
    chosen = known
    if args.models is not None:
        chosen = [m.strip() for m in args.models.split(",") if m.strip()]
        if not chosen:
            raise SystemExit("paritybench zoo: --models names no model type (leave it out for every type)")
        unknown = [m for m in chosen if m not in known]
        if unknown:
            raise SystemExit(f"paritybench zoo: unknown model type(s) {unknown}; transformers "
                             f"{transformers.__version__} has {len(known)} base model types, e.g. {known[:5]}")
    suffix = "-train" if args.train else ""
    out = (args.out or ZOO_ROOT / (args.run_id or f"transformers-{transformers.__version__}-{args.backend}{suffix}"))
    out = out.resolve()
    config = RunConfig(compilers=args.compilers, backend=args.backend, calls=args.calls, seed=args.seed,
                       no_grad=not (args.grad or args.train), train=args.train)
    opts = RunOptions(directory=out / "programs", out=out, config=config, jobs=args.jobs, limit=args.limit,
                      name_filter=args.name_filter, timeout_s=args.timeout, memory_gb=args.memory_gb,
                      fresh=args.fresh, suite="zoo")
    if args.jobs < 1 or (args.limit is not None and args.limit < 1) or args.timeout <= 0:
        raise ValueError(f"jobs and limit must be at least 1 and timeout positive (got {args.jobs}, {args.limit}, "
                         f"{args.timeout})")
    try:
        refuse_foreign(opts)   # (before the programs are written: a refused run changes nothing)
    except RunConfigMismatch as exc:
        raise SystemExit(f"paritybench: {exc}") from None
    write_programs(opts.directory, chosen)
    return opts


def _options(args: argparse.Namespace) -> RunOptions:
    if args.command == "zoo":
        return _zoo_options(args)
    directory, origin = args.dir, "--dir"
    if directory is None and args.command == "table3":
        env = os.environ.get("PARITYBENCH_DIR")
        if not env:
            raise SystemExit(f"paritybench table3: PARITYBENCH_DIR is not set; {PARITYBENCH_HINT}")
        directory, origin = Path(env), "PARITYBENCH_DIR"
    if directory is None:
        directory, origin = CORPUS_DIR, "our corpus"
    directory = directory.expanduser().resolve()
    if not directory.is_dir():
        hint = f"; {PARITYBENCH_HINT}" if origin == "PARITYBENCH_DIR" else ""
        raise SystemExit(f"paritybench: {origin} names {directory}, which is not a directory{hint}")
    config = RunConfig(
        compilers=args.compilers, backend=args.backend, calls=args.calls, seed=args.seed, no_grad=not args.grad
    )
    out = args.out or RESULTS_ROOT / (args.run_id or f"{directory.name}-{args.backend}")
    return RunOptions(
        directory=directory,
        out=out.resolve(),
        config=config,
        jobs=args.jobs,
        limit=args.limit,
        name_filter=args.name_filter,
        timeout_s=args.timeout,
        memory_gb=args.memory_gb,
        fresh=args.fresh,
    )


def main(argv: list[str] | None = None) -> int:
    """Run the command line; bad flags (exit status 2), a bad directory or a foreign run directory (1)
    and Ctrl-C (130; SIGTERM too under ``python -m paritybench``) end with one line."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("paritybench: interrupted; finished files are kept and the same command resumes", file=sys.stderr)
        return 130


def _main(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "report":
        if not (args.out / "files").is_dir():
            raise SystemExit(f"paritybench report: {args.out} is not a run directory (no files/ inside)")
        write_reports(args.out)
        print((args.out / "table3.md").read_text())
        return 0
    try:
        opts = _options(args)
    except ValueError as exc:
        raise SystemExit(f"paritybench: {exc}") from None
    try:
        if args.launcher == "none":
            out = run(opts)
        else:
            out = launch(opts, LaunchOptions(launcher=args.launcher, shards=args.shards, partition=args.partition,
                                             timeout_min=args.job_timeout_min, mem_gb=args.job_mem_gb))
    except (RunConfigMismatch, FileNotFoundError, ValueError) as exc:
        raise SystemExit(f"paritybench: {exc}") from None
    write_reports(out)
    print((out / "table3.md").read_text())
    print(f"results: {out}", file=sys.stderr)
    return 0
