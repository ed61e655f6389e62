"""The scanner: which lines match, typed captures, bounded memory."""

from __future__ import annotations

import io
import threading
from pathlib import Path

import pytest

from gpudoctor.logs import reader as reader_module
from gpudoctor.logs import scanner as scanner_module
from gpudoctor.logs.reader import InputStats, read_blocks
from gpudoctor.logs.scanner import (
    KEEP_FIRST,
    KEEP_LAST,
    CaptureType,
    PatternHits,
    PatternSpec,
    Scanner,
    convert_capture,
    fold_for_literals,
)
from gpudoctor.pipeline import make_scanner
from gpudoctor.rulebook.book import RuleBook, load_rulebook
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


def test_a_mention_of_what_might_happen_is_no_event() -> None:
    scanner = scan(
        [PatternSpec("r/idf", r"invalid device function")],
        b"If you get `CUDA error: invalid device function` errors, the above might be the cause\n"
        b"RuntimeError: CUDA error: invalid device function\n"
        b"if you see invalid device function, rebuild\n",
    )
    assert [e.line for e in scanner.hits["r/idf"].events()] == [2]
    assert scanner.hits["r/idf"].count == 1


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


def _kept(hits: scanner_module.PatternHits) -> tuple[int, bool, list[tuple[int, str]]]:
    return hits.count, hits.saturated, [(e.line, e.text) for e in hits.events()]


def test_a_saturated_pattern_leaves_the_set_and_its_last_lines_are_still_found(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(scanner_module, "SATURATION", 50)
    monkeypatch.setattr(reader_module, "CHUNK_BYTES", 4096)
    # Progress lines, then a long stretch without any, then a few more at the very end.
    data = (
        b"".join(b"step %d loss 0.5\n" % i for i in range(1, 3001))
        + b"".join(b"evaluating shard %d\n" % i for i in range(3001, 6001))
        + b"step 6001 loss 0.4\nstep 6002 loss 0.3\nKilled\n"
    )
    specs = [PatternSpec("r/loss", r"\bloss (?P<v>[0-9.]+)"), PatternSpec("r/k", r"^Killed$")]
    hits = scan(specs, data).hits
    count, saturated, kept = _kept(hits["r/loss"])
    assert saturated and 50 <= count < 3002
    assert kept[:KEEP_FIRST] == [(n, f"step {n} loss 0.5") for n in range(1, 6)]
    assert kept[KEEP_FIRST:] == [
        (2998, "step 2998 loss 0.5"),
        (2999, "step 2999 loss 0.5"),
        (3000, "step 3000 loss 0.5"),
        (6001, "step 6001 loss 0.4"),
        (6002, "step 6002 loss 0.3"),
    ]
    assert hits["r/loss"].last[-1].captures == {"v": "0.3"}
    assert _kept(hits["r/k"]) == (1, False, [(6003, "Killed")])
    # Keeping the saturated pattern in the set (no rebuild) finds exactly the same.
    monkeypatch.setattr(scanner_module, "MAX_SET_REBUILDS", 0)
    again = scan(specs, data).hits
    assert _kept(again["r/loss"]) == _kept(hits["r/loss"])


def test_pieces_cover_the_block_in_whole_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scanner_module, "SET_PIECE", 16)
    data = b"short\n" + b"x" * 40 + b"\nab\ncd\nef\ngh\nij\nkl\n"
    pieces = list(scanner_module._pieces(data))
    assert b"".join(data[s:e] for s, e in pieces) == data
    assert all(data[e - 1 : e] == b"\n" for _, e in pieces)
    # Each piece but the last holds at least SET_PIECE bytes, then runs to its line's end.
    assert [data[s:e] for s, e in pieces] == [
        b"short\n" + b"x" * 40 + b"\n",
        b"ab\ncd\nef\ngh\nij\nkl\n",
    ]


def test_patterns_are_found_across_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scanner_module, "SET_PIECE", 64)
    lines = [b"filler line %d of the log" % i for i in range(1, 401)]
    for n in (7, 150, 151, 399):
        lines[n - 1] = b"RuntimeError: CUDA error: an illegal memory access (%d)" % n
    specs = [PatternSpec("r/ima", r"illegal memory access \((?P<n>\d+)\)", captures={"n": _INT})]
    hits = scan(specs, b"\n".join(lines) + b"\n").hits["r/ima"]
    assert hits.count == 4
    assert [(e.line, e.captures["n"]) for e in hits.events()] == [
        (7, 7),
        (150, 150),
        (151, 151),
        (399, 399),
    ]


_INT = CaptureType.INT


