"""Lines behind a tool's prefix (kubectl, docker compose, syslog, Ray) read again without it."""

from __future__ import annotations

import pytest

from gpudoctor.logs.prefixes import peel
from gpudoctor.logs.reader import Block
from gpudoctor.logs.scanner import PatternSpec, asks_line_start
from gpudoctor.pipeline import LogInput, explain_text, make_scanner, scan_logs
from gpudoctor.rulebook.book import load_rulebook

# a pasted nvidia-smi table in which one process holds the GPU, then the out-of-memory error
HELD = """\
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  NVIDIA GeForce ...  Off  | 00000000:01:00.0 Off |                  N/A |
| 30%   41C    P2    61W / 350W |  21904MiB / 24268MiB |      0%      Default |
+-------------------------------+----------------------+----------------------+
+-----------------------------------------------------------------------------+
| Processes:                                                                  |
|  GPU   GI   CI        PID   Type   Process name                  GPU Memory |
|=============================================================================|
|    0   N/A  N/A      7781      C   python                           21890MiB |
+-----------------------------------------------------------------------------+
RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 23.70 GiB total capacity; \
0 bytes already allocated; 9.06 MiB free; 0 bytes reserved in total by PyTorch)
"""
# zsh's job line for a process killed while a model loaded
ZSH_KILLED = (
    "Loading checkpoint shards:  50%|#####     | 2/4 [00:03<00:03]\n"
    "[1]    4821 killed     python serve.py\n"
)


def _prefixed(prefix: str, text: str) -> str:
    return "".join(prefix + line + "\n" for line in text.splitlines())


@pytest.mark.parametrize(
    "prefix",
    [
        "2026-05-04T08:00:01.123456789Z ",  # kubectl logs --timestamps, GitHub Actions
        "trainer-1  | ",  # docker compose
        "May  4 08:00:01 gpu-node-7 python3[4821]: ",  # syslog, journalctl
        "(RayWorkerWrapper pid=4821, ip=10.0.0.7) ",  # Ray
        "[pod/train-0/main] ",  # kubectl logs --prefix
    ],
)
def test_a_prefixed_paste_gets_the_diagnoses_of_the_plain_one(prefix: str) -> None:
    book = load_rulebook()
    for text in (HELD, ZSH_KILLED):
        plain = [(d.cause, d.rule) for d in explain_text(text, book).causes]
        assert plain  # the plain text is diagnosed
        assert [
            (d.cause, d.rule) for d in explain_text(_prefixed(prefix, text), book).causes
        ] == plain


def test_the_event_keeps_the_files_line_and_what_its_prefix_says() -> None:
    book = load_rulebook()
    text = (
        "May  4 08:00:00 gpu-node-7 train.sh[4821]: step 5\n"
        "May  4 08:00:01 gpu-node-7 train.sh[4821]: Killed\n"
    )
    scan = scan_logs([LogInput.from_text("job.log", text)], make_scanner(book))
    events = [e for hits in scan.hits.values() for e in hits.events() if e.text.endswith("Killed")]
    assert events
    assert {(e.line, e.node, e.text) for e in events} == {
        (2, "gpu-node-7", "May  4 08:00:01 gpu-node-7 train.sh[4821]: Killed")
    }


def test_only_lines_with_something_after_their_prefix_are_peeled() -> None:
    data = b"2026-05-04T08:00:01Z \ntrainer-1  | Killed\nplain line\n[rank3]: x\n"
    found = peel([Block("t", 10, data, 4)])
    assert [(p.line, p.rest) for p in found] == [(11, b"Killed"), (13, b"x")]


@pytest.mark.parametrize(
    ("regex", "asks"),
    [
        (r"^\s*Killed\b", True),
        (r"(?:^[\s`]*|line \d+: )Segmentation fault", True),
        (r"\bkilled by signal [^\n]*", False),  # a negated class
        (r"caret \^ in text", False),  # an escaped caret
        (r"CUDA error: out of memory", False),
    ],
)
def test_which_patterns_ask_for_a_lines_start(regex: str, asks: bool) -> None:
    assert asks_line_start(PatternSpec("t/p", regex)) is asks


def test_a_long_logs_last_lines_behind_a_prefix_are_read_again() -> None:
    book = load_rulebook()
    prefix = "2026-05-04T08:00:01.123456789Z "
    filler = "".join(f"step {n} loss 0.{n % 97:02d}\n" for n in range(4000))  # past 32 KB
    text = _prefixed(prefix, filler + ZSH_KILLED)
    assert len(text) > 64 << 10
    plain = [(d.cause, d.rule) for d in explain_text(filler + ZSH_KILLED, book).causes]
    assert plain
    assert [(d.cause, d.rule) for d in explain_text(text, book).causes] == plain


def test_a_long_logs_early_prefixed_line_is_not_read_again() -> None:
    book = load_rulebook()
    prefix = "2026-05-04T08:00:01.123456789Z "
    filler = "".join(f"step {n} loss 0.{n % 97:02d}\n" for n in range(8000))  # past 64 KB
    text = _prefixed(prefix, ZSH_KILLED + filler)
    assert "silent-exit-while-loading-model" not in [
        d.rule for d in explain_text(text, book).causes
    ]
