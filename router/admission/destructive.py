"""Commands that act on the whole system (pure): recursive permission or ownership changes at
or above ``/`` or ``~``, deleting outside the working folder (the root, the home folder, the
system's folders, the user's key folders), wiping disks, and downloads appended to the shell's
start-up files or the scheduler. A command a negation or a warning governs ("never run
``rm -rf /``") does not count."""

from __future__ import annotations

from router.admission.units import Doc, Unit, gated, negated

_SYSTEM = (r"(?:etc|usr|var|bin|sbin|lib|lib64|opt|home|Users|System|Library|boot|root|srv|"
           r"Applications|private)")
_HOME = r"(?:~|\$HOME|\$\{HOME\}|\$env:USERPROFILE|%USERPROFILE%)"
# At or above the root or the home folder, or one of the system's or the user's key folders.
_TARGET = (rf"[\"']?(?:/\*?|/{_SYSTEM}/?\*?|{_HOME}/?\*?|{_HOME}/\.(?:ssh|gnupg|aws|config|kube|"
           rf"local)/?\*?|{_HOME}/(?!\.cache\b|\.npm\b|\.yarn\b|\.tmp\b|tmp\b)[^/\s\"'`;|&)]+/?\*?|"
           rf"(?:\.\./){{2,}}\*?|[A-Za-z]:\\\\?\*?|/(?:etc|bin|sbin|boot|lib|lib64|var/log|System|"
           rf"usr/bin|usr/sbin)/\S*)[\"']?(?=$|[\s;&|)`])")
_RECURSIVE = r"(?:-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)"
_STARTUP = (rf"(?:{_HOME}/\.(?:bashrc|bash_profile|bash_login|zshrc|zprofile|zshenv|zlogin|"
            r"profile|config/fish/config\.fish)|/etc/(?:profile|bash\.bashrc|zsh/?zshrc|"
            r"environment|rc\.local)|\$PROFILE\b|(?:shell|bash|zsh)\s+(?:start-?up|profile|rc)"
            r"(?:\s+files?)?)")
