"""A CPU query encoder: the sentence-transformers model exported to ONNX, run with onnxruntime.

The export runs once, locally, from the model's own weights (never from a model hub), and is
cached in a folder of its own (by default ``<index>/.onnx/<model>/``) holding ``model.onnx``,
the model's ``tokenizer.json`` and ``export.json`` (maximum length, dimension, pooling). Serving
then needs only onnxruntime, the ``tokenizers`` library and numpy: torch is never imported, so a
server starts in well under a second instead of several.

``quantized=True`` (``index.query_backend: onnx-int8``) runs an int8 copy of that export (its
MatMul inputs smoothed, ``router.encoders.int8_smooth``, and its MatMul weights quantized per
channel by onnxruntime, ``quantize``, with the weight type the CPU needs and measured against
float32 when made: ``router.encoders.int8``), kept in a folder
of its own (``<model>-int8``): 2-3x faster a query (docs/performance.md).

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

from router.encoders import export_integrity, int8, int8_smooth
from router.encoders.base import resolve_model_path, set_offline
from router.encoders.model_folder import UnsupportedModel as UnsupportedModel
from router.encoders.model_folder import sentence_config
from router.encoders.onnx_session import MODEL_FILE as MODEL_FILE
from router.encoders.onnx_session import TOKENIZER_FILE as TOKENIZER_FILE
from router.encoders.onnx_session import encode_rows, open_session

log = logging.getLogger(__name__)

EXPORT_FORMAT = 2  # 2: export.json records the SHA-256 of the model and tokenizer files
META_FILE = "export.json"
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
CHECKED_FILES = (MODEL_FILE, TOKENIZER_FILE)
# of a copy: its recipe, named in its vectors (int8.vectors_name); a new recipe, a new name
QUANTIZED_KEY, QUANTIZED = "quantized", "int8-matmul-per-channel-smoothed"  # of a copy


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


def quantize(exported: Path, target: Path, weights: str = "QInt8") -> Path:
    """Write an int8 copy of the float32 export in ``exported`` to ``target``, atomically:
    the MatMul inputs smoothed (``router.encoders.int8_smooth``), then dynamic quantization
    of the MatMul weights (``weights``: ``QInt8`` or ``QUInt8``), per output channel (the
    attention and feed-forward layers; the embeddings stay float32). Returns ``target``."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from router.encoders.quiet_ort import no_preprocessing_advice

    meta = json.loads((exported / META_FILE).read_text(encoding="utf-8"))
    with _staged(target) as tmp:
        smoothed = tmp / "smoothed.onnx"
        int8_smooth.smooth_export(exported, smoothed, int(meta["max_length"]))
        with no_preprocessing_advice():  # advice for image models, not ours
            quantize_dynamic(str(smoothed), str(tmp / MODEL_FILE), per_channel=True,
                             weight_type=QuantType[weights], op_types_to_quantize=["MatMul"])
        smoothed.unlink()
        _finish(tmp, exported / TOKENIZER_FILE, {**meta, QUANTIZED_KEY: QUANTIZED})
    log.info("quantized the ONNX export of %s to int8 at %s", meta.get("model"), target)
    return target


def _export_graph(source: Path, out: Path) -> None:
    import torch
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    bert = AutoModel.from_pretrained(str(source), local_files_only=True,  # an fp16 checkpoint too
                                     dtype=torch.float32).eval()

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


