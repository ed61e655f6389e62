"""Logs in a container runtime's wrapper (Docker's JSON records, journald, log exports,
kubelet's CRI lines): read as what the program printed."""

from __future__ import annotations

import io
import json

import pytest

from gpudoctor.logs.reader import InputStats, iter_lines, read_blocks
from gpudoctor.logs.records import (
    CRI_LINES,
    DOCKER_PARTIAL_BYTES,
    JSON_RECORDS,
    message_of,
    sniff_format,
)
from gpudoctor.pipeline import explain_text
from gpudoctor.rulebook.book import load_rulebook


def docker(*lines: str) -> str:
    """Lines as Docker's json-file driver stores them (Go's encoder escapes <, > and &)."""
    records = []
    for i, line in enumerate(lines):
        message = json.dumps(line).replace("<", "\\u003c").replace(">", "\\u003e")
        records.append(f'{{"log":{message},"stream":"stderr","time":"2026-05-04T08:00:0{i}Z"}}')
    return "\n".join(records) + "\n"


def read(text: str) -> tuple[list[str], InputStats]:
    stats = InputStats(name="t")
    lines = [line.text for line in iter_lines(read_blocks(io.BytesIO(text.encode()), stats))]
    return lines, stats


def test_docker_records_are_read_as_the_lines_the_program_printed() -> None:
    lines, stats = read(docker("Traceback (most recent call last):\n",
                               '  File "train.py", line 9, in <module>\n', "Killed\n"))  # fmt: skip
    assert lines == ["Traceback (most recent call last):", '  File "train.py", line 9, in <module>',
                     "Killed"]  # fmt: skip
    assert stats.formats == [JSON_RECORDS]


def test_a_line_docker_split_into_partial_records_is_joined() -> None:
    long = "x" * DOCKER_PARTIAL_BYTES
    lines, _ = read(docker(long, "y tail\n", "next\n"))
    assert lines == [long + "y tail", "next"]


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ('{"MESSAGE":"NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.",'
         '"_HOSTNAME":"gpu-7"}', "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus."),
        ('{"textPayload":"RuntimeError: CUDA error: out of memory","severity":"ERROR"}',
         "RuntimeError: CUDA error: out of memory"),
        ('{"jsonPayload":{"message":"worker exited"},"severity":"ERROR"}', "worker exited"),
        ('{"level":"error","msg":"container killed"}', "container killed"),
        ('{"loss": 0.43, "step": 12}', None),  # metrics, not a log record
        ("[1, 2, 3]", None),
        ('{"log": "unterminated', None),
    ],
)  # fmt: skip
def test_the_message_of_a_record(record: str, message: str | None) -> None:
    assert message_of(record.encode()) == message


def test_a_json_loggers_traceback_is_kept_beside_its_message() -> None:
    trace = (
        'Traceback (most recent call last):\n  File "t.py", line 3, in <module>\nValueError: bad\n'
    )
    record = json.dumps({"message": "training failed", "exc_info": trace})
    lines, _ = read(record + "\n")
    assert lines == ["training failed", "Traceback (most recent call last):",
                     '  File "t.py", line 3, in <module>', "ValueError: bad"]  # fmt: skip


def test_plain_logs_and_a_few_json_lines_are_left_as_they_are() -> None:
    plain = 'epoch 1 loss 0.3\n{"log":"x\\n"}\nKilled\n'
    lines, stats = read(plain)
    assert lines == ["epoch 1 loss 0.3", '{"log":"x\\n"}', "Killed"]
    assert stats.formats == []
    assert sniff_format(b'{"loss": 0.4}\n{"loss": 0.3}\n') is None


def test_a_line_among_records_that_is_not_one_passes_through() -> None:
    text = docker("step 1\n", "step 2\n") + "panic: runtime error\n" + docker("Killed\n")
    lines, _ = read(text)
    assert lines == ["step 1", "step 2", "panic: runtime error", "Killed"]


def test_bad_bytes_and_lone_surrogates_do_not_stop_reading() -> None:
    text = docker("a\n", "b\n") + '{"log":"half \\ud800 a pair\\n"}\n'
    stats = InputStats(name="t")
    data = text.encode() + b'{"log":"\xff\xfe bytes\\n"}\n'
    lines = [line.text for line in iter_lines(read_blocks(io.BytesIO(data), stats))]
    assert lines[:2] == ["a", "b"]
    assert lines[2].startswith("half ") and lines[2].endswith(" a pair")
    assert "bytes" in lines[3]


def test_a_container_log_gets_the_diagnosis_its_text_would() -> None:
    log = docker(
        "Traceback (most recent call last):\n",
        '  File "/app/train.py", line 41, in <module>\n',
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
        "total capacity of 23.65 GiB of which 1.02 GiB is free.\n",
    )
    report = explain_text(log, load_rulebook())
    assert report.causes[0].cause == "gpu_oom"
    evidence = report.causes[0].evidence[0]
    assert evidence.line == 3 and evidence.text.startswith("torch.OutOfMemoryError")
    killed = explain_text(docker("epoch 3 step 120 loss 0.43\n", "Killed\n"), load_rulebook())
    assert killed.causes[0].cause == "host_oom"


def cri(*lines: str, tag: str = "F") -> str:
    return "".join(f"2026-05-04T08:00:0{i}.123456789Z stderr {tag} {line}\n"
                   for i, line in enumerate(lines))  # fmt: skip


def test_cri_lines_are_read_as_what_the_program_printed() -> None:
    lines, stats = read(cri("Traceback (most recent call last):", '  File "t.py", line 2, in f'))
    assert lines == ["Traceback (most recent call last):", '  File "t.py", line 2, in f']
    assert stats.formats == [CRI_LINES]


def test_a_cri_line_the_runtime_split_is_joined_and_an_empty_line_kept() -> None:
    text = cri("RuntimeError: CUDA error: an illegal ", tag="P") + cri(
        "memory access was encountered", ""
    )
    lines, _ = read(text)
    assert lines == ["RuntimeError: CUDA error: an illegal memory access was encountered", ""]


def test_a_pod_log_gets_the_diagnosis_its_text_would() -> None:
    log = cri("epoch 2 step 300 loss 0.51", "Segmentation fault (core dumped)")
    assert explain_text(log, load_rulebook()).causes[0].cause == "segfault_native"
