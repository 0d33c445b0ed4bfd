# ruff: noqa: B006, B007, UP031, UP032  -- kept as the original authors wrote it (mutable defaults, % formatting)
"""BlockDrop: a ResNet whose residual blocks are skipped by a policy computed from the input
(paper Fig. 18, ``BlockDrop``), in the style of Tushar-N/blockdrop.

The program is the repository's test-time path on CIFAR-10: a small policy network (``Policy32``,
a ResNet with one block per stage) looks at the image and outputs one keep-probability per block
of the main network (``FlatResNet32``, a ResNet-110 at paper size); the probabilities are
thresholded at 0.5 with boolean-mask assignments, and ``forward_single`` walks the blocks in
Python loops over ``enumerate(self.layer_config)`` and ``range(num_blocks)``.

The dynamic control flow is the ``if action.data.sum() == 0:`` on a value derived from the input:
a block that no image of the batch keeps is not executed at all (``continue``), so different
inputs run different sequences of operators. Other Python features kept from the original:
``ModuleList`` of ``ModuleList``s indexed by Python ints, an empty ``nn.Sequential()`` used as an
identity (the policy network's removed ``fc`` and the no-op downsample), ``DownsampleB`` building
``[x] + [x.mul(0)] * (self.expand_ratio - 1)`` lists, a hand-kept ``layer`` counter, ``Variable``
and ``.data``.

Input ``[BS, 3, 32, 32]``; output ``(logits [BS, 10], policy [BS, num_blocks])``.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable

from models._common import check_batch_size, check_count, check_kind, check_size, generator, seeded

__all__ = ["BlockDrop", "FlatResNet32", "Policy32", "get_model", "get_input", "get_dynamic_inputs"]

DYNAMIC_KINDS = ("policy",)


def conv3x3(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=1, bias=False)


class BasicBlock(nn.Module):
    """The residual branch only: the shortcut is added by ``FlatResNet``, which may skip the block."""

    expansion = 1

    def __init__(self, inplanes, planes, stride=1):
        super().__init__()
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)

    def forward(self, x):
        out = self.conv1(x)
        out = self.bn1(out)
        out = F.relu(out)

        out = self.conv2(out)
        out = self.bn2(out)

        return out


class DownsampleB(nn.Module):
    """Parameter-free shortcut: average-pool, then pad the channels with zeros."""

    def __init__(self, nIn, nOut, stride):
        super().__init__()
        self.avg = nn.AvgPool2d(stride)
        self.expand_ratio = nOut // nIn

    def forward(self, x):
        x = self.avg(x)
        return torch.cat([x] + [x.mul(0)] * (self.expand_ratio - 1), 1)


class FlatResNet(nn.Module):
    """A ResNet whose blocks are kept flat (``self.blocks[segment][b]``) so a policy can skip them."""

    def seed(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        return x

    # run a variable policy batch through the resnet implemented as a full mask over the residual
    # fast fail if all the blocks in a batch are dropped
    def forward_single(self, x, policy):

        x = self.seed(x)

        layer = 0
        for segment, num_blocks in enumerate(self.layer_config):
            for b in range(num_blocks):
                action = policy[:, layer].contiguous()
                residual = self.ds[segment](x) if b == 0 else x

                # early termination if all actions in the batch are zero
                if action.data.sum() == 0:
                    x = residual
                    layer += 1
                    continue

                action_mask = action.float().view(-1, 1, 1, 1)
                fx = F.relu(residual + self.blocks[segment][b](x))
                x = fx * action_mask + residual * (1 - action_mask)
                layer += 1

        x = self.avgpool(x)
        x = x.view(x.size(0), -1)
        x = self.fc(x)
        return x

    def forward_full(self, x):
        x = self.seed(x)

        for segment, num_blocks in enumerate(self.layer_config):
            for b in range(num_blocks):
                residual = self.ds[segment](x) if b == 0 else x
                x = F.relu(residual + self.blocks[segment][b](x))

        x = self.avgpool(x)
        x = x.view(x.size(0), -1)
        x = self.fc(x)
        return x


# Smaller Flattened Resnet, tailored for CIFAR
class FlatResNet32(FlatResNet):

    def __init__(self, block, layers, num_classes=10):
        super().__init__()

        self.inplanes = 16
        self.conv1 = conv3x3(3, 16)
        self.bn1 = nn.BatchNorm2d(16)
        self.relu = nn.ReLU(inplace=True)
        self.avgpool = nn.AvgPool2d(8)

        strides = [1, 2, 2]
        filt_sizes = [16, 32, 64]
        self.blocks, self.ds = [], []
        for idx, (filt_size, num_blocks, stride) in enumerate(zip(filt_sizes, layers, strides)):
            blocks, ds = self._make_layer(block, filt_size, num_blocks, stride=stride)
            self.blocks.append(nn.ModuleList(blocks))
            self.ds.append(ds)

        self.blocks = nn.ModuleList(self.blocks)
        self.ds = nn.ModuleList(self.ds)
        self.fc = nn.Linear(64 * block.expansion, num_classes)
        self.fc_dim = 64 * block.expansion

        self.layer_config = layers

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                n = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                m.weight.data.normal_(0, math.sqrt(2. / n))
            elif isinstance(m, nn.BatchNorm2d):
                m.weight.data.fill_(1)
                m.bias.data.zero_()

    def _make_layer(self, block, planes, blocks, stride=1):

        downsample = nn.Sequential()
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = DownsampleB(self.inplanes, planes * block.expansion, stride)

        layers = [block(self.inplanes, planes, stride)]
        self.inplanes = planes * block.expansion
        for i in range(1, blocks):
            layers.append(block(self.inplanes, planes, 1))

        return layers, downsample


class Policy32(nn.Module):
    """The policy network: a tiny ResNet whose head gives one keep-probability per block."""

    def __init__(self, layer_config=[1, 1, 1], num_blocks=15):
        super().__init__()
        self.features = FlatResNet32(BasicBlock, layer_config, num_classes=10)
        self.feat_dim = self.features.fc.weight.data.shape[1]
        self.features.fc = nn.Sequential()

        self.logit = nn.Linear(self.feat_dim, num_blocks)
        self.vhead = nn.Linear(self.feat_dim, 1)

    def forward(self, x):
        x = self.features.forward_full(x)
        value = self.vhead(x)
        probs = F.sigmoid(self.logit(x))
        return probs, value


class BlockDrop(nn.Module):
    """The test-time program: ask the agent for a policy, threshold it, run the ResNet under it."""

    def __init__(self, layer_config=[18, 18, 18], policy_config=[1, 1, 1], num_classes=10):
        super().__init__()
        self.rnet = FlatResNet32(BasicBlock, layer_config, num_classes=num_classes)
        self.agent = Policy32(policy_config, num_blocks=sum(layer_config))

    def forward(self, inputs):
        probs, _ = self.agent(inputs)

        policy = probs.clone()
        policy[policy < 0.5] = 0.0
        policy[policy >= 0.5] = 1.0
        policy = Variable(policy)

        preds = self.rnet.forward_single(inputs, policy.data)
        return preds, policy


#: ResNet-110 (18 blocks per stage) with the R110 policy network at paper size; 2 blocks per stage
#: at smoke size. CIFAR images are 32x32 at both sizes (the final AvgPool2d(8) expects it).
CONFIGS = {
    "paper": dict(layer_config=[18, 18, 18], policy_config=[1, 1, 1]),
    "smoke": dict(layer_config=[2, 2, 2], policy_config=[1, 1, 1]),
}
IMAGE_SIZE = 32


def get_model(size: str = "paper", seed: int = 0) -> nn.Module:
    """BlockDrop on ResNet-110 (``paper``) or on a ResNet with two blocks per stage (``smoke``)."""
    check_size(size)
    with seeded(seed):
        model = BlockDrop(**CONFIGS[size])
    return model.eval()


def get_input(batch_size: int = 1, size: str = "paper", seed: int = 0, **kw: Any) -> tuple[list, dict]:
    """``([image [BS, 3, 32, 32]], {})`` at both sizes, each image with its own colour and contrast."""
    check_size(size)
    check_batch_size(batch_size)
    if kw:
        raise ValueError(f"unexpected keyword arguments for blockdrop.get_input: {sorted(kw)}")
    gen = generator(seed)
    # Plain N(0, 1) noise images all look alike to the policy network after global pooling; like
    # real photographs, each image gets its own per-channel brightness and contrast.
    shift = torch.rand(batch_size, 3, 1, 1, generator=gen) * 2 - 1
    contrast = torch.rand(batch_size, 1, 1, 1, generator=gen) * 1.5 + 0.5
    noise = torch.randn(batch_size, 3, IMAGE_SIZE, IMAGE_SIZE, generator=gen)
    return [noise * contrast + shift], {}


def get_dynamic_inputs(batch_size: int = 1, n: int = 10, size: str = "paper", kind: str = "policy",
                       seed: int = 0) -> list[tuple[list, dict]]:
    """``n`` different images of batch ``batch_size``: the policy the agent computes from each, and
    so the set of executed blocks, changes from input to input."""
    check_kind(kind, DYNAMIC_KINDS, "blockdrop")
    check_count(n)
    check_size(size)
    return [get_input(batch_size, size, seed=seed + 1 + i) for i in range(n)]
