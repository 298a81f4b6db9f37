"""The encoder backends by name (``index.query_backend``): what each loads, whether it runs an
ONNX export of the model, and whether that is an int8 copy. Everything that picks or compares
a backend asks here (``backend``); nothing outside this package spells a backend's name.
Light: imports nothing heavy, so a configuration check or a CLI's choices cost nothing."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Backend:
    """One encoder backend. Every backend gives the same model id; ``int8`` ones give vectors
    close to, not equal to, the full-precision model's."""

    name: str
    loads: str  # the runtime that encodes: "sentence-transformers" (on torch) or "onnxruntime"
    exported: bool  # runs an ONNX export of the model, made once (at index time if asked)
    int8: bool  # an int8 copy of that export (router.encoders.int8)
    full_precision: str  # the backend giving this one's full-precision vectors (itself unless int8)


TORCH = Backend("torch", "sentence-transformers", exported=False, int8=False,
                full_precision="torch")
ONNX = Backend("onnx", "onnxruntime", exported=True, int8=False, full_precision="onnx")
ONNX_INT8 = Backend("onnx-int8", "onnxruntime", exported=True, int8=True, full_precision="onnx")

BACKENDS: dict[str, Backend] = {b.name: b for b in (TORCH, ONNX, ONNX_INT8)}
BUILD = TORCH.name  # a build embeds with sentence-transformers (router.builder.plan)
SERVE = ONNX_INT8.name  # the query backend when none is configured (IndexConfig.query_backend)


class UnknownBackend(ValueError):
    """A backend name that is not registered."""


def names() -> tuple[str, ...]:
    """The registered names, in order (for argparse choices and configuration checks)."""
    return tuple(BACKENDS)


def backend(name: str) -> Backend:
    """The backend called ``name``; UnknownBackend naming the known ones otherwise."""
    found = BACKENDS.get(name)
    if found is None:
        raise UnknownBackend(f"unknown embedding backend {name!r}; use one of "
                             f"{', '.join(BACKENDS)}")
    return found


def is_hash_model(model: str) -> bool:
    """``hash`` / ``hash-N``: the hashing test embedder, which every backend gives as it is
    (nothing to load or export)."""
    return model == "hash" or model.startswith("hash-")
