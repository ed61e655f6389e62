"""Where rule files are: the bundled pack and the files under given directories."""

from __future__ import annotations

from collections.abc import Iterable
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
    files: dict[Path, Path] = {}
    for path in paths:
        if path.is_dir():
            found = sorted(
                p for p in path.rglob("*") if p.suffix in RULE_FILE_SUFFIXES and p.is_file()
            )
        else:
            found = [path]
        for file in found:
            files.setdefault(file.resolve(), file)
    return list(files.values())
