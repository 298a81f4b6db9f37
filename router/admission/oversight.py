"""Instructions that take the human out of the loop (pure): run every command without asking,
never confirm, skip or disable permission prompts or the sandbox, auto-approve, the agents'
own bypass flags, and keeping the user uninformed. A pattern a negation or warning governs
("never skip the permission prompts", "ask the user to confirm before deleting") does not
count, unless the negation is the instruction itself ("never ask for confirmation")."""

from __future__ import annotations

from router.admission.units import Doc, Unit, gated, negated

_ASK = (r"(?:ask\w*|wait\w*|pause\w*|prompt\w*|check\w*\s+(?:in\s+)?with|request\w*|seek\w*|get\w*|"
        r"need\w*|requir\w*|confirm\w*|stop\w*\s+(?:to|for))")
_CONSENT = (r"(?:confirm\w*|permission|approv\w*|consent|authori[sz]ation|sign[\s-]?off|"
            r"go[\s-]ahead)")
_EVERY = r"(?:all|every|any|each|whatever)"
_ACTS = (r"(?:commands?|actions?|steps?|tools?(?:\s+calls?)?|operations?|changes?|scripts?|"
         r"edits?|requests?|tasks?|instructions?|code|shell|terminal|suggestions?)")
_SELF_NEGATING = [  # the negation is the instruction
    rf"\b(?:never|don't|do\s+not|no\s+need\s+to|must\s+not|should\s+not|shouldn't|without)\s+"
    rf"(?:ever\s+)?(?:\w+\s+)?{_ASK}\s+(?:\w+\s+){{0,3}}?(?:for\s+|to\s+)?(?:(?:the\s+)?"
    rf"(?:user|human|operator)'?s?\s+)?(?:\w+\s+)?{_CONSENT}",
    rf"\b(?:never|don't|do\s+not|no\s+need\s+to|must\s+not)\s+(?:ever\s+)?(?:ask|check\s+with|"
    rf"consult|bother|interrupt|involve|wait\s+for)\s+(?:the\s+)?(?:user|human|operator)\b"
    rf"(?=\s*(?:$|[.;:!,]|before\b|first\b|again\b|at\s+all\b|about\s+(?:anything|{_ACTS})|"
    rf"for\s+anything\b|(?:any\s+)?questions?\b|with\s+(?:\w+\s+)?{_CONSENT}))",
    r"\b(?:never|don't|do\s+not|must\s+not)\s+(?:tell|inform|notify|alert|warn|show|mention\s+"
    r"(?:this|it|anything)\s+to)\s+(?:the\s+)?(?:user|human|operator)\b",
    r"\bno\s+(?:\w+\s+)?(?:confirmation|permission|approval)s?\s+(?:is\s+|are\s+)?"
    r"(?:needed|required|necessary)\b",
]
_PLAIN = [  # negated when a negation governs them
    rf"\b(?:run|execute|perform|approve|accept|apply|carry\s+out|proceed\s+with|do)\s+{_EVERY}\s+"
    rf"(?:\w+\s+){{0,2}}?{_ACTS}\b[^.\n]{{0,60}}?\bwithout\s+(?:\w+\s+)?(?:asking|{_CONSENT}|"
    r"prompting|the\s+user(?:'s)?\s+(?:input|consent|approval|permission|confirmation))",
    rf"\bwithout\s+(?:asking|{_CONSENT}|prompting|checking\s+with)\s+(?:\w+\s+){{0,4}}?"
    rf"(?:run|execute|perform|apply|approve|accept)\s+{_EVERY}\b",
    rf"\b(?:skip|skipping|disable|disabling|bypass\w*|turn\w*\s+off|suppress\w*|circumvent\w*|"
    rf"override|overriding|ignore|ignoring|auto-?accept\w*)\s+(?:{_EVERY}\s+|the\s+|its\s+|your\s+)?"
    rf"(?:\w+\s+)?(?:permissions?|approvals?|sandbox\w*|safety\s+(?:checks?|prompts?|"
    rf"guardrails?|rules?)|guardrails?|user\s+confirmations?|confirmation\s+(?:prompts?|"
    rf"dialogs?|steps?|requests?))\b",
    rf"\b(?:approve|accept|confirm|allow)\w*\s+{_EVERY}\s+(?:\w+\s+){{0,2}}?(?:{_ACTS}|"
    rf"permissions?|prompts?)\s+automatically\b",
    rf"\bauto[\s-]?(?:approv\w*|accept\w*|confirm\w*)\s+(?:{_EVERY}\s+)?(?:\w+\s+)?"
    rf"(?:{_ACTS}|permissions?|prompts?)\b",
    r"--dangerously-skip-permissions\b|--dangerously-bypass-approvals-and-sandbox\b|"
    r"\bbypassPermissions\b|--permission-mode[=\s]+bypass|--yolo\b|\byolo[\s-]mode\b|"
    r"--approval-mode[=\s]+(?:yolo|never|auto)|approval_policy\s*=\s*[\"']?never|--full-auto\b|"
    r"--trust-all-tools\b|[\"']autoApprove[\"']\s*:\s*(?:true|\[\s*[\"']\*)|"
    r"[\"']allow[\"']\s*:\s*\[\s*[\"'](?:\*|Bash\(\*\)|Bash)[\"']",
    r"\b(?:proceed|continue|act|operate|execute|run|go\s+ahead|apply|delete|overwrite|push|"
    r"deploy|install|modify|make\s+changes)\w*\s+(?:\w+\s+){0,3}?without\s+(?:any\s+|"
    r"user\s+|the\s+user'?s?\s+|further\s+)?(?:confirm\w*|approv\w*|permission|consent)\b",
    r"\b(?:assume|treat|consider)\b[^.\n]{0,40}\b(?:pre-?approved|already\s+(?:approved|"
    r"consented|authori[sz]ed|confirmed)|(?:has|have)\s+(?:given|granted)\s+(?:permission|"
    r"consent|approval))|\b(?:enable|turn\s+on|switch\s+(?:on|to)|use)\s+(?:the\s+)?"
    r"(?:auto[\s-]?(?:run|approve|accept|execute)|autorun|yolo|unattended|full[\s-]auto)\s+"
    r"mode\b",
    r"\bwithout\s+(?:waiting\s+for\s+|any\s+|requiring\s+|needing\s+)?(?:a\s+)?(?:human|user|"
    r"manual|operator)\s+(?:review|approval|oversight|sign-?off|confirmation|consent)\b",
    r"\bwithout\s+the\s+user(?:'s)?\s+(?:knowing|knowledge|noticing|seeing|awareness)\b|"
    r"\bhide\s+(?:this|these|it|them|the\s+\w+)\s+from\s+the\s+user\b|"
    r"\b(?:silently|quietly|secretly)\s+(?:run|execute|install|delete|upload|send|modify)\b",
]
_NEGATIONS = "never|don't|not|need|without|shouldn't"
_CONSENTS = "confirm|permission|approv|consent|authori|sign|ahead"
_SELF_TRIGGERS = [f"{_CONSENTS} & {_NEGATIONS}", "never|don't|not|need & user|human|operator",
                  "never|don't|not & user|human|operator",
                  "confirm|permission|approv & needed|required|necessary"]
