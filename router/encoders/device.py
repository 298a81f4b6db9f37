"""Where a build embeds: ``index.device`` / ``--device`` (``auto``, ``cpu``, ``cuda``,
``cuda:N``) and ``index.precision`` / ``--precision`` (``fp32``, ``fp16``) resolved against what
torch reports, before anything is written.

``resolve`` is pure: it takes a ``CudaReport`` (``probe()`` makes one from torch and the
environment), so every answer is tested without a GPU. A request that cannot be met raises
InvalidRequest with one line naming CUDA (or fp16) and what was found.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from router.config import PRECISIONS, Precision
from router.encoders.backends import is_hash_model
from router.errors import InvalidRequest

DEVICES = ("auto", "cpu", "cuda", "cuda:N")  # what index.device accepts (N: 0, 1, ...)
_CUDA = re.compile(r"^cuda(?::(\d+))?$")


@dataclass(frozen=True)
class CudaReport:
    """What torch and the environment say about CUDA on this machine."""

    torch_version: str  # e.g. "2.13.0+cpu"
    built_with_cuda: bool  # torch.version.cuda is set (a CUDA build of torch)
    device_count: int  # torch.cuda.device_count() (0 when unusable)
    visible_devices: str | None  # CUDA_VISIBLE_DEVICES, None when unset

    def problem(self) -> str | None:
        """Why no CUDA device is usable, or None when at least one is."""
        if not self.built_with_cuda:
            return f"torch {self.torch_version} has no CUDA support"
        if self.device_count > 0:
            return None
        if self.visible_devices is not None and not self.visible_devices.strip():
            return "CUDA_VISIBLE_DEVICES is empty"
        return "no CUDA device"


@dataclass(frozen=True)
class Placement:
    """A resolved build device (``cpu``, ``cuda:N``) and precision (``fp32``, ``fp16``)."""

    device: str = "cpu"
    precision: Precision = Precision.FP32

    @property
    def on_cuda(self) -> bool:
        return self.device.startswith("cuda")

    def record(self) -> dict[str, str]:
        """What a manifest keeps (informational: vectors mix across devices)."""
        return {"device": self.device, "precision": self.precision}


def check_names(device: str, precision: str) -> Precision:
    """Refuse a device or precision that is not a known name (no torch needed); the
    precision's member."""
    if device not in ("auto", "cpu") and not _CUDA.match(device):
        raise InvalidRequest(f"device {device!r} is not one of auto, cpu, cuda, cuda:N")
    if precision not in PRECISIONS:
        raise InvalidRequest(f"precision {precision!r} is not one of {', '.join(PRECISIONS)}")
    return Precision(precision)


def resolve(device: str, precision: str, report: CudaReport) -> Placement:
    """``auto``: the first CUDA device when one is usable, else the CPU. ``cuda`` / ``cuda:N``
    without a usable device N raise InvalidRequest naming CUDA and what was found; ``fp16``
    on the CPU raises InvalidRequest naming fp16."""
    chosen_precision = check_names(device, precision)
    problem = report.problem()
    if device == "auto":
        chosen = "cpu" if problem is not None else "cuda:0"
    elif device == "cpu":
        chosen = "cpu"
    else:
        chosen = _cuda_device(device, problem, report.device_count)
    if chosen_precision is Precision.FP16 and chosen == "cpu":
        why = f" (CUDA: {problem})" if device == "auto" and problem else ""
        raise InvalidRequest(f"precision fp16 needs a CUDA device; this build runs on the "
                             f"CPU{why}: use --precision fp32")
    return Placement(chosen, chosen_precision)


def _cuda_device(device: str, problem: str | None, count: int) -> str:
    match = _CUDA.match(device)
    number = int(match.group(1)) if match and match.group(1) is not None else 0
    if problem is not None:
        raise InvalidRequest(f"device {device} asked for, but no CUDA device is usable: {problem}")
    if number >= count:
        plural = "device" if count == 1 else "devices"
        raise InvalidRequest(f"device {device} asked for, but CUDA has only {count} {plural}")
    return f"cuda:{number}"


def probe() -> CudaReport:
    """Ask torch (imported here) what CUDA it sees."""
    import torch

    built = bool(getattr(torch.version, "cuda", None))
    try:
        count = int(torch.cuda.device_count()) if built and torch.cuda.is_available() else 0
    except (RuntimeError, AssertionError):  # a broken driver: no usable device
        count = 0
    return CudaReport(torch_version=str(torch.__version__), built_with_cuda=built,
                      device_count=count,
                      visible_devices=os.environ.get("CUDA_VISIBLE_DEVICES"))


def placement_for(device: str, precision: str, *, model: str) -> Placement:
    """The placement of a build of ``model``: the hashing test embedder always runs on the
    CPU without importing torch (an explicit ``cuda`` is still checked)."""
    fp32 = check_names(device, precision) is Precision.FP32
    hashing = is_hash_model(model)
    if hashing and device in ("auto", "cpu") and fp32:
        return Placement("cpu")
    placement = resolve(device, precision, probe())
    return Placement("cpu") if hashing else placement
