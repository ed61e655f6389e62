"""Messages wrapped over two lines: joined for short logs, and counted once."""

from __future__ import annotations

import io

import pytest

from gpudoctor.logs.origin import Origin
from gpudoctor.logs.reader import InputStats, read_blocks
from gpudoctor.logs.scanner import PatternSpec, Scanner
from gpudoctor.logs.wraps import add_events, continues, joins, scan_wrapped
from gpudoctor.pipeline import LogInput, diagnose, make_scanner, scan_logs
from gpudoctor.rulebook.book import load_rulebook

MESSAGE = PatternSpec("r/lost", r"the device was lost during a copy")


def scan_with_joins(data: bytes, specs: list[PatternSpec]) -> Scanner:
    scanner = Scanner(specs)
    blocks = list(read_blocks(io.BytesIO(data), InputStats(name="log")))
    scanner.scan(blocks)
    add_events(scanner, scan_wrapped(scanner, blocks, 0))
    return scanner


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        (b"RuntimeError: the device was lost", b"    during a copy", True),
        (b"RuntimeError: the device was lost", b"during a copy", True),
        (b"RuntimeError: the device was lost", b"Epoch 3 finished", False),  # a line of its own
        (b"short line", b"    indented", False),  # too short to be a long message's start
        (b"RuntimeError: the device was lost", b"   ", False),
        (b"RuntimeError: out of memory (12.1 GiB", b") on device 0", True),
        (b'  File "/srv/app/train.py", line 88, in main', b"    loss.backward()", False),
        (
            b"    return self._run(batch)  # the model's forward pass",
            b'  File "x.py", line 3',
            False,
        ),
        (
            b"    return self._run(batch)  # the model's forward pass",
            b"torch.OutOfMemoryError: x",
            False,
        ),
        # two frames of a Julia stack trace, each ending at its source location
        (
            b"materialize!(::CuArray{Float32, 2, CUDA.DeviceMemory})@broadcast.jl:902",
            b"step!(::Vector{Layer})@train.jl:41",
            False,
        ),
        (b"kernel launch failed in reduce.cu:212", b"    out of memory", True),
    ],
)
def test_continues(first: bytes, second: bytes, expected: bool) -> None:
    assert continues(first, second) is expected


def test_a_wrapped_message_matches_on_its_first_line_with_the_joined_text() -> None:
    scanner = scan_with_joins(b"step 9\nERROR: the device was lost\n   during a copy\n", [MESSAGE])
    hits = scanner.hits["r/lost"]
    assert hits.count == 1
    [event] = hits.events()
    assert (event.line, event.order) == (2, (0, 2))
    assert event.text == "ERROR: the device was lost during a copy"


def test_a_match_one_line_holds_alone_is_not_counted_again() -> None:
    data = b"ERROR: the device was lost during a copy\n    of the weights to GPU 1\n"
    assert len(joins(list(read_blocks(io.BytesIO(data), InputStats(name="log"))))) == 1
    assert scan_with_joins(data, [MESSAGE]).hits["r/lost"].count == 1


def test_structure_patterns_read_only_the_lines_as_printed() -> None:
    scanner = scan_with_joins(
        b"RuntimeError: the device was lost\n    during a copy\n",
        [MESSAGE, PatternSpec("facts/x", r"lost during")],
    )
    assert scanner.hits["facts/x"].count == 0
    assert scanner.hits["r/lost"].count == 1


def test_a_wrapped_cuda_error_gets_its_rule() -> None:
    book = load_rulebook(examples=False)
    log = "RuntimeError: CUDA error: an illegal memory\n    access was encountered\n"
    report = diagnose(book, [LogInput.from_text("train.log", log)])
    top = report.diagnoses[0]
    assert top.cause == "illegal_memory_access"
    assert top.confidence >= 0.8


def test_a_long_log_is_not_joined() -> None:
    book = load_rulebook(examples=False)
    filler = "".join(f"step {i} loss 0.{i % 97:02d}\n" for i in range(4000))  # over 32 KB
    log = filler + "RuntimeError: CUDA error: an illegal memory\n    access was encountered\n"
    scan = scan_logs([LogInput.from_text("train.log", log)], make_scanner(book))
    found = [key for key, hits in scan.hits.items() if hits.count]
    assert not [key for key in found if key.startswith("cuda-") and "illegal" in key]


def test_a_wrapped_event_keeps_the_node_its_input_comes_from() -> None:
    """A snapshot's kernel log names its node only through the input's origin."""
    book = load_rulebook(examples=False)
    log = "RuntimeError: CUDA error: an illegal memory\n    access was encountered\n"
    given = LogInput.from_text("kernel.log", log, origin=Origin(None, "gpu-node-7"))
    scan = scan_logs([given], make_scanner(book))
    events = [e for key, hits in scan.hits.items() if "illegal" in key for e in hits.events()]
    assert events
    assert {event.node for event in events} == {"gpu-node-7"}


def test_a_word_cut_at_the_terminal_margin_is_joined_without_a_space() -> None:
    spec = PatternSpec("r/impl", r"implementation for device cuda:0 not found")
    scanner = scan_with_joins(
        b"RuntimeError: roi_align_impl: implementation for device cu\nda:0 not found.\n", [spec]
    )
    [event] = scanner.hits["r/impl"].events()
    assert event.line == 1
    assert event.text == "RuntimeError: roi_align_impl: implementation for device cuda:0 not found."


def test_a_line_joined_both_ways_gives_one_event() -> None:
    spec = PatternSpec("r/lost", r"the device was lost\s?during a copy")
    scanner = scan_with_joins(b"ERROR: the device was lost\nduring a copy\n", [spec])
    assert scanner.hits["r/lost"].count == 1


def test_an_indented_continuation_is_not_glued() -> None:
    data = b"RuntimeError: the device was lost\n    during a copy\n"
    blocks = list(read_blocks(io.BytesIO(data), InputStats(name="log")))
    assert [join.glued for join in joins(blocks)] == [False]


def test_a_line_cut_before_closing_punctuation_is_glued_back() -> None:
    spec = PatternSpec("r/free", r"\(\d+\.\d+/\d+\.\d+ GiB\) on startup is less than")
    scanner = scan_with_joins(
        b"ValueError: Free memory on device cuda:0 (9.80/23.50 GiB\n) on startup is less than "
        b"desired GPU memory utilization (0.9, 21.15 GiB).\n",
        [spec],
    )
    [event] = scanner.hits["r/free"].events()
    assert "(9.80/23.50 GiB) on startup" in event.text
    blocks = list(read_blocks(io.BytesIO(b"a message long enough to start one\n), done\n"),
                              InputStats(name="log")))  # fmt: skip
    assert [join.glued for join in joins(blocks)] == [True]
