"""What a local sentence-transformers model folder is made of, as far as the ONNX export needs:
its modules (a Transformer, mean pooling, an optional Normalize), its maximum sequence length and
its dimension. Reads both the older save format and sentence-transformers 6's (a fine-tuned
model of an index version is saved by the installed version)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class UnsupportedModel(RuntimeError):
    """The model cannot be exported (not a Transformer + mean pooling sentence model)."""


def sentence_config(folder: Path) -> dict[str, Any]:
    """Check the model's module list and return its maximum sequence length and pooling."""
    modules_file = folder / "modules.json"
    if not modules_file.is_file():
        raise UnsupportedModel(f"{folder}: no modules.json (not a local sentence model)")
    modules = json.loads(modules_file.read_text(encoding="utf-8"))
    kinds = [m.get("type", "").rsplit(".", 1)[-1] for m in modules]
    if kinds[:2] != ["Transformer", "Pooling"] or any(k != "Normalize" for k in kinds[2:]):
        raise UnsupportedModel(f"{folder}: modules {kinds} (need Transformer, Pooling)")
    pooling_dir = folder / modules[1].get("path", "1_Pooling")
    pooling = json.loads((pooling_dir / "config.json").read_text(encoding="utf-8"))
    if not _mean_pooling(pooling):
        raise UnsupportedModel(f"{folder}: only mean pooling is supported")
    return {"max_length": _max_length(folder),
            "dimension": int(pooling.get("word_embedding_dimension")
                             or pooling["embedding_dimension"])}


def _mean_pooling(pooling: dict[str, Any]) -> bool:
    """Mean pooling alone, in the older (``pooling_mode_mean_tokens``) or the
    sentence-transformers 6 (``pooling_mode: "mean"``) form of the pooling config."""
    if "pooling_mode" in pooling:
        mode = pooling["pooling_mode"]
        return bool(mode == "mean" or mode == ["mean"])
    return bool(pooling.get("pooling_mode_mean_tokens")) and not any(
        v for k, v in pooling.items() if k.startswith("pooling_mode_")
        and k != "pooling_mode_mean_tokens")


def _max_length(folder: Path) -> int:
    """The model's maximum sequence length: ``sentence_bert_config.json`` (older saves),
    else the tokenizer's ``model_max_length`` (sentence-transformers 6 saves)."""
    for name, key in (("sentence_bert_config.json", "max_seq_length"),
                      ("tokenizer_config.json", "model_max_length")):
        path = folder / name
        if path.is_file():
            value = json.loads(path.read_text(encoding="utf-8")).get(key)
            if isinstance(value, int) and 0 < value < 1_000_000:
                return value
    return 512
