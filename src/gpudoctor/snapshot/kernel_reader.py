"""Reading the kernel log from whichever source this machine lets us read.

Sources are tried in order — ``dmesg``, ``journalctl -k``, ``/var/log/kern.log``,
``/var/log/messages`` — and the first readable one is used. A source that is missing or
refused (``dmesg: read kernel buffer failed: Operation not permitted`` in containers) is
recorded with its reason and the next is tried; nothing here raises. Readers are plain
callables, so tests and the fake NVML scenarios inject their own lines.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from gpudoctor.snapshot.kernel_log import parse_kernel_log_line, split_timestamp, within_window
from gpudoctor.snapshot.model import KernelEvent, KernelLogInfo, SourceStatus

SUBPROCESS_TIMEOUT_S = 3.0
MAX_EVENTS = 2000
_MAX_LINE_CHARS = 4000


@dataclass(frozen=True)
class ReadResult:
    """What one reader produced: its lines, or ``None`` and the reason it could not read."""

    source: str
    lines: Sequence[str] | None
    reason: str | None = None
    #: True when the reader already applied the time window itself (journalctl --since).
    filtered: bool = False


#: A reader gets the start of the ``--since`` window (``None``: since boot) and returns a
#: :class:`ReadResult`.
KernelLogReader = Callable[[datetime | None], ReadResult]


def _run(source: str, argv: list[str]) -> ReadResult:
    """Run ``argv``: its stdout lines, with its stderr as ``reason``; or ``None`` and why."""
    import shutil  # with subprocess below: only when a kernel log is read

    if shutil.which(argv[0]) is None:
        return ReadResult(source, None, f"{argv[0]} not found on PATH")
    import subprocess

    try:
        proc = subprocess.run(
            argv,
            capture_output=True,
            timeout=SUBPROCESS_TIMEOUT_S,
            check=False,
            env={**os.environ, "LC_ALL": "C", "SYSTEMD_PAGER": "", "PAGER": "cat"},
        )
    except subprocess.TimeoutExpired:
        return ReadResult(source, None, f"timed out after {SUBPROCESS_TIMEOUT_S:g} s")
    except OSError as exc:
        return ReadResult(source, None, f"cannot run {argv[0]}: {exc.strerror or exc}")
    err = proc.stderr.decode("utf-8", "replace").strip()
    if proc.returncode != 0:
        detail = err.splitlines()[-1] if err else f"exit status {proc.returncode}"
        return ReadResult(source, None, detail)
    return ReadResult(source, proc.stdout.decode("utf-8", "replace").splitlines(), err)


def journal_result(run: ReadResult, *, windowed: bool) -> ReadResult:
    """Judge what ``journalctl -k`` printed (it exits 0 even when it could read nothing).

    Without a journal ("No journal files were found."), without the right to read it, or
    with no kernel message at all since boot, nothing usable was read: the source is "not
    read" with journalctl's own words, and the next source is tried. Nothing in a ``--since``
    window of a journal that is there is a real, empty read.
    """
    if run.lines is None:
        return run
    entries = [ln for ln in run.lines if ln.strip() and not ln.startswith("-- ")]
    if entries:
        return ReadResult(run.source, entries, filtered=True)
    said = (run.reason or "").splitlines()
    if said:
        return ReadResult(run.source, None, said[0])
    if not windowed:
        return ReadResult(run.source, None, "no kernel messages for this boot")
    return ReadResult(run.source, [], filtered=True)


def read_dmesg(cutoff: datetime | None) -> ReadResult:
    """Read the kernel ring buffer with ``dmesg`` (seconds-since-boot timestamps)."""
    del cutoff  # filtered afterwards from the [seconds] stamps
    return _run("dmesg", ["dmesg"])


def read_journalctl(cutoff: datetime | None) -> ReadResult:
    """Read kernel messages of the current boot (or since ``cutoff``) with ``journalctl -k``."""
    argv = ["journalctl", "-k", "--no-pager", "-q", "-o", "short-iso"]
    if cutoff is not None:
        argv.append(f"--since=@{int(cutoff.timestamp())}")
    return journal_result(_run("journalctl", argv), windowed=cutoff is not None)


def file_reader(path: str | Path) -> KernelLogReader:
    """Return a reader for a syslog-style file (``/var/log/kern.log``)."""
    target = Path(path)

    def read(cutoff: datetime | None) -> ReadResult:
        del cutoff
        try:
            with target.open("rb") as handle:
                # The end of a big log is what matters: read at most the last 16 MiB.
                size = target.stat().st_size
                handle.seek(max(0, size - (16 << 20)))
                data = handle.read()
        except FileNotFoundError:
            return ReadResult(str(target), None, "file not found")
        except PermissionError:
            return ReadResult(str(target), None, "permission denied")
        except OSError as exc:
            return ReadResult(str(target), None, exc.strerror or str(exc))
        return ReadResult(str(target), data.decode("utf-8", "replace").splitlines())

    return read


def lines_reader(source: str, lines: Sequence[str]) -> KernelLogReader:
    """Return a reader that yields fixed lines (tests, fake NVML scenarios)."""

    def read(cutoff: datetime | None) -> ReadResult:
        del cutoff  # the given lines are the window: no filtering, deterministic in tests
        return ReadResult(source, list(lines), filtered=True)

    return read


def default_readers() -> list[KernelLogReader]:
    """The live machine's readers, in the order they are tried."""
    return [
        read_dmesg,
        read_journalctl,
        file_reader("/var/log/kern.log"),
        file_reader("/var/log/messages"),
    ]


