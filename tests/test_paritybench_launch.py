"""Sharding a ParityBench run over submitit jobs (``--launcher``), with submitit's local
executor standing in for Slurm: one job per shard into one run directory, the tables merged from
every file's log, and a rerun that resumes only what is unfinished."""
from __future__ import annotations

import csv
import json
import shutil
import textwrap
from pathlib import Path

import pytest

from paritybench.cli import main
from paritybench.launch import shards_of

TINY = """
import torch
class Twice(torch.nn.Module):
    def forward(self, x):
        return x * {k}
TESTCASES = [(Twice, lambda: ([], {{}}), lambda: ([torch.ones(2)], {{}}), False)]
"""


def _corpus(root: Path, n: int) -> Path:
    d = root / "corpus"
    d.mkdir()
    for k in range(n):
        (d / f"test_p{k}_tiny.py").write_text(textwrap.dedent(TINY.format(k=k + 2)))
    return d


def _files_in_cases(out: Path) -> set[str]:
    with open(out / "cases.csv") as f:
        return {row["file"] for row in csv.DictReader(f)}


def test_shards_are_round_robin_and_never_empty():
    assert shards_of(["a", "b", "c", "d", "e"], 2) == [["a", "c", "e"], ["b", "d"]]
    assert shards_of(["a"], 4) == [["a"]]


@pytest.mark.slow
def test_local_launcher_runs_one_job_per_shard_and_a_rerun_resumes(tmp_path, capsys):
    corpus, out = _corpus(tmp_path, 3), tmp_path / "run"
    argv = ["run", "--dir", str(corpus), "--compilers", "magpy", "--jobs", "1", "--out", str(out),
            "--launcher", "local", "--shards", "2", "--timeout", "60"]
    assert main(argv) == 0
    first = json.loads((out / "launcher.json").read_text())
    assert len(first["jobs"]) == 2 and sorted(first["shards"]) == [1, 2]
    assert len(_files_in_cases(out)) == 3
    # one file's results lost: the same command runs only that file, in one job, and merges all three
    (out / "files" / "test_p1_tiny.jsonl").unlink()
    capsys.readouterr()
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "3 files, 2 already finished, 1 to run in 1 local jobs" in err
    assert len(json.loads((out / "launcher.json").read_text())["jobs"]) == 1
    assert len(_files_in_cases(out)) == 3
    assert "MagPy" in (out / "table3.md").read_text()
    # nothing left: no job is submitted
    assert main(argv) == 0
    assert "0 to run" in capsys.readouterr().err


def test_slurm_launcher_without_slurm_is_a_one_line_error(tmp_path, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    corpus = _corpus(tmp_path, 1)
    with pytest.raises(SystemExit) as e:
        main(["run", "--dir", str(corpus), "--compilers", "magpy", "--out", str(tmp_path / "run"),
              "--launcher", "slurm"])
    assert "no sbatch on PATH" in str(e.value)
