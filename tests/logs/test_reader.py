"""The line reader: decoding, cleaning, numbering, gzip and limits."""

from __future__ import annotations

import bz2
import codecs
import gzip
import importlib
import io
import lzma
import random
import tarfile
import time
import tracemalloc
import zipfile
from collections.abc import Callable

import pytest

from gpudoctor.logs import reader
from gpudoctor.logs.reader import Block, InputStats, Line, TailKeeper, iter_lines, read_blocks


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


# --- compression, archives, encodings, limits -------------------------------------------


def _zstd(data: bytes) -> bytes:
    zstandard = pytest.importorskip("zstandard")
    compressed: bytes = zstandard.ZstdCompressor().compress(data)
    return compressed


COMPRESSORS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": gzip.compress,
    "bzip2": lambda data: bz2.compress(data, 1),
    "xz": lambda data: lzma.compress(data, preset=1),
    "zstd": _zstd,
}


@pytest.mark.parametrize("kind", sorted(COMPRESSORS))
def test_compressed_formats_are_recognised_by_content(kind: str) -> None:
    pack = COMPRESSORS[kind]
    lines, stats = read(pack(b"one\ntwo\n") + pack(b"three\n"), name="no-extension")
    assert [ln.text for ln in lines] == ["one", "two", "three"]
    assert stats.formats == [kind]
    assert stats.compressed
    assert stats.bytes_read == len(b"one\ntwo\nthree\n")
    assert stats.warnings == []