_DOWNLOAD = r"(?:curl|wget|https?://|Invoke-WebRequest|iwr\b|irm\b|base64|DownloadString)"
_COMMANDS = [
    (rf"\b(?:sudo\s+)?(?:chmod|chown|chgrp)\s+(?:-\w+\s+)*{_RECURSIVE}(?:\s+-\w+)*\s+"
     rf"(?:[\w:.$+,()-]+\s+)?{_TARGET}|\bchmod\s+(?:0?777|0?666|a\+rwx|o\+w)\s+{_TARGET}",
     "a recursive permission or ownership change of the whole system or home folder"),
    (rf"\b(?:sudo\s+)?rm\s+(?:-\w+\s+)*{_RECURSIVE}(?:\s+-\w+)*\s+(?:--no-preserve-root\s+)?"
     rf"{_TARGET}|--no-preserve-root\b", "a recursive delete outside the working folder"),
    (rf"\bfind\s+{_TARGET}\s[^\n|;]*(?:-delete\b|-exec\s+rm\b)",
     "a recursive delete outside the working folder"),
    (rf"\bRemove-Item\b[^\n|;]*-Recurse[^\n|;]*\s{_TARGET}|\bRemove-Item\s+{_TARGET}[^\n|;]*"
     rf"-Recurse|\b(?:rd|rmdir)\s+/s\s+(?:/q\s+)?{_TARGET}|\bdel\s+(?:/[fsq]\s+)+{_TARGET}",
     "a recursive delete outside the working folder"),
    (r"\bmkfs(?:\.\w+)?\s+/dev/|\bdd\s+[^\n]*\bof=/dev/(?:sd|hd|nvme|disk|xvd|vd)|"
     r">\s*/dev/(?:sd[a-z]|nvme\d|disk\d)\b|\bformat\s+[A-Za-z]:(?=\s|$)|:\(\)\s*\{\s*:\|:&\s*\};:",
     "a command that wipes a disk or exhausts the machine"),
    (rf"{_DOWNLOAD}[^\n]*(?:>>|\btee\s+-a\b|\bAdd-Content\b)\s*[\"']?{_STARTUP}|"
     rf"(?:>>|\btee\s+-a\b)\s*[\"']?{_STARTUP}[^\n]*{_DOWNLOAD}|\bcrontab\b[^\n]*{_DOWNLOAD}|"
     rf"{_DOWNLOAD}[^\n]*\bcrontab\b", "a download added to the shell's start-up files or the "
                                      "scheduler"),
    (rf"\b(?:append|add|put|insert|write)\w*\b[^\n]{{0,80}}{_DOWNLOAD}[^\n]{{0,80}}?\b(?:to|into|"
     rf"in)\s+(?:your\s+|the\s+(?:user's\s+)?)?{_STARTUP}", "a download added to the shell's "
                                                           "start-up files or the scheduler"),
    (r"(?<!\bit\s)(?<!\bwill\s)(?<!\bwould\s)(?<!\bcould\s)(?<!\bwhich\s)(?<!\bthat\s)"
     r"\b(?:delete|remove|wipe|erase|destroy|overwrite)\b[^.\n]{0,60}\b(?:(?:entire|whole)\s+"
     r"(?:home|file\s*system|disk|drive|system|machine|computer)|(?:user's|your|the)\s+home\s+"
     r"(?:directory|folder)|root\s+(?:directory|folder|file\s*system)|every\s+file\s+on\s+(?:the|"
     r"this|their|your)\s+(?:system|machine|computer|disk|drive))",
     "an instruction to delete outside the working folder"),
    (r"\b(?:recursively\s+)?(?:chmod|change\s+(?:the\s+)?permissions?|make)\b[^.\n]{0,40}\b"
     r"(?:(?:entire|whole)\s+(?:home|file\s*system|system|disk)|(?:user's|your|the)\s+home\s+"
     r"(?:directory|folder))\b[^.\n]{0,40}\b(?:777|world[\s-]writable|writable\s+by\s+everyone)",
     "a recursive permission change of the whole system or home folder"),
    (r"/dev/(?:tcp|udp)/[\w.-]+/\d+|\b(?:nc|ncat|netcat)\b[^\n|;]*\s-(?:e|c)\s|\bbash\s+-i\s*>&|"
     r"\bsocat\b[^\n]*\bexec:|\bsocket\.socket\([^\n]*\bsubprocess\b[^\n]*\bdup2|"
     r"\bpty\.spawn\(", "a reverse shell that hands the machine to a remote host"),
    (r"(?:>>|\btee\s+-a\b)\s*[\"']?(?:~|\$HOME|\$\{HOME\}|/root)/\.ssh/authorized_keys|"
     r"\b(?:add|append|put|insert|write)\w*\b[^\n]{0,80}\bauthorized_keys\b|"
     r"NOPASSWD\s*:\s*ALL|(?:>>|\btee\s+-a\b)\s*/etc/sudoers",
     "a backdoor: a key added to authorized_keys or sudo without a password"),
    (r"\bufw\s+disable\b|\bsetenforce\s+0\b|\bsystemctl\s+(?:stop|disable)\s+(?:firewalld|"
     r"apparmor|auditd|ufw)\b|Set-MpPreference\s+-Disable\w+|\bspctl\s+--master-disable\b|"
     r"\bcsrutil\s+disable\b|\biptables\s+-F\b|\bnetsh\s+advfirewall\s+set\s+\w+\s+state\s+off",
     "a command that turns off the machine's protections"),
]
_STARTUP_TRIGGERS = ("bashrc|bash_|zsh|profile|fish|/etc/|rc.local|crontab|start & "
                     "curl|wget|http|iwr|irm|webrequest|base64|downloadstring")
_TRIGGERS = ["chmod|chown|chgrp & -|777|666|+rwx|o+w", "rm & -|no-preserve-root",
             "find & delete|rm", "remove-item|rmdir|rd /|del /", "mkfs|dd |/dev/|format|:()",
             _STARTUP_TRIGGERS, _STARTUP_TRIGGERS, "delete|remove|wipe|erase|destroy|overwrite & "
             "home|system|disk|drive|machine|computer|root|every",
             "777|writable & home|system|disk", "/dev/tcp|/dev/udp|nc |ncat|netcat|bash -i|socat|"
             "pty.spawn|dup2", "authorized_keys|nopasswd|sudoers",
             "ufw|setenforce|systemctl|set-mppreference|spctl|csrutil|iptables|netsh"]
_GATES = [(gated(p, t), why) for (p, why), t in zip(_COMMANDS, _TRIGGERS, strict=True)]


def system_wide(document: Doc) -> tuple[Unit, str, str] | None:
    """The first unit of ``document`` with a system-wide destructive command: the unit, why,
    and the words."""
    hits = [(i, unit, why, m.group(0)) for gate, why in _GATES
            for i, unit, m in gate.matches(document)
            if not unit.warned and not negated(unit, m.start())]
    if not hits:
        return None
    _, unit, why, words = min(hits, key=lambda hit: hit[0])
    return unit, why, words
