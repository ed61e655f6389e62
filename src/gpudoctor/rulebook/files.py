"""Where rule files are, and reading one safely: the bundled pack and the files under given
directories; each file read only when it is a regular, readable file of at most
:data:`MAX_RULE_FILE_BYTES`."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

RULE_FILE_SUFFIXES = (".yaml", ".yml")
MAX_RULE_FILE_BYTES = 1 << 20
"""A rule file larger than this (1 MiB; the largest bundled rule is a few KiB) is refused."""
_TOO_LARGE = f"rule file larger than {MAX_RULE_FILE_BYTES >> 20} MiB"


class RuleFileError(Exception):
    """A rule file that cannot be read: not a regular file, unreadable, too large, not UTF-8.

    The message names the problem (the caller adds the path) and never quotes the content.
    """


def read_rule_text(path: Path) -> str:
    """The text of one rule file, refusing anything but a readable regular file of at most
    :data:`MAX_RULE_FILE_BYTES` bytes of UTF-8.

    The file is opened without blocking (a FIFO named like a rule never hangs the load) and
    checked with ``fstat`` on the open descriptor, so a symlink to ``/dev/zero`` or a device is
    refused before anything is read.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise RuleFileError(_os_problem(exc)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise RuleFileError("not a regular file")
        if info.st_size > MAX_RULE_FILE_BYTES:
            raise RuleFileError(_TOO_LARGE)
        with os.fdopen(fd, "rb", closefd=False) as file:
            data = file.read(MAX_RULE_FILE_BYTES + 1)
    except OSError as exc:
        raise RuleFileError(_os_problem(exc)) from None
    finally:
        os.close(fd)
    if len(data) > MAX_RULE_FILE_BYTES:  # grew since fstat
        raise RuleFileError(_TOO_LARGE)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RuleFileError(f"not UTF-8 text (invalid byte at offset {exc.start})") from None


def _os_problem(exc: OSError) -> str:
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "unreadable (permission denied)"
    if exc.errno == errno.ENOENT:
        return "does not exist (a broken symlink?)"
    if exc.errno == errno.ELOOP:
        return "symlink loop"
    return f"cannot read rule file: {exc.strerror or exc}"


def bundled_rules_dir() -> Path:
    """The rule pack shipped with gpudoctor (inside the wheel, or ``rules/`` in a checkout)."""
    # A plain path, not importlib.resources: the wheel installs files on disk, and this is
    # on every run's start-up path.
    packaged = Path(__file__).resolve().parents[1] / "bundled_rules"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[3] / "rules"


def rule_files(paths: Iterable[Path]) -> list[Path]:
    """Expand directories into their rule files (sorted); files are kept as given. A file
    named twice (a directory and a file in it) is listed once."""
    paths = list(paths)
    files: dict[str, Path] = {}
    for path in paths:
        found = _sorted(_walk(path)) if path.is_dir() else [path]
        for file in found:
            # Only several paths can name a file twice; realpath costs a syscall per file.
            key = os.path.realpath(file) if len(paths) > 1 else str(file)
            files.setdefault(key, file)
    return list(files.values())


def _walk(folder: Path) -> Iterator[str]:
    # os.walk over scandir: cheaper than Path.rglob + is_file on this start-up path
    for root, _dirs, names in os.walk(folder):
        for name in names:
            if name.endswith(RULE_FILE_SUFFIXES):
                yield os.path.join(root, name)


def _sorted(files: Iterable[str]) -> list[Path]:
    """Paths in the order of :class:`~pathlib.Path` (by their parts), sorted as strings:
    comparing ``Path`` objects costs a conversion per comparison on this start-up path."""
    return [Path(name) for name in sorted(files, key=lambda name: name.split(os.sep))]
