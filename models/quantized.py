# ruff: noqa: B006, B007, UP031, UP032  -- kept as the original authors wrote it (mutable defaults, % formatting)
"""A ResNet quantized with Banner et al.'s 8-bit scheme, in the style of eladhoffer/quantized.pytorch.

Table 1: ``Quantized``, image [BS, 3, 224, 224]. The network is ResNet-18 whose convolutions and
classifier are ``QConv2d``/``QLinear`` (8-bit weights, 8-bit activations measured by
``QuantMeasure``, 8-bit gradients, "biprecision" convolutions) and whose batch norms are Banner et
al.'s ``RangeBN`` (the variance replaced by the mean range of chunks of the batch).

The Python features that made other compilers split the original program are kept:

* quantizers are custom ``torch.autograd.Function`` subclasses (``UniformQuantize`` with a
  ``classmethod`` forward that writes attributes on ``ctx``, marks tensors dirty and uses in-place
  tensor chains; ``UniformQuantizeGrad`` that only acts in backward);
* every forward reads statistics back into Python: ``float(self.weight.min())``,
  ``float(running_min)``, and ``max(scale, 1e-8)`` on a tensor, so the quantization grid is a
  Python number computed from tensor values at each call;
* module flags are read in ``forward``: ``self.training`` (update running statistics or use them),
  ``self.biprecision``, ``self.num_bits_grad is None``, ``self.bias is not None``;
* the layer widths and bit widths come from module-level globals (``NUM_BITS`` ...), and the
  factory unpacks its options with ``map(kwargs.get, [...])``.

Untrained running statistics are zeros, which would quantize every activation to zero, so
``get_model`` calibrates them with a few seeded forward passes in training mode (the same code path
the original uses in training) before switching to eval mode.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd.function import InplaceFunction

from models._common import check_batch_size, check_size, generator, seeded

__all__ = ["UniformQuantize", "UniformQuantizeGrad", "QuantMeasure", "QConv2d", "QLinear", "RangeBN",
           "resnet_quantized", "get_model", "get_input"]

NUM_BITS = 8
NUM_BITS_WEIGHT = 8
NUM_BITS_GRAD = 8
BIPRECISION = True


class UniformQuantize(InplaceFunction):
    """Round ``input`` to a uniform grid of ``2**num_bits`` levels over [min_value, max_value].

    When a bound is not given it is the mean over chunks of the per-chunk minimum (or maximum).
    The gradient passes straight through.
    """

    @classmethod
    def forward(cls, ctx, input, num_bits=8, min_value=None, max_value=None,
                stochastic=False, inplace=False, enforce_true_zero=False, num_chunks=None, out_half=False):

        num_chunks = num_chunks = input.shape[0] if num_chunks is None else num_chunks
        if min_value is None or max_value is None:
            B = input.shape[0]
            y = input.view(B // num_chunks, -1)
        if min_value is None:
            min_value = y.min(-1)[0].mean(-1)  # C
        if max_value is None:
            max_value = y.max(-1)[0].mean(-1)  # C
        ctx.inplace = inplace
        ctx.num_bits = num_bits
        ctx.min_value = min_value
        ctx.max_value = max_value
        ctx.stochastic = stochastic

        if ctx.inplace:
            ctx.mark_dirty(input)
            output = input
        else:
            output = input.clone()

        qmin = 0.
        qmax = 2. ** num_bits - 1.
        scale = (max_value - min_value) / (qmax - qmin)
        scale = max(scale, 1e-8)

        if enforce_true_zero:
            initial_zero_point = qmin - min_value / scale
            zero_point = 0.
            # make zero exactly represented
            if initial_zero_point < qmin:
                zero_point = qmin
            elif initial_zero_point > qmax:
                zero_point = qmax
            else:
                zero_point = initial_zero_point
            zero_point = int(zero_point)
            output.div_(scale).add_(zero_point)
        else:
            output.add_(-min_value).div_(scale).add_(qmin)

        if ctx.stochastic:
            noise = output.new(output.shape).uniform_(-0.5, 0.5)
            output.add_(noise)
        output.clamp_(qmin, qmax).round_()  # quantize

        if enforce_true_zero:
            output.add_(-zero_point).mul_(scale)  # dequantize
        else:
            output.add_(-qmin).mul_(scale).add_(min_value)  # dequantize
        if out_half and num_bits <= 16:
            output = output.half()
        return output

    @staticmethod
    def backward(ctx, grad_output):
        # straight-through estimator
        grad_input = grad_output
        return grad_input, None, None, None, None, None, None, None, None


class UniformQuantizeGrad(InplaceFunction):
    """Identity in forward; quantizes the gradient to ``num_bits`` (stochastically) in backward."""

    @classmethod
    def forward(cls, ctx, input, num_bits=8, min_value=None, max_value=None, stochastic=True, inplace=False):
        ctx.inplace = inplace
        ctx.num_bits = num_bits
        ctx.min_value = min_value
        ctx.max_value = max_value
        ctx.stochastic = stochastic
        # The original returns ``input`` itself; current torch forbids the in-place ReLU that
        # follows on an input returned as-is, so it gets a copy.
        return input.clone()

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.min_value is None:
            min_value = float(grad_output.min())
        else:
            min_value = ctx.min_value
        if ctx.max_value is None:
            max_value = float(grad_output.max())
        else:
            max_value = ctx.max_value
        grad_input = UniformQuantize.apply(grad_output, ctx.num_bits, min_value, max_value,
                                           ctx.stochastic, ctx.inplace)
        return grad_input, None, None, None, None, None


def conv2d_biprec(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, num_bits_grad=None):
    """Convolution whose weight gradient sees full-precision input gradients and vice versa."""
    out1 = F.conv2d(input.detach(), weight, bias,
                    stride, padding, dilation, groups)
    out2 = F.conv2d(input, weight.detach(), bias.detach() if bias is not None else None,
                    stride, padding, dilation, groups)
    out2 = quantize_grad(out2, num_bits=num_bits_grad)
    return out1 + out2 - out1.detach()


def linear_biprec(input, weight, bias=None, num_bits_grad=None):
    """The ``conv2d_biprec`` trick for a linear layer."""
    out1 = F.linear(input.detach(), weight, bias)
    out2 = F.linear(input, weight.detach(), bias.detach()
                    if bias is not None else None)
    out2 = quantize_grad(out2, num_bits=num_bits_grad)
    return out1 + out2 - out1.detach()


def quantize(x, num_bits=8, min_value=None, max_value=None, num_chunks=None, stochastic=False, inplace=False):
    # autograd Functions take positional arguments only; invoked on the class (current torch
    # refuses instances of autograd Functions).
    return UniformQuantize.apply(x, num_bits, min_value, max_value, stochastic, inplace, False, num_chunks)


def quantize_grad(x, num_bits=8, min_value=None, max_value=None, stochastic=True, inplace=False):
    return UniformQuantizeGrad.apply(x, num_bits, min_value, max_value, stochastic, inplace)


class QuantMeasure(nn.Module):
    """Quantize activations to the running range measured in training (fixed ranges in eval)."""

    def __init__(self, num_bits=8, momentum=0.1):
        super().__init__()
        self.register_buffer('running_min', torch.zeros(1))
        self.register_buffer('running_max', torch.zeros(1))
        self.momentum = momentum
        self.num_bits = num_bits

    def forward(self, input):
        if self.training:
            min_value = input.detach().view(
                input.size(0), -1).min(-1)[0].mean()
            max_value = input.detach().view(
                input.size(0), -1).max(-1)[0].mean()
            self.running_min.mul_(self.momentum).add_(
                min_value * (1 - self.momentum))
            self.running_max.mul_(self.momentum).add_(
                max_value * (1 - self.momentum))
        else:
            min_value = self.running_min
            max_value = self.running_max
        return quantize(input, self.num_bits, min_value=float(min_value), max_value=float(max_value), num_chunks=16)


class QConv2d(nn.Conv2d):
    """docstring for QConv2d."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1,
                 padding=0, dilation=1, groups=1, bias=True, num_bits=8, num_bits_weight=None,
                 num_bits_grad=None, biprecision=False):
        super().__init__(in_channels, out_channels, kernel_size,
                         stride, padding, dilation, groups, bias)
        self.num_bits = num_bits
        self.num_bits_weight = num_bits_weight or num_bits
        self.num_bits_grad = num_bits_grad
        self.quantize_input = QuantMeasure(self.num_bits)
        self.biprecision = biprecision

    def forward(self, input):
        qinput = self.quantize_input(input)
        qweight = quantize(self.weight, num_bits=self.num_bits_weight,
                           min_value=float(self.weight.min()),
                           max_value=float(self.weight.max()))
        if self.bias is not None:
            qbias = quantize(self.bias, num_bits=self.num_bits_weight)
        else:
            qbias = None
        if not self.biprecision or self.num_bits_grad is None:
            output = F.conv2d(qinput, qweight, qbias, self.stride,
                              self.padding, self.dilation, self.groups)
            if self.num_bits_grad is not None:
                output = quantize_grad(output, num_bits=self.num_bits_grad)
        else:
            output = conv2d_biprec(qinput, qweight, qbias, self.stride,
                                   self.padding, self.dilation, self.groups, num_bits_grad=self.num_bits_grad)

        return output


