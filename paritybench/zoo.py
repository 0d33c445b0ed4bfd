"""The Hugging Face ``transformers`` model zoo as ParityBench-format programs.

What users compile today is mostly ``transformers``. This module turns every *base model type*
of the installed ``transformers`` (``MODEL_MAPPING_NAMES``: ``bert -> BertModel``, ...) into one
test case the coverage runner (:mod:`paritybench.runner`) runs like any ParityBench file: the
model is built from a small configuration with seeded random weights (nothing is downloaded),
called eagerly twice for the reference, then under each compiler, and compared.

How a model type becomes a case, generically (no model is named anywhere):

* **A small configuration**: the type's config class with its defaults, every size shrunk
  (widths to 32, layers to 2, heads to 4, key/value heads to 2, experts to 4, vocabularies to 99,
  images to 64 pixels, stage depths to 1, norm groups to 8), in nested sub-configurations (text,
  vision, audio) too; per-layer lists (``layer_types``) cut to the new layer count, backbone stage
  selections left to their defaults; token ids kept inside the vocabulary.
* **Inputs the model's ``forward`` takes**: input sets are tried in a fixed order (token ids;
  pixels; both; raw audio; audio features; each with decoder token ids when ``forward`` takes
  them) and the first one that covers every required parameter and runs eagerly is used.
* **Changing shapes**: call 1 and 2 share a shape (a guard hit), call 3 has a longer sequence and a
  larger batch (a new shape), so a compiler that specialised on one length is seen.

``python -m paritybench zoo`` writes one tiny program per model type into ``<out>/programs/``
(``TESTCASES = testcases("bert")``, with the ``transformers`` version in its text, so a new version
reruns it) and runs that directory; ``--train`` runs a training step instead of the forward pass
(:class:`paritybench.evaluate.RunConfig`'s ``train``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

__all__ = ["ZooBuildError", "base_model_types", "build_config", "testcases", "write_programs"]

#: Sizes a small configuration takes, by the attribute names configurations use for them.
_WIDTHS = ("hidden_size", "d_model", "n_embd", "embed_dim", "emb_dim", "hidden_dim", "dim", "word_embed_proj_dim",
           "projection_dim", "text_embed_dim", "vision_embed_dim", "embedding_size", "d_embed")
_LAYERS = ("num_hidden_layers", "n_layer", "n_layers", "num_layers", "encoder_layers", "decoder_layers",
           "num_decoder_layers", "num_encoder_layers", "depth")
_HEADS = ("num_attention_heads", "n_head", "n_heads", "num_heads", "encoder_attention_heads",
          "decoder_attention_heads", "num_attention_heads_per_layer", "mamba_n_heads")
_KV_HEADS = ("num_key_value_heads", "n_kv_heads", "num_kv_heads", "multi_query_group_num")
_FFN = ("intermediate_size", "ffn_dim", "encoder_ffn_dim", "decoder_ffn_dim", "n_inner", "d_ff", "ffn_hidden_size",
        "moe_intermediate_size", "shared_expert_intermediate_size", "dim_feedforward")
_EXPERTS = ("num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts")
_EXPERTS_PER_TOKEN = ("num_experts_per_tok", "moe_topk", "top_k")
_VOCAB = ("vocab_size",)
_TOKEN_IDS = ("pad_token_id", "bos_token_id", "eos_token_id", "sep_token_id", "cls_token_id",
              "decoder_start_token_id", "mask_token_id", "unk_token_id")
_IMAGE = ("image_size",)
_GROUPS = ("num_groups", "norm_num_groups", "resnet_groups", "num_norm_groups")

WIDTH, LAYERS, HEADS, KV_HEADS, FFN, EXPERTS, VOCAB, IMAGE = 32, 2, 4, 2, 64, 4, 99, 64
#: (batch, sequence length) of each call: calls 1 and 2 share a shape, call 3 has a new one.
CALL_SHAPES = ((2, 7), (2, 7), (3, 11))


class ZooBuildError(Exception):
    """A model type the zoo cannot build a small case for (no config class, no usable input set)."""


def base_model_types() -> list[str]:
    """Every base model type of the installed ``transformers``, sorted."""
    from transformers.models.auto.modeling_auto import MODEL_MAPPING_NAMES

    return sorted(MODEL_MAPPING_NAMES)


def _model_class(model_type: str) -> type:
    import transformers
    from transformers.models.auto.modeling_auto import MODEL_MAPPING_NAMES

    name = MODEL_MAPPING_NAMES.get(model_type)
    if isinstance(name, (list, tuple)):
        name = name[0]
    cls = getattr(transformers, name, None) if name else None
    if cls is None:
        raise ZooBuildError(f"transformers has no base model class for {model_type!r}")
    return cls


def _shrink(d: dict[str, Any]) -> dict[str, Any]:
    """A configuration dict with every size made small; nested configuration dicts too."""
    out = dict(d)
    for key, value in d.items():
        if isinstance(value, dict) and "model_type" in value:
            out[key] = _shrink(value)
    _set_ints(out, _WIDTHS, WIDTH)
    _set_ints(out, _LAYERS, LAYERS)
    _set_ints(out, _HEADS, HEADS)
    # key/value heads: as many as the query heads where the defaults have as many (some models
    # require it), otherwise a divisor of them
    heads_before = next((d[k] for k in _HEADS if isinstance(d.get(k), int)), None)
    for key in _KV_HEADS:
        if isinstance(d.get(key), int) and not isinstance(d.get(key), bool):
            out[key] = HEADS if d[key] == heads_before else min(d[key], KV_HEADS)
    _set_ints(out, _FFN, FFN)
    _set_ints(out, _EXPERTS, EXPERTS)
    _set_ints(out, _EXPERTS_PER_TOKEN, 2)
    _set_ints(out, _VOCAB, VOCAB)
    _set_ints(out, _IMAGE, IMAGE)
    if isinstance(out.get("head_dim"), int):
        out["head_dim"] = WIDTH // HEADS
    for key in ("hidden_sizes", "embed_dims", "dims", "neck_hidden_sizes", "embedding_sizes"):
        sizes = out.get(key)
        if isinstance(sizes, (list, tuple)) and sizes and all(isinstance(s, int) for s in sizes):
            out[key] = [16 * 2 ** min(i, 2) for i in range(len(sizes))]
    for key in ("depths", "num_layers_per_stage", "stage_depths"):
        depths = out.get(key)
        if isinstance(depths, (list, tuple)) and depths and all(isinstance(s, int) for s in depths):
            out[key] = [1] * len(depths)
    for key in ("num_heads", "heads", "num_attention_heads"):
        heads = out.get(key)
        if isinstance(heads, (list, tuple)) and heads and all(isinstance(s, int) for s in heads):
            out[key] = [min(h, 2) for h in heads]
    _set_ints(out, _GROUPS, 8)
    # Per-layer lists (``layer_types``, ``mlp_layer_types``): one entry per original layer, cut to
    # the new count; backbone stage selections name stages that no longer exist: the defaults.
    before = next((d[k] for k in _LAYERS if isinstance(d.get(k), int)), None)
    layers = next((out[k] for k in _LAYERS if isinstance(out.get(k), int)), None)
    for key, value in d.items():
        if isinstance(value, list) and before and layers and len(value) == before > layers \
                and not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
            out[key] = value[:layers]
        if isinstance(value, dict) and before and layers and value and all(type(k) is int for k in value) \
                and max(value) >= layers:
            out[key] = {k: v for k, v in value.items() if k < layers}   # settings per layer index
    for key in ("stage_names", "out_features", "out_indices"):
        out.pop(key, None)
    vocab = out.get("vocab_size")
    if isinstance(vocab, int):
        for key in _TOKEN_IDS:
            token = out.get(key)
            if isinstance(token, int) and token >= vocab:
                out[key] = vocab - 1 - _TOKEN_IDS.index(key)
    return out


def _set_ints(d: dict[str, Any], keys: Iterable[str], value: int) -> None:
    for key in keys:
        if isinstance(d.get(key), int) and not isinstance(d.get(key), bool) and d[key] > value:
            d[key] = value


def build_config(model_type: str) -> Any:
    """The small configuration of ``model_type`` (its defaults with every size shrunk)."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    try:
        config_class = CONFIG_MAPPING[model_type]
    except KeyError:
        raise ZooBuildError(f"transformers has no configuration class for {model_type!r}") from None
    small = _shrink(config_class().to_dict())
    small.pop("model_type", None)
    small.pop("transformers_version", None)
    config = config_class.from_dict(small)
    for attr in ("_attn_implementation", "attn_implementation"):
        try:
            setattr(config, attr, "eager")   # the same attention code under every compiler
        except Exception:  # noqa: BLE001 - a configuration without the setting keeps its own
            pass
    return config


