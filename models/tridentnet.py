# ruff: noqa: B006, B007, UP031, UP032  -- kept as the original authors wrote it (mutable defaults, % formatting)
"""TridentNet on ResNet-101 in the style of open-mmlab/mmdetection v2.28 with mmcv v1.7 (Table 1).

Image [BS, 3, 224, 224] in; out, as mmdetection backbones return it, a tuple holding the last
stage's features with the three branches concatenated on the batch axis: [3*BS, 1024, 14, 14].

What made other compilers split this program, and is kept here:

* the network is assembled from config dicts through a small ``Registry`` (``BACKBONES``,
  ``CONV_LAYERS``, ``NORM_LAYERS``) and ``build_from_cfg`` (``cfg.copy()``, ``pop('type')``);
* norm layers are registered under generated names (``bn1``, ``bn2``...) by ``build_norm_layer``
  and read back through ``@property`` accessors that call ``getattr(self, self.norm1_name)``;
* ``Bottleneck.forward`` defines an ``_inner_forward`` closure and picks ``torch.utils.checkpoint``
  with ``self.with_cp and x.requires_grad``; ``with_plugins``/``style`` flags are read in forward;
* the trident stage runs three branches that share one weight (``TridentConv``) with dilations 1,
  2, 3: inputs become ``(x,) * num_branch`` tuples, every layer is applied in list
  comprehensions, branches are zipped with their identities, and the last block concatenates them;
* ``ResNet.forward`` loops over layer names with ``getattr`` and collects ``out_indices``;
  ``train()`` is overridden to keep frozen stages and norms in eval mode (``norm_eval``).

``test_branch_idx`` is -1 here so inference runs all three branches (mmdetection's TridentNet
configs use 1, a single branch, at test time); the benchmark is about the three weight-sharing branches.
"""

from __future__ import annotations

import copy
import inspect
from typing import Any

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint as cp
from torch.nn.modules.batchnorm import _BatchNorm
from torch.nn.modules.utils import _pair

from models._common import check_batch_size, check_size, generator, seeded

__all__ = ["Registry", "BACKBONES", "build_backbone", "ResNet", "TridentResNet", "TridentConv",
           "TridentBottleneck", "get_model", "get_input", "CONFIGS"]


# --------------------------------------------------------------------------------------------
# mmcv-style registry and builders
# --------------------------------------------------------------------------------------------

class Registry:
    """A registry to map strings to classes.

    Example:
        >>> MODELS = Registry('models')
        >>> @MODELS.register_module()
        >>> class ResNet:
        >>>     pass
        >>> resnet = MODELS.build(dict(type='ResNet'))
    """

    def __init__(self, name, build_func=None):
        self._name = name
        self._module_dict = dict()
        self.build_func = build_func if build_func is not None else build_from_cfg

    def __len__(self):
        return len(self._module_dict)

    def __contains__(self, key):
        return self.get(key) is not None

    def __repr__(self):
        return self.__class__.__name__ + f'(name={self._name}, items={self._module_dict})'

    @property
    def name(self):
        return self._name

    @property
    def module_dict(self):
        return self._module_dict

    def get(self, key):
        return self._module_dict.get(key, None)

    def build(self, *args, **kwargs):
        return self.build_func(*args, **kwargs, registry=self)

    def _register_module(self, module, module_name=None, force=False):
        if not inspect.isclass(module) and not inspect.isfunction(module):
            raise TypeError('module must be a class or a function, '
                            f'but got {type(module)}')
        if module_name is None:
            module_name = module.__name__
        if isinstance(module_name, str):
            module_name = [module_name]
        for name in module_name:
            if not force and name in self._module_dict:
                raise KeyError(f'{name} is already registered in {self.name}')
            self._module_dict[name] = module

    def register_module(self, name=None, force=False, module=None):
        if module is not None:
            self._register_module(module=module, module_name=name, force=force)
            return module

        # use it as a decorator: @x.register_module()
        def _register(module):
            self._register_module(module=module, module_name=name, force=force)
            return module

        return _register


