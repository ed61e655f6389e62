"""Lines behind a tool's prefix, read again without it (short logs).

Patterns anchored at a line's start (the shell's "Killed", a row of a pasted ``nvidia-smi``
table, a kernel message) miss the line when a tool put its prefix before it: ``kubectl logs
--timestamps`` and GitHub Actions (``2026-03-01T10:00:00.123456789Z``), ``docker compose``
(``trainer-1  | ``), syslog and ``journalctl`` (``Mar  1 10:00:00 gpu-3 python3[4821]: ``), Ray
(``(RayWorkerWrapper pid=4821, ip=10.0.0.7)``), ``kubectl logs --prefix``
(``[pod/train-0/main]``), torchrun and PyTorch's rank prefixes (``[default3]:``, ``[rank3]:``),
a Markdown quote (``> ``);
the syslog and rank prefixes are those :data:`gpudoctor.logs.origin.LINE_PREFIXES` declares.

For a short log (a paste, :data:`gpudoctor.pipeline.PREFILTER_BYTES`) and for the last
:data:`gpudoctor.pipeline.TAIL_RESCAN_BYTES` of a longer one (where it failed), every line that
starts with such prefixes is scanned again without them for the patterns that ask for a line's
start (a ``^`` in them: the others found what they could in the whole line), and a match is kept
only when the whole line did not match that pattern already. The event keeps what the file
holds: the line's number and text, and the rank, node and time its prefixes give.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import NamedTuple

from gpudoctor.logs.origin import LINE_PREFIXES, Origin, line_time, origin_of
from gpudoctor.logs.reader import Block, decode
from gpudoctor.logs.scanner import Event, Scanner

# The prefixes origin.py reads a rank or a node from, as it declares them (named groups made
# plain), and those that say neither.
_FROM_ORIGIN = ("syslog host", "torchrun --tee", "[rankN]:")
_ONE = b"|".join(
    [
        # an ISO 8601 / RFC 3339 time, as kubectl --timestamps and GitHub Actions print it
        rb"\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\]?",
        # docker compose: the service's container name, padded, and a bar
        rb"[A-Za-z0-9][\w.-]*\s+\| ",
        # Ray's worker prefix
        rb"\((?:\w+ )?pid=\d+(?:, ip=[\d.]+)?\)",
        # kubectl logs --prefix
        rb"\[pod/[\w.-]+/[\w.-]+\]",
        # a Markdown quote, as a log is quoted in a reply ("> ", "> > ")
        rb">",
        *(
            re.sub(r"\(\?P<\w+>", "(?:", regex).encode()
            for name, regex, _local in LINE_PREFIXES
            if name in _FROM_ORIGIN
        ),
    ]
)
PREFIXES = re.compile(rb"^(?:(?:" + _ONE + rb") ?)+")
"""One or more tool prefixes at the start of a line, each followed by at most one space."""


def unprefixed(text: str) -> str:
    """``text`` without the tool prefixes at its start (``text`` itself when it has none)."""
    data = text.encode("utf-8", "surrogateescape")
    prefix = PREFIXES.match(data)
    if prefix is None:
        return text
    return data[prefix.end() :].decode("utf-8", "replace")


class Peeled(NamedTuple):
    """A line (its number and bytes) and what follows its prefixes."""

    line: int
    whole: bytes
    rest: bytes


def peel(blocks: Sequence[Block]) -> list[Peeled]:
    """Every line of ``blocks`` that starts with tool prefixes and holds more after them."""
    found = []
    for block in blocks:
        for offset, line in enumerate(block.data.split(b"\n")[:-1]):
            prefix = PREFIXES.match(line)
            if prefix is not None and prefix.end() < len(line.rstrip()):
                found.append(Peeled(block.first_line + offset, line, line[prefix.end() :]))
    return found


def scan_peeled(
    scanner: Scanner, blocks: Sequence[Block], input_index: int, origin: Origin | None = None
) -> dict[str, list[Event]]:
    """The events of patterns (the structure readers' too) that match a line of ``blocks``
    only without its prefixes, by pattern key, with the line's number, text and origin."""
    found = peel(blocks)
    if not found:
        return {}
    data = b"".join(peeled.rest + b"\n" for peeled in found)
    twin = scanner.for_text(data, line_start_only=True)  # the others matched the whole line
    twin.scan([Block(blocks[0].source, 1, data, len(found))], input_index=input_index)
    events: dict[str, list[Event]] = {}
    for key, hits in twin.hits.items():
        for event in hits.events() if hits.count else ():
            peeled = found[event.line - 1]
            if twin.matches(key, peeled.whole):
                continue
            text = decode(peeled.whole)
            where = origin_of(text, blocks[0].source)
            if origin is not None:
                where = where.over(origin)
            events.setdefault(key, []).append(
                replace(
                    event,
                    line=peeled.line,
                    order=(input_index, peeled.line),
                    text=text,
                    rank=where.rank,
                    node=where.node,
                    time=line_time(text),
                )
            )
    return events
