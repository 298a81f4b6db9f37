"""The verdict records kept with their JSON text: the manifest's text is json.dumps's."""

import json

from router.admission.model import Finding, Severity
from router.admission.policy import Verdict
from router.builder.admission_kept import Records, compact_manifest


def _verdict(digest: str, message: str, quarantined: bool = False) -> Verdict:
    finding = Finding("scan:RULE", Severity.INFO, message, "scanner", "SKILL.md")
    return Verdict(key="k", digest=digest, quarantined=quarantined, approved=False,
                   findings=(finding,))


def test_the_spliced_manifest_is_json_dumps_text() -> None:
    records = Records()
    records.add("b-skill", _verdict("sha256:1", 'a "quoted" \u00e9 message \\ end'))
    records.add("a-\u00fcber", _verdict("sha256:2", "line\nbreak", quarantined=True))
    manifest = {"version": "v", "content_hashes": {"x": "y"}, "settings": {
        "discovery": {"roots": ["\u00e9"]}, "admission": {"scanner": "1.0", "skills": records},
        "later": 1}, "files": {"manifest-free": "abc"}}
    text = compact_manifest(manifest, "admission")
    assert text == json.dumps(manifest, ensure_ascii=False, separators=(",", ":"))
    assert json.loads(text)["settings"]["admission"]["skills"]["a-\u00fcber"]["quarantined"]


def test_a_record_is_made_once_for_the_same_verdict() -> None:
    first, second = Records(), Records()
    first.add("k", _verdict("sha256:3", "same"))
    second.add("k", _verdict("sha256:3", "same"))
    assert first["k"] is second["k"] and first.texts["k"] == second.texts["k"]
    second.add("k", _verdict("sha256:4", "same"))
    assert second["k"]["digest"] == "sha256:4" and first["k"]["digest"] == "sha256:3"


def test_a_plain_record_is_encoded_whole() -> None:
    assert compact_manifest({"settings": {"admission": {"skills": {}}}}, "admission") is None