def boot_time(stat_path: Path = Path("/proc/stat")) -> datetime | None:
    """The time this machine booted (``btime`` in ``/proc/stat``), or ``None`` when unknown."""
    try:
        text = stat_path.read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("btime "):
            try:
                return datetime.fromtimestamp(int(line.split()[1]), tz=timezone.utc)
            except (ValueError, IndexError, OverflowError):
                return None
    return None


def collect_kernel_log(
    since: timedelta | None = None,
    *,
    readers: Sequence[KernelLogReader] | None = None,
    now: datetime | None = None,
    booted_at: datetime | None = None,
    max_events: int = MAX_EVENTS,
) -> tuple[KernelLogInfo, list[SourceStatus]]:
    """Read the first readable kernel log source and parse its events.

    Args:
        since: only lines newer than ``now - since``; ``None`` means since boot.
        readers: sources to try in order (default: :func:`default_readers`).
        now: the current time (for tests).
        booted_at: boot time (default: read from the system) for dmesg's relative stamps.
        max_events: keep at most this many events (the newest); ``truncated`` says so.

    Returns:
        The kernel log record and one :class:`SourceStatus` per source tried.
    """
    current = now or datetime.now(timezone.utc)
    booted = booted_at if booted_at is not None else boot_time()
    window_start = current - since if since is not None else None
    cutoff = window_start if window_start is not None else booted
    statuses: list[SourceStatus] = []
    for reader in readers if readers is not None else default_readers():
        result = reader(window_start)
        if result.lines is None:
            statuses.append(SourceStatus(f"kernel_log:{result.source}", False, result.reason))
            continue
        statuses.append(SourceStatus(f"kernel_log:{result.source}", True))
        events: list[KernelEvent] = []
        for line in result.lines:
            event = parse_kernel_log_line(line[:_MAX_LINE_CHARS])
            if event is None:
                continue
            if not result.filtered and not within_window(
                split_timestamp(event.line)[0], cutoff=cutoff, boot_time=booted, now=current
            ):
                continue
            events.append(event)
        truncated = len(events) > max_events
        info = KernelLogInfo(
            source=result.source,
            since_seconds=since.total_seconds() if since is not None else None,
            events=tuple(events[-max_events:]),
            truncated=truncated,
        )
        return info, statuses
    reasons = "; ".join(f"{s.name.split(':', 1)[1]}: {s.reason}" for s in statuses)
    why = f"no kernel log source could be read ({reasons})" if statuses else "not read"
    info = KernelLogInfo(
        since_seconds=since.total_seconds() if since is not None else None,
        unavailable={"events": why},
    )
    return info, statuses
