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
from router.admission.units import Doc, gated

SCRIPT_SUFFIXES = frozenset({".py", ".sh", ".bash", ".zsh", ".js", ".mjs", ".cjs", ".ts", ".jsx",
                             ".tsx", ".ps1", ".rb", ".pl"})
_CREDENTIALS = gated(
    r"\.ssh\b|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\.aws/credentials|[\"']\.aws[\"']|\.netrc\b|"
    r"\.git-credentials\b|\.docker/config\.json|\.kube/config|\.gnupg\b|/etc/shadow\b|"
    r"\bLogin Data\b|Local State|\bCookies\b[\"']|\.mozilla/firefox|Google/Chrome|"
    r"Chrome/User Data|\bfind-(?:generic|internet)-password\b|wallet\.dat|\.bash_history\b|"
    r"\.zsh_history\b|\.npmrc\b|\.pypirc\b|application_default_credentials",
    ".ssh|id_|aws|netrc|git-credentials|docker|kube|gnupg|/etc/shadow|login data|local state|"
    "cookies|mozilla|chrome|find-|wallet|_history|npmrc|pypirc|application_default")
_ENVIRONMENT = gated(
    r"\bos\.environ\b(?!\s*(?:\[|\.get|\.setdefault|\.pop|\.update))|\bprocess\.env\b"
    r"(?!\s*(?:\.|\[|\?\.))|\bprintenv\b|(?:^\s*|[`(|;&]\s*)env\s*(?:$|[|>`)])|\$\(\s*env\s*\)|"
    r"/proc/(?:self|\d+|\$\$)/environ|\bGet-ChildItem\s+env:|\bgci\s+env:|"
    r"\[Environment\]::GetEnvironmentVariables\(\s*\)|\bENV\.(?:to_h|to_a|each|inspect|keys|map)"
    r"\b|%ENV\b|\bcompgen\s+-e\b|\bexport\s+-p\b|\bdeclare\s+-x\b|\[\s*[\"'](?:env|printenv)[\"']"
    r"\s*\]|\bexec\w*\(\s*[\"'](?:env|printenv|set)[\"']",
    "env|compgen|export|declare", 0)
_ONE_SECRET = gated(
    r"(?:os\.environ\s*(?:\[|\.get\()|os\.getenv\(|process\.env\.|process\.env\[|\$env:|"
    r"\bENV\[|\$ENV\{|\$\{?)[\"']?\w*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|CREDENTIAL|AUTH)"
    r"\w*",
    "key|token|secret|pass|credential|auth")
_NETWORK = gated(
    r"\brequests\.(?:post|put|patch|get|request)\b|\bhttpx\.(?:post|put|patch|get|request|"
    r"AsyncClient|Client)\b|\burlopen\s*\(|\burllib\.request\.Request\b|\bHTTPS?Connection\s*\("
    r"|\bsocket\.(?:socket|create_connection)\b|\.sendall?\s*\(|\bsmtplib\b|\bftplib\b|"
    r"\bparamiko\b|\baiohttp\b|\bfetch\s*\(|\baxios\b|\bXMLHttpRequest\b|\bsendBeacon\b|"
    r"\bnew\s+WebSocket\b|\bhttps?\.(?:request|get)\s*\(|\bnet\.(?:connect|createConnection)\b"
    r"|(?:^|[\s;&|(`$])(?:curl|wget|nc|ncat|netcat|socat|scp|sftp|ftp|rsync|telnet)\s|"
    r"/dev/(?:tcp|udp)/|\bInvoke-(?:WebRequest|RestMethod)\b|\b(?:iwr|irm)\s|\bNet\.WebClient\b|"
    r"\bUpload(?:String|File|Data)\b|\bNet::HTTP\b|\bHTTParty\b|\bRestClient\b|\bTCPSocket\b|"
    r"\bLWP::|\bHTTP::Tiny\b|\bIO::Socket\b|\.post\s*\(|\.(?:sendmail|send_message|sendto)\s*\("
    r"|\.request\s*\(\s*[\"'](?:POST|PUT|PATCH)|\brequire\(\s*[\"'](?:node:)?https?[\"']\s*\)",
    "request|httpx|urlopen|urllib|connection|socket|send|smtp|ftp|paramiko|aiohttp|fetch|axios|"
    "xmlhttp|beacon|websocket|http|net.|curl|wget|nc |ncat|netcat|socat|scp|rsync|telnet|/dev/|"
    "invoke-|iwr|irm|webclient|upload|net::|httparty|restclient|tcpsocket|lwp|io::socket|.post")
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


def script_flow(document: Doc) -> Flow | None:
    """The first flow of a secret out over the network in the script ``document``; None
    when it holds none (a script that never calls the network, or reads no secret, is not
    walked)."""
    gates = _Lines(_CREDENTIALS.lines(document), _ENVIRONMENT.lines(document),
                   _ONE_SECRET.lines(document), _NETWORK.lines(document))
    if not gates.network or not (gates.credentials or gates.environment or gates.keys):
        return None
    trace = _Trace()
    collects = next(SERVICES.matches(document), None) is not None
    lines = [(u.line, u.text) for u in document.units]
    for _ in range(2):  # twice: a function defined below its caller
        if flow := _walk(lines, gates, trace, collects):
            return flow
    return None


@dataclass(frozen=True)
class _Lines:
    """The lines each gate's triggers are on: only those are searched."""

    credentials: set[int]
    environment: set[int]
    keys: set[int]
    network: set[int]


def _walk(lines: list[tuple[int, str]], gates: _Lines, trace: _Trace,
          collects: bool) -> Flow | None:
    function = ""
    for number, line in lines:
        if fn := _FUNCTION.match(line):
            function = next(g for g in fn.groups() if g)
        clean = _ENV_ARG.sub(r"\1", line) if "env" in line else line
        source = _source(clean, number, gates, trace.tainted)
        key = ((number in gates.keys and _ONE_SECRET.rx.search(clean))
               or _uses(clean, trace.keys))
        network = number in gates.network and _NETWORK.rx.search(line)
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
        if name in line and (found := re.search(rf"(?<![\w.]){re.escape(name)}\b", line)):
            return found
    return None


def _calls(line: str, functions: set[str]) -> re.Match[str] | None:
    for name in functions:
        if name not in line:
            continue
        found = re.search(rf"(?<![\w.]){re.escape(name)}\s*\(", line)
        if found and not _FUNCTION.match(line):
            return found
    return None


def _source(line: str, number: int, gates: _Lines, tainted: dict[str, int]
            ) -> tuple[str, int] | None:
    """(what, the line it was first read on) of a source ``line`` (at ``number``) reads,
    directly or through a tainted name (not one value of it: ``env["HOME"]``)."""
    if number in gates.credentials and _CREDENTIALS.rx.search(line):
        return "a credential file", number
    if number in gates.environment and _ENVIRONMENT.rx.search(line):
        return "the process environment", number
    for name, first in tainted.items():
        if name in line and re.search(rf"(?<![\w.]){re.escape(name)}\b(?!\s*(?:\[|\.get\())",
                                      line):
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
