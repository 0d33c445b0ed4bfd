"""The benchmark programs (models/): interface, output shapes, determinism, dynamic inputs, and the
Python features each program is supposed to exercise. Smoke sizes only: paper sizes are checked by
hand (python -m models.timing --size paper)."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
import torch

import models
from experiments.compare import EXACT, compare

BS = 2

#: The expected output structure at smoke size and batch BS: a nested structure of shapes.
SMOKE_SHAPES = {
    "align": {"logits_per_image": (BS, BS), "logits_per_text": (BS, BS), "text_embeds": (BS, 80),
              "image_embeds": (BS, 80)},
    "bert": {"last_hidden_state": (BS, 16, 32), "pooler_output": (BS, 32)},
    "deberta": {"last_hidden_state": (BS, 16, 32)},
    "densenet": (BS, 10),
    "monodepth": [(BS, 2, 64, 64), (BS, 2, 32, 32), (BS, 2, 16, 16), (BS, 2, 8, 8)],
    "quantized": (BS, 10),
    "resnet": (BS, 10),
    "tridentnet": ((3 * BS, 128, 4, 4),),
    "lstm": ((8, BS, 16), [((BS, 16), (BS, 16))] * 2),
    "blockdrop": ((BS, 10), (BS, 6)),
}


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Smoke models are tiny: one intra-op thread is as fast, and far steadier on a busy machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def tensors(obj) -> list[torch.Tensor]:
    """Every tensor in a nested output (ModelOutput, dict, list, tuple), in order."""
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, Mapping):
        return [t for v in obj.values() for t in tensors(v)]
    if isinstance(obj, (list, tuple)):
        return [t for v in obj for t in tensors(v)]
    return []


def check_shapes(out, expected, where="output"):
    if isinstance(expected, dict):
        for key, shape in expected.items():
            check_shapes(out[key], shape, f"{where}.{key}")
    elif isinstance(expected, list) or (isinstance(expected, tuple) and expected
                                        and not isinstance(expected[0], int)):
        assert isinstance(out, (list, tuple)) and len(out) == len(expected), where
        for i, (o, e) in enumerate(zip(out, expected)):
            check_shapes(o, e, f"{where}[{i}]")
    else:
        assert isinstance(out, torch.Tensor), where
        assert tuple(out.shape) == expected, f"{where}: {tuple(out.shape)} != {expected}"


def run(model, args, kwargs):
    with torch.no_grad():
        return model(*args, **kwargs)


def assert_same(a, b):
    """Bit-for-bit the same output (the artifact's comparator with zero tolerance)."""
    assert tensors(a), "nothing to compare"
    found = compare(a, b, EXACT)
    assert found, found.mismatch


# ---------------------------------------------------------------------------------------------
# registry
# ---------------------------------------------------------------------------------------------

def test_registry_names_and_order():
    assert models.MODELS == models.STATIC_MODELS + models.DYNAMIC_MODELS
    assert len(models.STATIC_MODELS) == 8 and models.DYNAMIC_MODELS == ("lstm", "blockdrop")
    assert set(SMOKE_SHAPES) == set(models.MODELS)


def test_build_rejects_unknown_names_and_sizes():
    with pytest.raises(ValueError, match="valid models: align, bert"):
        models.build("resnet50")
    with pytest.raises(ValueError, match="valid sizes: paper, smoke"):
        models.build("resnet", size="huge")
    with pytest.raises(ValueError, match="valid kinds: bs"):
        models.dynamic_inputs("resnet", 3, kind="seqlen")
    with pytest.raises(ValueError, match="no dynamic inputs"):
        models.dynamic_inputs("align", 3)
    _, get_input = models.build("resnet")
    with pytest.raises(ValueError, match="batch_size"):
        get_input(0)
    with pytest.raises(ValueError, match="unexpected keyword"):
        get_input(1, colour=True)


# ---------------------------------------------------------------------------------------------
# every model at smoke size
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", models.MODELS)
def test_smoke_forward_shapes_and_determinism(name):
    model, get_input = models.build(name, size="smoke", seed=0)
    assert not model.training
    args, kwargs = get_input(BS)
    out = run(model, args, kwargs)
    check_shapes(out, SMOKE_SHAPES[name])
    assert all(torch.isfinite(t).all() for t in tensors(out)), "non-finite output"

    # the same call again, a rebuilt model with the same seed, and freshly drawn inputs agree
    assert_same(out, run(model, args, kwargs))
    again, get_input_again = models.build(name, size="smoke", seed=0)
    args2, kwargs2 = get_input_again(BS)
    assert_same(args, args2)
    assert_same(out, run(again, args2, kwargs2))

    # another seed gives other weights
    other, _ = models.build(name, size="smoke", seed=1)
    assert not all(torch.equal(x, y) for x, y in zip(tensors(out), tensors(run(other, args, kwargs))))


def test_build_does_not_disturb_the_callers_rng():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    models.build("densenet", size="smoke", seed=7)
    assert torch.equal(torch.rand(3), expected)


def test_paper_sizes_are_the_table_1_networks():
    # parameter counts of torchvision's ResNet-101 and DenseNet-121
    resnet = models.load("resnet").get_model("paper")
    assert sum(p.numel() for p in resnet.parameters()) == 44_549_160
    densenet = models.load("densenet").get_model("paper")
    assert sum(p.numel() for p in densenet.parameters()) == 7_978_856
    assert models.load("bert").config("paper").num_hidden_layers == 12
    assert models.load("deberta").config("paper").relative_attention
    args, kwargs = models.load("align").get_input(1, "paper")
    assert args[0].shape == (1, 64) and args[1].shape == (1, 3, 289, 289)


# ---------------------------------------------------------------------------------------------
# dynamic inputs (paper §8.5)
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["bert", "deberta", "densenet", "resnet"])
def test_dynamic_batch_sizes(name):
    inputs = models.dynamic_inputs(name, 12, size="smoke", kind="bs")
    sizes = [args[0].shape[0] for args, _ in inputs]
    assert len(inputs) == 12
    assert all(2 <= bs <= 16 for bs in sizes) and len(set(sizes)) > 3
    # the other dimensions stay those of get_input
    ref_args, _ = models.load(name).get_input(1, "smoke")
    assert all(args[0].shape[1:] == ref_args[0].shape[1:] for args, _ in inputs)
    assert_same(inputs, models.dynamic_inputs(name, 12, size="smoke", kind="bs"))
    model, _ = models.build(name, "smoke")
    for args, kwargs in inputs[:2]:
        assert tensors(run(model, args, kwargs))[0].shape[0] == args[0].shape[0]


