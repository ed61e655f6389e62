"""Messages a paste wrapped over two lines.

A terminal, a log formatter (rich's columns, a logger's fixed width) or the person pasting
often breaks a long message where a space was: "... GPU 0 has a total capacity of 22.36 GiB
of" / "    which 120.88 MiB is free.". A pattern written for the message then matches neither
line. For a short log (the pasted excerpt, :data:`gpudoctor.pipeline.PREFILTER_BYTES`), every
line followed by what reads as its continuation (indented, or starting in lower case; never a
traceback's own lines) is joined with it, the joined lines are scanned, and a rule pattern's
match is kept only when it needs both halves: a match that either line holds alone was found
by the ordinary scan already. The event keeps the first line's number and shows the joined
text.

A terminal that wraps at a fixed width breaks a line anywhere, inside a word too ("device
cu" / "da:0 not found"). Where the continuation starts in lower case right at the margin, the
two halves are also joined without a space; where it starts with closing punctuation ("(13.3
GiB" / ") on startup"), which no message starts with, only without one.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import NamedTuple

from gpudoctor.logs.origin import Origin
from gpudoctor.logs.reader import Block
from gpudoctor.logs.scanner import KEEP_FIRST, Event, Scanner

MIN_FIRST_BYTES = 20
"""A shorter line is a line of its own (a heading, a prompt), not the start of a long message."""

STRUCTURE_PREFIX = "facts/"
"""The structure readers' patterns: they read lines as the program printed them."""


class Join(NamedTuple):
    """A line and its continuation, joined where the paste broke them (``glued``: inside a
    word, without a space)."""

    line: int
    first: bytes
    second: bytes
    glued: bool = False

    @property
    def text(self) -> bytes:
        space = b"" if self.glued else b" "
        return self.first.rstrip() + space + self.second.strip()


_TRACEBACK_LINE = re.compile(rb"^\s*(?:File \"|Traceback \(most recent call last\))")
"""A traceback's own lines: its header and its frames start lines, they never continue one."""
_CLOSING = b").]},;:"
"""Characters that end a phrase: a line that starts with one continues the line above."""
_ENDS_AT_SOURCE = re.compile(rb"\.[A-Za-z]{1,5}:\d+(?:\s*\[inlined\])?\s*$")
"""A line that ends at a source location, as a stack frame does (Julia's
``copyto!@broadcast.jl:936``, a C++ frame's ``at ops.cpp:88``)."""
_EXCEPTION_LINE = re.compile(rb"^[A-Za-z_][\w.]*(?:Error|Exception|Warning|Interrupt|Exit)\b")
"""A (dotted) exception name at the start of a line starts a message of its own."""


def continues(first: bytes, second: bytes) -> bool:
    """Whether ``second`` reads as the continuation of a message ``first`` started."""
    if len(first.strip()) < MIN_FIRST_BYTES or not second.strip():
        return False
    if _TRACEBACK_LINE.match(first) or _TRACEBACK_LINE.match(second):
        return False
    if _ENDS_AT_SOURCE.search(first) and _ENDS_AT_SOURCE.search(second):
        return False  # two stack frames, each complete
    head = second[:1]
    if head in (b" ", b"\t") or (head and head in _CLOSING):
        return True
    return head.islower() and not _EXCEPTION_LINE.match(second)


def broke_inside_a_word(first: bytes, second: bytes) -> bool:
    """Whether a fixed-width wrap may have cut a word in two: ``first`` ends in a letter or
    digit and ``second`` goes on in lower case at the margin."""
    return first[-1:].isalnum() and second[:1].islower()


def joins(blocks: Sequence[Block]) -> list[Join]:
    """Every line of ``blocks`` followed (in the same block) by its continuation, joined
    with a space and, where the wrap may have cut a word, without one too."""
    found = []
    for block in blocks:
        lines = block.data.split(b"\n")
        for offset, (first, second) in enumerate(itertools.pairwise(lines)):
            if continues(first, second):
                line = block.first_line + offset
                if second[:1] in _CLOSING:
                    found.append(Join(line, first, second, glued=True))
                    continue
                found.append(Join(line, first, second))
                if broke_inside_a_word(first.rstrip(b"\r"), second):
                    found.append(Join(line, first, second, glued=True))
    return found


def scan_wrapped(
    scanner: Scanner, blocks: Sequence[Block], input_index: int, origin: Origin | None = None
) -> dict[str, list[Event]]:
    """The events of rule patterns that match only across a join of ``blocks`` (one input's
    blocks, from ``origin`` when its name does not say), by pattern key, with the first
    line's number and the joined text."""
    found = joins(blocks)
    if not found:
        return {}
    data = b"".join(join.text + b"\n" for join in found)
    twin = scanner.for_text(data, leave_out=STRUCTURE_PREFIX)
    block = Block(blocks[0].source, 1, data, len(found))
    twin.scan([block], input_index=input_index, origin=origin)
    events: dict[str, list[Event]] = {}
    taken: set[tuple[str, int]] = set()  # a line joined both ways gives one event per pattern
    for key, hits in twin.hits.items():
        if not hits.count:
            continue
        for event in hits.events():
            join = found[event.line - 1]
            if twin.matches(key, join.first) or twin.matches(key, join.second):
                continue
            if (key, join.line) in taken:
                continue
            taken.add((key, join.line))
            events.setdefault(key, []).append(
                replace(event, line=join.line, order=(input_index, join.line))
            )
    return events


def add_events(scanner: Scanner, events: dict[str, list[Event]]) -> None:
    """Count ``events`` among the scanner's hits, keeping each pattern's events in reading
    order."""
    for key, extra in events.items():
        hits = scanner.hits[key]
        ordered = sorted([*hits.events(), *extra], key=lambda event: event.order)
        for event in extra:
            hits.count += 1
            hits.note_origin(Origin(event.rank, event.node))
        hits.first = ordered[:KEEP_FIRST]
        hits.last.clear()
        hits.last.extend(ordered[KEEP_FIRST:])