def test_pieces_and_rebuilds_never_change_what_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    # Several patterns, some saturating early (SATURATION 3), others rare, over small blocks:
    # cut in tiny pieces and with saturated patterns taken out of the set, the hits are those
    # of one whole-block set pass that keeps every pattern.
    monkeypatch.setattr(scanner_module, "SATURATION", 3)
    monkeypatch.setattr(reader_module, "CHUNK_BYTES", 1024)
    lines = []
    for i in range(1, 3001):
        if i % 7 == 0:
            lines.append(b"step %d loss %d.5 grad_norm 0.%d" % (i, i % 10, i % 9))
        elif i % 97 == 0:
            lines.append(b"RuntimeError: CUDA error: out of memory (%d)" % i)
        elif i % 1000 == 0:
            lines.append(b"Killed")
        elif i in (10, 20, 30):
            lines.append(b"NCCL WARN retry %d" % i)
        else:
            lines.append(b"plain line %d" % i)
    data = b"\n".join(lines) + b"\n"
    specs = [
        PatternSpec("r/loss", r"\bloss (?P<v>\d+\.\d+)", captures={"v": CaptureType.FLOAT}),
        PatternSpec("r/gn", r"grad_norm (?P<g>[0-9.]+)"),
        PatternSpec("r/oom", r"CUDA error: out of memory \((?P<n>\d+)\)"),
        PatternSpec("r/k", r"^Killed$"),
        PatternSpec("r/w", r"NCCL WARN"),
    ]

    def hits() -> dict[str, tuple[int, bool, list[tuple[int, str, object]]]]:
        found = scan(specs, data).hits
        return {
            key: (h.count, h.saturated, [(e.line, e.text, dict(e.captures)) for e in h.events()])
            for key, h in found.items()
        }

    monkeypatch.setattr(scanner_module, "SET_PIECE", 64)
    monkeypatch.setattr(scanner_module, "MAX_SET_REBUILDS", 1)
    cut = hits()
    monkeypatch.setattr(scanner_module, "SET_PIECE", 1 << 30)
    monkeypatch.setattr(scanner_module, "MAX_SET_REBUILDS", 0)
    assert cut == hits()
    # Three matches (= SATURATION) but the last is on the last line: counted, not saturated.
    assert cut["r/k"] == (3, False, [(n, "Killed", {}) for n in (1000, 2000, 3000)])
    assert cut["r/loss"][1] and cut["r/loss"][2][-1][0] == 2996
    assert len(cut["r/loss"][2]) == KEEP_FIRST + KEEP_LAST  # first ones filled by tail ones
    # SATURATION reached with the block going on: saturated (its count may be a lower bound).
    assert cut["r/w"][:2] == (3, True)


def test_the_bundled_pack_compiles_into_one_set() -> None:
    # Two sets match at about two thirds of the speed of one: a rule or catalogue template
    # that makes the pack outgrow RE2's budget shows up here, not only in the benchmark.
    scanner = make_scanner(load_rulebook())
    scanner.compile()
    assert len(scanner._sets or []) == 1