def build_from_cfg(cfg, registry, default_args=None):
    """Build a module from a config dict whose key ``type`` names a class in ``registry``."""
    if not isinstance(cfg, dict):
        raise TypeError(f'cfg must be a dict, but got {type(cfg)}')
    if 'type' not in cfg:
        if default_args is None or 'type' not in default_args:
            raise KeyError('`cfg` or `default_args` must contain the key "type", '
                           f'but got {cfg}\n{default_args}')
    args = cfg.copy()

    if default_args is not None:
        for name, value in default_args.items():
            args.setdefault(name, value)

    obj_type = args.pop('type')
    if isinstance(obj_type, str):
        obj_cls = registry.get(obj_type)
        if obj_cls is None:
            raise KeyError(f'{obj_type} is not in the {registry.name} registry; '
                           f'registered: {sorted(registry.module_dict)}')
    elif inspect.isclass(obj_type) or inspect.isfunction(obj_type):
        obj_cls = obj_type
    else:
        raise TypeError(f'type must be a str or valid type, but got {type(obj_type)}')
    return obj_cls(**args)


BACKBONES = Registry('backbone')
CONV_LAYERS = Registry('conv layer')
NORM_LAYERS = Registry('norm layer')

CONV_LAYERS.register_module('Conv', module=nn.Conv2d)
CONV_LAYERS.register_module('Conv2d', module=nn.Conv2d)
NORM_LAYERS.register_module('BN', module=nn.BatchNorm2d)
NORM_LAYERS.register_module('BN2d', module=nn.BatchNorm2d)
NORM_LAYERS.register_module('GN', module=nn.GroupNorm)


def build_backbone(cfg):
    """Build backbone."""
    return BACKBONES.build(cfg)


def build_conv_layer(cfg, *args, **kwargs):
    """Build a convolution layer from ``cfg`` (``None`` means ``dict(type='Conv2d')``)."""
    if cfg is None:
        cfg_ = dict(type='Conv2d')
    else:
        if not isinstance(cfg, dict):
            raise TypeError('cfg must be a dict')
        if 'type' not in cfg:
            raise KeyError('the cfg dict must contain the key "type"')
        cfg_ = cfg.copy()

    layer_type = cfg_.pop('type')
    if layer_type not in CONV_LAYERS:
        raise KeyError(f'Unrecognized layer type {layer_type}')
    else:
        conv_layer = CONV_LAYERS.get(layer_type)

    layer = conv_layer(*args, **kwargs, **cfg_)

    return layer


def infer_abbr(class_type):
    """Infer the abbreviation used in a norm layer's generated name (``bn``, ``gn``, ...)."""
    if not inspect.isclass(class_type):
        raise TypeError(f'class_type must be a type, but got {type(class_type)}')
    if hasattr(class_type, '_abbr_'):
        return class_type._abbr_
    if issubclass(class_type, _BatchNorm):
        return 'bn'
    elif issubclass(class_type, nn.GroupNorm):
        return 'gn'
    else:
        class_name = class_type.__name__.lower()
        if 'batch' in class_name:
            return 'bn'
        elif 'group' in class_name:
            return 'gn'
        else:
            return 'norm_layer'


def build_norm_layer(cfg, num_features, postfix=''):
    """Build a norm layer; returns ``(name, layer)`` with the name made of abbreviation + postfix."""
    if not isinstance(cfg, dict):
        raise TypeError('cfg must be a dict')
    if 'type' not in cfg:
        raise KeyError('the cfg dict must contain the key "type"')
    cfg_ = cfg.copy()

    layer_type = cfg_.pop('type')
    if layer_type not in NORM_LAYERS:
        raise KeyError(f'Unrecognized norm type {layer_type}')

    norm_layer = NORM_LAYERS.get(layer_type)
    abbr = infer_abbr(norm_layer)

    assert isinstance(postfix, (int, str))
    name = abbr + str(postfix)

    requires_grad = cfg_.pop('requires_grad', True)
    cfg_.setdefault('eps', 1e-5)
    if layer_type != 'GN':
        layer = norm_layer(num_features, **cfg_)
    else:
        assert 'num_groups' in cfg_
        layer = norm_layer(num_channels=num_features, **cfg_)

    for param in layer.parameters():
        param.requires_grad = requires_grad

    return name, layer


