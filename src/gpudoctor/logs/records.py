"""Container runtimes' log formats: lines that wrap what a program printed.

Container runtimes and log collectors keep what a program printed one line at a time inside
a wrapper of their own:

* JSON records (:data:`JSON_RECORDS`): Docker's json-file driver
  (``{"log":"Killed\\n","stream":"stderr","time":"..."}``), journald's ``journalctl -o json``
  (``"MESSAGE"``), Fluent Bit and Vector (``"log"``, ``"message"``), Google Cloud Logging
  exports (``"textPayload"``, or ``"jsonPayload": {"message": ...}``), JSON loggers
  (``"message"``, ``"msg"``, with the traceback in ``"exc_info"`` and the like);
* CRI lines (:data:`CRI_LINES`), what kubelet keeps under ``/var/log/pods`` for containerd and
  CRI-O: ``2026-03-01T10:00:00.123456789Z stderr F Killed``.

Read as text, every line starts with the wrapper and (JSON) the message's quotes, backslashes
and, from Go's encoder, ``<``, ``>`` and ``&`` are escaped: patterns anchored at the start of a
line, the traceback reader and the process-ending reader see nothing. When the first line of a
text and two thirds of its first lines are of one format (:func:`sniff_format`), each line is
replaced by what it holds: a JSON record's message (and its traceback), several lines when it
holds newlines, so line numbers then count the messages' lines. A line the runtime split
(Docker past 16 KiB, CRI's partial tag ``P``) is joined back. A line that is not of the format
passes through unchanged.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator

MESSAGE_KEYS = ("log", "MESSAGE", "message", "msg", "textPayload")
"""Where a record keeps what the program printed, in the order they are looked for."""

NESTED_KEYS = ("jsonPayload",)
"""Objects a record may keep its message in (Google Cloud Logging's structured payload)."""

TRACE_KEYS = ("exc_info", "exc_text", "exception", "stack_trace", "stacktrace", "traceback")
"""Where JSON loggers keep the traceback of a logged exception, beside the message."""

SNIFF_LINES = 20
"""How many of the first non-empty lines decide whether a text is made of records."""

SNIFF_BYTES = 65536
"""How much of the start of a text those lines are looked for in."""

DOCKER_PARTIAL_BYTES = 16384
"""Docker cuts a longer line into records of this size, without their newline."""

MAX_JOINED_BYTES = 1 << 20
"""A split line is not joined past this length (memory stays flat)."""

JSON_RECORDS = "json-records"
CRI_LINES = "cri"
"""The formats, as ``InputStats.formats`` names them."""

# kubelet's CRI log line (containerd, CRI-O): "2026-03-01T10:00:00.123456789Z stderr F text",
# tag P for a line the runtime split (longer than its buffer), F for the full or last part.
CRI_LINE = re.compile(
    rb"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d) (?:stdout|stderr) "
    rb"(?P<tag>[PF]) ?(?P<text>.*)$",
    re.DOTALL,
)


def _fields(line: bytes) -> dict[str, object] | None:
    stripped = line.strip()
    if not (stripped.startswith(b"{") and stripped.endswith(b"}")):
        return None
    try:
        record = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


def _message(record: dict[str, object]) -> tuple[str, str] | None:
    """(key, message) of a record, ``None`` when it has no message text."""
    for key in MESSAGE_KEYS:
        value = record.get(key)
        if isinstance(value, str):
            return key, value
    for key in NESTED_KEYS:
        nested = record.get(key)
        if isinstance(nested, dict):
            found = _message(nested)
            if found is not None:
                return found
    return None


def message_of(line: bytes) -> str | None:
    """The message a JSON log record holds, ``None`` when ``line`` is not a record."""
    record = _fields(line)
    found = _message(record) if record is not None else None
    return found[1] if found is not None else None


def _json_text(line: bytes) -> tuple[bytes, bool] | None:
    """(text to scan, whether it is a Docker partial line) of a record, ``None`` otherwise."""
    record = _fields(line)
    found = _message(record) if record is not None else None
    if record is None or found is None:
        return None
    key, message = found
    text = _encoded(message)
    partial = key == "log" and not text.endswith(b"\n") and len(text) >= DOCKER_PARTIAL_BYTES
    traces = [record[k] for k in TRACE_KEYS if isinstance(record.get(k), str) and record[k]]
    parts = [text.removesuffix(b"\n"), *(_encoded(str(t)).removesuffix(b"\n") for t in traces)]
    return b"\n".join(parts), partial


def _cri_text(line: bytes) -> tuple[bytes, bool] | None:
    """(the line the program printed, whether the runtime split it) of a CRI log line."""
    found = CRI_LINE.match(line)
    if found is None:
        return None
    return found["text"], found["tag"] == b"P"


def _encoded(text: str) -> bytes:
    # a JSON string may hold a lone surrogate ("\\ud800"): replaced, never an error
    return text.encode("utf-8", "replace")


LineReader = Callable[[bytes], tuple[bytes, bool] | None]
"""What one line of a format holds: (the text, whether it continues on the next line), or
``None`` for a line that is not of the format."""

READERS: dict[str, LineReader] = {JSON_RECORDS: _json_text, CRI_LINES: _cri_text}
"""The line reader of each format :func:`sniff_format` can name."""


def sniff_format(head: bytes) -> str | None:
    """:data:`JSON_RECORDS` or :data:`CRI_LINES` when the text starting with ``head`` is made
    of them (two thirds of its first :data:`SNIFF_LINES` non-empty whole lines, and its first
    line), else ``None``."""
    lines = [line for line in head[:SNIFF_BYTES].split(b"\n")[:-1] if line.strip()]
    lines = lines[:SNIFF_LINES]
    for name, read in READERS.items():
        if lines and read(lines[0]) is not None:
            held = sum(read(line) is not None for line in lines)
            return name if held * 3 >= len(lines) * 2 else None
    return None


def unwrap(chunks: Iterator[bytes], name: str) -> Iterator[bytes]:
    """The text a log of format ``name`` holds: each line replaced by what the program printed
    (one line or more), lines the runtime split joined back, other lines as they are."""
    read = READERS[name]
    carry = b""
    pending = b""
    for chunk in chunks:
        data = carry + chunk
        cut = data.rfind(b"\n")
        if cut < 0:
            carry = data
            continue
        carry = data[cut + 1 :]
        out: list[bytes] = []
        for line in data[:cut].split(b"\n"):
            pending = _read_line(read, line, pending, out)
        if out:
            yield b"\n".join(out) + b"\n"
    out = []
    if carry:
        pending = _read_line(read, carry, pending, out)
    if pending:
        out.append(pending)
    if out:
        yield b"\n".join(out) + b"\n"


def _read_line(read: LineReader, line: bytes, pending: bytes, out: list[bytes]) -> bytes:
    """Add what ``line`` holds to ``out``; return the split line still being joined."""
    held = read(line)
    if held is None:
        if pending:
            out.append(pending)
        out.append(line)
        return b""
    text, partial = held
    pending += text
    if partial and len(pending) < MAX_JOINED_BYTES:
        return pending
    out.append(pending)
    return b""