class QLinear(nn.Linear):
    """docstring for QConv2d."""

    def __init__(self, in_features, out_features, bias=True, num_bits=8, num_bits_weight=None, num_bits_grad=None,
                 biprecision=False):
        super().__init__(in_features, out_features, bias)
        self.num_bits = num_bits
        self.num_bits_weight = num_bits_weight or num_bits
        self.num_bits_grad = num_bits_grad
        self.biprecision = biprecision
        self.quantize_input = QuantMeasure(self.num_bits)

    def forward(self, input):
        qinput = self.quantize_input(input)
        qweight = quantize(self.weight, num_bits=self.num_bits_weight,
                           min_value=float(self.weight.min()),
                           max_value=float(self.weight.max()))
        if self.bias is not None:
            qbias = quantize(self.bias, num_bits=self.num_bits_weight)
        else:
            qbias = None

        if not self.biprecision or self.num_bits_grad is None:
            output = F.linear(qinput, qweight, qbias)
            if self.num_bits_grad is not None:
                output = quantize_grad(output, num_bits=self.num_bits_grad)
        else:
            output = linear_biprec(qinput, qweight, qbias, self.num_bits_grad)
        return output


class RangeBN(nn.Module):
    # this is normalized RangeBN

    def __init__(self, num_features, dim=1, momentum=0.1, affine=True, num_chunks=16, eps=1e-5, num_bits=8,
                 num_bits_grad=8):
        super().__init__()
        self.register_buffer('running_mean', torch.zeros(num_features))
        self.register_buffer('running_var', torch.zeros(num_features))

        self.momentum = momentum
        self.dim = dim
        if affine:
            self.bias = nn.Parameter(torch.Tensor(num_features))
            self.weight = nn.Parameter(torch.Tensor(num_features))
        else:
            self.register_parameter('bias', None)
            self.register_parameter('weight', None)
        self.num_bits = num_bits
        self.num_bits_grad = num_bits_grad
        self.quantize_input = QuantMeasure(self.num_bits)
        self.eps = eps
        self.num_chunks = num_chunks
        self.reset_params()

    def reset_params(self):
        if self.weight is not None:
            self.weight.data.uniform_()
        if self.bias is not None:
            self.bias.data.zero_()

    def forward(self, x):
        x = self.quantize_input(x)
        if x.dim() == 2:  # 1d
            x = x.unsqueeze(-1,).unsqueeze(-1)

        if self.training:
            B, C, H, W = x.shape
            y = x.transpose(0, 1).contiguous()  # C x B x H x W
            y = y.view(C, self.num_chunks, B * H * W // self.num_chunks)
            mean_max = y.max(-1)[0].mean(-1)  # C
            mean_min = y.min(-1)[0].mean(-1)  # C
            mean = y.view(C, -1).mean(-1)  # C
            scale_fix = (0.5 * 0.35) * (1 + (math.pi * math.log(4)) **
                                        0.5) / ((2 * math.log(y.size(-1))) ** 0.5)

            scale = 1 / ((mean_max - mean_min) * scale_fix + self.eps)

            self.running_mean.detach().mul_(self.momentum).add_(
                mean * (1 - self.momentum))

            self.running_var.detach().mul_(self.momentum).add_(
                scale * (1 - self.momentum))
        else:
            mean = self.running_mean
            scale = self.running_var
        scale = quantize(scale, num_bits=self.num_bits, min_value=float(
            scale.min()), max_value=float(scale.max()))
        out = (x - mean.view(1, mean.size(0), 1, 1)) * \
            scale.view(1, scale.size(0), 1, 1)

        if self.weight is not None:
            qweight = quantize(self.weight, num_bits=self.num_bits,
                               min_value=float(self.weight.min()),
                               max_value=float(self.weight.max()))
            out = out * qweight.view(1, qweight.size(0), 1, 1)

        if self.bias is not None:
            qbias = quantize(self.bias, num_bits=self.num_bits)
            out = out + qbias.view(1, qbias.size(0), 1, 1)
        if self.num_bits_grad is not None:
            out = quantize_grad(out, num_bits=self.num_bits_grad)

        if out.size(3) == 1 and out.size(2) == 1:
            out = out.squeeze(-1).squeeze(-1)
        return out


def conv3x3(in_planes, out_planes, stride=1):
    "3x3 convolution with padding"
    return QConv2d(in_planes, out_planes, kernel_size=3, stride=stride,
                   padding=1, bias=False, num_bits=NUM_BITS, num_bits_weight=NUM_BITS_WEIGHT,
                   num_bits_grad=NUM_BITS_GRAD, biprecision=BIPRECISION)


def init_model(model):
    for m in model.modules():
        if isinstance(m, QConv2d):
            n = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
            m.weight.data.normal_(0, math.sqrt(2. / n))
        elif isinstance(m, RangeBN):
            m.weight.data.fill_(1)
            m.bias.data.zero_()


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = RangeBN(planes, num_bits=NUM_BITS, num_bits_grad=NUM_BITS_GRAD)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = RangeBN(planes, num_bits=NUM_BITS, num_bits_grad=NUM_BITS_GRAD)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        residual = x

        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)

        out = self.conv2(out)
        out = self.bn2(out)

        if self.downsample is not None:
            residual = self.downsample(x)

        out += residual
        out = self.relu(out)

        return out


