"""The line reader: streams a log into blocks of whole, cleaned, numbered lines.

Logs are read in large chunks and never held in memory whole. Each chunk is cut at its last
newline; the rest waits for the next chunk. What the reader does to the text:

* gzip, bzip2, xz and zstd streams, tar and zip archives are recognised by their magic bytes
  (not the file name) and unpacked on the fly in bounded steps (:mod:`.decompress`); each
  member of an archive is a source of its own, named ``archive:member``;
* UTF-16 and UTF-32 (with a byte-order mark, or told by their NUL bytes) are re-encoded to
  UTF-8, and a UTF-8 byte-order mark is dropped (:mod:`.decode`);
* a log whose lines are JSON records (Docker's json-file, ``journalctl -o json``, a log
  collector's export) or kubelet's CRI lines is read as what the program printed
  (:mod:`.records`);
* ``\\r\\n`` becomes ``\\n``; a line rewritten with ``\\r`` (progress bars) keeps its last state;
  a text with no ``\\n`` at all in its first chunk but with ``\\r`` ends its lines with ``\\r``;
* ANSI escape sequences (colours, cursor moves, OSC titles) and NUL bytes are removed;
* bytes are kept as bytes: invalid UTF-8 never stops reading, it is replaced only when a line
  is decoded for display.

A line that grows past :data:`MAX_LINE_BYTES` without a newline (a binary file, a 5 GB log on
one line) is cut: its first :data:`MAX_LINE_BYTES` are kept and the rest of it is skipped up to
the next newline, so memory stays flat whatever the input. Empty input, binary data and
damaged compressed data are warnings in :class:`InputStats`, never exceptions.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import chain
from typing import BinaryIO

from gpudoctor.logs.decode import sniff_encoding, to_utf8
from gpudoctor.logs.decompress import unpack
from gpudoctor.logs.records import sniff_format, unwrap
from gpudoctor.logs.stats import InputStats as InputStats

CHUNK_BYTES = 4 << 20
"""How much is read at once."""

MAX_LINE_BYTES = 1 << 20
"""The longest line kept whole; longer lines are cut to this length."""

BINARY_SAMPLE_BYTES = 65536
"""How much of the start of a text is looked at to tell a log from binary data."""

_ANSI_RE = re.compile(
    rb"\x1b\[[0-9;:?<=>]*[ -/]*[@-~]"  # CSI: colours, cursor moves
    rb"|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)"  # OSC: window titles, hyperlinks
    rb"|\x1b[@-Z\\-_]"  # other two-byte escapes
)
# Control bytes that text does not hold (tab, newlines, form feed, backspace and escape do).
_CONTROL = bytes(b for b in range(32) if b not in b"\b\t\n\v\f\r\x1b") + b"\x7f"
_NOT_CONTROL = bytes(b for b in range(256) if b not in _CONTROL)
_NUL_RUN = re.compile(rb"\x00{16,}")


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


def clean(data: bytes) -> bytes:
    """Normalise line endings, collapse ``\r`` rewrites, strip ANSI escapes and NUL bytes."""
    if b"\r" in data:
        if data.count(b"\r\n", 0, 65536) > 64:
            # Many CRLF line ends (a Windows log): dropped in one pass rather than line by
            # line below (a CR before LF only ends a line, so both read the same).
            data = data.replace(b"\r\n", b"\n")
        if b"\r" in data:
            data = _collapse_rewrites(data)
    if b"\x1b" in data:
        data = _ANSI_RE.sub(b"", data)
    if b"\x00" in data:
        # No log means a NUL; a crash often leaves a hole of them, glued to the next line.
        data = data.replace(b"\x00", b"")
    return data


def _collapse_rewrites(data: bytes) -> bytes:
    """Keep, of each line holding ``\r``, what follows its last ``\r`` (a trailing ``\r``,
    as in ``\r\n``, is only a line ending)."""
    parts: list[bytes | memoryview] = []
    view = memoryview(data)  # the text between rewritten lines is copied once, by join()
    done = 0
    cr = data.find(b"\r")
    while cr >= 0:
        start = data.rfind(b"\n", 0, cr) + 1
        end = data.find(b"\n", cr)
        if end < 0:
            end = len(data)
        line = data[start:end].rstrip(b"\r")
        parts.append(view[done:start])
        parts.append(line[line.rfind(b"\r") + 1 :])
        done = end
        cr = data.find(b"\r", end)
    parts.append(view[done:])
    return b"".join(parts)


def _drop_rewritten(carry: bytes) -> bytes:
    """The start of an unfinished line without the states that a later ``\r`` rewrote: from
    its last ``\r`` that is not its final byte on, which :func:`clean` reads the same."""
    cr = carry.rfind(b"\r", 0, len(carry) - 1)
    return carry[cr:] if cr > 0 else carry


EMPTY_INPUT = "the input was empty"
"""The warning for an input that held no text."""


def read_blocks(stream: BinaryIO, stats: InputStats) -> Iterator[Block]:
    """Yield cleaned blocks of whole lines from ``stream``: plain, compressed or an archive.

    ``stats`` is updated as lines are read. Damaged or truncated compressed data ends that
    text with a warning in ``stats.warnings``; everything read before the damage is kept.
    Binary data and empty input are warnings too. Only an error reading ``stream`` itself
    (:class:`OSError`) is raised.
    """
    for source, chunks in unpack(stream, stats, CHUNK_BYTES):
        yield from _blocks(source, _text(source, chunks, stats), stats)
    if stats.bytes_read == 0 and not stats.warnings:
        held = f" (the {stats.formats[0]} data holds no text)" if stats.formats else ""
        stats.warn(stats.name, EMPTY_INPUT + held)


def _text(source: str, chunks: Iterator[bytes], stats: InputStats) -> Iterator[bytes]:
    """The UTF-8 text of one source, counted in ``stats`` as it is read."""
    first = next(chunks, b"")
    if not first:
        return
    encoding, bom = sniff_encoding(first)
    stats.encoding = encoding
    raw = _counted(chain([first[bom:]], chunks), stats, bom)
    text = raw if encoding == "utf-8" else to_utf8(raw, encoding)
    head = next(text, b"")
    if not head:
        return
    _warn_if_binary(source, head, stats)
    rest: Iterator[bytes] = chain([head], text)
    wrapper = sniff_format(head)
    if wrapper is not None:
        stats.formats.append(wrapper)
        rest = unwrap(rest, wrapper)
    if b"\n" not in head and b"\r" in head:
        # No newline in a whole chunk, but carriage returns: lines end in \r alone (old Mac
        # files, or a progress bar that never ended its line), so each \r is a line end.
        yield from (chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n") for chunk in rest)
    else:
        yield from rest


def _counted(chunks: Iterator[bytes], stats: InputStats, extra: int) -> Iterator[bytes]:
    stats.bytes_read += extra
    for chunk in chunks:
        stats.bytes_read += len(chunk)
        yield chunk


def _blocks(source: str, chunks: Iterator[bytes], stats: InputStats) -> Iterator[Block]:
    carry = b""
    skipping = False  # inside an over-long line whose rest is being skipped
    line_no = 1
    cut = 0
    for chunk in chunks:
        if skipping:
            newline = chunk.find(b"\n")
            if newline < 0:
                continue
            chunk = chunk[newline + 1 :]
            skipping = False
        last_newline = chunk.rfind(b"\n")
        if last_newline < 0:
            data = carry + chunk
            if len(data) > MAX_LINE_BYTES and b"\r" in data:
                data = _drop_rewritten(data)
            if len(data) > MAX_LINE_BYTES:
                cut += 1
                block = Block(source, line_no, clean(data[:MAX_LINE_BYTES]) + b"\n")
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
        yield Block(source, line_no, clean(whole), count)
        line_no += count
        stats.lines += count
        if len(carry) > MAX_LINE_BYTES and b"\r" in carry:
            carry = _drop_rewritten(carry)
        if len(carry) > MAX_LINE_BYTES:
            cut += 1
            yield Block(source, line_no, clean(carry[:MAX_LINE_BYTES]) + b"\n")
            line_no += 1
            stats.lines += 1
            carry = b""
            skipping = True
    if carry:
        stats.lines += 1
        yield Block(source, line_no, clean(carry) + b"\n")
    if cut:
        stats.cut_lines += cut
        stats.warn(
            source, f"{cut} line(s) longer than {MAX_LINE_BYTES} bytes were cut to that length"
        )


def _warn_if_binary(source: str, chunk: bytes, stats: InputStats) -> None:
    """Warn when the start of a text is not a log: NUL bytes only, or many control bytes.

    Runs of NUL bytes are left out of the count: a machine that crashed while writing a log
    often leaves a hole of zeros in it, and the log around the hole is still a log.
    """
    sample = chunk[:BINARY_SAMPLE_BYTES]
    if not sample.strip(b"\x00"):
        stats.warn(source, "holds only NUL bytes, not a log (binary data); nothing to diagnose")
        return
    text = _NUL_RUN.sub(b"", sample)
    control = len(text.translate(None, _NOT_CONTROL))
    if control * 20 > len(text):
        stats.warn(
            source,
            f"looks like binary data, not a log ({control} control bytes in the first "
            f"{len(sample)}); scanned as text anyway. Pass the log itself: plain text, "
            "gzip, xz, bzip2, zstd, zip or tar",
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


class TailKeeper:
    """Passes blocks through and keeps the last ``limit`` bytes of them, in whole lines."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._blocks: deque[Block] = deque()
        self._bytes = 0

    def through(self, blocks: Iterable[Block]) -> Iterator[Block]:
        """Every block of ``blocks``, unchanged, keeping the tail as they go by."""
        for block in blocks:
            self._blocks.append(block)
            self._bytes += len(block.data)
            while self._bytes - len(self._blocks[0].data) >= self._limit:
                self._bytes -= len(self._blocks.popleft().data)
            yield block

    def tail(self) -> list[Block]:
        """The kept blocks, the first cut to the whole lines that fit in the limit."""
        kept = list(self._blocks)
        excess = self._bytes - self._limit
        if kept and excess > 0:
            first = kept[0]
            cut = first.data.find(b"\n", excess - 1) + 1  # a line cut through is left out
            dropped = first.data.count(b"\n", 0, cut)
            if cut >= len(first.data):
                kept.pop(0)
            else:
                kept[0] = Block(
                    first.source,
                    first.first_line + dropped,
                    first.data[cut:],
                    first.line_count - dropped,
                )
        return kept