def test_two_matching_threads_find_what_one_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    # Blocks of 4 KB matched by two threads (each half of its 64-byte pieces) against one:
    # every count, kept line and capture is the same, and the second thread really ran.
    monkeypatch.setattr(scanner_module, "SET_PIECE", 64)
    monkeypatch.setattr(scanner_module, "THREAD_MIN_BYTES", 1024)
    monkeypatch.setattr(reader_module, "CHUNK_BYTES", 4096)
    lines = [b"plain line %d" % i for i in range(1, 5001)]
    for n in (3, 702, 703, 2500, 4999):
        lines[n - 1] = b"RuntimeError: CUDA error: an illegal memory access (%d)" % n
    for n in range(11, 5001, 13):
        lines[n - 1] = b"step %d loss 0.%d" % (n, n % 7)
    data = b"\n".join(lines) + b"\n"
    specs = [
        PatternSpec("r/ima", r"illegal memory access \((?P<n>\d+)\)", captures={"n": _INT}),
        PatternSpec("r/loss", r"\bloss (?P<v>\d+\.\d+)", captures={"v": CaptureType.FLOAT}),
        PatternSpec("r/none", r"never in this log"),
    ]
    threads_seen: set[str] = set()
    match_pieces = scanner_module._match_pieces

    def spy(*args: object) -> object:
        threads_seen.add(threading.current_thread().name)
        return match_pieces(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(scanner_module, "_match_pieces", spy)

    def hits(threads: int) -> dict[str, tuple[int, list[tuple[int, object]]]]:
        scanner = Scanner(specs, threads=threads)
        scanner.scan(read_blocks(io.BytesIO(data), InputStats(name="log")))
        return {
            key: (h.count, [(e.line, dict(e.captures)) for e in h.events()])
            for key, h in scanner.hits.items()
        }

    one = hits(1)
    assert threads_seen == {threading.current_thread().name}
    assert hits(2) == one
    assert len(threads_seen) == 2
    assert one["r/ima"] == (5, [(n, {"n": n}) for n in (3, 702, 703, 2500, 4999)])
    assert one["r/loss"][0] == len(range(11, 5001, 13))


# The literal prefilter


def scan_prefiltered(specs: list[PatternSpec], data: bytes) -> Scanner:
    scanner = Scanner(specs)
    scanner.keep_only_present([data])
    scanner.scan(read_blocks(io.BytesIO(data), InputStats(name="log")))
    return scanner


def test_a_pattern_whose_literal_is_absent_is_left_out_of_the_set() -> None:
    specs = [
        PatternSpec("a/present", r"out of memory", literals=(b"out of memory",)),
        PatternSpec("a/absent", r"out of memory", literals=(b"never in this log",)),
    ]
    scanner = scan_prefiltered(specs, b"CUDA out of memory\n")
    # The second pattern would match, but its (false) literal says it cannot: proof that
    # the set no longer held it.
    assert scanner.hits["a/present"].count == 1
    assert scanner.hits["a/absent"].count == 0


def test_literals_are_compared_case_folded() -> None:
    spec = PatternSpec("a/p", r"(?i)killed", literals=(b"killed",))
    assert scan_prefiltered([spec], b"KILLED\n").hits["a/p"].count == 1
    # RE2 folds the Kelvin sign to "k" under (?i); the prefilter must not lose that line.
    kelvin = "\u212aILLED\n".encode()
    assert (
        scan_prefiltered([spec], kelvin).hits["a/p"].count == scan([spec], kelvin).hits["a/p"].count
    )


def test_a_pattern_without_literals_is_always_scanned() -> None:
    spec = PatternSpec("a/p", r"\d{3} items")
    assert scan_prefiltered([spec], b"512 items\n").hits["a/p"].count == 1


def test_the_prefilter_is_refused_once_the_sets_are_compiled() -> None:
    scanner = Scanner([PatternSpec("a/p", "x")])
    scanner.compile()
    with pytest.raises(RuntimeError):
        scanner.keep_only_present([b"x"])


def test_every_pattern_that_matches_a_bundled_example_passes_the_prefilter() -> None:
    """Every example of the bundled pack, scanned with every pattern: each pattern found
    has one of its required literals in the example (computed from each regex), so the
    prefilter would have kept it."""
    book = load_rulebook()
    specs = {s.key: s for s in book.pattern_specs()}
    assert sum(1 for s in specs.values() if s.literals) > 0.9 * len(specs)
    full = Scanner(list(specs.values()))
    full.compile()
    texts = [e.text for r in book.rules for e in r.examples_match]
    checked = 0
    for text in texts:
        data = text.encode()
        full.hits = {key: PatternHits() for key in specs}
        full.scan(read_blocks(io.BytesIO(data), InputStats(name="log")))
        folded = fold_for_literals(data)
        for key in (k for k, h in full.hits.items() if h.count):
            literals = specs[key].literals
            assert literals is None or any(lit in folded for lit in literals), (key, text)
            checked += 1
    assert checked > len(texts) / 2


def test_events_carry_rank_node_and_time_and_every_rank_is_counted() -> None:
    spec = PatternSpec("r/wd", r"Watchdog caught collective operation timeout")
    lines = [
        f"[rank{r}]:[E1126 14:{r:02d}:00.000000 4410 ProcessGroupNCCL.cpp:632] [Rank {r}] "
        "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE)\n"
        for r in range(40)
    ]
    scanner = Scanner([spec])
    scanner.scan(
        read_blocks(io.BytesIO("".join(lines).encode()), InputStats(name="gpu-node-02/all.log"))
    )
    hits = scanner.hits["r/wd"]
    assert hits.ranks == set(range(40))  # all of them, not only the kept events' ranks
    assert hits.nodes == {"gpu-node-02"}
    first = hits.events()[0]
    assert (first.rank, first.node) == (0, "gpu-node-02")
    assert first.time is not None and hits.events()[-1].time is not None
    assert first.time < hits.events()[-1].time


def test_an_inputs_origin_fills_what_its_lines_do_not_say() -> None:
    from gpudoctor.logs.origin import Origin

    spec = PatternSpec("r/xid", r"NVRM: Xid")
    scanner = Scanner([spec])
    data = b"NVRM: Xid (PCI:0000:3b:00): 79, pid=4410\n"
    scanner.scan(read_blocks(io.BytesIO(data), InputStats(name="kernel log")), 0, Origin(node="b7"))
    assert scanner.hits["r/xid"].events()[0].node == "b7"
    assert scanner.hits["r/xid"].nodes == {"b7"}


def test_a_thread_that_cannot_start_leaves_the_scan_to_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A node at its process limit cannot start a thread: the scan goes on in the calling
    # thread and finds what one thread finds.
    monkeypatch.setattr(scanner_module, "SET_PIECE", 64)
    monkeypatch.setattr(scanner_module, "THREAD_MIN_BYTES", 1024)
    monkeypatch.setattr(reader_module, "CHUNK_BYTES", 4096)
    lines = [b"plain line %d" % i for i in range(1, 3001)]
    for n in (5, 1500, 2999):
        lines[n - 1] = b"RuntimeError: CUDA error: an illegal memory access (%d)" % n
    data = b"\n".join(lines) + b"\n"
    specs = [PatternSpec("r/ima", r"illegal memory access \((?P<n>\d+)\)", captures={"n": _INT})]

    def refuse(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", refuse)
    scanner = Scanner(specs, threads=2)
    scanner.scan(read_blocks(io.BytesIO(data), InputStats(name="log")))
    hits = scanner.hits["r/ima"]
    assert [e.line for e in hits.events()] == [5, 1500, 2999]