class ResNet(nn.Module):

    def __init__(self):
        super().__init__()

    def _make_layer(self, block, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                QConv2d(self.inplanes, planes * block.expansion,
                        kernel_size=1, stride=stride, bias=False,
                        num_bits=NUM_BITS, num_bits_weight=NUM_BITS_WEIGHT, num_bits_grad=NUM_BITS_GRAD,
                        biprecision=BIPRECISION),
                RangeBN(planes * block.expansion, num_bits=NUM_BITS, num_bits_grad=NUM_BITS_GRAD)
            )

        layers = []
        layers.append(block(self.inplanes, planes, stride, downsample))
        self.inplanes = planes * block.expansion
        for i in range(1, blocks):
            layers.append(block(self.inplanes, planes))

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
        x = x.view(x.size(0), -1)
        x = self.fc(x)

        return x


class ResNet_imagenet(ResNet):
    """The ImageNet ResNet with quantized layers. ``width`` (64 in the original) and ``pool``
    (7, the final feature-map side of a 224 image) are ours, for the smoke size."""

    def __init__(self, num_classes=1000,
                 block=BasicBlock, layers=[2, 2, 2, 2], width=64, pool=7):
        super().__init__()
        self.inplanes = width
        self.conv1 = QConv2d(3, width, kernel_size=7, stride=2, padding=3, bias=False,
                             num_bits=NUM_BITS, num_bits_weight=NUM_BITS_WEIGHT, num_bits_grad=NUM_BITS_GRAD,
                             biprecision=BIPRECISION)
        self.bn1 = RangeBN(width, num_bits=NUM_BITS, num_bits_grad=NUM_BITS_GRAD)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, width, layers[0])
        self.layer2 = self._make_layer(block, width * 2, layers[1], stride=2)
        self.layer3 = self._make_layer(block, width * 4, layers[2], stride=2)
        self.layer4 = self._make_layer(block, width * 8, layers[3], stride=2)
        self.avgpool = nn.AvgPool2d(pool)
        self.fc = QLinear(width * 8 * block.expansion, num_classes, num_bits=NUM_BITS,
                          num_bits_weight=NUM_BITS_WEIGHT, num_bits_grad=NUM_BITS_GRAD, biprecision=BIPRECISION)

        init_model(self)
        self.regime = [
            {'epoch': 0, 'optimizer': 'SGD', 'lr': 1e-1,
             'weight_decay': 1e-4, 'momentum': 0.9},
            {'epoch': 30, 'lr': 1e-2},
            {'epoch': 60, 'lr': 1e-3, 'weight_decay': 0},
            {'epoch': 90, 'lr': 1e-4}
        ]


