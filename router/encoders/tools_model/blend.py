"""Weight-space blending of a fine-tuned encoder with its base (WiSE-FT: Wortsman et al., "Robust
fine-tuning of zero-shot models", CVPR 2022): every weight becomes ``base + w * (tuned - base)``.
Fine-tuning on one kind of request (tool calls, one sentence naming one skill) moves the model
away from what the base knew of other kinds (long multi-step tasks over real skills); the blend
keeps most of what the tuning learned and most of what the base knew, at no cost at query time
(same architecture, one set of weights). ``w`` 1.0 is the tuned model as trained, 0.0 the base.

The blend is computed from the two folders' ``model.safetensors`` in float32 and written in
fp16 like the tuned model, so blending a trained folder afterwards (``train-encoder
--blend-from``) and blending as the recipe's last step give the same bytes."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

WEIGHTS = "model.safetensors"


def mix(base: Mapping[str, Any], tuned: Mapping[str, Any], weight: float) -> dict[str, Any]:
    """``base + weight * (tuned - base)`` for every floating tensor of ``tuned`` (fp16 out);
    tensors that are not floating point (position ids) and those the base lacks are the
    tuned model's. Raises ``ValueError`` on a shape mismatch (not the same architecture)."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"blend weight {weight} is outside 0..1")
    out: dict[str, Any] = {}
    for key, value in tuned.items():
        start = base.get(key)
        if start is None or not value.is_floating_point():
            out[key] = value
            continue
        if tuple(start.shape) != tuple(value.shape):
            raise ValueError(f"{key}: base {tuple(start.shape)} and tuned "
                             f"{tuple(value.shape)} differ (not the same architecture)")
        low, high = start.float(), value.float()
        out[key] = (low + weight * (high - low)).half()
    return out


def blend_folder(base: Path, tuned: Path, weight: float, out: Path) -> None:
    """Write ``out``: ``tuned``'s folder (tokenizer, config, record) with its weights blended
    towards ``base``'s by ``weight``. ``out`` may be ``tuned`` itself."""
    from safetensors.torch import load_file, save_file

    mixed = mix(load_file(str(base / WEIGHTS)), load_file(str(tuned / WEIGHTS)), weight)
    if out.resolve() != tuned.resolve():
        shutil.rmtree(out, ignore_errors=True)
        shutil.copytree(tuned, out)
    save_file({k: v.contiguous() for k, v in mixed.items()}, str(out / WEIGHTS),
              metadata={"format": "pt"})