@pytest.mark.parametrize("name", ["bert", "deberta"])
def test_dynamic_sequence_lengths(name):
    inputs = models.dynamic_inputs(name, 12, size="smoke", kind="seqlen")
    shapes = [tuple(args[0].shape) for args, _ in inputs]
    assert all(bs == 8 and 32 <= length <= 256 for bs, length in shapes)
    assert len({length for _, length in shapes}) > 3
    assert all(kwargs["attention_mask"].shape == args[0].shape for args, kwargs in inputs)
    model, _ = models.build(name, "smoke")
    args, kwargs = inputs[0]
    assert run(model, args, kwargs).last_hidden_state.shape[:2] == args[0].shape


def test_lstm_dynamic_inputs_change_the_trip_count():
    inputs = models.dynamic_inputs("lstm", 10, size="smoke")
    lengths = [args[0].shape[0] for args, _ in inputs]
    assert all(2 <= t <= 12 for t in lengths) and len(set(lengths)) > 3
    model, _ = models.build("lstm", "smoke")
    for args, kwargs in inputs[:3]:
        out, states = run(model, args, kwargs)
        assert out.shape[0] == args[0].shape[0] and len(states) == 2


def test_blockdrop_dynamic_inputs_change_the_executed_blocks():
    model, _ = models.build("blockdrop", "smoke")
    executed = []
    calls = []
    for block_list in model.rnet.blocks:
        for block in block_list:
            block.register_forward_hook(lambda m, i, o, b=block: calls.append(b))
    for args, kwargs in models.dynamic_inputs("blockdrop", 10, size="smoke"):
        calls.clear()
        _, policy = run(model, args, kwargs)
        executed.append(tuple(id(b) for b in calls))
        # a block runs exactly when the policy keeps it (batch of one)
        assert len(calls) == int(policy.sum())
    assert len(set(executed)) > 1, "every input ran the same blocks"


