"""Kernel log parsing: NVIDIA Xid / NVRM lines and OOM-killer lines into typed events.

:func:`parse_kernel_log_lines` is pure (text in, events out) so every format can be tested
with literal lines. It accepts the line shapes written by ``dmesg`` (``[ 1234.5678] ...``),
``dmesg -T`` (``[Mon Jan  8 10:11:12 2024] ...``), syslog / ``/var/log/kern.log``
(``Jan  8 10:11:12 host kernel: ...``) and ``journalctl -o short-iso``
(``2024-01-08T10:11:12+0000 host kernel: ...``), as well as bare messages.

Recognised messages (see ``xid_catalog.md``):

* ``NVRM: Xid (PCI:0000:3b:00): 79, pid=..., name=..., GPU has fallen off the bus.`` and the
  variants without ``PCI:``, with `` GPU-I:<n>`` (MIG), with ``pid='<unknown>'`` or no pid;
* any other ``NVRM:`` line (``NVRM: GPU 0000:2b:00.0: GPU has fallen off the bus.``,
  ``NVRM: API mismatch: ...``);
* ``Out of memory: Killed process 1234 (python) ...``, ``Memory cgroup out of memory: Killed
  process ...``, the older ``Out of memory: Kill process ... or sacrifice child`` and
  ``Killed process 1234 (python) total-vm:...``: kind ``oom_kill``;
* ``oom-kill:constraint=CONSTRAINT_MEMCG,...,task=python,pid=1234,uid=0``: kind
  ``oom_kill_info`` (the summary line the kernel prints just before the kill line).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime, timedelta

from gpudoctor.snapshot.model import KernelEvent

KIND_XID = "xid"
KIND_NVRM = "nvrm"
KIND_OOM_KILL = "oom_kill"
KIND_OOM_KILL_INFO = "oom_kill_info"

_PCI = r"[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?"

_XID_RE = re.compile(
    r"NVRM: Xid \((?:PCI:)?(?P<pci>" + _PCI + r")(?: GPU-I:\d+)?\): (?P<xid>\d+),?\s*(?P<rest>.*)$"
)
_NVRM_RE = re.compile(r"NVRM: (?P<rest>.*)$")
_NVRM_GPU_RE = re.compile(r"^GPU (?:at )?(?:PCI:)?(?P<pci>" + _PCI + r")")
_PID_RE = re.compile(r"^pid=(?:'?<unknown>'?|'?(?P<pid>\d+)'?),\s*")
_NAME_RE = re.compile(r"^name=(?P<name>[^,]*),\s*")
_OOM_KILL_RE = re.compile(
    r"(?P<memcg>Memory cgroup out of memory: )?(?:Out of memory(?: \([^)]*\))?: )?"
    r"Kill(?:ed)? process (?P<pid>\d+) \((?P<name>[^)]*)\)(?P<rest>.*)$"
)
_OOM_INFO_RE = re.compile(r"oom-kill:(?P<fields>\S+)")
_TIMESTAMP_RES = (
    # dmesg: "[ 1234.567890] "
    re.compile(r"^\[\s*(?P<ts>\d+\.\d+)\]\s*"),
    # dmesg -T: "[Mon Jan  8 10:11:12 2024] "
    re.compile(r"^\[(?P<ts>[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4})\]\s*"),
    # journalctl -o short-iso / rsyslog RFC 3339: "2024-01-08T10:11:12.123+00:00 host kernel: "
    re.compile(
        r"^(?P<ts>\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?)"
        r"\s+\S+\s+kernel:\s*(?:\[\s*\d+\.\d+\]\s*)?"
    ),
    # syslog / journalctl short: "Jan  8 10:11:12 host kernel: [ 1234.5678] "
    re.compile(
        r"^(?P<ts>[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d)\s+\S+\s+kernel:\s*"
        r"(?:\[\s*\d+\.\d+\]\s*)?"
    ),
)
# "kern  :err   : " prefix from "dmesg --decode" / "dmesg -x".
_FACILITY_RE = re.compile(r"^[a-z]+\s*:[a-z]+\s*:\s*")


def split_timestamp(line: str) -> tuple[str | None, str]:
    """Split a kernel log line into (timestamp text or None, message)."""
    text = _FACILITY_RE.sub("", line, count=1)
    for pattern in _TIMESTAMP_RES:
        match = pattern.match(text)
        if match is not None:
            return match.group("ts"), text[match.end() :]
    return None, text


def parse_kernel_log_line(line: str) -> KernelEvent | None:
    """Parse one kernel log line; ``None`` when it is not an event gpudoctor cares about."""
    raw = line.rstrip("\r\n")
    if "NVRM" not in raw and "ill" not in raw:  # cheap prefilter: "Kill", "kill", "Killed"
        return None
    timestamp, message = split_timestamp(raw)
    match = _XID_RE.search(message)
    if match is not None:
        return _xid_event(raw, timestamp, match)
    match = _NVRM_RE.search(message)
    if match is not None:
        rest = match.group("rest").strip()
        gpu = _NVRM_GPU_RE.match(rest)
        return KernelEvent(
            kind=KIND_NVRM,
            line=raw,
            timestamp=timestamp,
            pci_bus=gpu.group("pci") if gpu else None,
            message=rest,
        )
    match = _OOM_KILL_RE.search(message)
    if match is not None:
        return KernelEvent(
            kind=KIND_OOM_KILL,
            line=raw,
            timestamp=timestamp,
            pid=int(match.group("pid")),
            process_name=match.group("name"),
            constraint="CONSTRAINT_MEMCG" if match.group("memcg") else None,
            message=message[match.start() :].strip(),
        )
    match = _OOM_INFO_RE.search(message)
    if match is not None:
        fields = _comma_fields(match.group("fields"))
        pid_text = fields.get("pid", "")
        return KernelEvent(
            kind=KIND_OOM_KILL_INFO,
            line=raw,
            timestamp=timestamp,
            pid=int(pid_text) if pid_text.isdigit() else None,
            process_name=fields.get("task"),
            constraint=fields.get("constraint"),
            message=message[match.start() :].strip(),
        )
    return None


def parse_kernel_log_lines(lines: Iterable[str]) -> list[KernelEvent]:
    """Parse kernel log lines into events, in input order, skipping uninteresting lines."""
    events: list[KernelEvent] = []
    for line in lines:
        event = parse_kernel_log_line(line)
        if event is not None:
            events.append(event)
    return events


def _xid_event(raw: str, timestamp: str | None, match: re.Match[str]) -> KernelEvent:
    rest = match.group("rest").strip()
    pid: int | None = None
    name: str | None = None
    pid_match = _PID_RE.match(rest)
    if pid_match is not None:
        pid = int(pid_match.group("pid")) if pid_match.group("pid") else None
        rest = rest[pid_match.end() :]
    name_match = _NAME_RE.match(rest)
    if name_match is not None:
        value = name_match.group("name").strip()
        name = None if value in ("<unknown>", "'<unknown>'", "") else value
        rest = rest[name_match.end() :]
    return KernelEvent(
        kind=KIND_XID,
        line=raw,
        timestamp=timestamp,
        xid=int(match.group("xid")),
        pci_bus=match.group("pci"),
        pid=pid,
        process_name=name,
        message=rest.strip() or None,
    )


def _comma_fields(text: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if sep:
            fields[key.strip()] = value.strip()
    return fields


_MONTHS = {
    name: number
    for number, name in enumerate(
        ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1
    )
}


def timestamp_to_datetime(
    timestamp: str, *, boot_time: datetime | None, now: datetime
) -> datetime | None:
    """Turn a timestamp from :func:`split_timestamp` into an aware datetime, if possible.

    Seconds-since-boot need ``boot_time``; syslog stamps without a year take ``now``'s year
    (the previous one if that would lie in the future). Naive stamps are read as local time.
    """
    text = timestamp.strip()
    try:
        if re.fullmatch(r"\d+\.\d+", text):
            return boot_time + timedelta(seconds=float(text)) if boot_time else None
        if re.fullmatch(r"[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}", text):
            return datetime.strptime(" ".join(text.split()), "%a %b %d %H:%M:%S %Y").astimezone()
        if re.fullmatch(r"[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d", text):
            month, day, clock = text.split()
            hour, minute, second = (int(p) for p in clock.split(":"))
            local_now = now.astimezone()
            stamp = local_now.replace(
                month=_MONTHS[month],
                day=int(day),
                hour=hour,
                minute=minute,
                second=second,
                microsecond=0,
            )
            if stamp > local_now + timedelta(days=1):
                stamp = stamp.replace(year=stamp.year - 1)
            return stamp
        iso = text.replace(",", ".").replace(" ", "T", 1)
        iso = re.sub(r"([+-]\d\d)(\d\d)$", r"\1:\2", iso).replace("Z", "+00:00")
        parsed = datetime.fromisoformat(iso)
        return parsed if parsed.tzinfo else parsed.astimezone()
    except (ValueError, KeyError):
        return None


def within_window(
    timestamp: str | None, *, cutoff: datetime | None, boot_time: datetime | None, now: datetime
) -> bool:
    """True when a line with this timestamp is at or after ``cutoff`` (unknown times pass)."""
    if cutoff is None or timestamp is None:
        return True
    when = timestamp_to_datetime(timestamp, boot_time=boot_time, now=now)
    return when is None or when >= cutoff


__all__ = [
    "KIND_NVRM",
    "KIND_OOM_KILL",
    "KIND_OOM_KILL_INFO",
    "KIND_XID",
    "parse_kernel_log_line",
    "parse_kernel_log_lines",
    "split_timestamp",
    "timestamp_to_datetime",
    "within_window",
]
