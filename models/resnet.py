# ruff: noqa: B006, B007, UP031, UP032  -- kept as the original authors wrote it (mutable defaults, % formatting)
"""ResNet-101 written the way torchvision v0.4.1 writes it (Table 1: ``ResNet``, image [BS, 3, 224, 224]).

The program follows torchvision's layout: ``conv3x3``/``conv1x1`` helpers, ``BasicBlock`` and
``Bottleneck`` with a class attribute ``expansion``, ``ResNet._make_layer`` that grows
``self.inplanes`` while it builds each stage, an optional ``norm_layer`` factory,
``replace_stride_with_dilation``, an ``isinstance`` loop over ``self.modules()`` for initialisation,
``out += identity`` in place and ``downsample`` that may be ``None``. One knob is ours:
``base_planes`` (64 in torchvision) so the smoke size can use the same code with tiny widths.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn as nn

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

__all__ = ["ResNet", "BasicBlock", "Bottleneck", "resnet18", "resnet50", "resnet101", "get_model", "get_input",
           "get_dynamic_inputs"]

DYNAMIC_KINDS = ("bs",)


def conv3x3(in_planes, out_planes, stride=1, groups=1, dilation=1):
    """3x3 convolution with padding"""
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride,
                     padding=dilation, groups=groups, bias=False, dilation=dilation)


def conv1x1(in_planes, out_planes, stride=1):
    """1x1 convolution"""
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    """Two 3x3 convolutions with an identity (or projected) shortcut."""

    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1,
                 base_width=64, dilation=1, norm_layer=None):
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        if groups != 1 or base_width != 64:
            raise ValueError('BasicBlock only supports groups=1 and base_width=64')
        if dilation > 1:
            raise NotImplementedError("Dilation > 1 not supported in BasicBlock")
        # Both self.conv1 and self.downsample layers downsample the input when stride != 1
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x

        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)

        out = self.conv2(out)
        out = self.bn2(out)

        if self.downsample is not None:
            identity = self.downsample(x)

        out += identity
        out = self.relu(out)

        return out


class Bottleneck(nn.Module):
    """1x1 reduce, 3x3, 1x1 expand (by ``expansion``), with an identity (or projected) shortcut."""

    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1,
                 base_width=64, dilation=1, norm_layer=None):
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        width = int(planes * (base_width / 64.)) * groups
        # Both self.conv2 and self.downsample layers downsample the input when stride != 1
        self.conv1 = conv1x1(inplanes, width)
        self.bn1 = norm_layer(width)
        self.conv2 = conv3x3(width, width, stride, groups, dilation)
        self.bn2 = norm_layer(width)
        self.conv3 = conv1x1(width, planes * self.expansion)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x

        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)

        out = self.conv2(out)
        out = self.bn2(out)
        out = self.relu(out)

        out = self.conv3(out)
        out = self.bn3(out)

        if self.downsample is not None:
            identity = self.downsample(x)

        out += identity
        out = self.relu(out)

        return out


class ResNet(nn.Module):
    """The ImageNet ResNet: stem, four stages built by ``_make_layer``, global pooling, classifier."""

    def __init__(self, block, layers, num_classes=1000, zero_init_residual=False,
                 groups=1, width_per_group=64, replace_stride_with_dilation=None,
                 norm_layer=None, base_planes=64):
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        self._norm_layer = norm_layer

        self.inplanes = base_planes
        self.dilation = 1
        if replace_stride_with_dilation is None:
            # each element in the tuple indicates if we should replace
            # the 2x2 stride with a dilated convolution instead
            replace_stride_with_dilation = [False, False, False]
        if len(replace_stride_with_dilation) != 3:
            raise ValueError("replace_stride_with_dilation should be None "
                             "or a 3-element tuple, got {}".format(replace_stride_with_dilation))
        self.groups = groups
        self.base_width = width_per_group
        self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3,
                               bias=False)
        self.bn1 = norm_layer(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, base_planes, layers[0])
        self.layer2 = self._make_layer(block, base_planes * 2, layers[1], stride=2,
                                       dilate=replace_stride_with_dilation[0])
        self.layer3 = self._make_layer(block, base_planes * 4, layers[2], stride=2,
                                       dilate=replace_stride_with_dilation[1])
        self.layer4 = self._make_layer(block, base_planes * 8, layers[3], stride=2,
                                       dilate=replace_stride_with_dilation[2])
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(base_planes * 8 * block.expansion, num_classes)

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode='fan_out', nonlinearity='relu')
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

        # Zero-initialize the last BN in each residual branch,
        # so that the residual branch starts with zeros, and each residual block behaves like an identity.
        if zero_init_residual:
            for m in self.modules():
                if isinstance(m, Bottleneck):
                    nn.init.constant_(m.bn3.weight, 0)
                elif isinstance(m, BasicBlock):
                    nn.init.constant_(m.bn2.weight, 0)

    def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
        norm_layer = self._norm_layer
        downsample = None
        previous_dilation = self.dilation
        if dilate:
            self.dilation *= stride
            stride = 1
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                conv1x1(self.inplanes, planes * block.expansion, stride),
                norm_layer(planes * block.expansion),
            )

        layers = []
        layers.append(block(self.inplanes, planes, stride, downsample, self.groups,
                            self.base_width, previous_dilation, norm_layer))
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes, groups=self.groups,
                                base_width=self.base_width, dilation=self.dilation,
                                norm_layer=norm_layer))

        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.conv1(x)
        x = self.bn1(x)
        x = self.relu(x)
        x = self.maxpool(x)

        x = self.layer1(x)
        x = self.layer2(x)
        x = self.layer3(x)
        x = self.layer4(x)

        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        x = self.fc(x)

        return x


def _resnet(arch, block, layers, **kwargs):
    model = ResNet(block, layers, **kwargs)
    return model


def resnet18(**kwargs):
    """ResNet-18 (BasicBlock, [2, 2, 2, 2])."""
    return _resnet('resnet18', BasicBlock, [2, 2, 2, 2], **kwargs)


def resnet50(**kwargs):
    """ResNet-50 (Bottleneck, [3, 4, 6, 3])."""
    return _resnet('resnet50', Bottleneck, [3, 4, 6, 3], **kwargs)


def resnet101(**kwargs):
    """ResNet-101 (Bottleneck, [3, 4, 23, 3]), the paper's configuration."""
    return _resnet('resnet101', Bottleneck, [3, 4, 23, 3], **kwargs)


