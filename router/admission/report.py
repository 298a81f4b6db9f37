"""A precision report (pure): per rule, how many skills it flags and how many of those it
quarantines under a policy, so an operator sees which rules fire on a catalog before trusting
them with it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from router.admission.policy import Action, Policy, Verdict


def rule_counts(verdicts: Mapping[str, Verdict], policy: Policy
                ) -> list[tuple[str, int, int]]:
    """(rule, skills it flags, skills it quarantines) for each rule with a finding, the most
    flagging first."""
    flagged: Counter[str] = Counter()
    blocking: Counter[str] = Counter()
    for verdict in verdicts.values():
        flagged.update({f.rule for f in verdict.findings})
        blocking.update({f.rule for f in verdict.findings
                         if policy.action(f) is Action.QUARANTINE})
    return [(rule, n, blocking[rule]) for rule, n in
            sorted(flagged.items(), key=lambda item: (-item[1], item[0]))]


def table(rows: Iterable[tuple[str, int, int]], skills: int) -> list[str]:
    """The report's lines: a header, one line per rule, the total of skills read."""
    rows = list(rows)
    width = max([len("rule"), *(len(r) for r, _, _ in rows)])
    lines = [f"{'rule':<{width}}  flags  quarantines"]
    lines += [f"{rule:<{width}}  {n:>5}  {q:>11}" for rule, n, q in rows]
    if not rows:
        lines.append(f"{'(none)':<{width}}  {0:>5}  {0:>11}")
    lines.append(f"of {skills} skills")
    return lines