def resnet_quantized(**kwargs):
    num_classes, depth, dataset, width, pool = map(
        kwargs.get, ['num_classes', 'depth', 'dataset', 'width', 'pool'])
    if dataset == 'imagenet':
        num_classes = num_classes or 1000
        depth = depth or 18
        width = width or 64
        pool = pool or 7
        if depth == 18:
            return ResNet_imagenet(num_classes=num_classes,
                                   block=BasicBlock, layers=[2, 2, 2, 2], width=width, pool=pool)
        if depth == 34:
            return ResNet_imagenet(num_classes=num_classes,
                                   block=BasicBlock, layers=[3, 4, 6, 3], width=width, pool=pool)
    raise ValueError(f"resnet_quantized supports dataset='imagenet' with depth 18 or 34, got "
                     f"dataset={dataset!r} depth={depth!r}")


IMAGE_SIZE = {"paper": 224, "smoke": 64}
#: Calibration batch: RangeBN splits B*H*W into 16 equal chunks and takes the log of the chunk
#: size, so at every stage B*H*W must be a multiple of 16 and at least 32 (the last stage is 7x7
#: at 224, 2x2 at 64).
CALIBRATION_BATCH = {"paper": 16, "smoke": 8}
CALIBRATION_STEPS = 2


def get_model(size: str = "paper", seed: int = 0) -> nn.Module:
    """Quantized ResNet-18 (``paper``) or the same network at 1/8 width on 64x64 images (``smoke``),
    with activation and RangeBN statistics calibrated on seeded random images."""
    check_size(size)
    with seeded(seed):
        if size == "paper":
            model = resnet_quantized(dataset='imagenet', depth=18)
        else:
            model = resnet_quantized(dataset='imagenet', depth=18, num_classes=10, width=8, pool=2)
        side = IMAGE_SIZE[size]
        model.train()
        with torch.no_grad():
            for _ in range(CALIBRATION_STEPS):
                model(torch.randn(CALIBRATION_BATCH[size], 3, side, side))
    return model.eval()


def get_input(batch_size: int = 1, size: str = "paper", seed: int = 0, **kw: Any) -> tuple[list, dict]:
    """``([image [BS, 3, H, H]], {})`` with H = 224 (paper) or 64 (smoke)."""
    check_size(size)
    check_batch_size(batch_size)
    if kw:
        raise ValueError(f"unexpected keyword arguments for quantized.get_input: {sorted(kw)}")
    side = IMAGE_SIZE[size]
    return [torch.randn(batch_size, 3, side, side, generator=generator(seed))], {}