class OnnxEmbedder:
    """The Embedder protocol on onnxruntime; same ``model_id`` (and vectors) as the torch one.

    ``threads`` is onnxruntime's intra-op thread count per encode call (1 measured best for
    single queries on a small shared machine: the other core serves a concurrent request).
    Thread-safe; the session and tokenizer load lazily, exporting first if needed.
    ``int8_cpu`` (``router.config.Int8Cpu``) is the CPU an int8 copy is made for.
    """

    def __init__(self, model: str, cache_dir: str | Path, *, threads: int = 1,
                 batch_size: int = 64, source: str | Path | None = None,
                 quantized: bool = False, int8_cpu: str = "auto") -> None:
        self._model = model
        self._source = source  # the model's folder when ``model`` is an id, not a name/path
        self._cache_dir = cache_dir
        self._quantized = quantized
        self._int8_cpu = int8_cpu
        int8.cpu_kind(int8_cpu, frozenset())  # an unknown choice is refused here
        self._folder = export_dir(cache_dir, model + ("-int8" if quantized else ""))
        self._threads = threads
        self._batch_size = max(1, batch_size)
        self._lock = threading.Lock()
        self._state: tuple[Any, Any, dict[str, Any]] | None = None

    @classmethod
    def checked(cls, model: str, cache_dir: str | Path, *, threads: int = 1,
                batch_size: int = 64, source: str | Path | None = None,
                quantized: bool = False, int8_cpu: str = "auto") -> OnnxEmbedder:
        """An embedder for ``model``, or UnsupportedModel now (not on the first encode) if it
        is neither exported yet nor exportable."""
        embedder = cls(model, cache_dir, threads=threads, batch_size=batch_size, source=source,
                       quantized=quantized, int8_cpu=int8_cpu)
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
                    and (not self._quantized or isinstance(meta.get(int8.RECORD_KEY), dict))
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

    @property
    def vectors(self) -> str:
        """What the query vectors are: ``float32`` (as torch's), or an int8 copy's
        ``int8-<weights>/<recipe>`` (``int8.vectors_name``)."""
        return int8.vectors_name(self._load()[2], QUANTIZED_KEY)

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
            if damage is None and not self._quantized:
                return meta
            if damage is None:
                record = meta[int8.RECORD_KEY]
                if int8.made_for_here(record, self._int8_cpu):
                    return meta  # the float32 export is read only if this copy falls back
                # made for another kind of CPU: measured again here, against float32
                here = int8.checked_here(self._exact().folder, self._folder, record,
                                         self._int8_cpu, _encode_folder)
                if here is not None:
                    return {**meta, int8.RECORD_KEY: here}
            else:
                log.error("refused the ONNX query encoder at %s: %s; exporting it again "
                          "from %s", self._folder, damage, self._model)
        if self._quantized:  # from the float32 export (made or verified first)
            exact = self._exact()
            int8.make_copy(exact.folder, self._folder, self._int8_cpu, quantize, _encode_folder)
        elif self._source is None:
            export(self._model, self._folder)
        else:
            export(self._model, self._folder, self._source)
        meta = json.loads((self._folder / META_FILE).read_text(encoding="utf-8"))
        damage = export_integrity.problem(self._folder, meta, CHECKED_FILES)
        if damage is not None:
            raise UnsupportedModel(f"{self._folder}: a fresh export failed its check: {damage}")
        return meta

    def _exact(self) -> OnnxEmbedder:
        """The float32 export this copy is made from, made or verified first."""
        exact = OnnxEmbedder(self._model, self._cache_dir, source=self._source)
        exact._intact_meta()
        return exact

    def _open(self) -> tuple[Any, Any, dict[str, Any]]:
        meta, folder = self._intact_meta(), self._folder
        record = meta.get(int8.RECORD_KEY)
        if isinstance(record, dict) and not record.get("meets"):
            log.warning("serving the float32 export of %s: no int8 copy is close enough to it "
                        "on this CPU (min cosine %s < %s)", self._model,
                        record.get("min_cosine"), int8.MIN_COSINE)
            exact = self._exact()
            meta, folder = exact._intact_meta(), exact.folder
        session, tokenizer = open_session(folder, int(meta["max_length"]), self._threads)
        log.info("loaded ONNX encoder for %s from %s (%d threads%s)", self._model,
                 folder, self._threads, ", int8" if folder == self._folder and
                 self._quantized else "")
        return session, tokenizer, meta

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of ``texts``; an int8 copy runs each text alone: it scales its activations
        over the whole batch, padding included, which moved the regression set's train R@5
        from 0.976 to 0.941 (and was no faster for a turn's few texts)."""
        state = self._load()
        alone = isinstance(state[2].get(int8.RECORD_KEY), dict)
        return encode_rows(state, texts, 1 if alone else self._batch_size)


def _encode_folder(folder: Path, texts: Sequence[str]) -> np.ndarray:
    """Vectors of ``texts`` by the export in ``folder``, one text a run as a query is served
    (checking a copy against float32: an int8 run scales its activations over the batch)."""
    meta = json.loads((folder / META_FILE).read_text(encoding="utf-8"))
    return encode_rows((*open_session(folder, int(meta["max_length"]), 1), meta), texts, 1)
