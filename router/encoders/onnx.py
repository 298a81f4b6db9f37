"""A CPU query encoder: the sentence-transformers model exported to ONNX, run with onnxruntime.

The export runs once, locally, from the model's own weights (never from a model hub), and is
cached in a folder of its own (by default ``<index>/.onnx/<model>/``) holding ``model.onnx``,
the model's ``tokenizer.json`` and ``export.json`` (maximum length, dimension, pooling). Serving
then needs only onnxruntime, the ``tokenizers`` library and numpy: torch is never imported, so a
server starts in well under a second instead of several.

``quantized=True`` (``index.query_backend: onnx-int8``) runs an int8 copy of that export (its
MatMul weights quantized per channel by onnxruntime, ``quantize``), kept in a folder of its own
(``<model>-int8``): 2-3x faster a query, vectors at cosine 0.989-0.999 to the float32 ones
(docs/performance.md).

Encoding matches sentence-transformers (mean pooling over the attention mask, then L2
normalisation; cosine 1.000 to the torch vectors on the packaged all-MiniLM-L6-v2), with two
differences that only make it faster: a single text is never padded, and a batch is padded to
its longest text only (texts are sorted by length first). Only models made of a Transformer, a
mean-pooling layer and an optional Normalize layer are exported; others raise
:class:`UnsupportedModel` and stay on sentence-transformers.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import threading
import uuid
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from router.encoders import export_integrity
from router.encoders.base import normalise, resolve_model_path, set_offline
from router.encoders.model_folder import UnsupportedModel as UnsupportedModel
from router.encoders.model_folder import sentence_config

log = logging.getLogger(__name__)

EXPORT_FORMAT = 2  # 2: export.json records the SHA-256 of the model and tokenizer files
MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
META_FILE = "export.json"
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
CHECKED_FILES = (MODEL_FILE, TOKENIZER_FILE)
QUANTIZED_KEY, QUANTIZED = "quantized", "int8-matmul-per-channel"  # export.json of a copy


def export_dir(cache_dir: str | Path, model: str) -> Path:
    """Where the export of ``model`` lives under ``cache_dir``."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-") or "model"
    return Path(cache_dir) / slug


def export(model: str, target: Path, source: str | Path | None = None) -> Path:
    """Export ``model`` (name or local folder; its weights at ``source`` when ``model`` is an
    id, e.g. a fine-tuned model's) to ``target``, atomically; returns ``target``.

    Needs torch and transformers (build-time only). Loads local files only.
    """
    set_offline()
    source = Path(source) if source is not None else Path(resolve_model_path(model))
    if not source.is_dir():
        raise UnsupportedModel(f"{model}: not a local model folder; cannot export offline")
    meta = {**sentence_config(source), "format": EXPORT_FORMAT, "model": model}
    with _staged(target) as tmp:
        _export_graph(source, tmp / MODEL_FILE)
        _finish(tmp, source / TOKENIZER_FILE, meta)
    log.info("exported %s to ONNX at %s", model, target)
    return target


@contextmanager
def _staged(target: Path) -> Iterator[Path]:
    """A new folder beside ``target`` that replaces it when the block ends without an error
    (and is removed when it does not)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f".tmp-{target.name}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        yield tmp
        if target.exists():
            shutil.rmtree(target)
        os.rename(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _finish(folder: Path, tokenizer: Path, meta: dict[str, Any]) -> None:
    """Copy the tokenizer in and write ``export.json`` with the files' checksums."""
    shutil.copyfile(tokenizer, folder / TOKENIZER_FILE)
    meta[export_integrity.CHECKSUMS_KEY] = export_integrity.record(folder, CHECKED_FILES)
    (folder / META_FILE).write_text(json.dumps(meta, indent=1), encoding="utf-8")


