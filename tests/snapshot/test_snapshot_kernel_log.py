"""Kernel log line parsing: Xid (several shapes), other NVRM lines, OOM-killer lines."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from gpudoctor.snapshot.kernel_log import (
    parse_kernel_log_line,
    parse_kernel_log_lines,
    split_timestamp,
    timestamp_to_datetime,
)

XID_CASES = [
    # (line, timestamp, xid, pci, pid, name, message)
    (
        "[52311.120051] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen"
        " off the bus.",
        "52311.120051", 79, "0000:3b:00", 1234, "python", "GPU has fallen off the bus.",
    ),
    (
        "NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.",
        None, 79, "0000:2b:00", None, None, "GPU has fallen off the bus.",
    ),
    (
        "[Mon Jun  3 11:20:41 2024] NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', "
        "name=<unknown>, Graphics SM Warp Exception on (GPC 7, TPC 7, SM 0): Out Of Range Address",
        "Mon Jun  3 11:20:41 2024", 13, "0000:cb:00", None, None,
        "Graphics SM Warp Exception on (GPC 7, TPC 7, SM 0): Out Of Range Address",
    ),
    (
        "Jun  3 11:20:41 gpu-node-12 kernel: [ 4843.120051] NVRM: Xid (0000:03:00): 48, "
        "An uncorrectable double bit error (DBE) has been detected on GPU",
        "Jun  3 11:20:41", 48, "0000:03:00", None, None,
        "An uncorrectable double bit error (DBE) has been detected on GPU",
    ),
    (
        "2024-06-03T11:20:41+0000 gpu-node-12 kernel: NVRM: Xid (PCI:0000:01:00 GPU-I:05): 94, "
        "pid=7194, Contained: CE User Channel (0x9). RST: No, D-RST: No",
        "2024-06-03T11:20:41+0000", 94, "0000:01:00", 7194, None,
        "Contained: CE User Channel (0x9). RST: No, D-RST: No",
    ),
    (
        "kern  :warn  : [ 8123.456789] NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: "
        "New row marked for remapping, reset gpu to activate.",
        "8123.456789", 63, "0000:10:1c", 1896, None,
        "Row Remapper: New row marked for remapping, reset gpu to activate.",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("line", "timestamp", "xid", "pci", "pid", "name", "message"), XID_CASES)
def test_xid_lines(
    line: str,
    timestamp: str | None,
    xid: int,
    pci: str,
    pid: int | None,
    name: str | None,
    message: str,
) -> None:
    event = parse_kernel_log_line(line)
    assert event is not None
    assert event.kind == "xid"
    assert event.line == line
    assert event.timestamp == timestamp
    assert event.xid == xid
    assert event.pci_bus == pci
    assert event.pid == pid
    assert event.process_name == name
    assert event.message == message


def test_fallen_off_the_bus_without_xid_is_an_nvrm_event() -> None:
    event = parse_kernel_log_line(
        "[ 4843.120079] NVRM: GPU 0000:47:00.0: GPU has fallen off the bus."
    )
    assert event is not None
    assert event.kind == "nvrm"
    assert event.xid is None
    assert event.pci_bus == "0000:47:00.0"
    assert event.message == "GPU 0000:47:00.0: GPU has fallen off the bus."
    assert event.timestamp == "4843.120079"


def test_other_nvrm_line() -> None:
    event = parse_kernel_log_line("NVRM: API mismatch: the client has the version 550.90.07, but")
    assert event is not None
    assert (event.kind, event.pci_bus) == ("nvrm", None)
    assert event.message == "API mismatch: the client has the version 550.90.07, but"


@pytest.mark.parametrize(
    ("line", "pid", "name", "constraint"),
    [
        (
            "[ 5469.0] Out of memory: Killed process 1234 (python) total-vm:8000kB, anon-rss:40kB",
            1234, "python", None,
        ),
        (
            "Memory cgroup out of memory: Killed process 60211 (python) total-vm:98765432kB, "
            "anon-rss:67108864kB, file-rss:0kB",
            60211, "python", "CONSTRAINT_MEMCG",
        ),
        (
            "Jun  3 11:31:07 host kernel: Out of memory: Kill process 4242 (pt_data_worker) "
            "score 912 or sacrifice child",
            4242, "pt_data_worker", None,
        ),
        ("[ 99.1] Killed process 777 (python3) total-vm:1kB, anon-rss:1kB", 777, "python3", None),
    ],
)  # fmt: skip
def test_oom_kill_lines(line: str, pid: int, name: str, constraint: str | None) -> None:
    event = parse_kernel_log_line(line)
    assert event is not None
    assert event.kind == "oom_kill"
    assert (event.pid, event.process_name, event.constraint) == (pid, name, constraint)


def test_oom_kill_summary_line() -> None:
    line = (
        "[ 5469.002498] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,"
        "mems_allowed=0,global_oom,task_memcg=/user.slice,task=python,pid=4321,uid=1000"
    )
    event = parse_kernel_log_line(line)
    assert event is not None
    assert event.kind == "oom_kill_info"
    assert (event.pid, event.process_name, event.constraint) == (4321, "python", "CONSTRAINT_NONE")


@pytest.mark.parametrize(
    "line",
    [
        "[    5.1] nvidia-nvlink: Nvlink Core is being initialized, major device number 511",
        "Jun  3 10:14:02 host systemd[1]: Started Session 42 of User alice.",
        "[ 5469.0] python invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE), order=0",
        "",
    ],
)
def test_uninteresting_lines_are_skipped(line: str) -> None:
    assert parse_kernel_log_line(line) is None


def test_parse_lines_keeps_order_and_skips_noise() -> None:
    events = parse_kernel_log_lines(
        [
            "noise",
            "NVRM: Xid (PCI:0000:47:00): 79, GPU has fallen off the bus.",
            "Out of memory: Killed process 1 (a)",
        ]
    )
    assert [e.kind for e in events] == ["xid", "oom_kill"]


def test_split_timestamp_without_stamp() -> None:
    assert split_timestamp("NVRM: x") == (None, "NVRM: x")


def test_timestamp_conversion() -> None:
    now = datetime(2024, 6, 3, 12, 0, tzinfo=timezone.utc)
    boot = datetime(2024, 6, 3, 10, 0, tzinfo=timezone.utc)
    assert timestamp_to_datetime("60.5", boot_time=boot, now=now) == boot + timedelta(seconds=60.5)
    assert timestamp_to_datetime("60.5", boot_time=None, now=now) is None
    assert timestamp_to_datetime("2024-06-03T11:20:41+0000", boot_time=None, now=now) == datetime(
        2024, 6, 3, 11, 20, 41, tzinfo=timezone.utc
    )
    syslog = timestamp_to_datetime("Jun  3 11:20:41", boot_time=None, now=now)
    assert syslog is not None and (syslog.month, syslog.day, syslog.hour) == (6, 3, 11)
    # A December stamp read in June belongs to the previous year.
    december = timestamp_to_datetime("Dec 31 23:59:59", boot_time=None, now=now)
    assert december is not None and december.year == 2023
    assert timestamp_to_datetime("Foo 99 99:99:99", boot_time=None, now=now) is None
