"""A stand-in for cisco-ai-skill-scanner, installed into a folder as the real one is
(``pip install --target``): the same import paths and calls the scan's worker makes, a HIGH
finding in ``SKILL.md`` for a skill whose file says ``FAKE-HOSTILE``, and a log of every folder
it scanned (``scanned.log`` beside the package)."""

from __future__ import annotations

from pathlib import Path

_SCANNER = '''
from pathlib import Path
from types import SimpleNamespace

LOG = Path(__file__).resolve().parents[2] / "scanned.log"


class SkillScanner:
    def __init__(self, analyzers=None, policy=None):
        self.analyzers = analyzers

    def scan_skill(self, folder, lenient=False):
        with open(LOG, "a", encoding="utf-8") as fh:
            fh.write(str(folder) + "\\n")
        text = (Path(folder) / "SKILL.md").read_text(encoding="utf-8")
        findings = []
        if "FAKE-HOSTILE" in text:
            findings.append(SimpleNamespace(
                rule_id="FAKE_RULE", severity=SimpleNamespace(value="HIGH"), title="fake",
                description="a hostile marker", file_path="SKILL.md", line_number=5,
                analyzer="fake"))
        return SimpleNamespace(findings=findings)
'''


def install(folder: Path, version: str = "9.9.9") -> Path:
    """The fake scanner under ``folder`` (its ``scanned.log`` emptied); returns ``folder``."""
    package = folder / "skill_scanner"
    (package / "core").mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text(f"__version__ = {version!r}\n", encoding="utf-8")
    (package / "core" / "__init__.py").write_text("", encoding="utf-8")
    (package / "core" / "analyzer_factory.py").write_text(
        "def build_analyzers(policy, **options):\n    return []\n", encoding="utf-8")
    (package / "core" / "scan_policy.py").write_text(
        "class ScanPolicy:\n    @classmethod\n    def default(cls):\n        return cls()\n",
        encoding="utf-8")
    (package / "core" / "scanner.py").write_text(_SCANNER, encoding="utf-8")
    (folder / "scanned.log").write_text("", encoding="utf-8")
    return folder


def scanned(folder: Path) -> list[str]:
    """The folders scanned since ``install``, in order."""
    return (folder / "scanned.log").read_text(encoding="utf-8").splitlines()