# ---------------------------------------------------------------------------------------------
# the Python features the programs are meant to exercise
# ---------------------------------------------------------------------------------------------

def test_densenet_memory_efficient_path_matches():
    module = models.load("densenet")
    plain = module.get_model("smoke")
    with torch.random.fork_rng():
        torch.manual_seed(0)
        efficient = module.DenseNet(4, (2, 3, 2, 2), 8, bn_size=2, num_classes=10, memory_efficient=True).eval()
    efficient.load_state_dict(plain.state_dict())
    (x,), _ = module.get_input(BS, "smoke")
    x.requires_grad_(True)  # features then require grad, so torch.utils.checkpoint is taken
    torch.testing.assert_close(efficient(x), plain(x))


def test_monodepth_keeps_disparities_on_the_module():
    model, get_input = models.build("monodepth", "smoke")
    args, kwargs = get_input(1)
    out = run(model, args, kwargs)
    assert out[0] is model.disp1 and out[3] is model.disp4
    assert all(((d >= 0) & (d <= 0.3)).all() for d in out)


def test_quantized_is_calibrated_and_quantizes():
    module = models.load("quantized")
    model, get_input = models.build("quantized", "smoke")
    measures = [m for m in model.modules() if isinstance(m, module.QuantMeasure)]
    assert measures and all(float(m.running_max) > float(m.running_min) for m in measures)
    # a quantized weight takes at most 2**8 distinct values
    conv = model.layer1[0].conv1
    qweight = module.quantize(conv.weight.detach(), num_bits=8, min_value=float(conv.weight.min()),
                              max_value=float(conv.weight.max()))
    assert qweight.unique().numel() <= 256
    # training mode updates the running statistics in forward; eval mode does not
    args, kwargs = get_input(16)
    before = measures[0].running_min.clone()
    run(model, args, kwargs)
    assert torch.equal(measures[0].running_min, before)
    model.train()
    run(model, args, kwargs)
    assert not torch.equal(measures[0].running_min, before)


def test_tridentnet_branches_share_weights_with_different_dilations():
    model, get_input = models.build("tridentnet", "smoke")
    trident = [m for m in model.modules() if type(m).__name__ == "TridentConv"]
    assert len(trident) == 3 and all(m.dilations == (1, 2, 3) for m in trident)
    args, kwargs = get_input(1)
    (features,) = run(model, args, kwargs)
    # one image, three branches on the batch axis, and the dilations make them differ
    assert features.shape[0] == 3 and not torch.allclose(features[0], features[1])
    assert "TridentResNet" in models.load("tridentnet").BACKBONES


def test_dynamic_stream_ranges_can_be_cut():
    """Figure 17's streams at paper size on a small machine: the ranges are settings
    (``experiment.stream``), checked, and only the kind's own keys are used."""
    inputs = models.dynamic_inputs("resnet", 12, size="smoke", kind="bs", stream={"bs_range": [1, 3]})
    assert {args[0].shape[0] for args, _ in inputs} <= {1, 2, 3}
    inputs = models.dynamic_inputs("bert", 8, size="smoke", kind="seqlen",
                                   stream={"bs_range": [2, 16], "seqlen_range": [8, 12], "seqlen_batch": 1})
    assert all(args[0].shape[0] == 1 and 8 <= args[0].shape[1] <= 12 for args, _ in inputs)
    default = models.dynamic_inputs("bert", 4, size="smoke", kind="bs")
    assert_same(default, models.dynamic_inputs("bert", 4, size="smoke", kind="bs",
                                               stream={"bs_range": [2, 16], "seqlen_range": [32, 256], "seqlen_batch": 8}))
    with pytest.raises(ValueError, match="unknown stream settings"):
        models.dynamic_inputs("bert", 4, size="smoke", kind="bs", stream={"bs_rnge": [1, 2]})
    with pytest.raises(ValueError, match="bs_range must be two integers"):
        models.dynamic_inputs("densenet", 4, size="smoke", kind="bs", stream={"bs_range": [4, 2]})
    with pytest.raises(ValueError, match="no seqlen_range"):
        models.dynamic_inputs("lstm", 4, size="smoke", kind="seqlen", stream={"seqlen_range": [4, 8]})