def quantize(exported: Path, target: Path) -> Path:
    """Write an int8 copy of the float32 export in ``exported`` to ``target``, atomically:
    dynamic quantization of the MatMul weights, per output channel (the attention and
    feed-forward layers; the embeddings stay float32). Returns ``target``."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    meta = json.loads((exported / META_FILE).read_text(encoding="utf-8"))
    with _staged(target) as tmp:
        quantize_dynamic(str(exported / MODEL_FILE), str(tmp / MODEL_FILE), per_channel=True,
                         weight_type=QuantType.QInt8, op_types_to_quantize=["MatMul"])
        _finish(tmp, exported / TOKENIZER_FILE, {**meta, QUANTIZED_KEY: QUANTIZED})
    log.info("quantized the ONNX export of %s to int8 at %s", meta.get("model"), target)
    return target


def _export_graph(source: Path, out: Path) -> None:
    import torch
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    bert = AutoModel.from_pretrained(str(source), local_files_only=True).eval()

    class _Hidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.bert(input_ids=input_ids, attention_mask=attention_mask,
                             token_type_ids=token_type_ids).last_hidden_state

    sample = tuple(torch.ones(2, 8, dtype=torch.long) for _ in _INPUTS)
    axes = {name: {0: "batch", 1: "tokens"} for name in (*_INPUTS, "last_hidden_state")}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer notes on shape checks that are constant here
        torch.onnx.export(_Hidden(), sample, str(out), input_names=list(_INPUTS),
                          output_names=["last_hidden_state"], dynamic_axes=axes,
                          opset_version=17, dynamo=False)


def _pad(rows: Sequence[Sequence[int]]) -> np.ndarray:
    width = max(len(r) for r in rows)
    out = np.zeros((len(rows), width), dtype=np.int64)
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return out


class OnnxEmbedder:
    """The Embedder protocol on onnxruntime; same ``model_id`` (and vectors) as the torch one.

    ``threads`` is onnxruntime's intra-op thread count per encode call (1 measured best for
    single queries on a small shared machine: the other core serves a concurrent request).
    Thread-safe; the session and tokenizer load lazily, exporting first if needed.
    """

    def __init__(self, model: str, cache_dir: str | Path, *, threads: int = 1,
                 batch_size: int = 64, source: str | Path | None = None,
                 quantized: bool = False) -> None:
        self._model = model
        self._source = source  # the model's folder when ``model`` is an id, not a name/path
        self._cache_dir = cache_dir
        self._quantized = quantized
        self._folder = export_dir(cache_dir, model + ("-int8" if quantized else ""))
        self._threads = threads
        self._batch_size = max(1, batch_size)
        self._lock = threading.Lock()
        self._state: tuple[Any, Any, dict[str, Any]] | None = None

    @classmethod
    def checked(cls, model: str, cache_dir: str | Path, *, threads: int = 1,
                batch_size: int = 64, source: str | Path | None = None,
                quantized: bool = False) -> OnnxEmbedder:
        """An embedder for ``model``, or UnsupportedModel now (not on the first encode) if it
        is neither exported yet nor exportable."""
        embedder = cls(model, cache_dir, threads=threads, batch_size=batch_size, source=source,
                       quantized=quantized)
        if not embedder.is_exported():
            source = Path(source) if source is not None else Path(resolve_model_path(model))
            if not source.is_dir():
                raise UnsupportedModel(f"{model}: not a local model folder")
            sentence_config(source)
        return embedder

    def is_exported(self) -> bool:
        """True if a usable export of this model is already cached."""
        try:
            meta = json.loads((self._folder / META_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        return bool(meta.get("format") == EXPORT_FORMAT and meta.get("model") == self._model
                    and (meta.get(QUANTIZED_KEY) == QUANTIZED) == self._quantized
                    and (self._folder / MODEL_FILE).is_file())

    @property
    def model_id(self) -> str:
        return self._model

    @property
    def folder(self) -> Path:
        return self._folder

    @property
    def dimension(self) -> int:
        return int(self._load()[2]["dimension"])

    def prepare(self) -> None:
        """Export (if not cached yet) and load now rather than on the first encode."""
        self._load()

    def _load(self) -> tuple[Any, Any, dict[str, Any]]:
        with self._lock:
            if self._state is None:
                self._state = self._open()
            return self._state

    def _intact_meta(self) -> dict[str, Any]:
        """The export's metadata once its files match their checksums; a missing or damaged
        export is written again from the local model first (the damage logged at ERROR)."""
        if self.is_exported():
            meta: dict[str, Any] = json.loads((self._folder / META_FILE).read_text("utf-8"))
            damage = export_integrity.problem(self._folder, meta, CHECKED_FILES)
            if damage is None:
                return meta
            log.error("refused the ONNX query encoder at %s: %s; exporting it again from %s",
                      self._folder, damage, self._model)
        if self._quantized:  # from the float32 export (made or verified first)
            exact = OnnxEmbedder(self._model, self._cache_dir, source=self._source)
            exact._intact_meta()
            quantize(exact.folder, self._folder)
        elif self._source is None:
            export(self._model, self._folder)
        else:
            export(self._model, self._folder, self._source)
        meta = json.loads((self._folder / META_FILE).read_text(encoding="utf-8"))
        damage = export_integrity.problem(self._folder, meta, CHECKED_FILES)
        if damage is not None:
            raise UnsupportedModel(f"{self._folder}: a fresh export failed its check: {damage}")
        return meta

    def _open(self) -> tuple[Any, Any, dict[str, Any]]:
        meta = self._intact_meta()
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = self._threads
        options.inter_op_num_threads = 1
        # Idle pool threads sleep instead of spinning: on a shared machine spinning steals
        # the core another request (or process) needs.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        session = ort.InferenceSession(str(self._folder / MODEL_FILE), options,
                                       providers=["CPUExecutionProvider"])
        tokenizer = Tokenizer.from_file(str(self._folder / TOKENIZER_FILE))
        tokenizer.no_padding()  # the shipped file pads to 128: 4-6x slower for short texts
        tokenizer.enable_truncation(int(meta["max_length"]))
        log.info("loaded ONNX encoder for %s from %s (%d threads%s)", self._model,
                 self._folder, self._threads, ", int8" if self._quantized else "")
        return session, tokenizer, meta

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        session, tokenizer, meta = self._load()
        out = np.zeros((len(texts), int(meta["dimension"])), dtype=np.float32)
        if not texts:
            return out
        encodings = tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), self._batch_size):
            chunk = order[start:start + self._batch_size]
            ids = _pad([encodings[i].ids for i in chunk])
            mask = _pad([encodings[i].attention_mask for i in chunk])
            hidden = session.run(None, {"input_ids": ids, "attention_mask": mask,
                                        "token_type_ids": np.zeros_like(ids)})[0]
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            out[chunk] = pooled
        return normalise(out)
