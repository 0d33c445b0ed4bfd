# ruff: noqa: B006, B007, UP031, UP032  -- kept as the original authors wrote it (mutable defaults, % formatting)
"""MonoDepth with a ResNet-18 encoder, in the style of OniroAI/MonoDepth-PyTorch (Table 1: ``MonoDepth``).

Image [BS, 3, 256, 256] in, four disparity maps (full, 1/2, 1/4 and 1/8 resolution) out as a list.

The Python features the original program relies on are kept:

* every conv/pool computes its own "same" padding in ``forward`` with ``int(np.floor(...))`` on a
  module attribute and pads with ``F.pad`` and a Python tuple;
* encoder blocks are built from small classes (``conv``, ``resconv_basic``, ``resblock_basic``)
  where a local flag (``do_proj``) picks the shortcut inside ``forward``;
* the decoder upsamples with ``nn.functional.interpolate(scale_factor=2)`` and concatenates skip
  connections and upsampled disparities with ``torch.cat``;
* ``forward`` stores each disparity as an attribute of the module (``self.disp1 = ...``), a side
  effect on the module that outlives the call, and then returns them in a list.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from models._common import check_batch_size, check_size, generator, seeded

__all__ = ["Resnet18_md", "get_model", "get_input"]


class conv(nn.Module):
    """Convolution, batch norm and ELU with the "same" padding computed at call time."""

    def __init__(self, num_in_layers, num_out_layers, kernel_size, stride):
        super().__init__()
        self.kernel_size = kernel_size
        self.conv_base = nn.Conv2d(num_in_layers, num_out_layers, kernel_size=kernel_size, stride=stride)
        self.normalize = nn.BatchNorm2d(num_out_layers)

    def forward(self, x):
        p = int(np.floor((self.kernel_size - 1) / 2))
        p2d = (p, p, p, p)
        x = self.conv_base(F.pad(x, p2d))
        x = self.normalize(x)
        return F.elu(x, inplace=True)


class convblock(nn.Module):
    """Two ``conv`` layers, the second one strided."""

    def __init__(self, num_in_layers, num_out_layers, kernel_size):
        super().__init__()
        self.conv1 = conv(num_in_layers, num_out_layers, kernel_size, 1)
        self.conv2 = conv(num_out_layers, num_out_layers, kernel_size, 2)

    def forward(self, x):
        x = self.conv1(x)
        return self.conv2(x)


class maxpool(nn.Module):
    """Max pooling with stride 2 and the same call-time padding rule as ``conv``."""

    def __init__(self, kernel_size):
        super().__init__()
        self.kernel_size = kernel_size

    def forward(self, x):
        p = int(np.floor((self.kernel_size - 1) / 2))
        p2d = (p, p, p, p)
        return F.max_pool2d(F.pad(x, p2d), self.kernel_size, stride=2)


class resconv_basic(nn.Module):
    """ResNet basic block (two 3x3 convs) with a projected shortcut."""

    def __init__(self, num_in_layers, num_out_layers, stride):
        super().__init__()
        self.num_out_layers = num_out_layers
        self.stride = stride
        self.conv1 = conv(num_in_layers, num_out_layers, 3, stride)
        self.conv2 = conv(num_out_layers, num_out_layers, 3, 1)
        self.conv3 = nn.Conv2d(num_in_layers, num_out_layers, kernel_size=1, stride=stride)
        self.normalize = nn.BatchNorm2d(num_out_layers)

    def forward(self, x):
        do_proj = True
        shortcut = []
        x_out = self.conv1(x)
        x_out = self.conv2(x_out)
        if do_proj:
            shortcut = self.conv3(x)
        else:
            shortcut = x
        return F.elu(self.normalize(x_out + shortcut), inplace=True)


def resblock_basic(num_in_layers, num_out_layers, num_blocks, stride):
    layers = []
    layers.append(resconv_basic(num_in_layers, num_out_layers, stride))
    for i in range(1, num_blocks):
        layers.append(resconv_basic(num_out_layers, num_out_layers, 1))
    return nn.Sequential(*layers)


class upconv(nn.Module):
    """Bilinear upsampling by ``scale`` followed by a ``conv``."""

    def __init__(self, num_in_layers, num_out_layers, kernel_size, scale):
        super().__init__()
        self.scale = scale
        self.conv1 = conv(num_in_layers, num_out_layers, kernel_size, 1)

    def forward(self, x):
        x = nn.functional.interpolate(x, scale_factor=self.scale, mode='bilinear', align_corners=True)
        return self.conv1(x)


class get_disp(nn.Module):
    """Two-channel (left/right) disparity head: conv, batch norm, 0.3 * sigmoid."""

    def __init__(self, num_in_layers):
        super().__init__()
        self.conv1 = nn.Conv2d(num_in_layers, 2, kernel_size=3, stride=1)
        self.normalize = nn.BatchNorm2d(2)
        self.sigmoid = torch.nn.Sigmoid()

    def forward(self, x):
        p = 1
        p2d = (p, p, p, p)
        x = self.conv1(F.pad(x, p2d))
        x = self.normalize(x)
        return 0.3 * self.sigmoid(x)


class Resnet18_md(nn.Module):
    """MonoDepth encoder-decoder: ResNet-18 encoder (H/64), decoder with skips, four disparity scales.

    ``width`` scales every channel count (64 in the original); the smoke size uses 8.
    """

    def __init__(self, num_in_layers, width=64):
        super().__init__()
        w = width
        # encoder
        self.conv1 = conv(num_in_layers, w, 7, 2)  # H/2  -   64D
        self.pool1 = maxpool(3)  # H/4  -   64D
        self.conv2 = resblock_basic(w, w, 2, 2)  # H/8  -  64D
        self.conv3 = resblock_basic(w, 2 * w, 2, 2)  # H/16 -  128D
        self.conv4 = resblock_basic(2 * w, 4 * w, 2, 2)  # H/32 - 256D
        self.conv5 = resblock_basic(4 * w, 8 * w, 2, 2)  # H/64 - 512D

        # decoder
        self.upconv6 = upconv(8 * w, 8 * w, 3, 2)
        self.iconv6 = conv(4 * w + 8 * w, 8 * w, 3, 1)

        self.upconv5 = upconv(8 * w, 4 * w, 3, 2)
        self.iconv5 = conv(2 * w + 4 * w, 4 * w, 3, 1)

        self.upconv4 = upconv(4 * w, 2 * w, 3, 2)
        self.iconv4 = conv(w + 2 * w, 2 * w, 3, 1)
        self.disp4_layer = get_disp(2 * w)

        self.upconv3 = upconv(2 * w, w, 3, 2)
        self.iconv3 = conv(w + w + 2, w, 3, 1)
        self.disp3_layer = get_disp(w)

        self.upconv2 = upconv(w, w // 2, 3, 2)
        self.iconv2 = conv(w + w // 2 + 2, w // 2, 3, 1)
        self.disp2_layer = get_disp(w // 2)

        self.upconv1 = upconv(w // 2, w // 4, 3, 2)
        self.iconv1 = conv(w // 4 + 2, w // 4, 3, 1)
        self.disp1_layer = get_disp(w // 4)

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.xavier_uniform_(m.weight)

    def forward(self, x):
        # encoder
        x1 = self.conv1(x)
        x_pool1 = self.pool1(x1)
        x2 = self.conv2(x_pool1)
        x3 = self.conv3(x2)
        x4 = self.conv4(x3)
        x5 = self.conv5(x4)

        # skips
        skip1 = x1
        skip2 = x_pool1
        skip3 = x2
        skip4 = x3
        skip5 = x4

        # decoder
        upconv6 = self.upconv6(x5)
        concat6 = torch.cat((upconv6, skip5), 1)
        iconv6 = self.iconv6(concat6)

        upconv5 = self.upconv5(iconv6)
        concat5 = torch.cat((upconv5, skip4), 1)
        iconv5 = self.iconv5(concat5)

        upconv4 = self.upconv4(iconv5)
        concat4 = torch.cat((upconv4, skip3), 1)
        iconv4 = self.iconv4(concat4)
        self.disp4 = self.disp4_layer(iconv4)
        self.udisp4 = nn.functional.interpolate(self.disp4, scale_factor=2, mode='bilinear', align_corners=True)

        upconv3 = self.upconv3(iconv4)
        concat3 = torch.cat((upconv3, skip2, self.udisp4), 1)
        iconv3 = self.iconv3(concat3)
        self.disp3 = self.disp3_layer(iconv3)
        self.udisp3 = nn.functional.interpolate(self.disp3, scale_factor=2, mode='bilinear', align_corners=True)

        upconv2 = self.upconv2(iconv3)
        concat2 = torch.cat((upconv2, skip1, self.udisp3), 1)
        iconv2 = self.iconv2(concat2)
        self.disp2 = self.disp2_layer(iconv2)
        self.udisp2 = nn.functional.interpolate(self.disp2, scale_factor=2, mode='bilinear', align_corners=True)

        upconv1 = self.upconv1(iconv2)
        concat1 = torch.cat((upconv1, self.udisp2), 1)
        iconv1 = self.iconv1(concat1)
        self.disp1 = self.disp1_layer(iconv1)
        return [self.disp1, self.disp2, self.disp3, self.disp4]


#: The encoder divides the image by 64, so both sides must be multiples of 64.
IMAGE_SIZE = {"paper": 256, "smoke": 64}
WIDTH = {"paper": 64, "smoke": 8}


def get_model(size: str = "paper", seed: int = 0) -> nn.Module:
    """MonoDepth-18 at full width (``paper``) or at 1/8 width (``smoke``)."""
    check_size(size)
    with seeded(seed):
        model = Resnet18_md(3, width=WIDTH[size])
    return model.eval()


def get_input(batch_size: int = 1, size: str = "paper", seed: int = 0, **kw: Any) -> tuple[list, dict]:
    """``([image [BS, 3, H, H]], {})`` with H = 256 (paper) or 64 (smoke)."""
    check_size(size)
    check_batch_size(batch_size)
    if kw:
        raise ValueError(f"unexpected keyword arguments for monodepth.get_input: {sorted(kw)}")
    side = IMAGE_SIZE[size]
    return [torch.randn(batch_size, 3, side, side, generator=generator(seed))], {}
