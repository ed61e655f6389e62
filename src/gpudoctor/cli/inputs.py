"""Opening what the commands read: log files or standard input, snapshots.

Each helper turns a user's mistake into one clear line and exit 2 (see
:func:`gpudoctor.cli.app.fail`); the core receives only inputs ready to read.
"""

from __future__ import annotations

import glob
import os
import sys
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import click

from gpudoctor.cli.app import EXIT_USAGE, fail
from gpudoctor.errors import GpudoctorError, SnapshotError
from gpudoctor.pipeline import LogInput

if TYPE_CHECKING:
    from gpudoctor.snapshot.model import Snapshot


def log_inputs(files: Sequence[str]) -> list[LogInput]:
    """Log files by name (``-`` is standard input); a directory is a usage error."""
    inputs: list[LogInput] = []
    for name in files:
        if name == "-":
            inputs.append(LogInput("<stdin>", _stdin_opener, kind="stdin"))
            continue
        path = Path(name)
        try:
            is_dir = path.is_dir()
        except OSError:  # a name too long, a component not a directory: reading says why
            is_dir = False
        if is_dir:
            fail(f"{name} is a directory; give the log files in it", EXIT_USAGE)
        inputs.append(LogInput.from_path(path, name))
    return inputs


def _stdin_opener() -> BinaryIO:
    # Do not close the real stdin when the reader is done with it.
    return os.fdopen(os.dup(sys.stdin.fileno()), "rb") if _has_fileno() else sys.stdin.buffer


def _has_fileno() -> bool:
    try:
        sys.stdin.fileno()
    except (OSError, ValueError, AttributeError):
        return False
    return True


def expand_logs(patterns: Sequence[str]) -> list[str]:
    """Log paths from ``--log`` values; shell-style globs are expanded (sorted)."""
    files: list[str] = []
    for pattern in patterns:
        if glob.has_magic(pattern) and not Path(pattern).exists():
            matches = sorted(glob.glob(pattern))
            if not matches:
                click.echo(f"gpudoctor: --log {pattern}: no file matches", err=True)
            files.extend(matches)
        else:
            files.append(pattern)
    return files


def load_snapshot_file(path: Path) -> Snapshot:
    """A saved snapshot, or a clear error (exit 2) when it cannot be used."""
    from gpudoctor.snapshot import load_snapshot

    try:
        return load_snapshot(path)
    except SnapshotError as exc:
        fail(str(exc), EXIT_USAGE)


def collect_live(since: timedelta | None) -> Snapshot:
    """A snapshot of this machine; what cannot be read is recorded in it, not raised."""
    from gpudoctor.snapshot import collect_snapshot

    try:
        return collect_snapshot(since=since)
    except GpudoctorError as exc:  # e.g. an unknown GPUDOCTOR_FAKE_NVML scenario
        fail(str(exc), EXIT_USAGE)