def _kaiming_init(module, mode='fan_out', nonlinearity='relu', distribution='normal', bias=0, **_):
    if distribution == 'uniform':
        nn.init.kaiming_uniform_(module.weight, mode=mode, nonlinearity=nonlinearity)
    else:
        nn.init.kaiming_normal_(module.weight, mode=mode, nonlinearity=nonlinearity)
    if getattr(module, 'bias', None) is not None:
        nn.init.constant_(module.bias, bias)


def _constant_init(module, val=1, bias=0, **_):
    if getattr(module, 'weight', None) is not None:
        nn.init.constant_(module.weight, val)
    if getattr(module, 'bias', None) is not None:
        nn.init.constant_(module.bias, bias)


INITIALIZERS = {'Kaiming': _kaiming_init, 'Constant': _constant_init}


class BaseModule(nn.Module):
    """``nn.Module`` with an ``init_cfg`` applied by ``init_weights`` (the mmcv convention)."""

    def __init__(self, init_cfg=None):
        super().__init__()
        self._is_init = False
        self.init_cfg = copy.deepcopy(init_cfg)

    def init_weights(self):
        if not self._is_init:
            cfgs = self.init_cfg if isinstance(self.init_cfg, list) else [self.init_cfg]
            for cfg in cfgs:
                if cfg is None:
                    continue
                cfg = dict(cfg)
                init = INITIALIZERS[cfg.pop('type')]
                layers = cfg.pop('layer', None)
                layers = [layers] if isinstance(layers, str) else layers
                for m in self.modules():
                    if layers is None and m is self or layers is not None and type(m).__name__ in layers:
                        init(m, **cfg)
            self._is_init = True
            # Descendants' own init_cfg wins; plain nn.Sequential containers are looked through.
            for m in self.modules():
                if m is not self and isinstance(m, BaseModule):
                    m.init_weights()


# --------------------------------------------------------------------------------------------
# mmdet ResNet
# --------------------------------------------------------------------------------------------

class ResLayer(nn.Sequential):
    """ResLayer to build ResNet style backbone."""

    def __init__(self, block, inplanes, planes, num_blocks, stride=1, avg_down=False, conv_cfg=None,
                 norm_cfg=dict(type='BN'), downsample_first=True, **kwargs):
        self.block = block

        downsample = None
        if stride != 1 or inplanes != planes * block.expansion:
            downsample = []
            conv_stride = stride
            if avg_down:
                conv_stride = 1
                downsample.append(
                    nn.AvgPool2d(kernel_size=stride, stride=stride, ceil_mode=True, count_include_pad=False))
            downsample.extend([
                build_conv_layer(conv_cfg, inplanes, planes * block.expansion, kernel_size=1,
                                 stride=conv_stride, bias=False),
                build_norm_layer(norm_cfg, planes * block.expansion)[1]
            ])
            downsample = nn.Sequential(*downsample)

        layers = []
        if downsample_first:
            layers.append(
                block(inplanes=inplanes, planes=planes, stride=stride, downsample=downsample,
                      conv_cfg=conv_cfg, norm_cfg=norm_cfg, **kwargs))
            inplanes = planes * block.expansion
            for _ in range(1, num_blocks):
                layers.append(
                    block(inplanes=inplanes, planes=planes, stride=1, conv_cfg=conv_cfg, norm_cfg=norm_cfg,
                          **kwargs))
        else:
            raise NotImplementedError('downsample_first=False is not used by TridentNet')
        super().__init__(*layers)