#: Image side and constructor per size. Smoke: the same Bottleneck code, two blocks per stage,
#: widths 1/8 of ResNet-101's, a 64x64 image, ten classes.
IMAGE_SIZE = {"paper": 224, "smoke": 64}


def get_model(size: str = "paper", seed: int = 0) -> nn.Module:
    """ResNet-101 (``paper``) or a two-blocks-per-stage Bottleneck ResNet at 1/8 width (``smoke``)."""
    check_size(size)
    with seeded(seed):
        if size == "paper":
            model = resnet101()
        else:
            model = _resnet('resnet_smoke', Bottleneck, [2, 2, 2, 2], num_classes=10, base_planes=8)
    return model.eval()


def get_input(batch_size: int = 1, size: str = "paper", seed: int = 0, **kw: Any) -> tuple[list, dict]:
    """``([image [BS, 3, H, H]], {})`` with H = 224 (paper) or 64 (smoke)."""
    check_size(size)
    check_batch_size(batch_size)
    if kw:
        raise ValueError(f"unexpected keyword arguments for resnet.get_input: {sorted(kw)}")
    side = IMAGE_SIZE[size]
    return [torch.randn(batch_size, 3, side, side, generator=generator(seed))], {}


def get_dynamic_inputs(batch_size: int = 8, n: int = 10, size: str = "paper", kind: str = "bs",
                       seed: int = 0, bs_range=BS_RANGE) -> list[tuple[list, dict]]:
    """``n`` inputs whose batch size is drawn uniformly from ``bs_range`` ([2, 16]; ``resnet-bs``, paper §8.5).

    ``batch_size`` is not used: for kind ``bs`` the batch size is what varies.
    """
    check_kind(kind, DYNAMIC_KINDS, "resnet")
    check_count(n)
    sizes = uniform_ints(generator(seed), *check_range(bs_range, "bs_range"), n)
    return [get_input(bs, size, seed=seed + 1 + i) for i, bs in enumerate(sizes)]
