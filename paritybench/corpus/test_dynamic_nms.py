"""Corpus (nms): greedy non-maximum suppression and box filtering written in Python: while loops over remaining boxes, keep lists."""
from _paritybench_helpers import _mock_config, patch_functional
import abc, collections, copy, enum, functools, itertools, math, numbers, random, re, string, typing, warnings, matplotlib, numpy, pandas, scipy, sklearn, tensorflow, torch, torchaudio, torchvision
import numpy as np
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
patch_functional()


def box_iou(a, b):
    lt = torch.max(a[:, None, :2], b[None, :, :2])
    rb = torch.min(a[:, None, 2:], b[None, :, 2:])
    inter = (rb - lt).clamp(min=0).prod(-1)
    area = lambda x: (x[:, 2] - x[:, 0]) * (x[:, 3] - x[:, 1])
    return inter / (area(a)[:, None] + area(b)[None, :] - inter)


class GreedyNMS(nn.Module):

    def __init__(self, iou_threshold=0.3):
        super().__init__()
        self.t = iou_threshold

    def forward(self, boxes, scores):
        order = scores.argsort(descending=True)
        keep = []
        while order.numel() > 0:
            i = order[0]
            keep.append(int(i))
            if order.numel() == 1:
                break
            ious = box_iou(boxes[i].unsqueeze(0), boxes[order[1:]])[0]
            order = order[1:][ious <= self.t]
        return boxes[keep], keep


class ScoreFilter(nn.Module):

    def __init__(self, dim, threshold=0.5):
        super().__init__()
        self.score = nn.Linear(dim, 1)
        self.threshold = threshold

    def forward(self, feats, boxes):
        s = self.score(feats).sigmoid().squeeze(-1)
        keep = s > self.threshold
        if keep.sum() == 0:
            return boxes[:0], s[:0]
        return boxes[keep], s[keep]


def _boxes():
    xy = torch.rand([6, 2]) * 4
    return torch.cat([xy, xy + 1 + torch.rand([6, 2]) * 3], 1)


TESTCASES = [
    (GreedyNMS, lambda: ([], {}), lambda: ([_boxes(), torch.rand([6])], {}), False),
    (ScoreFilter, lambda: ([], {'dim': 3}), lambda: ([torch.randn([6, 3]), _boxes()], {}), False),
]

EXPECTED = {
    'GreedyNMS': {'dynamic': True, 'features': ['while order.numel() > 0', 'int(tensor) into a keep list']},
    'ScoreFilter': {'dynamic': True, 'features': ['if keep.sum() == 0 branch', 'boolean-mask outputs']},
}
