"""The transformers model zoo as coverage programs (paritybench.zoo) and the training-step stage.

A zoo case is a base model type built from a small configuration; its calls change shape (a guard
hit, then a new sequence length and batch), so "dynamic" means a call with shapes seen before still
needed a new monitor run. The training step (``RunConfig(train=True)``) compares gradients and the
updated parameters with eager's, dropout on.
"""
from __future__ import annotations

import pytest
import torch

pytest.importorskip("transformers")

from paritybench import zoo  # noqa: E402
from paritybench.cli import main  # noqa: E402
from paritybench.compilers import run_magpy  # noqa: E402
from paritybench.evaluate import EagerTrace, RunConfig, make_inputs, run_eager_stage  # noqa: E402
from paritybench.loader import TestCase  # noqa: E402


def test_small_config_shrinks_every_size_in_nested_configs():
    config = zoo.build_config("clip")
    for part in (config.text_config, config.vision_config):
        assert part.hidden_size <= zoo.WIDTH and part.num_hidden_layers <= zoo.LAYERS
        assert part.intermediate_size <= zoo.FFN
    assert config.vision_config.image_size <= zoo.IMAGE


def test_per_layer_lists_follow_the_new_layer_count():
    config = zoo.build_config("gemma3_text")
    assert config.num_hidden_layers == zoo.LAYERS
    assert len(config.layer_types) == zoo.LAYERS
    hybrid = zoo.build_config("bailing_hybrid")   # two per-layer lists, of different kinds
    assert len(hybrid.layer_types) == len(hybrid.mlp_layer_types) == zoo.LAYERS


def test_key_value_heads_stay_equal_to_the_heads_where_the_defaults_have_them_equal():
    assert zoo.build_config("esmc").num_key_value_heads == zoo.build_config("esmc").num_attention_heads
    llama = zoo.build_config("llama")   # (the defaults: as many as the heads)
    mixtral = zoo.build_config("mixtral")   # (the defaults: fewer, grouped)
    assert llama.num_key_value_heads == llama.num_attention_heads
    assert mixtral.num_attention_heads % mixtral.num_key_value_heads == 0
    assert mixtral.num_key_value_heads < mixtral.num_attention_heads


def test_backbone_stages_follow_the_new_depth():
    config = zoo.build_config("beit")
    assert config.out_features == [config.stage_names[-1]]


def test_a_zoo_case_keeps_a_shape_for_two_calls_then_changes_it():
    (case,) = zoo.testcases("bert")
    cfg = RunConfig(compilers=("magpy",))
    shapes = [make_inputs(case, cfg, k)[1]["input_ids"].shape for k in range(3)]
    assert shapes[0] == shapes[1] != shapes[2]
    values = [make_inputs(case, cfg, k)[1]["input_ids"] for k in range(2)]
    assert not torch.equal(*values)   # same shape, new values


def test_one_record_per_shape_is_not_dynamic():
    (case,) = zoo.testcases("bert")
    cfg = RunConfig(compilers=("magpy",))
    eager, reference = run_eager_stage(case, cfg)
    assert eager["status"] == "ok"
    result = run_magpy(case, cfg, reference)
    assert result["status"] == "ok", result
    assert not result.get("dynamic"), result.get("dynamic_reason")
    assert result["stats_records"] == 2 and result["graphs"] == 1


def test_an_unknown_model_type_is_named(capsys):
    with pytest.raises(SystemExit) as ended:
        main(["zoo", "--models", "bert,no_such_model", "--out", "/tmp/unused-zoo-run"])
    assert "no_such_model" in str(ended.value)


class _DropoutNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(6, 6)
        self.drop = torch.nn.Dropout(0.5)

    def forward(self, x):
        return self.lin(self.drop(torch.relu(self.lin(x))))


_CASE = TestCase(index=0, name="DropoutNet", module_class=_DropoutNet, get_init_args=lambda: ([], {}),
                 get_forward_args=lambda: ([torch.randn(4, 6)], {}))


def test_a_training_step_compares_gradients_and_updates_with_dropout_on():
    cfg = RunConfig(compilers=("magpy",), train=True, no_grad=False)
    eager, reference = run_eager_stage(_CASE, cfg)
    assert eager["status"] == "ok"
    assert all("grads" in call for call in reference.calls)
    assert reference.state is not None
    result = run_magpy(_CASE, cfg, reference)
    assert result["status"] == "ok", result


def test_a_gradient_that_differs_is_wrong():
    cfg = RunConfig(compilers=("magpy",), train=True, no_grad=False)
    _, reference = run_eager_stage(_CASE, cfg)
    calls = [dict(call) for call in reference.calls]
    grads = dict(calls[1]["grads"]["grads"])
    grads["lin.weight"] = grads["lin.weight"] * 2
    calls[1]["grads"] = {**calls[1]["grads"], "grads": grads}
    gap = reference.difference(EagerTrace(calls, reference.state, reference.initial), cfg.rtol, cfg.atol)
    assert gap is not None and "call 2 grads" in gap


def test_a_training_step_needs_autograd():
    with pytest.raises(ValueError, match="autograd"):
        RunConfig(train=True, no_grad=True)


@pytest.mark.parametrize("flags, words", [
    (["--models", ""], "names no model type"),
    (["--models", "bert", "--limit", "0"], "limit"),
    (["--models", "bert", "--jobs", "0"], "jobs"),
    (["--models", "bert", "--calls", "0"], "calls"),
])
def test_bad_zoo_flags_end_with_one_line_and_write_nothing(tmp_path, flags, words):
    out = tmp_path / "run"
    with pytest.raises(SystemExit) as ended:
        main(["zoo", *flags, "--compilers", "magpy", "--out", str(out)])
    assert words in str(ended.value)
    assert not (out / "programs").exists()


def test_a_file_as_out_is_named(tmp_path):
    target = tmp_path / "run.json"
    target.write_text("{}")
    with pytest.raises(SystemExit) as ended:
        main(["zoo", "--models", "bert", "--compilers", "magpy", "--out", str(target)])
    assert "is a file" in str(ended.value)


def test_a_run_directory_of_other_programs_or_settings_is_refused_untouched(tmp_path):
    import json

    out = tmp_path / "run"
    (out / "programs").mkdir(parents=True)
    kept = out / "programs" / "test_bert.py"
    kept.write_text("# kept\n")
    (out / "run.json").write_text(json.dumps({"config": RunConfig(compilers=("magpy",)).as_json(),
                                              "suite": "paritybench"}))
    with pytest.raises(SystemExit) as ended:
        main(["zoo", "--models", "gpt2", "--compilers", "magpy", "--out", str(out)])
    assert "paritybench programs" in str(ended.value)
    (out / "run.json").write_text(json.dumps({"config": RunConfig(compilers=("magpy",), calls=5).as_json(),
                                              "suite": "zoo"}))
    with pytest.raises(SystemExit) as ended:
        main(["zoo", "--models", "gpt2", "--compilers", "magpy", "--out", str(out)])
    assert "another configuration" in str(ended.value)
    assert sorted(p.name for p in (out / "programs").iterdir()) == ["test_bert.py"]
    assert kept.read_text() == "# kept\n"
