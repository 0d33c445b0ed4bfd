"""The environment the numbers were measured in is pinned, and every way to build one uses the pins.

``requirements.lock`` is the full closure (``pip freeze`` of the measuring venv, CPython 3.11);
``./reproduce.sh setup`` passes it to every pip install as constraints (without its torch line:
torch is installed or kept explicitly), and ``docker/Dockerfile`` and ``environment.yml`` use it.
"""

from __future__ import annotations

import importlib.metadata as md
import os
import re
import site
import subprocess
import sys
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements.lock"
#: What pip freeze never lists, and the project itself (installed editable, not pinned).
_NOT_FROZEN = {"pip", "setuptools", "wheel", "distribute", "magpy"}


def _lock() -> dict[str, Requirement]:
    pins = {}
    for line in LOCK.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            req = Requirement(line)
            (spec,) = req.specifier  # exactly one pin per package
            assert spec.operator == "==" and req.marker is not None, line
            pins[canonicalize_name(req.name)] = req
    return pins


def _torch_closure(pins: dict[str, Requirement]) -> set[str]:
    """What torch pulls in that the (CPU) measuring venv did not have: the CUDA wheel's nvidia-*,
    triton...; torch pins those itself."""
    seen, todo = set(), ["torch"]
    while todo:
        try:
            requires = md.requires(todo.pop()) or []
        except md.PackageNotFoundError:
            continue
        for text in requires:
            name = canonicalize_name(Requirement(text).name)
            if name not in seen and name not in pins:
                seen.add(name)
                todo.append(name)
    return seen


def test_the_lock_pins_every_installed_package_at_its_version() -> None:
    pins = _lock()
    assert {"torch", "numpy", "sympy", "tokenizers", "omegaconf", "huggingface-hub", "transformers"} <= set(pins)
    assert str(pins["torch"].specifier) == "==2.13.0"  # no local label: PyPI's wheel satisfies it
    applies = [req.marker.evaluate() for req in pins.values()]
    if sys.version_info[:2] != (3, 11):  # the lock describes CPython 3.11: elsewhere none of it applies
        assert not any(applies), default_environment()["python_version"]
        return
    assert all(applies)
    extra = _torch_closure(pins)
    # what pip freeze lists: the site-packages folders (not a vendored copy another import put on
    # sys.path, such as setuptools/_vendor)
    installed = {Path(p).resolve() for p in (*site.getsitepackages(), site.getusersitepackages())}
    unpinned, other, seen = [], [], set()
    for dist in md.distributions():  # in sys.path order: the first of a name is the one imported
        name = canonicalize_name(dist.metadata["Name"])
        if name in seen or name in _NOT_FROZEN or name in extra or Path(dist.locate_file("")).resolve() not in installed:
            continue
        seen.add(name)
        if name not in pins:
            unpinned.append(f"{name}=={dist.version}")
        elif not pins[name].specifier.contains(dist.version.split("+")[0], prereleases=True):
            other.append(f"{name}=={dist.version} (lock: {pins[name].specifier})")
    assert not unpinned and not other, f"not in requirements.lock: {unpinned}; other version: {other}"


def test_setup_passes_the_lock_without_its_torch_line(tmp_path: Path) -> None:
    """An existing venv (here: this interpreter behind a stand-in) with the project installed:
    ``setup`` writes the constraints every pip install gets and installs nothing."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")
    (venv / "bin" / "python").chmod(0o755)
    (venv / ".magpy-installed").touch()
    proc = subprocess.run([str(ROOT / "reproduce.sh"), "setup"], env={**os.environ, "MAGPY_VENV": str(venv)},
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0 and "environment ready" in proc.stdout, proc.stderr
    lock = LOCK.read_text().splitlines()
    assert (venv / ".magpy-constraints.txt").read_text().splitlines() == [x for x in lock if not x.startswith("torch==")]
    script = (ROOT / "reproduce.sh").read_text()
    installs = [line for line in script.splitlines() if "pip install" in line and not line.lstrip().startswith("#")]
    assert installs and all('-c "$CONSTRAINTS"' in line or "--no-index" in line for line in installs), installs
    assert 'LOCK="$ROOT/requirements.lock"' in script
    # the wheels gpu-wheels downloads for machines without internet are the locked versions
    pins = _lock()
    for name, version in re.findall(r"([A-Za-z0-9_.-]+)==([0-9][^\s]*)", script.split("gpu-wheels", 2)[2].split("fi\n", 1)[0]):
        assert str(pins[canonicalize_name(name)].specifier) == f"=={version}", name


def test_docker_and_conda_use_the_lock_and_the_cuda_torch_was_built_for() -> None:
    dockerfile = (ROOT / "docker" / "Dockerfile").read_text()
    conda = (ROOT / "environment.yml").read_text()
    assert "./reproduce.sh setup" in dockerfile and "-c requirements.lock" in dockerfile
    assert "- -c requirements.lock" in conda and "- torch==2.13.0" in conda
    # the README says PyPI's torch 2.13.0 reads 2.13.0+cuXYZ; the image's CUDA toolkit is that version
    (cuda,) = set(re.findall(r"2\.13\.0\+cu(\d+)", (ROOT / "README.md").read_text()))
    image = re.search(r"^FROM nvidia/cuda:(\d+)\.(\d+)\.[^\s@]+@sha256:[0-9a-f]{64}$", dockerfile, re.M)
    assert image and f"{image[1]}{image[2]}" == cuda, (image and image[0], cuda)
    # the image's CPython is the exact version conda pins (the one the lock was measured on), installed by a
    # pinned uv, never "the latest 3.11.x" of a PPA
    (conda_python,) = re.findall(r"^\s*- python=(\d+\.\d+\.\d+)\b", conda, re.M)
    assert re.search(rf"^ARG PYTHON_VERSION={re.escape(conda_python)}$", dockerfile, re.M), conda_python
    assert re.search(r"^ARG UV_VERSION=\d+\.\d+\.\d+$", dockerfile, re.M) and "deadsnakes" not in dockerfile