def _tokens(config: Any, batch: int, length: int) -> Any:
    import torch

    vocab = _find(config, "vocab_size") or VOCAB
    return torch.randint(3, max(vocab, 4), (batch, length))


def _find(config: Any, name: str) -> Any:
    """An attribute of the configuration, or of its text / vision / audio sub-configuration."""
    value = getattr(config, name, None)
    if value is not None:
        return value
    for sub in ("text_config", "vision_config", "audio_config", "encoder", "decoder"):
        part = getattr(config, sub, None)
        if part is not None and getattr(part, name, None) is not None:
            return getattr(part, name)
    return None


def _pixels(config: Any, batch: int, length: int) -> Any:
    import torch

    vision = getattr(config, "vision_config", None) or config
    size = getattr(vision, "image_size", None) or IMAGE
    if isinstance(size, (list, tuple)):
        size = size[0]
    channels = getattr(vision, "num_channels", None) or 3
    return torch.randn(batch, channels, size, size)


def _audio(config: Any, batch: int, length: int) -> Any:
    import torch

    return torch.randn(batch, 400 * length)


def _features(config: Any, batch: int, length: int) -> Any:
    import torch

    bins = _find(config, "num_mel_bins") or _find(config, "feature_size") or 80
    # An encoder with a fixed number of source positions takes exactly two frames per position.
    positions = _find(config, "max_source_positions")
    frames = 2 * positions if isinstance(positions, int) else 4 * length
    return torch.randn(batch, bins, frames)


