"""The settings the experiments' README quotes are the ones its configs set: a number written in
prose is read back from the YAML it describes, so an edit of one without the other fails here."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "experiments" / "README.md").read_text()


def _smoke_plan(experiment: str) -> dict:
    conf = yaml.safe_load((ROOT / "experiments" / "conf" / "experiment" / f"{experiment}.yaml").read_text())
    return conf["experiment"]["plan"]["smoke"]


def test_fig17_inputs_per_stream_at_smoke_size():
    quoted = re.search(r"(\d+) inputs per stream at smoke size", README)
    assert quoted is not None, "experiments/README.md no longer says how many inputs fig17's smoke streams have"
    assert int(quoted.group(1)) == _smoke_plan("fig17")["n_inputs"]


def test_fig15_batch_sizes_at_smoke_size():
    quoted = re.search(r"\| fig15 \|[^|]*\(batch size (\d+) only at smoke size\)", README)
    assert quoted is not None, "experiments/README.md no longer says which batch size fig15's smoke run uses"
    assert [int(quoted.group(1))] == list(_smoke_plan("fig15")["bs"])


def test_magpys_dynamic_shapes_are_described_as_lifting():
    """MagPy lifts the sizes that change (magpy.monitor.scalars); the README may not say it has none."""
    assert "no dynamic shapes" not in README
    assert "lifts" in README
