"""ALIGN from huggingface/transformers (Table 1: ``ALIGN``, text length 64, image [BS, 3, 289, 289]).

The program is transformers' own ``AlignModel`` built from an ``AlignConfig`` (random seeded
weights, no download), sized like kakaobrain/align-base: a BERT-base text encoder and an
EfficientNet-B7 image encoder at 289x289, both projected to 640 dimensions. It is a multi-model
program: two encoders in one forward, each returning its own ``ModelOutput``, combined by
normalised dot products. Beyond BERT's Python (see models/bert.py) the EfficientNet side builds
its blocks from config lists with ``round_filters``/``round_repeats`` arithmetic, pads with a
module chosen at construction (``adjust_padding``), applies squeeze-and-excitation, drop-connect
decided by flags, and pools with an ``AvgPool2d`` whose kernel is the config's ``hidden_dim``.
"""

from __future__ import annotations

from typing import Any

import torch

from models._common import check_batch_size, check_size, generator, seeded, text_input

__all__ = ["get_model", "get_input", "config", "SEQ_LEN", "IMAGE_SIZE"]

#: Text length and image side per size (Table 1: 64 tokens, 289x289).
SEQ_LEN = {"paper": 64, "smoke": 8}
IMAGE_SIZE = {"paper": 289, "smoke": 64}
VOCAB = {"paper": 30522, "smoke": 1000}


def config(size: str = "paper"):
    """The ``AlignConfig`` of ``size``.

    ``paper``: kakaobrain/align-base (BERT-base text config; ``AlignVisionConfig``'s defaults are
    EfficientNet-B7; image side 289; projection 640). ``smoke``: a two-layer text encoder of width
    32 and the same seven EfficientNet stages at width 0.25 and depth 0.5, projected to 80 (the
    image embedding width, ``round_filters(320)`` at width 0.25, must equal the projection).
    """
    from transformers import AlignConfig, AlignTextConfig, AlignVisionConfig

    check_size(size)
    if size == "paper":
        text = AlignTextConfig()
        vision = AlignVisionConfig(image_size=IMAGE_SIZE["paper"])
        cfg = AlignConfig(text_config=text.to_dict(), vision_config=vision.to_dict(), projection_dim=640)
    else:
        text = AlignTextConfig(vocab_size=VOCAB["smoke"], hidden_size=32, num_hidden_layers=2,
                               num_attention_heads=2, intermediate_size=64)
        vision = AlignVisionConfig(image_size=IMAGE_SIZE["smoke"], width_coefficient=0.25, depth_coefficient=0.5)
        cfg = AlignConfig(text_config=text.to_dict(), vision_config=vision.to_dict(), projection_dim=80)
    cfg._attn_implementation = "eager"
    cfg.text_config._attn_implementation = "eager"
    return cfg


def get_model(size: str = "paper", seed: int = 0) -> torch.nn.Module:
    """``transformers.AlignModel`` of :func:`config` with weights seeded by ``seed``, in eval mode."""
    from transformers import AlignModel

    cfg = config(size)
    with seeded(seed):
        model = AlignModel(cfg)
        # transformers draws every conv weight from N(0, 0.02); through EfficientNet-B7's 55
        # blocks the image features then shrink below 1e-23 (and underflow at the smoke size),
        # which makes the normalised embeddings inf/NaN. Variance-preserving (fan-in) scaling
        # keeps them well inside float32's range (measured: ~1e-4 at smoke, ~1e4 at paper size).
        for module in model.vision_model.modules():
            if isinstance(module, torch.nn.Conv2d):
                torch.nn.init.kaiming_normal_(module.weight, mode="fan_in", nonlinearity="relu")
    return model.eval()


def get_input(batch_size: int = 1, size: str = "paper", seed: int = 0, **kw: Any) -> tuple[list, dict]:
    """``([input_ids [BS, L], pixel_values [BS, 3, H, H]], {"attention_mask": [BS, L]})``.

    L = 64 and H = 289 (paper), L = 8 and H = 64 (smoke).
    """
    check_size(size)
    check_batch_size(batch_size)
    if kw:
        raise ValueError(f"unexpected keyword arguments for align.get_input: {sorted(kw)}")
    (input_ids,), kwargs = text_input(batch_size, SEQ_LEN[size], VOCAB[size], seed)
    side = IMAGE_SIZE[size]
    pixel_values = torch.randn(batch_size, 3, side, side, generator=generator(seed + 1_000_003))
    return [input_ids, pixel_values], kwargs
