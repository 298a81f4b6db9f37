"""The weight-space blend of a tuned encoder with its base: each floating weight moves the given
share of the way from the base's to the tuned one, in fp16 on disk; what is not a floating
weight stays the tuned model's; other architectures and weights outside 0..1 are refused, and
the CLI says so in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from router.encoders.tools_model.blend import WEIGHTS, blend_folder, mix


def _tensors(seed: int) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return {"layer.weight": torch.randn(4, 3, generator=g),
            "layer.bias": torch.randn(3, generator=g).half(),
            "position_ids": torch.arange(5)}


def test_the_blend_moves_each_weight_the_given_share_of_the_way_to_the_tuned_one() -> None:
    base, tuned = _tensors(0), _tensors(1)
    tuned["position_ids"] = torch.arange(5) + 10
    half = mix(base, tuned, 0.5)
    assert half["layer.weight"].dtype == torch.float16
    expected = (base["layer.weight"] + tuned["layer.weight"]) / 2
    assert torch.allclose(half["layer.weight"].float(), expected, atol=2e-3)
    assert not torch.allclose(half["layer.weight"].float(), tuned["layer.weight"], atol=1e-2)
    assert torch.equal(half["position_ids"], tuned["position_ids"])
    assert torch.allclose(mix(base, tuned, 0.0)["layer.bias"].float(),
                          base["layer.bias"].float())
    assert torch.allclose(mix(base, tuned, 1.0)["layer.weight"].float(),
                          tuned["layer.weight"], atol=2e-3)
    only_tuned = {**tuned, "extra.weight": torch.ones(2)}
    assert torch.equal(mix(base, only_tuned, 0.5)["extra.weight"], torch.ones(2))


def test_another_architecture_or_a_weight_outside_0_to_1_is_refused() -> None:
    base, tuned = _tensors(0), _tensors(1)
    with pytest.raises(ValueError, match=r"outside 0\.\.1"):
        mix(base, tuned, 1.5)
    tuned["layer.weight"] = torch.zeros(3, 4)
    with pytest.raises(ValueError, match=r"layer\.weight.*not the same architecture"):
        mix(base, tuned, 0.5)


def test_a_blended_folder_keeps_the_tuned_folders_other_files(tmp_path: Path) -> None:
    base, tuned = tmp_path / "base", tmp_path / "tuned"
    for folder, seed in ((base, 0), (tuned, 1)):
        folder.mkdir()
        save_file(_tensors(seed), str(folder / WEIGHTS))
    (tuned / "tokenizer.json").write_text("{}", encoding="utf-8")
    blend_folder(base, tuned, 0.25, tmp_path / "out")
    out = load_file(str(tmp_path / "out" / WEIGHTS))
    assert (tmp_path / "out" / "tokenizer.json").read_text(encoding="utf-8") == "{}"
    assert torch.equal(out["layer.weight"], mix(_tensors(0), _tensors(1), 0.25)["layer.weight"])
    assert torch.equal(load_file(str(tuned / WEIGHTS))["layer.weight"],
                       _tensors(1)["layer.weight"])  # the tuned folder itself is untouched


def test_train_encoder_refuses_a_bad_blend_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from router.cli import main

    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("", encoding="utf-8")
    assert main(["train-encoder", "--pairs", str(pairs), "--blend", "1.5"]) == 2
    assert "a weight from 0 to 1" in capsys.readouterr().err
    assert main(["train-encoder", "--pairs", str(pairs), "--blend", "0.5",
                 "--blend-from", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no training.json" in err and err.count("\n") == 1
    (tmp_path / "training.json").write_text(json.dumps({"recipe": {"blend": 0.5}}),
                                            encoding="utf-8")
    assert main(["train-encoder", "--pairs", str(pairs), "--blend", "0.5",
                 "--blend-from", str(tmp_path), "--out", str(tmp_path / "m")]) == 2
    assert "already blended" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()
