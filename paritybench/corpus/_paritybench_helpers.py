"""Helpers that ParityBench-format files import: ``from _paritybench_helpers import ...``.

Written for this project; it offers the names generated ParityBench files use, so that both
our corpus and a user's ParityBench checkout without its own helper module can load:

* ``_mock_config(**kw)``: a config object whose keys read as attributes (``cfg.dim``),
  standing in for the argparse/YAML configs real projects are built from;
* ``_mock_layer(in_features=None, out_features=None, bias=True)``: a small layer to pass
  where a project's constructor wants a sub-module;
* ``patch_functional()``: makes old ``torch.nn.functional`` spellings that a project may
  call still resolve on this torch (each to its current equivalent);
* ``_fails_compile()`` and ``_paritybench_base``: the decorator and unittest base class
  generated files reference in their ``unittest`` section.

This file must stay importable without anything but torch: the runner loads it into
``sys.modules`` before a test file runs.
"""

import os
import unittest

import torch
import torch.nn.functional as F


class _mock_config(dict):
    """A dict whose keys are also attributes; a missing key raises AttributeError.

    >>> cfg = _mock_config(dim=4, act="relu")
    >>> cfg.dim, cfg["act"]
    (4, 'relu')
    """

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name, value):
        self[name] = value


def _mock_layer(in_features=None, out_features=None, bias=True):
    """A Linear layer when both sizes are given, else a ReLU: any sub-module will do."""
    if in_features and out_features:
        return torch.nn.Linear(in_features, out_features, bias)
    return torch.nn.ReLU()


def _old_upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    return F.interpolate(input, size, scale_factor, mode, align_corners)


def _old_upsample_nearest(input, size=None, scale_factor=None):
    return F.interpolate(input, size, scale_factor, mode="nearest")


def _old_upsample_bilinear(input, size=None, scale_factor=None):
    return F.interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# Deprecated spellings and what they mean today; only the ones this torch lacks get added.
_FUNCTIONAL_ALIASES = {
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "upsample": _old_upsample,
    "upsample_nearest": _old_upsample_nearest,
    "upsample_bilinear": _old_upsample_bilinear,
}


def patch_functional():
    """Give ``torch.nn.functional`` the deprecated names it no longer has. Idempotent."""
    for name, fn in _FUNCTIONAL_ALIASES.items():
        if not hasattr(F, name):
            setattr(F, name, fn)


def _fails_compile():
    """Decorator for tests expected to fail under torch.jit; they run when TEST_ALL is set."""
    if os.environ.get("TEST_ALL"):
        return lambda fn: fn
    return unittest.skip("known to fail under torch.jit.script")


class _paritybench_base(unittest.TestCase):
    """unittest base of generated files: ``_check`` runs one case eagerly and under TorchScript."""

    def _check(self, module_class, get_init_args, get_forward_args, compiles=True):
        args, kwargs = get_init_args()
        module = module_class(*args, **kwargs)
        module.eval()
        fargs, fkwargs = get_forward_args()
        first = module(*fargs, **fkwargs)
        second = module(*fargs, **fkwargs)
        torch.testing.assert_close(first, second)
        scripted = torch.jit.script(module)
        torch.testing.assert_close(scripted(*fargs, **fkwargs), second)
