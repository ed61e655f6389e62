"""The scanner: which lines match, typed captures, bounded memory."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from gpudoctor.logs import reader as reader_module
from gpudoctor.logs import scanner as scanner_module
from gpudoctor.logs.reader import InputStats, read_blocks
from gpudoctor.logs.scanner import (
    KEEP_FIRST,
    KEEP_LAST,
    CaptureType,
    PatternSpec,
    Scanner,
    convert_capture,
)
from gpudoctor.rulebook.book import RuleBook
from gpudoctor.rulebook.loader import load_rules
from gpudoctor.version_numbers import Version


def scan(specs: list[PatternSpec], data: bytes) -> Scanner:
    scanner = Scanner(specs)
    scanner.scan(read_blocks(io.BytesIO(data), InputStats(name="log")))
    return scanner


def test_events_have_line_numbers_and_text() -> None:
    scanner = scan(
        [PatternSpec("r/killed", r"^Killed$")],
        b"epoch 1\nKilled\nnot Killed here\nKilled\n",
    )
    hits = scanner.hits["r/killed"]
    assert hits.count == 2
    assert [(e.line, e.text) for e in hits.events()] == [(2, "Killed"), (4, "Killed")]


def test_typed_captures() -> None:
    spec = PatternSpec(
        "r/oom",
        r"allocate (?P<req>[0-9.]+ [KMG]iB) on GPU (?P<gpu>\d+) driver (?P<drv>[0-9.]+)",
        captures={"req": CaptureType.SIZE, "gpu": CaptureType.INT, "drv": CaptureType.VERSION},
    )
    event = scan([spec], b"x\nallocate 2.00 GiB on GPU 3 driver 525.60.13\n").hits["r/oom"].first[0]
    assert event.captures == {"req": 2 * 1024**3, "gpu": 3, "drv": Version("525.60.13")}
    assert event.line == 2


def test_match_never_spans_lines() -> None:
    scanner = scan([PatternSpec("r/x", r"foo\s+bar")], b"foo\nbar\nfoo  bar\n")
    assert [e.line for e in scanner.hits["r/x"].events()] == [3]


def test_one_event_per_line_per_pattern() -> None:
    scanner = scan([PatternSpec("r/x", r"nan")], b"nan nan nan\n")
    assert scanner.hits["r/x"].count == 1


def test_ignore_case() -> None:
    scanner = scan(
        [PatternSpec("r/x", r"bus error", ignore_case=True)], b"Bus Error (core dumped)\n"
    )
    assert scanner.hits["r/x"].count == 1


def test_events_are_bounded_first_and_last_kept() -> None:
    data = b"".join(b"NCCL WARN timeout %d\n" % i for i in range(1000))
    hits = scan([PatternSpec("r/n", r"NCCL WARN")], data).hits["r/n"]
    assert hits.count == 1000
    kept = [e.line for e in hits.events()]
    assert kept == [*range(1, KEEP_FIRST + 1), *range(1001 - KEEP_LAST, 1001)]


def test_many_patterns_one_pass_across_inputs() -> None:
    specs = [
        PatternSpec("a/1", r"alpha"),
        PatternSpec("b/1", r"beta"),
        PatternSpec("c/1", r"gamma"),
    ]
    scanner = Scanner(specs)
    scanner.scan(read_blocks(io.BytesIO(b"alpha\n"), InputStats(name="one")), input_index=0)
    scanner.scan(read_blocks(io.BytesIO(b"x\nbeta\n"), InputStats(name="two")), input_index=1)
    assert scanner.hits["a/1"].first[0].order == (0, 1)
    assert scanner.hits["b/1"].first[0].order == (1, 2)
    assert scanner.hits["b/1"].first[0].source == "two"
    assert scanner.hits["c/1"].count == 0


def test_invalid_utf8_line_still_matches() -> None:
    scanner = scan(
        [PatternSpec("r/x", r"CUDA error: (?P<what>.*)")], b"\xff CUDA error: boom \xfe\n"
    )
    event = scanner.hits["r/x"].first[0]
    assert event.captures["what"] == "boom \ufffd"


def test_convert_capture_rejects_garbage() -> None:
    assert convert_capture("abc", CaptureType.INT) is None
    assert convert_capture("0x1f", CaptureType.INT) == 31
    assert convert_capture("12.5 MiB", CaptureType.SIZE) == int(12.5 * 1024 * 1024)
    assert convert_capture("n/a", CaptureType.VERSION) is None


def test_a_pattern_on_every_line_saturates_but_keeps_the_true_last_lines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(scanner_module, "SATURATION", 50)
    monkeypatch.setattr(reader_module, "CHUNK_BYTES", 4096)
    data = b"".join(b"epoch %d step %d loss 0.1\n" % (i // 100, i) for i in range(20_000))
    hits = scan(
        [PatternSpec("r/e", r"epoch (?P<epoch>\d+)", captures={"epoch": CaptureType.INT})], data
    ).hits["r/e"]
    assert hits.saturated
    assert 50 <= hits.count < 20_000
    assert [e.line for e in hits.first] == [1, 2, 3, 4, 5]
    assert [e.line for e in hits.last] == [19_996, 19_997, 19_998, 19_999, 20_000]
    assert hits.last[-1].captures["epoch"] == 199
    assert hits.last[-1].text == "epoch 199 step 19999 loss 0.1"


def test_rare_patterns_are_counted_exactly() -> None:
    data = b"".join(b"line %d\n" % i for i in range(3000)) + b"Killed\n"
    hits = scan([PatternSpec("r/k", r"^Killed$")], data).hits["r/k"]
    assert (hits.count, hits.saturated) == (1, False)


def test_a_pack_too_large_for_one_re2_set_is_split(tmp_path: Path) -> None:
    # RE2 refuses a set this large ("failed to compile Set"): the scanner splits it.
    count = 5000
    for n in range(count):
        (tmp_path / f"gen-{n}.yaml").write_text(
            f"id: gen-{n}\ncause: host_oom\ntitle: generated {n}\nseverity: error\n"
            "role: root\nconfidence: 0.5\npatterns:\n"
            f"  - id: p\n    regex: 'custom failure number {n} in (?P<mod>\\w+) at step \\d+'\n"
            "summary: s\nfix: [f]\nreferences: [https://example.org]\n"
            "examples: {match: ['x'], no_match: ['y']}\n"
        )
    book = RuleBook(tuple(load_rules([tmp_path]).rules))
    assert len(book.rules) == count
    scanner = book.scanner()
    log = (
        b"ok\ncustom failure number 4999 in loader at step 7\n"
        b"custom failure number 12 in x at step 1\n"
    )
    scanner.scan(read_blocks(io.BytesIO(log), InputStats(name="log")))
    found = {key: hits.count for key, hits in scanner.hits.items() if hits.count}
    assert found == {"gen-4999/p": 1, "gen-12/p": 1}
    assert scanner.hits["gen-4999/p"].first[0].captures == {"mod": "loader"}
