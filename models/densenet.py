# ruff: noqa: B006, B007, UP031, UP032  -- kept as the original authors wrote it (mutable defaults, % formatting)
"""DenseNet-121 written the way torchvision v0.4.1 writes it (Table 1: ``DenseNet``, image [BS, 3, 224, 224]).

The Python features that made other compilers split this program are kept:

* ``_DenseLayer`` is an ``nn.Sequential`` filled with ``add_module`` (the statements end in stray
  commas, as in torchvision) whose ``forward`` takes ``*prev_features`` varargs;
* ``_bn_function_factory`` returns a closure that concatenates its varargs and runs
  norm/relu/conv captured from the enclosing scope;
* ``memory_efficient`` selects ``torch.utils.checkpoint`` through a generator expression over the
  inputs' ``requires_grad`` (short-circuited when the flag is off, the torchvision default);
* ``_DenseBlock.forward`` iterates ``self.named_children()`` and calls each layer with the growing
  Python list of features spread as arguments, then ``torch.cat`` over the list;
* the feature extractor is an ``nn.Sequential(OrderedDict(...))`` extended in a loop.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint as cp

from models._common import (
    BS_RANGE,
    check_batch_size,
    check_count,
    check_kind,
    check_range,
    check_size,
    generator,
    seeded,
    uniform_ints,
)

__all__ = ["DenseNet", "densenet121", "get_model", "get_input", "get_dynamic_inputs"]

DYNAMIC_KINDS = ("bs",)


def _bn_function_factory(norm, relu, conv):
    def bn_function(*inputs):
        concated_features = torch.cat(inputs, 1)
        bottleneck_output = conv(relu(norm(concated_features)))
        return bottleneck_output

    return bn_function


class _DenseLayer(nn.Sequential):
    def __init__(self, num_input_features, growth_rate, bn_size, drop_rate, memory_efficient=False):
        super().__init__()
        self.add_module('norm1', nn.BatchNorm2d(num_input_features)),
        self.add_module('relu1', nn.ReLU(inplace=True)),
        self.add_module('conv1', nn.Conv2d(num_input_features, bn_size * growth_rate,
                                           kernel_size=1, stride=1, bias=False)),
        self.add_module('norm2', nn.BatchNorm2d(bn_size * growth_rate)),
        self.add_module('relu2', nn.ReLU(inplace=True)),
        self.add_module('conv2', nn.Conv2d(bn_size * growth_rate, growth_rate,
                                           kernel_size=3, stride=1, padding=1, bias=False)),
        self.drop_rate = drop_rate
        self.memory_efficient = memory_efficient

    def forward(self, *prev_features):
        bn_function = _bn_function_factory(self.norm1, self.relu1, self.conv1)
        if self.memory_efficient and any(prev_feature.requires_grad for prev_feature in prev_features):
            # use_reentrant is passed only because current torch insists on the choice.
            bottleneck_output = cp.checkpoint(bn_function, *prev_features, use_reentrant=False)
        else:
            bottleneck_output = bn_function(*prev_features)
        new_features = self.conv2(self.relu2(self.norm2(bottleneck_output)))
        if self.drop_rate > 0:
            new_features = F.dropout(new_features, p=self.drop_rate,
                                     training=self.training)
        return new_features


class _DenseBlock(nn.Module):
    def __init__(self, num_layers, num_input_features, bn_size, growth_rate, drop_rate, memory_efficient=False):
        super().__init__()
        for i in range(num_layers):
            layer = _DenseLayer(
                num_input_features + i * growth_rate,
                growth_rate=growth_rate,
                bn_size=bn_size,
                drop_rate=drop_rate,
                memory_efficient=memory_efficient,
            )
            self.add_module('denselayer%d' % (i + 1), layer)

    def forward(self, init_features):
        features = [init_features]
        for name, layer in self.named_children():
            new_features = layer(*features)
            features.append(new_features)
        return torch.cat(features, 1)


class _Transition(nn.Sequential):
    def __init__(self, num_input_features, num_output_features):
        super().__init__()
        self.add_module('norm', nn.BatchNorm2d(num_input_features))
        self.add_module('relu', nn.ReLU(inplace=True))
        self.add_module('conv', nn.Conv2d(num_input_features, num_output_features,
                                          kernel_size=1, stride=1, bias=False))
        self.add_module('pool', nn.AvgPool2d(kernel_size=2, stride=2))


class DenseNet(nn.Module):
    r"""Densenet-BC model class, based on
    "Densely Connected Convolutional Networks" (Huang et al., CVPR 2017).

    Args:
        growth_rate (int) - how many filters to add each layer (`k` in paper)
        block_config (list of 4 ints) - how many layers in each pooling block
        num_init_features (int) - the number of filters to learn in the first convolution layer
        bn_size (int) - multiplicative factor for number of bottle neck layers
          (i.e. bn_size * k features in the bottleneck layer)
        drop_rate (float) - dropout rate after each dense layer
        num_classes (int) - number of classification classes
        memory_efficient (bool) - If True, uses checkpointing. Much more memory efficient,
          but slower. Default: *False*.
    """

    def __init__(self, growth_rate=32, block_config=(6, 12, 24, 16),
                 num_init_features=64, bn_size=4, drop_rate=0, num_classes=1000, memory_efficient=False):

        super().__init__()

        # First convolution
        self.features = nn.Sequential(OrderedDict([
            ('conv0', nn.Conv2d(3, num_init_features, kernel_size=7, stride=2,
                                padding=3, bias=False)),
            ('norm0', nn.BatchNorm2d(num_init_features)),
            ('relu0', nn.ReLU(inplace=True)),
            ('pool0', nn.MaxPool2d(kernel_size=3, stride=2, padding=1)),
        ]))

        # Each denseblock
        num_features = num_init_features
        for i, num_layers in enumerate(block_config):
            block = _DenseBlock(
                num_layers=num_layers,
                num_input_features=num_features,
                bn_size=bn_size,
                growth_rate=growth_rate,
                drop_rate=drop_rate,
                memory_efficient=memory_efficient
            )
            self.features.add_module('denseblock%d' % (i + 1), block)
            num_features = num_features + num_layers * growth_rate
            if i != len(block_config) - 1:
                trans = _Transition(num_input_features=num_features,
                                    num_output_features=num_features // 2)
                self.features.add_module('transition%d' % (i + 1), trans)
                num_features = num_features // 2

        # Final batch norm
        self.features.add_module('norm5', nn.BatchNorm2d(num_features))

        # Linear layer
        self.classifier = nn.Linear(num_features, num_classes)

        # Official init from torch repo.
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
            elif isinstance(m, nn.Linear):
                nn.init.constant_(m.bias, 0)

    def forward(self, x):
        features = self.features(x)
        out = F.relu(features, inplace=True)
        out = F.adaptive_avg_pool2d(out, (1, 1))
        out = torch.flatten(out, 1)
        out = self.classifier(out)
        return out


def _densenet(arch, growth_rate, block_config, num_init_features, **kwargs):
    model = DenseNet(growth_rate, block_config, num_init_features, **kwargs)
    return model


def densenet121(**kwargs):
    r"""Densenet-121 model from "Densely Connected Convolutional Networks"."""
    return _densenet('densenet121', 32, (6, 12, 24, 16), 64, **kwargs)


#: Smoke: the same code with growth rate 4, blocks of (2, 3, 2, 2) layers, 8 initial features,
#: a 32x32 image and ten classes.
IMAGE_SIZE = {"paper": 224, "smoke": 32}


def get_model(size: str = "paper", seed: int = 0) -> nn.Module:
    """DenseNet-121 (``paper``) or a four-block DenseNet-BC with growth rate 4 (``smoke``)."""
    check_size(size)
    with seeded(seed):
        if size == "paper":
            model = densenet121()
        else:
            model = _densenet('densenet_smoke', 4, (2, 3, 2, 2), 8, bn_size=2, num_classes=10)
    return model.eval()


def get_input(batch_size: int = 1, size: str = "paper", seed: int = 0, **kw: Any) -> tuple[list, dict]:
    """``([image [BS, 3, H, H]], {})`` with H = 224 (paper) or 32 (smoke)."""
    check_size(size)
    check_batch_size(batch_size)
    if kw:
        raise ValueError(f"unexpected keyword arguments for densenet.get_input: {sorted(kw)}")
    side = IMAGE_SIZE[size]
    return [torch.randn(batch_size, 3, side, side, generator=generator(seed))], {}


def get_dynamic_inputs(batch_size: int = 8, n: int = 10, size: str = "paper", kind: str = "bs",
                       seed: int = 0, bs_range=BS_RANGE) -> list[tuple[list, dict]]:
    """``n`` inputs whose batch size is drawn uniformly from ``bs_range`` ([2, 16]; ``densenet-bs``, paper §8.5).

    ``batch_size`` is not used: for kind ``bs`` the batch size is what varies.
    """
    check_kind(kind, DYNAMIC_KINDS, "densenet")
    check_count(n)
    sizes = uniform_ints(generator(seed), *check_range(bs_range, "bs_range"), n)
    return [get_input(bs, size, seed=seed + 1 + i) for i, bs in enumerate(sizes)]
