"""Redaction of personal and secret details before a report is pasted in public.

What is replaced: user names in home paths, IPv4/IPv6 addresses, host names (fully qualified
names, ``user@host``, and the host names gpudoctor knows from facts), tokens and keys
(Hugging Face, GitHub, OpenAI-style, AWS, bearer tokens, ``password=``/``token=`` pairs),
GPU and MIG UUIDs and serial numbers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"(?<![\w-])(GPU|MIG)-[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}"),
     r"\1-<uuid>"),
    (re.compile(r"\b(hf_[A-Za-z0-9]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}"
                r"|sk-[A-Za-z0-9_-]{20,}|xox[abpr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16})\b"),
     "<token>"),
    (re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=-]{16,}"), r"\1 <token>"),
    (re.compile(r"(?i)\b([\w-]*(?:password|passwd|secret|token|api[_-]?key|access[_-]?key)"
                r"[\w-]*)(\s*[=:]\s*)(['\"]?)[^\s'\",;]{4,}\3"),
     r"\1\2\3<redacted>\3"),
    (re.compile(r"(?i)(serial(?: number)?\s*[:=]\s*)[0-9A-Za-z-]{6,}"), r"\1<serial>"),
    (re.compile(r"(/home/|/Users/|/mnt/home/|/u/)([^/\s:'\"]+)"), r"\1<user>"),
    (re.compile(r"(?i)\b([A-Z]:\\Users\\)([^\\\s]+)"), r"\1<user>"),
    (re.compile(r"\b(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}\b"),
     "<ip>"),
    (re.compile(r"(?i)(?<![\w:.])(?:(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}"
                r"|(?:[0-9a-f]{1,4}:){1,6}(?::[0-9a-f]{1,4}){1,6}|(?:[0-9a-f]{1,4}:){1,7}:"
                r"|::(?:[0-9a-f]{1,4}:){0,6}[0-9a-f]{1,4})(?![\w:])"), "<ip>"),
    (re.compile(r"\b([A-Za-z0-9._-]+)@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*)\b"), "<user>@<host>"),
    # torchrun's failure table ("host      : node-a17") and hostname= / --hostname settings
    (re.compile(r"(?i)\b(host(?:name)?\s*[:=]\s*)(?!<)[A-Za-z0-9][\w.-]*"), r"\1<host>"),
    # NCCL's line prefix "node-a17:2203:2203 [0] NCCL INFO ..."
    (re.compile(r"(?m)^(\s*)[A-Za-z][\w.-]*(:\d+:\d+ \[\d+\] NCCL)"), r"\1<host>\2"),
    (re.compile(r"(?i)(?<![\w.-])(?<!://)[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:internal|local|lan|corp|cluster|com|net"
                r"|org|edu|io|ai|cloud)\b(?![/\w])"),
     "<host>"),
]  # fmt: skip


def redact(text: str, known_hosts: Iterable[str] = ()) -> str:
    """Return ``text`` with personal and secret details replaced by placeholders."""
    for host in sorted({h for h in known_hosts if h and len(h) >= 3}, key=len, reverse=True):
        text = re.sub(rf"(?<![\w-]){re.escape(host)}(?![\w-])", "<host>", text)
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text