class Bottleneck(BaseModule):
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, dilation=1, downsample=None, style='pytorch', with_cp=False,
                 conv_cfg=None, norm_cfg=dict(type='BN'), dcn=None, plugins=None, init_cfg=None):
        """Bottleneck block for ResNet.

        If style is "pytorch", the stride-two layer is the 3x3 conv layer, if it is "caffe", the
        stride-two layer is the first 1x1 conv layer.
        """
        super().__init__(init_cfg)
        assert style in ['pytorch', 'caffe']
        if dcn is not None or plugins is not None:
            raise ValueError('this TridentNet port supports neither DCN nor plugins')

        self.inplanes = inplanes
        self.planes = planes
        self.stride = stride
        self.dilation = dilation
        self.style = style
        self.with_cp = with_cp
        self.conv_cfg = conv_cfg
        self.norm_cfg = norm_cfg
        self.dcn = dcn
        self.with_dcn = dcn is not None
        self.plugins = plugins
        self.with_plugins = plugins is not None

        if self.style == 'pytorch':
            self.conv1_stride = 1
            self.conv2_stride = stride
        else:
            self.conv1_stride = stride
            self.conv2_stride = 1

        self.norm1_name, norm1 = build_norm_layer(norm_cfg, planes, postfix=1)
        self.norm2_name, norm2 = build_norm_layer(norm_cfg, planes, postfix=2)
        self.norm3_name, norm3 = build_norm_layer(norm_cfg, planes * self.expansion, postfix=3)

        self.conv1 = build_conv_layer(
            conv_cfg, inplanes, planes, kernel_size=1, stride=self.conv1_stride, bias=False)
        self.add_module(self.norm1_name, norm1)
        self.conv2 = build_conv_layer(
            conv_cfg, planes, planes, kernel_size=3, stride=self.conv2_stride, padding=dilation,
            dilation=dilation, bias=False)
        self.add_module(self.norm2_name, norm2)
        self.conv3 = build_conv_layer(
            conv_cfg, planes, planes * self.expansion, kernel_size=1, bias=False)
        self.add_module(self.norm3_name, norm3)

        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample

    @property
    def norm1(self):
        """nn.Module: normalization layer after the first convolution layer"""
        return getattr(self, self.norm1_name)

    @property
    def norm2(self):
        """nn.Module: normalization layer after the second convolution layer"""
        return getattr(self, self.norm2_name)

    @property
    def norm3(self):
        """nn.Module: normalization layer after the third convolution layer"""
        return getattr(self, self.norm3_name)

    def forward(self, x):
        """Forward function."""

        def _inner_forward(x):
            identity = x
            out = self.conv1(x)
            out = self.norm1(out)
            out = self.relu(out)

            out = self.conv2(out)
            out = self.norm2(out)
            out = self.relu(out)

            out = self.conv3(out)
            out = self.norm3(out)

            if self.downsample is not None:
                identity = self.downsample(x)

            out += identity

            return out

        if self.with_cp and x.requires_grad:
            out = cp.checkpoint(_inner_forward, x, use_reentrant=False)
        else:
            out = _inner_forward(x)

        out = self.relu(out)

        return out


