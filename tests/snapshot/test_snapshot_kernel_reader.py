"""Kernel log sources: first readable wins, failures are recorded, the time window applies."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from gpudoctor.snapshot.kernel_reader import (
    ReadResult,
    collect_kernel_log,
    file_reader,
    journal_result,
    lines_reader,
)


def _refused(cutoff: datetime | None) -> ReadResult:
    return ReadResult("dmesg", None, "dmesg: read kernel buffer failed: Operation not permitted")


def test_refused_source_is_recorded_and_next_is_used(fixtures_dir: Path) -> None:
    now = datetime(2024, 3, 3, 12, 0).astimezone()
    info, statuses = collect_kernel_log(
        readers=[_refused, file_reader(fixtures_dir / "kern.log")],
        now=now,
        booted_at=now - timedelta(hours=3),
    )
    assert [(s.name, s.ok) for s in statuses] == [
        ("kernel_log:dmesg", False),
        (f"kernel_log:{fixtures_dir / 'kern.log'}", True),
    ]
    assert statuses[0].reason == "dmesg: read kernel buffer failed: Operation not permitted"
    assert info.source == str(fixtures_dir / "kern.log")
    assert [e.kind for e in info.events] == ["nvrm", "xid", "nvrm", "oom_kill_info", "oom_kill"]
    assert info.events[1].xid == 79
    assert info.events[4].constraint == "CONSTRAINT_MEMCG"
    assert info.events[4].pid == 60211


def test_since_window_drops_older_lines(fixtures_dir: Path) -> None:
    now = datetime(2024, 3, 3, 12, 0).astimezone()
    info, _ = collect_kernel_log(
        since=timedelta(minutes=35),  # from 11:25: only the 11:31 OOM kill lines remain
        readers=[file_reader(fixtures_dir / "kern.log")],
        now=now,
        booted_at=now - timedelta(hours=3),
    )
    assert [e.kind for e in info.events] == ["oom_kill_info", "oom_kill"]
    assert info.since_seconds == 35 * 60


def test_dmesg_relative_stamps_use_boot_time() -> None:
    now = datetime(2024, 3, 3, 12, 0).astimezone()
    lines = [
        "[  100.0] NVRM: Xid (PCI:0000:01:00): 13, pid=1, name=a, old",
        "[ 3500.0] NVRM: Xid (PCI:0000:01:00): 31, pid=2, name=b, recent",
    ]

    def dmesg(cutoff: datetime | None) -> ReadResult:
        return ReadResult("dmesg", lines)

    info, _ = collect_kernel_log(
        since=timedelta(minutes=10), readers=[dmesg], now=now, booted_at=now - timedelta(hours=1)
    )
    assert [e.xid for e in info.events] == [31]


def test_no_source_readable(tmp_path: Path) -> None:
    info, statuses = collect_kernel_log(readers=[_refused, file_reader(tmp_path / "kern.log")])
    assert info.source is None
    assert info.events == ()
    assert "no kernel log source could be read" in info.unavailable["events"]
    assert "file not found" in info.unavailable["events"]
    assert [s.ok for s in statuses] == [False, False]


def test_event_cap_keeps_newest() -> None:
    lines = [f"NVRM: Xid (PCI:0000:01:00): {n}, x" for n in range(1, 11)]
    info, _ = collect_kernel_log(readers=[lines_reader("t", lines)], max_events=3)
    assert [e.xid for e in info.events] == [8, 9, 10]
    assert info.truncated is True


def test_live_readers_never_raise() -> None:
    info, statuses = collect_kernel_log(since=timedelta(minutes=5))
    assert statuses
    assert info.source is not None or info.unavailable


def _journal(stdout: list[str], stderr: str = "") -> ReadResult:
    return ReadResult("journalctl", stdout, stderr or None)


def test_journalctl_without_journal_files_is_not_read() -> None:
    result = journal_result(_journal([], "No journal files were found."), windowed=False)
    assert result.lines is None
    assert result.reason == "No journal files were found."
    # ... and so the next source is used, and nobody is told "0 OOM kills" from nothing.
    info, statuses = collect_kernel_log(
        readers=[lambda _c: result, lines_reader("kern.log", ["Killed process 9 (python)"])]
    )
    assert [(s.name, s.ok, s.reason) for s in statuses] == [
        ("kernel_log:journalctl", False, "No journal files were found."),
        ("kernel_log:kern.log", True, None),
    ]
    assert info.source == "kern.log" and [e.pid for e in info.events] == [9]


def test_journalctl_with_nothing_for_this_boot_is_not_read() -> None:
    result = journal_result(_journal(["-- No entries --"]), windowed=False)
    assert (result.lines, result.reason) == (None, "no kernel messages for this boot")
    info, _ = collect_kernel_log(readers=[lambda _c: result])
    assert info.source is None
    assert "journalctl: no kernel messages for this boot" in info.unavailable["events"]


def test_journalctl_hidden_by_permissions_is_not_read() -> None:
    hint = "Hint: You are currently not seeing messages from other users and the system."
    assert journal_result(_journal([], hint), windowed=True).reason == hint


def test_journalctl_empty_window_of_a_real_journal_is_a_read() -> None:
    result = journal_result(_journal([]), windowed=True)
    assert (result.lines, result.filtered) == ([], True)


def test_journalctl_entries_are_read_and_markers_dropped() -> None:
    line = "2024-03-03T11:00:00+0000 node kernel: NVRM: Xid (PCI:0000:01:00): 79, pid=1, x"
    result = journal_result(_journal(["-- Boot 1a2b --", line]), windowed=False)
    assert result.lines == [line] and result.filtered


def test_readers_get_the_window_start_or_none_for_since_boot() -> None:
    seen: list[datetime | None] = []

    def reader(cutoff: datetime | None) -> ReadResult:
        seen.append(cutoff)
        return ReadResult("t", [])

    now = datetime(2024, 3, 3, 12, 0).astimezone()
    collect_kernel_log(readers=[reader], now=now, booted_at=now - timedelta(hours=1))
    collect_kernel_log(since=timedelta(minutes=5), readers=[reader], now=now)
    assert seen == [None, now - timedelta(minutes=5)]
