"""Bundled scripts judged by data flow (pure): a script that reads secrets (credential and key
files, the browser's or the keychain's stores, the whole process environment) and sends what it
read over the network. The flow is followed by name through one file: a line that reads a
source taints the names it assigns (and the function that returns it), a line that uses a
tainted name taints the names it assigns in turn, and a network call on a line that holds a
source or a tainted name is the flow. A credential file read by a script that also calls the
network counts even where the names do not connect; a single named key (``os.environ["API_KEY"]``,
``process.env.TOKEN``) is a secret only when it goes to a place that only collects data (a
paste service, a request catcher, a bare IP address): that is how scripts call their own APIs.
Python, shell, JavaScript and TypeScript, PowerShell, Ruby and Perl."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from router.admission.secrets import SERVICES
from router.admission.units import units

SCRIPT_SUFFIXES = frozenset({".py", ".sh", ".bash", ".zsh", ".js", ".mjs", ".cjs", ".ts", ".jsx",
                             ".tsx", ".ps1", ".rb", ".pl"})
_CREDENTIALS = re.compile(
    r"\.ssh\b|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\.aws/credentials|[\"']\.aws[\"']|\.netrc\b|"
    r"\.git-credentials\b|\.docker/config\.json|\.kube/config|\.gnupg\b|/etc/shadow\b|"
    r"\bLogin Data\b|Local State|\bCookies\b[\"']|\.mozilla/firefox|Google/Chrome|"
    r"Chrome/User Data|\bfind-(?:generic|internet)-password\b|wallet\.dat|\.bash_history\b|"
    r"\.zsh_history\b|\.npmrc\b|\.pypirc\b|application_default_credentials", re.I)
_ENVIRONMENT = re.compile(
    r"\bos\.environ\b(?!\s*(?:\[|\.get|\.setdefault|\.pop|\.update))|\bprocess\.env\b"
    r"(?!\s*(?:\.|\[|\?\.))|\bprintenv\b|(?:^\s*|[`(|;&]\s*)env\s*(?:$|[|>`)])|\$\(\s*env\s*\)|"
    r"/proc/(?:self|\d+|\$\$)/environ|\bGet-ChildItem\s+env:|\bgci\s+env:|"
    r"\[Environment\]::GetEnvironmentVariables\(\s*\)|\bENV\.(?:to_h|to_a|each|inspect|keys|map)"
    r"\b|%ENV\b|\bcompgen\s+-e\b|\bexport\s+-p\b|\bdeclare\s+-x\b|\[\s*[\"'](?:env|printenv)[\"']"
    r"\s*\]|\bexec\w*\(\s*[\"'](?:env|printenv|set)[\"']")
_ONE_SECRET = re.compile(
    r"(?:os\.environ\s*(?:\[|\.get\()|os\.getenv\(|process\.env\.|process\.env\[|\$env:|"
    r"\bENV\[|\$ENV\{|\$\{?)[\"']?\w*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|CREDENTIAL|AUTH)"
    r"\w*", re.I)
_NETWORK = re.compile(
    r"\brequests\.(?:post|put|patch|get|request)\b|\bhttpx\.(?:post|put|patch|get|request|"
    r"AsyncClient|Client)\b|\burlopen\s*\(|\burllib\.request\.Request\b|\bHTTPS?Connection\s*\("
    r"|\bsocket\.(?:socket|create_connection)\b|\.sendall?\s*\(|\bsmtplib\b|\bftplib\b|"
    r"\bparamiko\b|\baiohttp\b|\bfetch\s*\(|\baxios\b|\bXMLHttpRequest\b|\bsendBeacon\b|"
    r"\bnew\s+WebSocket\b|\bhttps?\.(?:request|get)\s*\(|\bnet\.(?:connect|createConnection)\b"
    r"|(?:^|[\s;&|(`$])(?:curl|wget|nc|ncat|netcat|socat|scp|sftp|ftp|rsync|telnet)\s|"
    r"/dev/(?:tcp|udp)/|\bInvoke-(?:WebRequest|RestMethod)\b|\b(?:iwr|irm)\s|\bNet\.WebClient\b|"
    r"\bUpload(?:String|File|Data)\b|\bNet::HTTP\b|\bHTTParty\b|\bRestClient\b|\bTCPSocket\b|"
    r"\bLWP::|\bHTTP::Tiny\b|\bIO::Socket\b|\.post\s*\(", re.I)
_ASSIGN = re.compile(
    r"^\s*(?:export\s+|local\s+|const\s+|let\s+|var\s+|my\s+|our\s+|readonly\s+)?[$@%]?"
    r"\{?([A-Za-z_]\w*)\}?\s*(?::\s*[^=]+)?(?<![=!<>])=(?!=)")
# The environment handed to a child process (``env=os.environ.copy()``, ``env: {...process.env}``)
# is no read of it.
_ENV_ARG = re.compile(r"([(,{]\s*)env\s*[=:]\s*(?:\{[^}]*\}|[\w.]+(?:\([^)]*\))?)")
_TUPLE = re.compile(r"^\s*(?:for\s+)?([A-Za-z_][\w\s,]*?)\s+(?:in|=)\s")
_REDIRECT = re.compile(r">>?\s*[\"']?([^\s;|&\"'<>]+)")  # a file the source is written to
_WITH_AS = re.compile(r"\bas\s+([A-Za-z_]\w*)\s*:")
_RETURNS = re.compile(r"\breturn\b|^\s*echo\b|^\s*print\b")
_FUNCTION = re.compile(
    r"^\s*(?:async\s+)?(?:def|function|sub)\s+([A-Za-z_]\w*)|^\s*(?:export\s+)?(?:const|let|var)"
    r"\s+([A-Za-z_]\w*)\s*=\s*(?:async\s*)?(?:\([^)]*\)|\w+)\s*=>|^\s*([A-Za-z_]\w*)\s*\(\s*\)"
    r"\s*\{")


@dataclass(frozen=True)
class Flow:
    """A script's flow of secrets to the network: the line that sends, the line that read
    the secret, and what it read."""

    line: int
    source_line: int
    source: str
    call: str


@dataclass
class _Trace:
    """What a walk through one script has learnt: names holding secrets (strong: the
    environment or a credential file; keys: one named secret), functions that call the
    network, and the first credential file read."""

    tainted: dict[str, int] = field(default_factory=dict)
    keys: dict[str, int] = field(default_factory=dict)
    senders: set[str] = field(default_factory=set)
    credential: int = 0


def script_flow(path: str, text: str) -> Flow | None:
    """The first flow of a secret out over the network in the script ``text`` at ``path``
    (by its suffix); None for a file that is no script or holds none."""
    suffix = path[path.rfind("."):].lower() if "." in path else ""
    if suffix not in SCRIPT_SUFFIXES:
        return None
    lines = [(u.line, u.text) for u in units(text, code=True)]
    trace = _Trace()
    collects = bool(SERVICES.search(text))
    for _ in range(2):  # twice: a function defined below its caller
        if flow := _walk(lines, trace, collects):
            return flow
    return None


def _walk(lines: list[tuple[int, str]], trace: _Trace, collects: bool) -> Flow | None:
    function = ""
    for number, line in lines:
        if fn := _FUNCTION.match(line):
            function = next(g for g in fn.groups() if g)
        clean = _ENV_ARG.sub(r"\1", line)
        source = _source(clean, trace.tainted, number)
        key = _ONE_SECRET.search(clean) or _uses(clean, trace.keys)
        network = _NETWORK.search(line)
        if network and function:
            trace.senders.add(function)
        send = network or _calls(line, trace.senders)
        if send:
            call = send.group(0).strip()
            if source:
                return Flow(number, source[1], source[0], call)
            if key and collects:
                return Flow(number, number, "a secret key", call)
            if trace.credential:
                return Flow(number, trace.credential, "a credential file", call)
        if source:
            if source[0] == "a credential file" and not trace.credential:
                trace.credential = number
            for name in _assigned(line):
                trace.tainted.setdefault(name, source[1])
            if function and _RETURNS.search(line):
                trace.tainted.setdefault(function, source[1])
        if key:
            for name in _assigned(line):
                trace.keys.setdefault(name, number)
    return None


def _uses(line: str, names: dict[str, int]) -> re.Match[str] | None:
    for name in names:
        if found := re.search(rf"(?<![\w.]){re.escape(name)}\b", line):
            return found
    return None


def _calls(line: str, functions: set[str]) -> re.Match[str] | None:
    for name in functions:
        found = re.search(rf"(?<![\w.]){re.escape(name)}\s*\(", line)
        if found and not _FUNCTION.match(line):
            return found
    return None


def _source(line: str, tainted: dict[str, int], number: int) -> tuple[str, int] | None:
    """(what, the line it was first read on) of a source ``line`` (at ``number``) reads,
    directly or through a tainted name (not one value of it: ``env["HOME"]``)."""
    if _CREDENTIALS.search(line):
        return "a credential file", number
    if _ENVIRONMENT.search(line):
        return "the process environment", number
    for name, first in tainted.items():
        if re.search(rf"(?<![\w.]){re.escape(name)}\b(?!\s*(?:\[|\.get\())", line):
            return "a value read from a secret", first
    return None


def _assigned(line: str) -> list[str]:
    names = []
    if m := _ASSIGN.match(line):
        names.append(m.group(1))
    elif m := _TUPLE.match(line):
        names.extend(n.strip() for n in m.group(1).split(",") if n.strip().isidentifier())
    names.extend(_WITH_AS.findall(line))
    names.extend(_REDIRECT.findall(line))
    return [n for n in names if n not in {"self", "this", "_", "/dev/null", "&1", "&2"}]