@BACKBONES.register_module()
class ResNet(BaseModule):
    """ResNet backbone (mmdetection flavour).

    ``stage_blocks`` (ours) overrides the depth's number of blocks per stage, for the smoke size.
    """

    arch_settings = {
        50: (Bottleneck, (3, 4, 6, 3)),
        101: (Bottleneck, (3, 4, 23, 3)),
        152: (Bottleneck, (3, 8, 36, 3))
    }

    def __init__(self, depth, in_channels=3, stem_channels=None, base_channels=64, num_stages=4,
                 strides=(1, 2, 2, 2), dilations=(1, 1, 1, 1), out_indices=(0, 1, 2, 3), style='pytorch',
                 deep_stem=False, avg_down=False, frozen_stages=-1, conv_cfg=None,
                 norm_cfg=dict(type='BN', requires_grad=True), norm_eval=True, dcn=None,
                 stage_with_dcn=(False, False, False, False), plugins=None, with_cp=False,
                 zero_init_residual=True, pretrained=None, init_cfg=None, stage_blocks=None):
        super().__init__(init_cfg)
        self.zero_init_residual = zero_init_residual
        if depth not in self.arch_settings:
            raise KeyError(f'invalid depth {depth} for resnet')
        if pretrained is not None:
            raise ValueError('no pretrained weights: models are built with random weights')
        if deep_stem or dcn is not None or plugins is not None:
            raise ValueError('this port supports neither deep_stem, DCN nor plugins')

        if init_cfg is None:
            self.init_cfg = [
                dict(type='Kaiming', layer='Conv2d'),
                dict(type='Constant', val=1, layer=['_BatchNorm', 'BatchNorm2d', 'GroupNorm'])
            ]

        self.depth = depth
        if stem_channels is None:
            stem_channels = base_channels
        self.stem_channels = stem_channels
        self.base_channels = base_channels
        self.num_stages = num_stages
        assert num_stages >= 1 and num_stages <= 4
        self.strides = strides
        self.dilations = dilations
        assert len(strides) == len(dilations) == num_stages
        self.out_indices = out_indices
        assert max(out_indices) < num_stages
        self.style = style
        self.deep_stem = deep_stem
        self.avg_down = avg_down
        self.frozen_stages = frozen_stages
        self.conv_cfg = conv_cfg
        self.norm_cfg = norm_cfg
        self.with_cp = with_cp
        self.norm_eval = norm_eval
        self.dcn = dcn
        self.stage_with_dcn = stage_with_dcn
        self.plugins = plugins
        self.block, stage_blocks_of_depth = self.arch_settings[depth]
        if stage_blocks is None:
            stage_blocks = stage_blocks_of_depth
        self.stage_blocks = stage_blocks[:num_stages]
        self.inplanes = stem_channels

        self._make_stem_layer(in_channels, stem_channels)

        self.res_layers = []
        for i, num_blocks in enumerate(self.stage_blocks):
            stride = strides[i]
            dilation = dilations[i]
            planes = base_channels * 2**i
            res_layer = self.make_res_layer(
                block=self.block, inplanes=self.inplanes, planes=planes, num_blocks=num_blocks, stride=stride,
                dilation=dilation, style=self.style, avg_down=self.avg_down, with_cp=with_cp,
                conv_cfg=conv_cfg, norm_cfg=norm_cfg, dcn=None, plugins=None)
            self.inplanes = planes * self.block.expansion
            layer_name = f'layer{i + 1}'
            self.add_module(layer_name, res_layer)
            self.res_layers.append(layer_name)

        self._freeze_stages()

        self.feat_dim = self.block.expansion * base_channels * 2**(len(self.stage_blocks) - 1)

    def init_weights(self):
        super().init_weights()
        if self.zero_init_residual:
            for m in self.modules():
                if isinstance(m, Bottleneck):
                    _constant_init(m.norm3, val=0)

    def make_res_layer(self, **kwargs):
        """Pack all blocks in a stage into a ``ResLayer``."""
        return ResLayer(**kwargs)

    @property
    def norm1(self):
        """nn.Module: the normalization layer named "norm1" """
        return getattr(self, self.norm1_name)

    def _make_stem_layer(self, in_channels, stem_channels):
        self.conv1 = build_conv_layer(
            self.conv_cfg, in_channels, stem_channels, kernel_size=7, stride=2, padding=3, bias=False)
        self.norm1_name, norm1 = build_norm_layer(self.norm_cfg, stem_channels, postfix=1)
        self.add_module(self.norm1_name, norm1)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)

    def _freeze_stages(self):
        if self.frozen_stages >= 0:
            self.norm1.eval()
            for m in [self.conv1, self.norm1]:
                for param in m.parameters():
                    param.requires_grad = False

        for i in range(1, self.frozen_stages + 1):
            m = getattr(self, f'layer{i}')
            m.eval()
            for param in m.parameters():
                param.requires_grad = False

    def forward(self, x):
        """Forward function."""
        x = self.conv1(x)
        x = self.norm1(x)
        x = self.relu(x)
        x = self.maxpool(x)
        outs = []
        for i, layer_name in enumerate(self.res_layers):
            res_layer = getattr(self, layer_name)
            x = res_layer(x)
            if i in self.out_indices:
                outs.append(x)
        return tuple(outs)

    def train(self, mode=True):
        """Convert the model into training mode while keep normalization layer freezed."""
        super().train(mode)
        self._freeze_stages()
        if mode and self.norm_eval:
            for m in self.modules():
                # trick: eval have effect on BatchNorm only
                if isinstance(m, _BatchNorm):
                    m.eval()
        return self