#: Input sets tried in order; each maps ``forward``'s parameter names to a maker (config, batch, length).
_INPUT_SETS: tuple[dict[str, Callable[[Any, int, int], Any]], ...] = (
    {"input_ids": _tokens},
    {"pixel_values": _pixels},
    {"input_ids": _tokens, "pixel_values": _pixels},
    {"input_values": _audio},
    {"input_features": _features},
    {"input_ids": _tokens, "input_features": _features},
)


def _candidates(forward: Callable[..., Any]) -> list[dict[str, Callable[[Any, int, int], Any]]]:
    params = inspect.signature(forward).parameters
    required = {n for n, p in params.items()
                if p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    required.discard("self")
    out = []
    for inputs in _INPUT_SETS:
        if not set(inputs) <= set(params):
            continue
        chosen = dict(inputs)
        if "decoder_input_ids" in params:
            chosen["decoder_input_ids"] = _tokens
        if required <= set(chosen):
            out.append(chosen)
    return out


class _Inputs:
    """The forward-args factory of a zoo case: same maker set, shape by call number."""

    def __init__(self, config: Any, makers: dict[str, Callable[[Any, int, int], Any]]) -> None:
        self.config = config
        self.makers = makers

    def __call__(self, call: int = 0) -> tuple[list[Any], dict[str, Any]]:
        batch, length = CALL_SHAPES[min(call, len(CALL_SHAPES) - 1)]
        return [], {name: make(self.config, batch, length) for name, make in self.makers.items()}


def testcases(model_type: str) -> list[Any]:
    """The ParityBench test case of one model type: the base model class, a factory for its small
    configuration, and the first input set under which it runs eagerly (see the module docstring)."""
    import torch

    from .loader import TestCase

    cls = _model_class(model_type)
    config = build_config(model_type)
    candidates = _candidates(cls.forward)
    if not candidates:
        params = [n for n in inspect.signature(cls.forward).parameters if n != "self"]
        raise ZooBuildError(f"{cls.__name__}.forward takes none of the zoo's input sets (parameters: {params[:8]})")
    torch.manual_seed(0)
    model = cls(config).eval()
    errors = []
    for makers in candidates:
        inputs = _Inputs(config, makers)
        try:
            with torch.no_grad():
                args, kwargs = inputs(0)
                model(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the next input set may fit
            errors.append(f"{'+'.join(makers)}: {type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}")
            continue
        return [TestCase(index=0, name=cls.__name__, module_class=cls, get_init_args=lambda: ([config], {}),
                         get_forward_args=inputs, get_call_args=inputs)]
    raise ZooBuildError(f"{cls.__name__} runs eagerly with none of its input sets: " + "; ".join(errors))


_PROGRAM = '''"""transformers zoo: the base model of type {model_type!r} (transformers {version}).

Made by paritybench.zoo (python -m paritybench zoo): a small configuration, seeded random weights.
"""
from paritybench.zoo import testcases

TESTCASES = testcases({model_type!r})
'''


def write_programs(directory: Path, model_types: Iterable[str]) -> list[Path]:
    """One ParityBench-format program per model type in ``directory`` (kept when unchanged, so a
    resumed run sees the same file digests); programs of other types are removed."""
    import transformers

    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for model_type in model_types:
        path = directory / f"test_{model_type}.py"
        text = _PROGRAM.format(model_type=model_type, version=transformers.__version__)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
        written.append(path)
    keep = {p.name for p in written}
    for stale in directory.glob("test_*.py"):
        if stale.name not in keep:
            stale.unlink()
    return written
