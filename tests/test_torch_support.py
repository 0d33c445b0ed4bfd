"""The supported torch range (magpy.torch_support): declared once, checked at import, and the
torch details that differ between the supported versions."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import magpy
from magpy import torch_support
from magpy.torch_support import SUPPORTED, UnsupportedTorch, autograd_function_class, check_torch

ROOT = Path(__file__).resolve().parent.parent


def test_installed_torch_is_supported():
    check_torch()
    assert torch_support.supported(torch.__version__)


@pytest.mark.parametrize("version", ["2.9.0", "2.13.0", "2.14.1+cu130", "2.10.0a0+git1234abc"])
def test_supported_versions_pass(version):
    check_torch(version)


@pytest.mark.parametrize("version", ["2.8.1", "2.15.0", "3.0.0", "1.13.1+cpu"])
def test_unsupported_version_names_both(version, monkeypatch):
    monkeypatch.delenv(torch_support.ALLOW_ENV, raising=False)
    with pytest.raises(UnsupportedTorch) as info:
        check_torch(version)
    message = str(info.value)
    assert f"torch {version} is installed" in message
    assert "2.9 to 2.14" in message and "torch>=2.9,<2.15" in message
    assert "\n" not in message


def test_unsupported_version_allowed_by_env(monkeypatch):
    monkeypatch.setenv(torch_support.ALLOW_ENV, "1")
    with pytest.warns(RuntimeWarning, match="torch 2.15.0 is installed"):
        check_torch("2.15.0")


def test_import_magpy_on_unsupported_torch_says_so():
    # A fresh interpreter whose torch reports a version outside the range: `import magpy` stops
    # with the one message, before any module touches torch internals.
    code = "import torch; torch.__version__ = '2.15.0'; import magpy"
    env = {k: v for k, v in os.environ.items() if k != torch_support.ALLOW_ENV}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("magpy.torch_support.UnsupportedTorch: MagPy supports torch 2.9 to 2.14"), proc.stderr
    assert "torch 2.15.0 is installed" in last


def test_pyproject_declares_the_same_range():
    text = (ROOT / "pyproject.toml").read_text()
    deps = re.search(r"^dependencies = \[(.*?)\]", text, re.MULTILINE | re.DOTALL).group(1)
    (lo_major, lo_minor), (hi_major, hi_minor) = SUPPORTED
    assert f'"torch>={lo_major}.{lo_minor},<{hi_major}.{hi_minor + 1}"' in deps


class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


class OwnApply(torch.autograd.Function):
    @classmethod
    def apply(cls, x):   # its own code: runs monitored as plain Python, not as a custom Function
        return x + 1


def test_autograd_function_apply_recognised():
    assert autograd_function_class(Double.apply, []) is Double
    assert autograd_function_class(OwnApply.apply, []) is None
    assert autograd_function_class(torch.relu, []) is None
    assert autograd_function_class(Double.forward, []) is None


def test_custom_function_compiles_and_matches_eager():
    def f(x):
        return Double.apply(x) + 1

    compiled = magpy.compile(f)
    x = torch.randn(4)
    for _ in range(2):
        assert torch.equal(compiled(x), f(x))
    assert magpy.explain(f)(x).graph_count == 1


def test_last_node_of_an_fx_graph():
    graph = torch.fx.Graph()
    assert torch_support.last_node(graph) is None
    x = graph.placeholder("x")
    assert torch_support.last_node(graph) is x
    y = graph.call_function(torch.relu, (x,))
    assert torch_support.last_node(graph) is y
