"""Secrets sent away (pure): a skill whose instructions take a secret from a *source* (credential
and key files, a key or password asked of the user, the whole process environment) to a
*sink* (a URL, a network command, a paste or file-sharing service, a shared or world-readable
place). Judged by flow, not by words alone: a source and a sink in one sentence or code line, a
source followed within a few lines of the same file by a sink that a transfer verb sends to,
or a source anywhere with a sink whose only use is to move data out (a paste service, a
request catcher, a world-readable permission). What a warning or a negation governs ("never
paste your API key into a URL") is no source or sink."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from router.admission.units import Doc, Unit, gated, negated

WINDOW = 8  # lines from a source to the sink a transfer verb sends it to
REACH = 240  # characters between a source and a sink in one unit (a long line is many)

_SECRET = (r"(?:passwords?|passphrases?|pass\s*codes?|api[\s_-]?keys?|access\s+keys?|secret\s+keys?"
           r"|tokens?|secrets?|credentials?|private\s+keys?|ssh\s+keys?|seed\s+phrases?|"
           r"recovery\s+phrases?|mnemonics?|2fa\s+codes?|otp|one[\s-]time\s+codes?|pins?|"
           r"session\s+cookies?|cookies|logins?)")
SOURCES = [
    ("a credential or key file", gated(
        r"~/\.ssh\b|\$HOME/\.ssh\b|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\.aws/(?:credentials|config)"
        r"|\baws\s+credentials\s+file|(?<![\w.-])\.env\b(?![.-]?(?:example|sample|template))|"
        r"\.netrc\b|\.npmrc\b|\.pypirc\b|\.git-credentials\b|\.docker/config\.json|\.kube/config"
        r"|\bkubeconfig\b|\.gnupg\b|/etc/(?:shadow|passwd|sudoers)\b|\bkeychains?\b|"
        r"\bkeyrings?\b|\blogin\s+data\b|\bbrowser(?:'s)?\s+(?:profiles?|cookies|passwords|"
        r"history|data|storage)|\bsaved\s+passwords\b|\bwallet\.dat\b|\.config/gcloud|"
        r"application_default_credentials|\bcredentials\.json\b|\.(?:bash|zsh)_history\b|"
        r"\b(?:seed|recovery)\s+phrases?\b|\bprivate\s+keys?\b|\bssh\s+keys?\b|"
        r"\.(?:pem|p12|pfx|keystore|jks|kdbx)\b|\bgit\s+credential\s+fill\b|\bgh\s+auth\s+token\b|"
        r"\bfind-(?:generic|internet)-password\b|\baws\s+configure\s+export-credentials\b",
        "ssh|id_|aws|.env|netrc|npmrc|pypirc|credential|docker|kube|gnupg|/etc/|keychain|keyring|"
        "login|browser|saved|wallet|gcloud|_history|seed|recovery|private|.pem|.p12|.pfx|"
        "keystore|.jks|kdbx|gh|find-")),
    ("the process environment", gated(
        r"\bprintenv\b|(?:^\s*|[`(|;&]\s*)env\s*(?:$|[|>`)]|\s+[|>])|\bos\.environ\b(?!\s*(?:\[|\.get"
        r"|\.setdefault|\.pop))|\bprocess\.env\b(?!\s*(?:\.|\[|\?\.))|\bGet-ChildItem\s+env:|"
        r"/proc/(?:self|\d+|\$\$)/environ|\b(?:all|every|entire|whole|full|complete)\s+(?:(?:the|"
        r"of\s+the|your|their|its)\s+)?(?:shell\s+|process\s+|system\s+)?environment(?:\s+"
        r"variables?)?\b|\bdump\s+(?:the\s+)?environment\b", "env")),
    ("a secret asked of the user", gated(
        rf"\b(?:ask|asks|asking|prompt|prompting|request|requesting|collect|collecting|obtain|"
        rf"gather|gathering|harvest\w*|extract\w*)\b[^.\n]{{0,50}}?\b(?:the\s+)?(?:user|users|them|"
        rf"human|person|customer|developer|operator)\b[^.\n]{{0,60}}?\b{_SECRET}\b|"
        rf"\b(?:enter|paste|type|provide|share|give\s+me)\s+(?:in\s+)?(?:your|their|"
        rf"the\s+user's)\s+(?:\w+\s+){{0,2}}{_SECRET}\b|\b(?:the\s+user's|their|all|every|any)\s+"
        rf"(?:\w+\s+){{0,2}}(?:api[\s_-]?keys?|access\s+tokens?|passwords?|secrets?|"
        rf"credentials?|private\s+keys?|session\s+cookies?)\b|\b(?:search|scan|look|find|grep|"
        rf"collect|gather|harvest|extract|grab|dump)\w*\b[^.\n]{{0,40}}?\b(?:api[\s_-]?keys|"
        rf"access\s+tokens|tokens|passwords|secrets|credentials|private\s+keys)\b",
        "ask|prompt|request|collect|obtain|gather|harvest|extract|enter|paste|type|provide|share|"
        "give|user's|their|all|every|any|search|scan|look|find|grep|grab|dump & "
        "pass|key|token|secret|credential|seed|recovery|mnemonic|2fa|otp|one-time|pin|cookie|login")),
]
# A secret named by its variable (``$AWS_SECRET_ACCESS_KEY``): a source where the text sends
# it in the same breath, or to a place that only collects data.
NAMED = gated(r"\$?\{?\b[A-Z][A-Z0-9]*_[A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|"
              r"CREDENTIALS?)\b", "key|token|secret|passw|credential", 0)
# Sinks used for nothing but carrying data out: paste, file-sharing and request-catching
# services, webhooks of chat services, a bare public IP address.
SERVICES = gated(
    r"\bpastebin\b|\bpaste\.ee\b|\bhastebin\b|\bghostbin\b|\bdpaste\b|\btermbin\b|\bix\.io\b|"
    r"\b0x0\.st\b|\btransfer\.sh\b|\bfile\.io\b|\btmpfiles\.org\b|\banonfiles\b|\bgofile\.io\b|"
    r"\bwetransfer\b|\bmega\.nz\b|\bsendspace\b|\bwebhook\.site\b|\brequestbin\b|\bpipedream\.net"
    r"|\bbeeceptor\b|\bhookbin\b|\bngrok(?:-free)?\.(?:io|app|dev)\b|\.trycloudflare\.com|"
    r"\binteract\.sh\b|\boast\.(?:fun|live|me|site|online|pro)\b|burpcollaborator|"
    r"discord(?:app)?\.com/api/webhooks|\bapi\.telegram\.org/bot|\bpaste\s+(?:service|site|bin)s?"
    r"|\bfile[\s-]sharing\s+(?:service|site)s?|https?://(?!127\.|0\.0\.0\.0|10\.|192\.168\.|"
    r"172\.(?:1[6-9]|2\d|3[01])\.)\d{1,3}(?:\.\d{1,3}){3}\b",
    "paste|bin|ix.io|0x0|transfer.sh|file.io|tmpfiles|anonfiles|gofile|wetransfer|mega.nz|"
    "sendspace|webhook|pipedream|beeceptor|ngrok|trycloudflare|interact.sh|oast.|burpcollab|"
    "discord|telegram|file sharing|file-sharing|://")
# Places anyone on the machine or the internet can read.
OPEN = gated(
    r"\bchmod\s+(?:-R\s+)?(?:[0-7]?77[67]|[0-7]?66[46]|a\+r\w*|o\+r\w*|ugo\+r\w*|\+r)\b|"
    r"\bworld[\s-](?:readable|writable)\b|\bpublic(?:ly)?[\s-](?:readable|accessible|read)\b|"
    r"--acl\s+public-read|\bpublic\s+(?:gist|bucket|paste|link|share|channel|repo(?:sitory)?)\b|"
    r"(?:^|[\s\"'`(])\.?/?(?:public|public_html|static|www)/",
    "chmod|world|public|static/|www/")
NETWORK = gated(
    r"https?://(?!localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1\])[\w.-]+|\b(?:curl|wget|nc|ncat|netcat|"
    r"socat|scp|sftp|ftp|rsync|telnet)\b|\bInvoke-(?:WebRequest|RestMethod)\b|/dev/(?:tcp|udp)/|"
    r"\b(?:web\s*hook|remote\s+(?:server|host|endpoint)|external\s+(?:server|endpoint|url|host)|"
    r"collection\s+(?:server|endpoint)|our\s+(?:server|endpoint|api)|(?:this|that|the\s+following)"
    r"\s+(?:url|endpoint|address))\b|\be-?mail\s+(?:it|them|this|the\s+\w+)\s+to\b|"
    r"/tmp/|/var/tmp\b|/dev/shm\b|\bshared\s+(?:folder|drive|directory|location)\b|"
    r"\b(?:s3|gs|az)://|\baws\s+s3\s+(?:cp|sync|mv)\b|\bgsutil\s+(?:cp|rsync)\b|\brclone\b|"
    r"\b[\w.+-]+@[\w-]+\.[a-z]{2,}\b|\bgit\s+push\b|\bgh\s+gist\s+create\b|\bgists?\b",
    "http|curl|wget|nc|cat|socat|scp|ftp|rsync|telnet|invoke-|/dev/|web|hook|remote|external|"
    "collection|our |url|endpoint|address|mail|/tmp/|/var/tmp|shared|://|aws s3|gsutil|rclone|@|"
    "push|gist")
TRANSFER = re.compile(
    r"\b(?:send|sends|sending|sent|post|posts|posting|upload\w*|submit\w*|transmit\w*|forward\w*"
    r"|exfiltrat\w*|share|sharing|sync\w*|copy|copies|copying|cp|scp|rsync|mv|move|moving|"
    r"pipe|piping|attach\w*|e-?mail|leak\w*|dump\w*|report\w*|beacon|deliver\w*|push|store|"
    r"save|write|back\s+up|paste|log|logs|logged|logging|record\w*|stash\w*|cache|keep|commit"
    r"\w*|includ\w*|embed\w*|append\w*)\b|-d\s*@|--data(?:-binary|-raw|-urlencode)?\b|-F\s|--form\b|"
    r"-T\s|--upload-file\b|-X\s*(?:POST|PUT)|\|\s*(?:curl|nc|ncat|netcat|socat)\b|>\s*/", re.I)


_AUTHENTICATES = re.compile(r"\bauthori[sz]ation\s+header|\bAuthorization:|\bBearer\b|"
                            r"\bx-api-key\b|\bauth(?:entication)?\s+header", re.I)


# A transfer whose object refers back to what was read ("send them", "POST the report").
TRANSFER_REF = re.compile(
    r"\b(?:send|post|upload|submit|transmit|forward|exfiltrat\w*|share|sync|copy|cp|scp|rsync|"
    r"mv|move|pipe|attach|e-?mail|leak|dump|report|deliver|push|store|save|write|paste|include|"
    r"add|append|embed|put|log|record|stash|cache|keep|commit)\w*\s+(?:\w+\s+){0,3}?(?:it|them|this|these|those|everything|all|"
    r"results?|output|contents?|data|files?|archive|bundle|dump|details|information|info|"
    r"values?|variables?|keys?|tokens?|secrets?|credentials?|passwords?|reports?|logs?|summary|"
    r"diag\w*)\b|-d\s|--data(?:-binary|-raw|-urlencode)?\b|-F\s|--form\b|-T\s|-X\s*(?:POST|PUT)|"
    r"--upload-file\b|\|\s*(?:curl|nc|ncat|netcat|socat)\b|>\s*/", re.I)


@dataclass(frozen=True)
class Mention:
    """What a unit of one file names: a source or a sink, where."""

    what: str
    path: str
    line: int
    unit: Unit
    weak: bool = False  # a secret's name in code: sent only where it is read
    at: int = 0  # where in the unit it stands


def secret_flows(docs: Sequence[Doc]) -> Iterator[tuple[Mention, Mention]]:
    """(source, sink) of the first flow of a secret out of the skill (``docs``: its files),
    if any. Sinks are only looked for where a source was found."""
    sources = [(document, _sources(document)) for document in docs]
    if not any(found for _, found in sources):
        return
    for document, srcs in sources:
        if not srcs:
            continue
        sinks = _sinks(document, _reach(document, srcs))
        mine: list[Mention] = []
        for i in sorted(set(srcs) | set(sinks)):
            unit, here = document.units[i], srcs.get(i, [])
            if i in sinks:
                sink = Mention(sinks[i][0], document.path, unit.line, unit, at=sinks[i][1])
                near = [s for s in mine if 0 <= unit.line - s.line <= WINDOW and not s.weak]
                close = [s for s in here if abs(s.at - sink.at) <= REACH]
                if close and _sends(unit, TRANSFER):
                    yield close[0], sink
                    return
                if near and _sends(unit, TRANSFER_REF):
                    yield near[-1], sink
                    return
            mine.extend(here)
    first = next(m for _, found in sources for i in sorted(found) for m in found[i])
    for document in docs:
        for _, unit, m in SERVICES.matches(document):
            if not negated(unit, m.start()):
                yield first, Mention(_quote(m.group(0)), document.path, unit.line, unit)
                return


def _reach(document: Doc, srcs: dict[int, list[Mention]]) -> set[int]:
    """The units a source may reach: its own, and those within WINDOW lines after it."""
    lines = {m.line for found in srcs.values() for m in found if not m.weak}
    out = set(srcs)
    out.update(i for i, unit in enumerate(document.units)
               if any(0 <= unit.line - line <= WINDOW for line in lines))
    return out


def _sources(document: Doc) -> dict[int, list[Mention]]:
    found: dict[int, list[Mention]] = {}
    for what, gate in SOURCES:
        for i, unit, m in gate.matches(document):
            if not negated(unit, m.start()):
                found.setdefault(i, []).append(Mention(what, document.path, unit.line, unit,
                                                       at=m.start()))
    for i, unit, m in NAMED.matches(document):
        if i not in found and not negated(unit, m.start()):
            found[i] = [Mention(f"the secret {m.group(0).strip('${}')}", document.path,
                                unit.line, unit, weak=unit.code, at=m.start())]
    return found


def _sinks(document: Doc, only: set[int]) -> dict[int, tuple[str, int]]:
    """The first sink each unit of ``only`` names, by unit; none in a unit that sends a key as
    a request's credentials (that is how an API is called)."""
    found: dict[int, tuple[str, int]] = {}
    for gate in (SERVICES, OPEN, NETWORK):
        for i, unit, m in gate.matches(document, only):
            if i not in found and not negated(unit, m.start()):
                found[i] = (_quote(m.group(0)), m.start())
    return {i: what for i, what in found.items()
            if not _AUTHENTICATES.search(document.units[i].text)}


def _sends(unit: Unit, rx: re.Pattern[str]) -> bool:
    m = rx.search(unit.text)
    return m is not None and not negated(unit, m.start())


def _quote(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[:limit] + "...")
