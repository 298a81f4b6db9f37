"""Reading a local sentence-transformers folder for the ONNX export: the older save format and
sentence-transformers 6's (what a fine-tuned encoder is saved as)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from router.encoders.model_folder import UnsupportedModel, sentence_config

MODULES = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.base.modules."
            "transformer.Transformer"},
           {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers."
            "sentence_transformer.modules.pooling.Pooling"},
           {"idx": 2, "name": "2", "path": "2_Normalize",
            "type": "sentence_transformers.base.modules.normalize.Normalize"}]


def _saved(folder: Path, pooling: dict[str, object]) -> Path:
    (folder / "1_Pooling").mkdir(parents=True)
    (folder / "modules.json").write_text(json.dumps(MODULES))
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    (folder / "sentence_bert_config.json").write_text(json.dumps({"transformer_task": "x"}))
    (folder / "tokenizer_config.json").write_text(json.dumps({"model_max_length": 256}))
    return folder


def test_a_sentence_transformers_6_save_is_read(tmp_path: Path) -> None:
    folder = _saved(tmp_path, {"embedding_dimension": 384, "pooling_mode": "mean",
                               "include_prompt": True})
    assert sentence_config(folder) == {"max_length": 256, "dimension": 384}


def test_other_pooling_in_the_new_format_is_refused(tmp_path: Path) -> None:
    folder = _saved(tmp_path, {"embedding_dimension": 384, "pooling_mode": "cls"})
    with pytest.raises(UnsupportedModel, match="mean pooling"):
        sentence_config(folder)
