"""Each judged skill's verdict record as a version's manifest keeps it (``router.builder.
admitting``), with its compact JSON text, kept in the process by what it was made from (the
skill's digest, its verdict and its findings): a Reindex after one skill changed makes and
encodes that skill's record again, not the catalog's (with the content scanner, every skill
has a finding, and the record is megabytes at 10k skills). The manifest's text is the one
``json.dumps`` gives (``router.index.version_files.write_json``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from router.admission.policy import Verdict
from router.common.json_text import compact
from router.common.memo import Memo

# (digest, quarantined, approved, findings) -> the record and its JSON text
_KEPT: Memo[tuple[str, bool, bool, tuple[Any, ...]], tuple[dict[str, Any], str]] = Memo()


class Records(dict[str, dict[str, Any]]):
    """Verdict records by skill key, each one's compact JSON text beside it (``texts``)."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: dict[str, str] = {}

    def add(self, key: str, verdict: Verdict) -> None:
        """``verdict``'s record under ``key`` (records are read, never changed)."""
        made = (verdict.digest, verdict.quarantined, verdict.approved, tuple(verdict.findings))
        kept = _KEPT.get(made)
        if kept is None:
            record = {"digest": verdict.digest, "quarantined": verdict.quarantined,
                      "approved": verdict.approved,
                      "findings": [f.to_dict() for f in verdict.findings]}
            kept = (record, compact(record))
            _KEPT.put(made, kept)
        self[key], self.texts[key] = kept

    def encoded(self) -> str:
        """``compact(self)`` (``router.common.json_text``), from the kept texts."""
        return "{" + ",".join(json.dumps(key, ensure_ascii=False) + ":" + self.texts[key]
                              for key in self) + "}"


PLACE = "\x00verdict records\x00"  # stands for the records while the rest is encoded


def compact_manifest(manifest: Mapping[str, Any], admission_key: str) -> str | None:
    """The one-line JSON of ``manifest`` whose ``settings[admission_key]["skills"]`` are
    ``Records``, their text spliced in; None when they are not (encode it whole)."""
    settings = manifest.get("settings")
    if not isinstance(settings, Mapping):
        return None
    admission = settings.get(admission_key)
    if not isinstance(admission, Mapping):
        return None
    records = admission.get("skills")
    if not isinstance(records, Records):
        return None
    placed = {**manifest, "settings": {**settings, admission_key: {**admission,
                                                                    "skills": PLACE}}}
    text = compact(placed)
    return text.replace(json.dumps(PLACE), records.encoded(), 1)