_PLAIN_TRIGGERS = [
    "without & all|every|any|each|whatever", "without & all|every|any|each|whatever",
    "skip|disabl|bypass|turn|suppress|circumvent|overrid|ignor|auto & "
    "permission|approv|sandbox|safety|guardrail|confirm",
    "automatically & approv|accept|confirm|allow", "auto & approv|accept|confirm",
    "dangerously|bypass|--permission-mode|yolo|--approval-mode|approval_policy|full-auto|"
    "trust-all-tools|autoapprove|\"allow\"|'allow'", "without & confirm|approv|permission|consent",
    "assume|treat|consider|enable|turn|switch|use & "
    "approv|consent|authori|confirm|permission|granted|given|mode",
    "without & human|user|manual|operator",
    "knowing|knowledge|noticing|seeing|awareness|hide|silently|quietly|secretly"]
_GATES = [gated(p, t) for p, t in (*zip(_SELF_NEGATING, _SELF_TRIGGERS, strict=True),
                                   *zip(_PLAIN, _PLAIN_TRIGGERS, strict=True))]


def out_of_loop(document: Doc) -> tuple[Unit, str] | None:
    """The first unit of ``document`` that takes the human out of the loop, with the words
    that do."""
    hits = [(i, unit, m.group(0)) for gate in _GATES for i, unit, m in gate.matches(document)
            if not unit.warned and not negated(unit, m.start())]
    if not hits:
        return None
    _, unit, words = min(hits, key=lambda hit: hit[0])
    return unit, words
