"""Scanning several logs in worker processes: the same findings as one pass."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from gpudoctor import parallel
from gpudoctor import pipeline as pipeline_module
from gpudoctor.logs.scanner import KEEP_FIRST, KEEP_LAST, Event, PatternHits
from gpudoctor.pipeline import LogInput, make_scanner, scan_logs
from gpudoctor.rulebook.book import load_rulebook


@pytest.mark.parametrize(
    ("sizes", "groups", "expected"),
    [
        ([1] * 10, 3, [(0, 4), (4, 7), (7, 10)]),
        ([100, 1, 1, 1], 2, [(0, 1), (1, 4)]),
        ([1, 1, 1, 100], 2, [(0, 3), (3, 4)]),
        ([5, 5], 8, [(0, 1), (1, 2)]),  # never more runs than items
        ([0, 0, 0, 0], 2, [(0, 2), (2, 4)]),  # unknown sizes: as many items each
        ([7], 4, [(0, 1)]),
    ],
)
def test_contiguous_groups_balance_consecutive_items(
    sizes: list[int], groups: int, expected: list[tuple[int, int]]
) -> None:
    assert parallel.contiguous_groups(sizes, groups) == expected


def test_map_in_processes_keeps_the_order_and_uses_other_processes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(parallel, "usable_cpus", lambda: 2)
    parent = os.getpid()
    results = parallel.map_in_processes(lambda n: (n * n, os.getpid()), [1, 2, 3, 4], 2)
    assert [square for square, _ in results] == [1, 4, 9, 16]
    assert all(pid != parent for _, pid in results)


def event(line: int) -> Event:
    return Event("r/p", "log", line, f"line {line}", {}, (0, line))


def hits_of(lines: range) -> PatternHits:
    hits = PatternHits()
    for line in lines:
        hits.add(event(line))
    return hits


@pytest.mark.parametrize("cut", [0, 1, 3, 7, 12, 19, 20])
def test_merged_hits_equal_one_pass(cut: int) -> None:
    whole = hits_of(range(20))
    merged = PatternHits.merged([hits_of(range(cut)), hits_of(range(cut, 20))])
    assert merged.count == whole.count == 20
    assert merged.events() == whole.events()
    assert len(merged.first) == KEEP_FIRST and len(merged.last) == KEEP_LAST


def test_merged_hits_of_few_events_keep_them_all() -> None:
    merged = PatternHits.merged([hits_of(range(2)), PatternHits(), hits_of(range(2, 9))])
    assert [e.line for e in merged.events()] == list(range(9))


def write_rank_logs(folder: Path, ranks: int, lines: int) -> list[LogInput]:
    logs = []
    for rank in range(ranks):
        body = "".join(
            f"[rank{rank}]: step {step} loss {1 / (step + 1):.4f} mem 20.5 GiB\n"
            for step in range(lines)
        )
        if rank == 2:
            tail = (
                f"[rank{rank}]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
                "512.00 MiB. GPU 2 has a total capacity of 39.38 GiB of which 90.00 MiB is free.\n"
            )
        else:
            tail = (
                f"[rank{rank}]:[E1126 08:00:0{rank}.000000 77{rank} ProcessGroupNCCL.cpp:632] "
                f"[Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=90, "
                "OpType=ALLREDUCE, NumelIn=4, NumelOut=4, Timeout(ms)=600000) ran for 600020 "
                "milliseconds before timing out.\n"
            )
        path = folder / f"rank{rank}.log"
        path.write_text(body + tail)
        logs.append(LogInput.from_path(path))
    return logs


def test_logs_scanned_in_processes_give_the_report_of_one_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(parallel, "usable_cpus", lambda: 2)
    monkeypatch.setattr(pipeline_module, "PARALLEL_BYTES", 1)  # small logs, still shared out
    forks = []
    real_map = parallel.map_in_processes

    def counted_map(*args: object) -> object:
        forks.append(args)
        return real_map(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(parallel, "map_in_processes", counted_map)
    logs = write_rank_logs(tmp_path, ranks=5, lines=300)
    book = load_rulebook(examples=False)
    forked = scan_logs(logs, make_scanner(book))
    assert len(forks) == 1 and len(forks[0][1]) == 2  # two stretches of logs, one per CPU
    serial = scan_logs(logs, make_scanner(book), parallel=False)
    assert forked.inputs == serial.inputs
    found = {key for key, hits in serial.hits.items() if hits.count}
    assert {key for key, hits in forked.hits.items() if hits.count} == found
    for key in found:
        if not serial.hits[key].saturated:
            assert forked.hits[key].count == serial.hits[key].count, key
            assert forked.hits[key].events() == serial.hits[key].events(), key
    one = pipeline_module.build_report(book, serial)
    two = pipeline_module.build_report(book, forked)
    assert [d.rule for d in two.diagnoses] == [d.rule for d in one.diagnoses]
    assert one.diagnoses[0].cause == "gpu_oom"


def test_a_worker_that_dies_does_not_hang_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker killed (the OOM killer of the node being diagnosed) makes the items be
    computed again in this process, instead of waiting for it forever."""
    monkeypatch.setattr(parallel, "usable_cpus", lambda: 2)
    parent = os.getpid()

    def square_or_die(n: int) -> int:
        if n == 2 and os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return n * n

    assert parallel.map_in_processes(square_or_die, [1, 2, 3], 2) == [1, 4, 9]


def test_standard_input_is_never_handed_to_a_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker's standard input is /dev/null: a log read from stdin stays in this process."""
    monkeypatch.setattr(parallel, "usable_cpus", lambda: 2)
    monkeypatch.setattr(pipeline_module, "PARALLEL_BYTES", 1)
    logs = write_rank_logs(tmp_path, ranks=2, lines=50)
    piped = LogInput("<stdin>", lambda: open(tmp_path / "rank0.log", "rb"), kind="stdin")
    forks: list[object] = []
    monkeypatch.setattr(parallel, "map_in_processes", lambda *args: forks.append(args))
    scan = scan_logs([piped, *logs], make_scanner(load_rulebook(examples=False)))
    assert forks == [] and scan.inputs[0].lines == 51