@pytest.mark.parametrize("kind", ["bzip2", "xz"])
def test_truncated_bz2_and_xz_keep_what_was_read_and_warn(kind: str) -> None:
    body = b"".join(b"line %d\n" % i for i in range(200_000))
    packed = COMPRESSORS[kind](body)
    lines, stats = read(packed[: len(packed) // 2])
    assert 0 < len(lines) < 200_000
    assert all(ln.text == f"line {ln.number - 1}" for ln in lines[:-1])
    assert any("truncated" in w for w in stats.warnings)


def test_gzip_with_a_wrong_checksum_keeps_every_line_and_warns() -> None:
    packed = gzip.compress(b"line\n" * 10)
    damaged = packed[:-8] + b"\x00\x00\x00\x00" + packed[-4:]  # CRC32 zeroed
    lines, stats = read(damaged)
    assert [ln.text for ln in lines] == ["line"] * 10
    assert any("damaged" in w for w in stats.warnings)


def test_trailing_garbage_after_gzip_is_a_warning() -> None:
    lines, stats = read(gzip.compress(b"a\n") + b"not gzip at all")
    assert [ln.text for ln in lines] == ["a"]
    assert any("ignored" in w for w in stats.warnings)


def test_nul_padding_after_gzip_is_silent() -> None:
    lines, stats = read(gzip.compress(b"a\n") + bytes(1000))
    assert [ln.text for ln in lines] == ["a"]
    assert stats.warnings == []


def test_zstd_without_a_reader_says_how_to_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = importlib.import_module

    def no_zstd(name: str, package: str | None = None) -> object:
        if name in ("compression.zstd", "zstandard"):
            raise ImportError(name)
        return real_import(name, package)

    monkeypatch.setattr(importlib, "import_module", no_zstd)
    lines, stats = read(b"\x28\xb5\x2f\xfd" + bytes(20))
    assert lines == []
    assert any("gpudoctor[zstd]" in w for w in stats.warnings)


def _zip(members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", method) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


def _tar(members: dict[str, bytes], mode: str = "w") -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode=mode) as archive:  # type: ignore[call-overload]
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return out.getvalue()


@pytest.mark.parametrize("method", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2])
def test_each_zip_member_is_a_source_with_its_own_line_numbers(method: int) -> None:
    data = _zip({"rank0.log": b"a0\nb0\n", "logs/rank1.log": b"a1\n"}, method)
    lines, stats = read(data, name="logs.zip")
    assert [(ln.source, ln.number, ln.text) for ln in lines] == [
        ("logs.zip:rank0.log", 1, "a0"),
        ("logs.zip:rank0.log", 2, "b0"),
        ("logs.zip:logs/rank1.log", 1, "a1"),
    ]
    assert stats.lines == 3
    assert stats.formats == ["zip"]


def test_zip_from_a_pipe_is_read() -> None:
    class Pipe(io.RawIOBase):
        def __init__(self, data: bytes) -> None:
            self._data = io.BytesIO(data)

        def readable(self) -> bool:
            return True

        def readinto(self, buffer: bytearray) -> int:  # type: ignore[override]
            chunk = self._data.read(min(len(buffer), 100))
            buffer[: len(chunk)] = chunk
            return len(chunk)

    stats = InputStats(name="-")
    stream = io.BufferedReader(Pipe(_zip({"a.log": b"x\n"})))
    assert not stream.seekable()
    lines = list(iter_lines(read_blocks(stream, stats)))
    assert [(ln.source, ln.text) for ln in lines] == [("-:a.log", "x")]


def test_tar_gz_of_a_log_folder_reads_every_member_even_compressed_ones() -> None:
    data = _tar({"run/r0.log": b"t0\n", "run/r1.log.gz": gzip.compress(b"t1\n")}, "w:gz")
    lines, stats = read(data, name="run.tar.gz")
    assert [(ln.source, ln.text) for ln in lines] == [
        ("run.tar.gz:run/r0.log", "t0"),
        ("run.tar.gz:run/r1.log.gz", "t1"),
    ]
    assert stats.formats == ["gzip", "tar", "gzip"]


def test_truncated_tar_warns() -> None:
    data = _tar({"big.log": b"line\n" * 10_000})
    lines, stats = read(data[:3000])
    assert all(ln.text == "line" for ln in lines)
    assert any("damaged" in w or "truncated" in w for w in stats.warnings)


def test_damaged_zip_warns_and_says_what_to_do() -> None:
    lines, stats = read(b"PK\x03\x04" + b"\x00" * 100)
    assert lines == []
    assert any("zip" in w and "damaged" in w for w in stats.warnings)


@pytest.mark.parametrize(
    ("magic", "hint"), [(b"7z\xbc\xaf\x27\x1c", "7z x"), (b"Rar!\x1a\x07\x00", "unrar")]
)
def test_unreadable_archives_say_how_to_fix(magic: bytes, hint: str) -> None:
    lines, stats = read(magic + b"\x00" * 64)
    assert lines == []
    assert any(hint in w for w in stats.warnings)


@pytest.mark.parametrize(
    "encoding",
    ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be", "utf-8-sig"],
)
def test_utf16_and_utf32_logs_are_reencoded(encoding: str) -> None:
    text = "RuntimeError: CUDA out of memory ¿ 显存\r\nnext line\r\n"
    lines, stats = read(text.encode(encoding))
    assert [ln.text for ln in lines] == ["RuntimeError: CUDA out of memory ¿ 显存", "next line"]
    assert stats.bytes_read == len(text.encode(encoding))
    assert stats.warnings == []


def test_powershell_log_is_not_binary() -> None:
    # Windows PowerShell's `>` writes UTF-16LE with a byte-order mark.
    data = codecs.BOM_UTF16_LE + "torch.cuda.OutOfMemoryError: boom\r\n".encode("utf-16-le")
    lines, stats = read(data)
    assert [ln.text for ln in lines] == ["torch.cuda.OutOfMemoryError: boom"]
    assert stats.encoding == "utf-16-le"
    assert not any("binary" in w for w in stats.warnings)


def test_utf16_split_between_chunks_stays_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader, "CHUNK_BYTES", 7)  # odd: splits code units and characters
    text = "a😀b\nzweite Zeile\n"
    assert texts(text.encode("utf-16")) == ["a😀b", "zweite Zeile"]


def test_random_binary_is_flagged_as_not_a_log() -> None:
    data = random.Random(7).randbytes(20_000)
    _, stats = read(data)
    assert any("not a log" in w for w in stats.warnings)


