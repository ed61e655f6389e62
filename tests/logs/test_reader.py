"""The line reader: decoding, cleaning, numbering, gzip and limits."""

from __future__ import annotations

import gzip
import io

import pytest

from gpudoctor.logs import reader
from gpudoctor.logs.reader import InputStats, Line, iter_lines, read_blocks


def read(data: bytes, name: str = "t.log") -> tuple[list[Line], InputStats]:
    stats = InputStats(name=name)
    return list(iter_lines(read_blocks(io.BytesIO(data), stats))), stats


def texts(data: bytes) -> list[str]:
    return [line.text for line in read(data)[0]]


def test_lines_keep_source_and_numbers() -> None:
    lines, stats = read(b"first\nsecond\nthird\n")
    assert [(ln.source, ln.number, ln.text) for ln in lines] == [
        ("t.log", 1, "first"),
        ("t.log", 2, "second"),
        ("t.log", 3, "third"),
    ]
    assert stats.lines == 3
    assert stats.bytes_read == len(b"first\nsecond\nthird\n")


def test_last_line_without_newline_is_kept() -> None:
    assert texts(b"a\nb") == ["a", "b"]


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    assert texts(b"loss \xff\xfe nan\nnext\n") == ["loss \ufffd\ufffd nan", "next"]


def test_ansi_escapes_are_stripped() -> None:
    data = b"\x1b[1;31mRuntimeError\x1b[0m: CUDA error\n\x1b]0;title\x07plain\n"
    assert texts(data) == ["RuntimeError: CUDA error", "plain"]


def test_carriage_return_rewrites_keep_last_state() -> None:
    data = b"Epoch 1:  10%|#\rEpoch 1:  50%|#####\rEpoch 1: 100%|##########\nnext\r\n"
    assert texts(data) == ["Epoch 1: 100%|##########", "next"]


def test_crlf_line_numbers_unchanged() -> None:
    lines, _ = read(b"a\r\nb\r\nc\r\n")
    assert [(ln.number, ln.text) for ln in lines] == [(1, "a"), (2, "b"), (3, "c")]


def test_gzip_is_recognised_by_content_not_name() -> None:
    lines, stats = read(gzip.compress(b"one\ntwo\n"), name="no-extension")
    assert [ln.text for ln in lines] == ["one", "two"]
    assert stats.compressed
    assert stats.warnings == []


def test_concatenated_gzip_members_are_all_read() -> None:
    assert texts(gzip.compress(b"a\n") + gzip.compress(b"b\n")) == ["a", "b"]


def test_truncated_gzip_keeps_what_was_read_and_warns() -> None:
    body = b"".join(b"line %d\n" % i for i in range(50_000))
    packed = gzip.compress(body)
    lines, stats = read(packed[: len(packed) // 2])
    assert 0 < len(lines) < 50_000
    assert lines[0].text == "line 0"
    # Every line returned is intact except possibly the last, cut by the truncation.
    assert all(ln.text == f"line {ln.number - 1}" for ln in lines[:-1])
    assert any("truncated" in w for w in stats.warnings)


def test_corrupt_gzip_is_a_warning_not_an_exception() -> None:
    lines, stats = read(b"\x1f\x8b\x08\x00garbage-not-deflate")
    assert lines == []
    assert any("damaged" in w or "truncated" in w for w in stats.warnings)


def test_binary_input_is_flagged() -> None:
    _, stats = read(b"\x00\x01\x02" * 1000 + b"\nCUDA error\n")
    assert any("binary" in w for w in stats.warnings)


def test_overlong_line_is_cut_and_memory_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader, "CHUNK_BYTES", 1024)
    monkeypatch.setattr(reader, "MAX_LINE_BYTES", 4096)
    data = b"x" * 100_000 + b"\nafter\n"
    stats = InputStats(name="huge")
    blocks = list(read_blocks(io.BytesIO(data), stats))
    assert max(len(b.data) for b in blocks) <= 4096 + 1
    lines = list(iter_lines(iter(blocks)))
    assert [(ln.number, len(ln.text)) for ln in lines] == [(1, 4096), (2, 5)]
    assert lines[1].text == "after"
    assert stats.cut_lines == 1
    assert any("cut" in w for w in stats.warnings)


def test_lines_spanning_chunks_are_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader, "CHUNK_BYTES", 7)
    data = b"".join(b"line number %d\n" % i for i in range(20))
    lines, stats = read(data)
    assert [ln.text for ln in lines] == [f"line number {i}" for i in range(20)]
    assert [ln.number for ln in lines] == list(range(1, 21))
    assert stats.lines == 20


def test_empty_input() -> None:
    lines, stats = read(b"")
    assert lines == []
    assert stats.lines == 0
