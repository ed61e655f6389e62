"""The line reader: streams a log into blocks of whole, cleaned, numbered lines.

Logs are read in large chunks and never held in memory whole. Each chunk is cut at its last
newline; the rest waits for the next chunk. What the reader does to the text:

* gzip is recognised by its magic bytes (not the file name) and decompressed on the fly;
* ``\\r\\n`` becomes ``\\n``; a line rewritten with ``\\r`` (progress bars) keeps its last state;
* ANSI escape sequences (colours, cursor moves, OSC titles) are removed;
* bytes are kept as bytes: invalid UTF-8 never stops reading, it is replaced only when a line
  is decoded for display.

A line that grows past :data:`MAX_LINE_BYTES` without a newline (a binary file, a 5 GB log on
one line) is cut: its first :data:`MAX_LINE_BYTES` are kept and the rest of it is skipped up to
the next newline, so memory stays flat whatever the input.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

CHUNK_BYTES = 4 << 20
"""How much is read at once."""

MAX_LINE_BYTES = 1 << 20
"""The longest line kept whole; longer lines are cut to this length."""

_GZIP_MAGIC = b"\x1f\x8b"
_ANSI_RE = re.compile(
    rb"\x1b\[[0-9;:?<=>]*[ -/]*[@-~]"  # CSI: colours, cursor moves
    rb"|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)"  # OSC: window titles, hyperlinks
    rb"|\x1b[@-Z\\-_]"  # other two-byte escapes
)


@dataclass(frozen=True)
class Block:
    """Whole lines from one source: ``data`` ends with a newline and its first line has
    number ``first_line`` (1-based) in that source."""

    source: str
    first_line: int
    data: bytes
    line_count: int = 1
    """How many lines ``data`` holds (its newlines)."""


@dataclass
class Line:
    """One decoded line with its place in its source."""

    source: str
    number: int
    text: str


@dataclass
class InputStats:
    """What was read from one input, filled in while it is read."""

    name: str
    kind: str = "log"
    lines: int = 0
    bytes_read: int = 0
    cut_lines: int = 0
    compressed: bool = False
    warnings: list[str] = field(default_factory=list)


def clean(data: bytes) -> bytes:
    """Normalise line endings, collapse ``\r`` rewrites and strip ANSI escapes."""
    if b"\r" in data:
        data = _collapse_rewrites(data)
    if b"\x1b" in data:
        data = _ANSI_RE.sub(b"", data)
    return data


def _collapse_rewrites(data: bytes) -> bytes:
    """Keep, of each line holding ``\r``, what follows its last ``\r`` (a trailing ``\r``,
    as in ``\r\n``, is only a line ending)."""
    parts = []
    done = 0
    cr = data.find(b"\r")
    while cr >= 0:
        start = data.rfind(b"\n", 0, cr) + 1
        end = data.find(b"\n", cr)
        if end < 0:
            end = len(data)
        line = data[start:end].rstrip(b"\r")
        parts.append(data[done:start])
        parts.append(line[line.rfind(b"\r") + 1 :])
        done = end
        cr = data.find(b"\r", end)
    parts.append(data[done:])
    return b"".join(parts)


def read_blocks(stream: BinaryIO, stats: InputStats) -> Iterator[Block]:
    """Yield cleaned blocks of whole lines from ``stream``, gzip or plain.

    ``stats`` is updated as lines are read. A damaged or truncated gzip stream ends the
    input with a warning in ``stats.warnings``; everything read before the damage is kept.
    """
    head = stream.read(CHUNK_BYTES)
    if head[:2] == _GZIP_MAGIC:
        stats.compressed = True
        chunks = _gunzip(head, stream, stats)
    else:
        chunks = _plain(head, stream)
    yield from _blocks(chunks, stats)


def _plain(head: bytes, stream: BinaryIO) -> Iterator[bytes]:
    chunk = head
    while chunk:
        yield chunk
        chunk = stream.read(CHUNK_BYTES)


def _gunzip(head: bytes, stream: BinaryIO, stats: InputStats) -> Iterator[bytes]:
    """Decompress gzip members one after another, keeping every byte that decompresses
    before any damage."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    in_member = False  # the current member has started but not ended
    compressed = head
    while compressed:
        in_member = True
        try:
            out = inflater.decompress(compressed)
        except zlib.error as exc:
            stats.warnings.append(
                f"{stats.name}: compressed data is damaged ({exc}); diagnosed the "
                f"{stats.bytes_read} bytes before the damage"
            )
            return
        if out:
            yield out
        if inflater.eof:
            in_member = False
            compressed = inflater.unused_data
            inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
            if compressed:
                continue
        compressed = stream.read(CHUNK_BYTES)
    if in_member:
        stats.warnings.append(
            f"{stats.name}: the gzip stream is truncated; diagnosed the {stats.bytes_read} "
            "bytes it held"
        )


def _blocks(chunks: Iterator[bytes], stats: InputStats) -> Iterator[Block]:
    carry = b""
    skipping = False  # inside an over-long line whose rest is being skipped
    line_no = 1
    first_chunk = True
    for chunk in chunks:
        if first_chunk:
            first_chunk = False
            _warn_if_binary(chunk, stats)
        stats.bytes_read += len(chunk)
        if skipping:
            newline = chunk.find(b"\n")
            if newline < 0:
                continue
            chunk = chunk[newline + 1 :]
            skipping = False
        last_newline = chunk.rfind(b"\n")
        if last_newline < 0:
            data = carry + chunk
            if len(data) > MAX_LINE_BYTES:
                stats.cut_lines += 1
                block = Block(stats.name, line_no, clean(data[:MAX_LINE_BYTES]) + b"\n")
                line_no += 1
                stats.lines += 1
                carry = b""
                skipping = True
                yield block
            else:
                carry = data
            continue
        # One copy: the carried start of a line plus this chunk up to its last newline.
        whole = b"".join((carry, memoryview(chunk)[: last_newline + 1]))
        carry = chunk[last_newline + 1 :]
        count = whole.count(b"\n")
        yield Block(stats.name, line_no, clean(whole), count)
        line_no += count
        stats.lines += count
        if len(carry) > MAX_LINE_BYTES:
            stats.cut_lines += 1
            yield Block(stats.name, line_no, clean(carry[:MAX_LINE_BYTES]) + b"\n")
            line_no += 1
            stats.lines += 1
            carry = b""
            skipping = True
    if carry:
        stats.lines += 1
        yield Block(stats.name, line_no, clean(carry) + b"\n")
    if stats.cut_lines:
        stats.warnings.append(
            f"{stats.name}: {stats.cut_lines} line(s) longer than {MAX_LINE_BYTES} bytes "
            "were cut to that length"
        )


def _warn_if_binary(chunk: bytes, stats: InputStats) -> None:
    sample = chunk[:65536]
    nul = sample.count(b"\x00")
    if nul * 100 > len(sample):
        stats.warnings.append(
            f"{stats.name}: looks like binary data ({nul} NUL bytes in the first "
            f"{len(sample)}); scanned as text"
        )


def decode(data: bytes) -> str:
    """Decode log bytes for display; invalid UTF-8 becomes U+FFFD, never an error."""
    return data.decode("utf-8", errors="replace")


def iter_lines(blocks: Iterator[Block]) -> Iterator[Line]:
    """Split blocks into decoded lines (for tests and small inputs; the scanner works on
    blocks directly)."""
    for block in blocks:
        for offset, raw in enumerate(block.data[:-1].split(b"\n")):
            yield Line(block.source, block.first_line + offset, decode(raw))
