"""``skill-router admission``: check skills as the build admits them (``check``), read the
findings a version recorded (``list``), and approve or revoke a quarantined skill by digest
(``approve``, ``revoke``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from router.cli.common_args import add_index_arg, add_json_args
from router.cli.flags import add_feedback_store_arg, with_feedback_store
from router.common.textsafe import printable
from router.errors import InvalidRequest

if TYPE_CHECKING:
    from router.admission.model import Finding, SkillText
    from router.learning.store import FeedbackStore

MAX_DIRS = 20000  # folders walked per root: public catalogs hold thousands of skills


def register(sub: Any) -> None:
    """Add ``admission`` and its subcommands."""
    p = sub.add_parser("admission", help="what a skill must pass before it is routed: check, "
                                         "list findings, approve by digest")
    cmds = p.add_subparsers(dest="admission_command", metavar="ACTION")
    cmds.required = True
    check = cmds.add_parser("check", help="run admission's checks over skill folders")
    check.add_argument("paths", nargs="*", metavar="PATH", help="a folder of skill folders")
    check.add_argument("--root", action="append", metavar="DIR",
                       help="a folder of skill folders (again for more; as PATH)")
    check.add_argument("--policy", choices=("registry", "folder"), default="registry",
                       help="judge them as a registry's skills (quarantine on high; the "
                            "default) or a folder's (warn only)")
    check.add_argument("--scanner", metavar="DIR", default=None,
                       help="run the content scan installed in DIR (default: "
                            "admission.scanner_path, else .scanner; 'off': none)")
    add_json_args(check, default="text", choices=("text", "json"))
    check.set_defaults(handler=cmd_check)
    for name, helptext in (("list", "the findings and verdicts the current version recorded"),
                           ("approve", "admit a quarantined skill at one digest"),
                           ("revoke", "drop a skill's approval")):
        c = cmds.add_parser(name, help=helptext)
        add_index_arg(c)
        add_feedback_store_arg(c)  # where approvals are kept, with the learned state
        if name != "list":
            c.add_argument("skill", metavar="SKILL", help="the skill's key: NAME, or "
                                                          "CATALOG/NAME outside 'default'")
        if name == "approve":
            c.add_argument("digest", metavar="DIGEST", help="the digest `admission list` shows")
            c.add_argument("--by", required=True, help="who approves (recorded)")
            c.add_argument("--note", default="", help="why (recorded)")
        if name == "list":
            add_json_args(c, default="text", choices=("text", "json"))
        c.set_defaults(handler={"list": cmd_list, "approve": cmd_approve,
                                "revoke": cmd_revoke}[name])


def _index_dir(args: argparse.Namespace) -> Path:
    from router.config import load_config

    return Path(args.index or load_config(getattr(args, "config", None)).index.index_dir)


def _store(args: argparse.Namespace) -> FeedbackStore:
    """The feedback store that keeps the approvals (``--feedback-store``, else
    ``feedback.store_url``, else the index folder's)."""
    from router.config import load_config
    from router.learning.backends import open_store

    config = with_feedback_store(load_config(getattr(args, "config", None)), args)
    return open_store(_index_dir(args), config.feedback)


def cmd_check(args: argparse.Namespace) -> int:
    from router.admission.admit import admit
    from router.admission.model import Severity
    from router.admission.report import rule_counts, table
    from router.admission.settings import Policies

    roots = [*args.paths, *(args.root or [])]
    if not roots:
        raise InvalidRequest("name a folder of skill folders (PATH or --root DIR)")
    texts, folders = _read_roots(roots, args.policy)
    extra = _content_scan(args, folders)
    policies = Policies({"": Severity.HIGH if args.policy == "registry" else None})
    verdicts = admit(texts, policies, extra=extra, catalogs={t.key: "" for t in texts})
    if args.format == "json":
        json.dump({k: {"digest": v.digest, "quarantined": v.quarantined,
                       "findings": [f.to_dict() for f in v.findings]}
                   for k, v in sorted(verdicts.items())}, sys.stdout, indent=2)
        print()
    else:
        for key, verdict in sorted(verdicts.items()):
            mark = "QUARANTINED" if verdict.quarantined else "ok"
            if verdict.findings or verdict.quarantined:
                print(f"{mark} {printable(key)} {verdict.digest}")
            for f in verdict.findings:
                print(f"  {f.severity.value} {f.rule}: {printable(f.message)}")
        print()
        policy = policies.for_skill("", "registry:" if args.policy == "registry" else "disk:")
        for line in table(rule_counts(verdicts, policy), len(verdicts)):
            print(printable(line))
        quarantined = sum(v.quarantined for v in verdicts.values())
        print(f"{len(verdicts)} skills, {quarantined} quarantined under the {args.policy} policy")
    return 1 if any(v.quarantined for v in verdicts.values()) else 0


def _read_roots(roots: list[str], policy: str) -> tuple[list[SkillText], dict[str, str]]:
    """What admission reads of every skill under ``roots``, and each skill folder's key."""
    from router.admission.admit import read_skill
    from router.skills.discovery import scan_root
    from router.skills.model import Scope

    texts, folders = [], {}
    for path in roots:
        if not Path(path).is_dir():
            raise InvalidRequest(f"{path}: not a folder")
        origin = f"registry:{path}" if policy == "registry" else f"disk:{path}"
        for skill in scan_root(path, Scope.BUNDLED, max_dirs=MAX_DIRS)[0]:
            texts.append(read_skill(skill, origin))
            folders[skill.base_dir] = skill.key
    return texts, folders


def _content_scan(args: argparse.Namespace, folders: dict[str, str]) -> dict[str, list[Finding]]:
    """The content scan's findings by skill key, with one line on stderr saying which scanner
    ran (or ``content scan: off`` and why)."""
    from router.admission import scanner
    from router.config import load_config

    setting = args.scanner or load_config(getattr(args, "config", None)).admission.scanner_path
    located = scanner.locate(setting)
    extra: dict[str, list[Finding]] = {}
    if not located.path:
        print(f"content scan: off ({located.why})", file=sys.stderr)
        return extra
    outcome = scanner.scan(sorted(folders), located.path)
    for folder, found in outcome.findings.items():
        extra.setdefault(folders[folder], []).extend(found)
    for warning in outcome.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(f"content scan: {scanner.SCANNER} {outcome.version} ({located.path})" if outcome.ran
          else "content scan: off (it did not run)", file=sys.stderr)
    return extra


def recorded(index_dir: Path) -> tuple[str | None, dict[str, Any]]:
    """The index's current version and its admission record ({} when it has none); None and
    {} for an index folder where no version was built yet; IndexUnavailable for a folder that
    is not there."""
    from router.builder.recorded import ADMISSION_KEY, recorded_settings
    from router.errors import IndexUnavailable
    from router.index.versions.layout import CURRENT, VERSIONS, current_version

    if not index_dir.is_dir():
        raise IndexUnavailable(f"no index folder {index_dir}; name it with --index DIR "
                               "(or index.index_dir)")
    if not (index_dir / CURRENT).exists():
        return None, {}
    version = current_version(index_dir)
    data = recorded_settings(index_dir / VERSIONS / version).get(ADMISSION_KEY)
    return version, data if isinstance(data, dict) else {}


def cmd_list(args: argparse.Namespace) -> int:
    """Exit 0, with nothing recorded when no version was built in the folder yet (the stored
    approvals are still listed); 1 when the folder is not there or cannot be read."""
    from router.learning.approvals import stored_approvals

    index_dir = _index_dir(args)
    version, data = recorded(index_dir)
    store = _store(args)
    try:
        approvals = stored_approvals(store, index_dir)
    finally:
        store.close()
    if args.format == "json":
        json.dump({"version": version, **data,
                   "approvals": [a.to_dict() for a in approvals]}, sys.stdout, indent=2)
        print()
        return 0
    if version is None:
        print(f"no version built in {printable(str(index_dir))} yet: no findings recorded "
              "(build one with `skill-router index`)")
    else:
        print(f"scanner: {data.get('scanner') or 'did not run'}")
    for a in approvals:
        print(f"approval {printable(a.key)} {a.digest} by {printable(a.by)}"
              + (f": {printable(a.note)}" if a.note else ""))
    for key, row in sorted(dict(data.get("skills") or {}).items()):
        state = ("QUARANTINED" if row.get("quarantined")
                 else "approved" if row.get("approved") else "warned")
        print(f"{state} {printable(key)} {row.get('digest', '')}")
        for f in row.get("findings", []):
            print(f"  {f['severity']} {f['rule']}: {printable(f['message'])}")
    return 0


def cmd_approve(args: argparse.Namespace) -> int:
    from router.learning.approvals import approve

    store = _store(args)
    try:
        done = approve(store, _index_dir(args), args.skill, args.digest, args.by, args.note)
    finally:
        store.close()
    print(f"approved {printable(done.key)} at {done.digest} by {printable(done.by)}; the next "
          "build (index or reindex) admits it")
    return 0


def cmd_revoke(args: argparse.Namespace) -> int:
    from router.learning.approvals import revoke

    store = _store(args)
    try:
        found = revoke(store, _index_dir(args), args.skill)
    finally:
        store.close()
    if not found:
        raise InvalidRequest(f"skill {args.skill!r} has no approval")
    print(f"revoked the approval of {printable(args.skill)}; the next build judges it again")
    return 0