def test_a_log_with_a_hole_of_nul_bytes_is_still_a_log_and_nul_bytes_are_dropped() -> None:
    data = b"step 1 loss 0.5\n" * 100 + bytes(8192) + b"RuntimeError: CUDA error\n"
    lines, stats = read(data)
    assert lines[-1].text == "RuntimeError: CUDA error"
    assert stats.warnings == []


def test_empty_input_is_recorded() -> None:
    _, stats = read(b"")
    assert stats.warnings == ["t.log: the input was empty"]
    _, stats = read(gzip.compress(b""))
    assert any("the input was empty" in w for w in stats.warnings)


def _peak_bytes(data: bytes) -> tuple[int, InputStats]:
    stats = InputStats(name="bomb")
    tracemalloc.start()
    try:
        for _ in read_blocks(io.BytesIO(data), stats):
            pass
        return tracemalloc.get_traced_memory()[1], stats
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("kind", ["gzip", "bzip2", "xz", "zstd", "zip", "tar.gz"])
def test_decompression_bomb_keeps_memory_flat(kind: str) -> None:
    size = 48 << 20
    zeros = bytes(size)
    packers: dict[str, Callable[[bytes], bytes]] = {
        **COMPRESSORS,
        "zip": lambda d: _zip({"zeros.log": d}),
        "tar.gz": lambda d: _tar({"zeros.log": d}, "w:gz"),
    }
    bomb = packers[kind](zeros)
    del zeros
    peak, stats = _peak_bytes(bomb)
    # A chunk, its copies, a carried line, a decompression step and xz's 8 MiB dictionary:
    # well below the 48 MiB inside (reading it whole, as before, took more than 48 MiB).
    assert peak < 32 << 20, f"peak {peak >> 20} MiB"
    assert stats.bytes_read == size
    assert any("NUL" in w for w in stats.warnings)


def test_progress_bar_of_4_mib_with_only_cr_is_fast_and_flat() -> None:
    states = b"".join(b"Epoch 1: %3d%%|%s|\r" % (i % 100, b"#" * (i % 50)) for i in range(120_000))
    assert len(states) > 4 << 20 and b"\n" not in states
    start = time.perf_counter()
    peak, stats = _peak_bytes(states)
    assert time.perf_counter() - start < 5
    assert peak < 32 << 20
    assert stats.lines == 120_000  # no newline anywhere: each \r ends a line
    assert stats.cut_lines == 0


def test_progress_bar_of_4_mib_between_lines_keeps_its_last_state() -> None:
    bar = b"".join(b"\rstep %6d" % i for i in range(500_000))
    assert len(bar) > 4 << 20
    start = time.perf_counter()
    lines, stats = read(b"header\n" + bar + b"\nTraceback (most recent call last):\n")
    assert time.perf_counter() - start < 5
    assert [ln.text for ln in lines] == [
        "header",
        "step 499999",
        "Traceback (most recent call last):",
    ]
    assert stats.cut_lines == 0


def test_the_tail_keeper_passes_every_block_and_keeps_whole_last_lines() -> None:
    blocks = [
        Block("t", 1, b"aaaa\nbbbb\n", 2),
        Block("t", 3, b"cccc\ndddd\neeee\n", 3),
        Block("t", 6, b"ffff\n", 1),
    ]
    keeper = TailKeeper(12)
    assert list(keeper.through(blocks)) == blocks
    # 12 bytes hold "eeee\nffff\n" and part of "dddd\n": the part is left out
    assert keeper.tail() == [Block("t", 5, b"eeee\n", 1), Block("t", 6, b"ffff\n", 1)]


def test_the_tail_keeper_keeps_all_of_a_short_input() -> None:
    blocks = [Block("t", 1, b"aaaa\n", 1), Block("t", 2, b"bbbb\n", 1)]
    keeper = TailKeeper(64)
    list(keeper.through(blocks))
    assert keeper.tail() == blocks
