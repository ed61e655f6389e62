"""Structured log records: a log whose lines are JSON objects, each holding one message.

Container runtimes and log collectors keep what a program printed as one JSON object a line:
Docker's json-file driver (``{"log":"Killed\\n","stream":"stderr","time":"..."}``), journald's
``journalctl -o json`` (``"MESSAGE"``), Fluent Bit and Vector (``"log"``, ``"message"``), Google
Cloud Logging exports (``"textPayload"``, or ``"jsonPayload": {"message": ...}``), JSON loggers
(``"message"``, ``"msg"``). Read as text, every line starts with ``{"log":"`` and the message's
quotes, backslashes and (Go's encoder) ``<``, ``>`` and ``&`` are escaped: patterns anchored at
the start of a line, the traceback reader and the process-ending reader see nothing.

When two thirds of the first lines of a text are such records (:func:`looks_like_records`), each
record is replaced by its message, and by the traceback a JSON logger keeps beside it
(``"exc_info"``, ``"exception"``, ``"stack_trace"`` ...); a message holding newlines becomes
several lines, so line numbers then count the messages' lines. Docker splits a line longer than
16 KiB into records without the newline; those are joined back. A line that is not a record
passes through unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

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

MAX_JOINED_CHARS = 1 << 20
"""A partial line is not joined past this length (memory stays flat)."""


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


def looks_like_records(head: bytes) -> bool:
    """Whether the text starting with ``head`` is made of JSON log records: two thirds of
    its first :data:`SNIFF_LINES` non-empty whole lines are records with a message (and the
    text starts with one)."""
    if head.lstrip()[:1] != b"{":
        return False
    lines = [line for line in head[:SNIFF_BYTES].split(b"\n")[:-1] if line.strip()]
    lines = lines[:SNIFF_LINES]
    if not lines:
        return False
    records = sum(message_of(line) is not None for line in lines)
    return records * 3 >= len(lines) * 2


def _text_of(line: bytes) -> tuple[str, bool] | None:
    """(text to scan, whether it is a Docker partial line) for a record, ``None`` otherwise."""
    record = _fields(line)
    found = _message(record) if record is not None else None
    if record is None or found is None:
        return None
    key, message = found
    partial = (
        key == "log"
        and not message.endswith("\n")
        and len(message.encode("utf-8", "replace")) >= DOCKER_PARTIAL_BYTES
    )
    traces = [record[k] for k in TRACE_KEYS if isinstance(record.get(k), str) and record[k]]
    text = "\n".join([message.removesuffix("\n"), *(str(t).removesuffix("\n") for t in traces)])
    return text, partial


def _encoded(text: str) -> bytes:
    # a JSON string may hold a lone surrogate ("\\ud800"): replaced, never an error
    return text.encode("utf-8", "replace")


def unwrap_records(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """The text of a log made of records: each record's message, one line or more each."""
    carry = b""
    pending = ""
    for chunk in chunks:
        data = carry + chunk
        cut = data.rfind(b"\n")
        if cut < 0:
            carry = data
            continue
        carry = data[cut + 1 :]
        out: list[bytes] = []
        for line in data[:cut].split(b"\n"):
            pending = _read_line(line, pending, out)
        if out:
            yield b"\n".join(out) + b"\n"
    out = []
    if carry:
        pending = _read_line(carry, pending, out)
    if pending:
        out.append(_encoded(pending))
    if out:
        yield b"\n".join(out) + b"\n"


def _read_line(line: bytes, pending: str, out: list[bytes]) -> str:
    """Add what ``line`` holds to ``out``; return the Docker partial line still being joined."""
    read = _text_of(line)
    if read is None:
        if pending:
            out.append(_encoded(pending))
        out.append(line)
        return ""
    text, partial = read
    pending += text
    if partial and len(pending) < MAX_JOINED_CHARS:
        return pending
    out.append(_encoded(pending))
    return ""
