"""Opening what the commands read: log files or standard input, snapshots.

Each helper turns a user's mistake into one clear line and exit 2 (see
:func:`gpudoctor.cli.app.fail`); the core receives only inputs ready to read.
"""

from __future__ import annotations

import glob
import os
import sys
from collections.abc import Callable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from gpudoctor.cli.app import EXIT_USAGE, fail
from gpudoctor.errors import GpudoctorError, SnapshotError
from gpudoctor.pipeline import LogInput

if TYPE_CHECKING:
    from gpudoctor.snapshot.model import Snapshot


def log_inputs(names: Sequence[str]) -> list[LogInput]:
    """Logs by name: ``-`` is standard input, a directory stands for every file below it
    (a torchrun ``--log-dir`` tree, a Slurm output folder), a glob (``'logs/**/*.log'``) for the
    files it matches. A directory or glob that gives no file is a usage error."""
    inputs: list[LogInput] = []
    for name in names:
        if name == "-":
            inputs.append(LogInput("<stdin>", _stdin_opener, kind="stdin"))
            continue
        for path, shown in resolve_files(name, ("files", "file")):
            inputs.append(LogInput.from_path(path, shown))
    return inputs


def resolve_files(
    name: str, what: tuple[str, str], wanted: Callable[[Path], bool] = lambda path: True
) -> list[tuple[Path, str]]:
    """The files one name stands for, each with the name to show: a directory every
    ``wanted`` file below it, a glob that matches nothing on disk as a file name the
    ``wanted`` files it matches, anything else itself (reading it says what is wrong). A
    directory or glob that gives none is a usage error, ``what`` naming them (plural, one)."""
    path = Path(name)
    try:
        is_dir = path.is_dir()
        exists = is_dir or path.exists()
    except OSError:  # a name too long, a component not a directory: reading says why
        is_dir = exists = False
    if is_dir:
        found = [file for file in files_below(path) if wanted(file)]
        if not found:
            fail(f"{name} is a directory with no {what[0]} in it", EXIT_USAGE)
        return [(file, str(file)) for file in found]
    if not exists and glob.has_magic(name):
        matches = [Path(m) for m in sorted(glob.glob(name, recursive=True))]
        files = [m for m in matches if m.is_file() and wanted(m)]
        if not files:
            fail(f"{name}: no {what[1]} matches", EXIT_USAGE)
        return [(file, str(file)) for file in files]
    return [(path, name)]


def files_below(folder: Path) -> list[Path]:
    """Every regular file below ``folder``, in name order; hidden files and folders (``.git``,
    ``.ipynb_checkpoints``) and symbolic links to folders are left out."""
    found: list[Path] = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(
            Path(root) / f
            for f in sorted(files)
            if not f.startswith(".") and (Path(root) / f).is_file()
        )
    return found


def _stdin_opener() -> BinaryIO:
    # Do not close the real stdin when the reader is done with it.
    return os.fdopen(os.dup(sys.stdin.fileno()), "rb") if _has_fileno() else sys.stdin.buffer


def _has_fileno() -> bool:
    try:
        sys.stdin.fileno()
    except (OSError, ValueError, AttributeError):
        return False
    return True


def snapshot_files(names: Sequence[str]) -> list[Path]:
    """Snapshot files by name: a directory stands for every ``*.json`` file below it, a glob
    (``'snapshots/*.json'``) for the files it matches (one snapshot per node of a job). A
    directory or glob that gives no file is a usage error."""
    return [
        path
        for name in names
        for path, _ in resolve_files(
            name, (".json snapshot", "snapshot file"), lambda file: file.suffix == ".json"
        )
    ]


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
