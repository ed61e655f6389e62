"""Property-based tests of the line reader and the scanner: whatever the bytes, reading never
raises, memory stays bounded and the counts add up."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpudoctor.logs import reader
from gpudoctor.logs.reader import InputStats, iter_lines, read_blocks
from gpudoctor.logs.scanner import PatternSpec, Scanner

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

text_lines = st.lists(
    st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=60).map(
        lambda s: s.replace("\n", " ").replace("\r", " ").replace("\x00", " ")
    ),
    max_size=20,
)
text_bytes = st.one_of(
    st.lists(st.sampled_from([b"\r", b"\n", b"\r\n", b"\x00", b"\x1b[31m", b"x", b"\xff"])).map(
        b"".join
    ),
    text_lines.map(lambda lines: "\n".join(lines).encode("utf-8")),
)
log_bytes = st.one_of(st.binary(max_size=4096), text_bytes)
PACKERS = [gzip.compress, bz2.compress, lzma.compress]


def read_all(data: bytes) -> tuple[list[reader.Line], InputStats]:
    stats = InputStats(name="p")
    return list(iter_lines(read_blocks(io.BytesIO(data), stats))), stats


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small chunks and lines, so that short examples cross every boundary."""
    monkeypatch.setattr(reader, "CHUNK_BYTES", 64)
    monkeypatch.setattr(reader, "MAX_LINE_BYTES", 256)


@SETTINGS
@given(log_bytes)
def test_any_bytes_read_without_error_and_counted(data: bytes) -> None:
    lines, stats = read_all(data)
    assert stats.lines == len(lines)
    assert [ln.number for ln in lines] == list(range(1, len(lines) + 1)) or stats.formats
    if not stats.formats and not any("cannot read" in w for w in stats.warnings):
        assert stats.bytes_read == len(data)
    if not data:
        assert any("the input was empty" in w for w in stats.warnings)
    assert all(len(ln.text.encode("utf-8", "replace")) <= 3 * 256 for ln in lines)
    assert all("\x00" not in ln.text and "\x1b[" not in ln.text for ln in lines)


@SETTINGS
@given(text_lines)
def test_text_lines_come_back_whole(lines: list[str]) -> None:
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    got, stats = read_all(data)
    expected = [line for line in lines]
    if any(len(line.encode()) > 256 for line in lines):
        return  # cut lines are another test's business
    assert [ln.text for ln in got] == expected
    assert stats.warnings == [] or not lines or all(not line for line in lines)


@SETTINGS
@given(text_lines, st.sampled_from(["utf-8-sig", "utf-16", "utf-32"]))
def test_any_encoding_with_a_mark_reads_like_utf8(lines: list[str], encoding: str) -> None:
    text = "".join(line + "\n" for line in lines if len(line.encode()) < 80)
    got, _ = read_all(text.encode(encoding))
    assert [ln.text for ln in got] == text.split("\n")[:-1]


@SETTINGS
@given(st.lists(text_bytes, min_size=1, max_size=3), st.sampled_from(PACKERS), st.data())
def test_concatenated_and_truncated_members(
    parts: list[bytes], pack: object, data: st.DataObject
) -> None:
    assert callable(pack)
    members = [pack(part) for part in parts]
    packed = b"".join(members)
    ends = {sum(len(m) for m in members[: i + 1]) for i in range(len(members))}
    _, whole = read_all(packed)
    if not any("cannot read" in w for w in whole.warnings):
        assert whole.bytes_read == sum(len(p) for p in parts)
    assert not any("damaged" in w or "truncated" in w for w in whole.warnings)
    cut = data.draw(st.integers(min_value=6, max_value=len(packed) - 1))
    lines, stats = read_all(packed[:cut])
    assert stats.bytes_read <= whole.bytes_read
    # A cut stream says so, unless the cut fell exactly between members.
    if cut not in ends:
        assert stats.warnings
    assert stats.lines == len(lines)


@SETTINGS
@given(st.binary(min_size=1, max_size=2048), st.sampled_from(PACKERS))
def test_damaged_members_never_raise(noise: bytes, pack: object) -> None:
    assert callable(pack)
    packed = bytearray(pack(b"line of a log\n" * 50))
    at = len(noise) % len(packed)
    packed[at : at + len(noise)] = noise
    lines, stats = read_all(bytes(packed))
    assert stats.lines == len(lines)


@SETTINGS
@given(st.lists(st.binary(max_size=300), max_size=30))
def test_scanner_events_point_at_the_lines_that_match(raw_lines: list[bytes]) -> None:
    specs = [
        PatternSpec(key="oom", regex=r"out of memory\. Tried to allocate (?P<size>\S+)"),
        PatternSpec(key="error", regex=r"(?i)error"),
        PatternSpec(key="anchored", regex=r"^x+$"),
    ]
    data = b"\n".join(raw_lines)
    lines = {ln.number: ln.text for ln in read_all(data)[0]}
    scanner = Scanner(specs)
    scanner.scan(read_blocks(io.BytesIO(data), InputStats(name="s")))
    for spec in specs:
        for event in scanner.hits[spec.key].events():
            assert event.source == "s"
            line = lines[event.line]
            assert re.search(spec.regex, line), (spec.key, line)
            assert event.text[:20] in line