# --------------------------------------------------------------------------------------------
# mmdet TridentNet
# --------------------------------------------------------------------------------------------

class TridentConv(BaseModule):
    """Trident Convolution Module: one weight applied with several dilations (one per branch).

    Args:
        in_channels (int): Number of channels in input.
        out_channels (int): Number of channels in output.
        kernel_size (int): Size of convolution kernel.
        stride (int, optional): Convolution stride. Default: 1.
        trident_dilations (tuple[int, int, int], optional): Dilations of different trident branch.
            Default: (1, 2, 3).
        test_branch_idx (int, optional): In inference, all 3 branches will be used if
            `test_branch_idx==-1`, otherwise only branch with index `test_branch_idx` will be used.
            Default: 1.
        bias (bool, optional): Whether to use bias in convolution or not. Default: False.
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, trident_dilations=(1, 2, 3),
                 test_branch_idx=1, bias=False, init_cfg=None):
        super().__init__(init_cfg)
        self.num_branch = len(trident_dilations)
        self.with_bias = bias
        self.test_branch_idx = test_branch_idx
        self.stride = _pair(stride)
        self.kernel_size = _pair(kernel_size)
        self.paddings = _pair(trident_dilations)
        self.dilations = trident_dilations
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.bias = bias

        self.weight = nn.Parameter(torch.Tensor(out_channels, in_channels, *self.kernel_size))
        if bias:
            self.bias = nn.Parameter(torch.Tensor(out_channels))
        else:
            self.bias = None
        if init_cfg is None:
            self.init_cfg = dict(type='Kaiming', distribution='uniform', mode='fan_in')

    def extra_repr(self):
        tmpstr = f'in_channels={self.in_channels}'
        tmpstr += f', out_channels={self.out_channels}'
        tmpstr += f', kernel_size={self.kernel_size}'
        tmpstr += f', num_branch={self.num_branch}'
        tmpstr += f', test_branch_idx={self.test_branch_idx}'
        tmpstr += f', stride={self.stride}'
        tmpstr += f', paddings={self.paddings}'
        tmpstr += f', dilations={self.dilations}'
        tmpstr += f', bias={self.bias}'
        return tmpstr

    def forward(self, inputs):
        if self.training or self.test_branch_idx == -1:
            outputs = [
                F.conv2d(input, self.weight, self.bias, self.stride, padding, dilation)
                for input, dilation, padding in zip(inputs, self.dilations, self.paddings)
            ]
        else:
            assert len(inputs) == 1
            outputs = [
                F.conv2d(inputs[0], self.weight, self.bias, self.stride, self.paddings[self.test_branch_idx],
                         self.dilations[self.test_branch_idx])
            ]

        return outputs


class TridentBottleneck(Bottleneck):
    """BottleBlock for TridentResNet.

    Args:
        trident_dilations (tuple[int, int, int]): Dilations of different trident branch.
        test_branch_idx (int): In inference, all 3 branches will be used if `test_branch_idx==-1`,
            otherwise only branch with index `test_branch_idx` will be used.
        concat_output (bool): Whether to concat the output list to a Tensor. `True` only in the last
            Block.
    """

    def __init__(self, trident_dilations, test_branch_idx, concat_output, **kwargs):

        super().__init__(**kwargs)
        self.trident_dilations = trident_dilations
        self.num_branch = len(trident_dilations)
        self.concat_output = concat_output
        self.test_branch_idx = test_branch_idx
        self.conv2 = TridentConv(
            self.planes, self.planes, kernel_size=3, stride=self.conv2_stride, bias=False,
            trident_dilations=self.trident_dilations, test_branch_idx=test_branch_idx,
            init_cfg=dict(type='Kaiming', distribution='uniform', mode='fan_in'))

    def forward(self, x):

        def _inner_forward(x):
            num_branch = (
                self.num_branch if self.training or self.test_branch_idx == -1 else 1)
            identity = x
            if not isinstance(x, list):
                x = (x, ) * num_branch
                identity = x
                if self.downsample is not None:
                    identity = [self.downsample(b) for b in x]

            out = [self.conv1(b) for b in x]
            out = [self.norm1(b) for b in out]
            out = [self.relu(b) for b in out]

            out = self.conv2(out)
            out = [self.norm2(b) for b in out]
            out = [self.relu(b) for b in out]

            out = [self.conv3(b) for b in out]
            out = [self.norm3(b) for b in out]

            out = [
                out_b + identity_b for out_b, identity_b in zip(out, identity)
            ]
            return out

        if self.with_cp and x.requires_grad:
            out = cp.checkpoint(_inner_forward, x, use_reentrant=False)
        else:
            out = _inner_forward(x)

        out = [self.relu(b) for b in out]
        if self.concat_output:
            out = torch.cat(out, dim=0)
        return out


def make_trident_res_layer(block, inplanes, planes, num_blocks, stride=1, trident_dilations=(1, 2, 3),
                           style='pytorch', with_cp=False, conv_cfg=None, norm_cfg=dict(type='BN'), dcn=None,
                           plugins=None, test_branch_idx=-1):
    """Build Trident Res Layers."""

    downsample = None
    if stride != 1 or inplanes != planes * block.expansion:
        downsample = []
        conv_stride = stride
        downsample.extend([
            build_conv_layer(conv_cfg, inplanes, planes * block.expansion, kernel_size=1, stride=conv_stride,
                             bias=False),
            build_norm_layer(norm_cfg, planes * block.expansion)[1]
        ])
        downsample = nn.Sequential(*downsample)

    layers = []
    for i in range(num_blocks):
        layers.append(
            block(
                inplanes=inplanes,
                planes=planes,
                stride=stride if i == 0 else 1,
                trident_dilations=trident_dilations,
                downsample=downsample if i == 0 else None,
                style=style,
                with_cp=with_cp,
                conv_cfg=conv_cfg,
                norm_cfg=norm_cfg,
                dcn=dcn,
                plugins=plugins,
                test_branch_idx=test_branch_idx,
                concat_output=True if i == num_blocks - 1 else False))
        inplanes = planes * block.expansion
    return nn.Sequential(*layers)


@BACKBONES.register_module()
class TridentResNet(ResNet):
    """The stem layer, stage 1 and stage 2 in Trident ResNet are identical to ResNet, while in
    stage 3, Trident BottleBlock is utilized to replace the normal BottleBlock to yield trident
    output. Different branch shares the convolution weight but uses different dilations to achieve
    multi-scale output.

                               / stage3(b0) \\
    x - stem - stage1 - stage2 - stage3(b1) - output
                               \\ stage3(b2) /

    Args:
        depth (int): Depth of resnet, from {50, 101, 152}.
        num_branch (int): Number of branches in TridentNet.
        test_branch_idx (int): In inference, all 3 branches will be used if `test_branch_idx==-1`,
            otherwise only branch with index `test_branch_idx` will be used.
        trident_dilations (tuple[int]): Dilations of different trident branch. len(trident_dilations)
            should be equal to num_branch.
    """  # noqa

    def __init__(self, depth, num_branch, test_branch_idx, trident_dilations, **kwargs):

        assert num_branch == len(trident_dilations)
        assert depth in (50, 101, 152)
        super().__init__(depth, **kwargs)
        assert self.num_stages == 3
        self.test_branch_idx = test_branch_idx
        self.num_branch = num_branch

        last_stage_idx = self.num_stages - 1
        stride = self.strides[last_stage_idx]
        dilation = trident_dilations
        dcn = self.dcn if self.stage_with_dcn[last_stage_idx] else None
        stage_plugins = None
        planes = self.base_channels * 2**last_stage_idx
        res_layer = make_trident_res_layer(
            TridentBottleneck,
            inplanes=(self.block.expansion * self.base_channels * 2**(last_stage_idx - 1)),
            planes=planes,
            num_blocks=self.stage_blocks[last_stage_idx],
            stride=stride,
            trident_dilations=dilation,
            style=self.style,
            with_cp=self.with_cp,
            conv_cfg=self.conv_cfg,
            norm_cfg=self.norm_cfg,
            dcn=dcn,
            plugins=stage_plugins,
            test_branch_idx=self.test_branch_idx)

        layer_name = f'layer{last_stage_idx + 1}'

        self.__setattr__(layer_name, res_layer)
        self.res_layers.pop(last_stage_idx)
        self.res_layers.insert(last_stage_idx, layer_name)


#: The backbone configs, mmdetection style: ``tridentnet_r101_caffe`` with all three branches in
#: inference, and the same config with narrow channels and fewer blocks for the smoke size.
#: ``zero_init_residual`` is off: with random weights a zeroed last norm would make the three
#: branches return the same features.
CONFIGS: dict[str, dict[str, Any]] = {
    "paper": dict(
        backbone=dict(
            type='TridentResNet',
            depth=101,
            num_branch=3,
            test_branch_idx=-1,
            trident_dilations=(1, 2, 3),
            num_stages=3,
            strides=(1, 2, 2),
            dilations=(1, 1, 1),
            out_indices=(2, ),
            frozen_stages=1,
            zero_init_residual=False,
            norm_cfg=dict(type='BN', requires_grad=False),
            norm_eval=True,
            style='caffe')),
}
CONFIGS["smoke"] = copy.deepcopy(CONFIGS["paper"])
CONFIGS["smoke"]["backbone"].update(base_channels=8, stage_blocks=(1, 1, 3))

IMAGE_SIZE = {"paper": 224, "smoke": 64}


def get_model(size: str = "paper", seed: int = 0) -> nn.Module:
    """TridentNet backbone on ResNet-101 (``paper``) or on a narrow ResNet with 1/1/3 blocks (``smoke``)."""
    check_size(size)
    cfg = copy.deepcopy(CONFIGS[size])
    with seeded(seed):
        model = build_backbone(cfg['backbone'])
        model.init_weights()
    return model.eval()


def get_input(batch_size: int = 1, size: str = "paper", seed: int = 0, **kw: Any) -> tuple[list, dict]:
    """``([image [BS, 3, H, H]], {})`` with H = 224 (paper) or 64 (smoke)."""
    check_size(size)
    check_batch_size(batch_size)
    if kw:
        raise ValueError(f"unexpected keyword arguments for tridentnet.get_input: {sorted(kw)}")
    side = IMAGE_SIZE[size]
    return [torch.randn(batch_size, 3, side, side, generator=generator(seed))], {}
