"""Where rule files are: the bundled pack and the files under given directories."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

RULE_FILE_SUFFIXES = (".yaml", ".yml")


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
        found = sorted(_walk(path)) if path.is_dir() else [path]
        for file in found:
            # Only several paths can name a file twice; realpath costs a syscall per file.
            key = os.path.realpath(file) if len(paths) > 1 else str(file)
            files.setdefault(key, file)
    return list(files.values())


def _walk(folder: Path) -> Iterator[Path]:
    # os.walk over scandir: cheaper than Path.rglob + is_file on this start-up path
    for root, _dirs, names in os.walk(folder):
        for name in names:
            if name.endswith(RULE_FILE_SUFFIXES):
                yield Path(root, name)
