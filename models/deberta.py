"""DeBERTa-base from huggingface/transformers (Table 1: ``DeBERTa``, text length 256).

The program is transformers' own ``DebertaModel`` built from a ``DebertaConfig`` (random seeded weights,
no download) with the classic ``eager`` attention, called the way users call it: token ids and an
attention mask, returning a ``ModelOutput`` (an ordered-dict subclass). Besides what BERT runs,
DeBERTa's disentangled attention adds Python that splits other compilers: the relative-position
matrix built from sizes at call time, ``pos_att_type`` string membership tests
(``"c2p" in self.pos_att_type``), scale factors computed with Python arithmetic on the number of
attention kinds, and helper functions on tensor sizes.
"""

from __future__ import annotations

from typing import Any

import torch

from models._common import (
    BS_RANGE,
    SEQLEN_BATCH,
    SEQLEN_RANGE,
    check_batch_size,
    check_size,
    dynamic_text_inputs,
    seeded,
    text_input,
)

__all__ = ["get_model", "get_input", "get_dynamic_inputs", "config", "SEQ_LEN"]

DYNAMIC_KINDS = ("bs", "seqlen")
#: Text length per size (Table 1: 256).
SEQ_LEN = {"paper": 256, "smoke": 16}
VOCAB = {"paper": 50265, "smoke": 1000}


def config(size: str = "paper"):
    """The ``DebertaConfig`` of ``size``: microsoft/deberta-base (paper) or two layers of width 32 (smoke).

    ``DebertaConfig()``'s defaults switch relative attention off; deberta-base has it on with
    content-to-position and position-to-content terms, so both sizes set it.
    """
    from transformers import DebertaConfig

    check_size(size)
    if size == "paper":
        return DebertaConfig(relative_attention=True, pos_att_type=["c2p", "p2c"], max_relative_positions=-1,
                             position_biased_input=False, layer_norm_eps=1e-7, attn_implementation="eager")
    return DebertaConfig(vocab_size=VOCAB["smoke"], hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=512, relative_attention=True,
                         pos_att_type=["c2p", "p2c"], max_relative_positions=-1, position_biased_input=False,
                         layer_norm_eps=1e-7, attn_implementation="eager")


def get_model(size: str = "paper", seed: int = 0) -> torch.nn.Module:
    """``transformers.DebertaModel`` of :func:`config` with weights seeded by ``seed``, in eval mode."""
    from transformers import DebertaModel

    cfg = config(size)
    with seeded(seed):
        model = DebertaModel(cfg)
    return model.eval()


def get_input(batch_size: int = 1, size: str = "paper", seed: int = 0, seq_len: int | None = None,
              **kw: Any) -> tuple[list, dict]:
    """``([input_ids [BS, L]], {"attention_mask": [BS, L]})`` with L = 256 (paper) or 16 (smoke)."""
    check_size(size)
    check_batch_size(batch_size)
    if kw:
        raise ValueError(f"unexpected keyword arguments for deberta.get_input: {sorted(kw)}")
    return text_input(batch_size, SEQ_LEN[size] if seq_len is None else seq_len, VOCAB[size], seed)


def get_dynamic_inputs(batch_size: int = SEQLEN_BATCH, n: int = 10, size: str = "paper", kind: str = "bs",
                       seed: int = 0, bs_range=BS_RANGE, seqlen_range=SEQLEN_RANGE) -> list[tuple[list, dict]]:
    """``n`` inputs for ``deberta-bs`` or ``deberta-seqlen`` (paper §8.5).

    ``bs``: batch size uniform in ``bs_range`` ([2, 16]) at the size's text length (``batch_size`` not used).
    ``seqlen``: batch ``batch_size`` (8 in the paper), text length uniform in ``seqlen_range`` ([32, 256]).
    """
    return dynamic_text_inputs(get_input, "deberta", batch_size, n, size, kind, seed, bs_range, seqlen_range)
