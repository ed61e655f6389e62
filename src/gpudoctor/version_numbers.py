"""Dotted numeric versions (``525.60.13``, ``12.4``, ``2.4.1+cu121``) that compare numerically."""

from __future__ import annotations

import re
from functools import total_ordering


@total_ordering
class Version:
    """A dotted numeric version (``525.60.13``, ``12.4``) that compares numerically.

    Missing trailing parts compare as zero, so ``Version("12.4") == Version("12.4.0")``.
    """

    __slots__ = ("parts", "text")

    def __init__(self, text: str) -> None:
        parts = parse_version_parts(text)
        if parts is None:
            raise ValueError(f"not a version: {text!r}")
        self.text = text.strip()
        self.parts = parts

    def _key(self) -> tuple[int, ...]:
        trimmed = list(self.parts)
        while len(trimmed) > 1 and trimmed[-1] == 0:
            trimmed.pop()
        return tuple(trimmed)

    @property
    def major(self) -> int:
        return self.parts[0]

    @property
    def minor(self) -> int:
        return self.parts[1] if len(self.parts) > 1 else 0

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            try:
                other = Version(other)
            except ValueError:
                return NotImplemented
        if not isinstance(other, Version):
            return NotImplemented
        return self._key() == other._key()

    def __lt__(self, other: object) -> bool:
        if isinstance(other, str):
            other = Version(other)
        if not isinstance(other, Version):
            return NotImplemented
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Version({self.text!r})"


_VERSION_RE = re.compile(r"^\s*v?(\d+(?:\.\d+)*)")


def parse_version_parts(text: str) -> tuple[int, ...] | None:
    """Return the leading numeric parts of a version string (``"2.4.1+cu121"`` → (2, 4, 1))."""
    match = _VERSION_RE.match(text)
    if match is None:
        return None
    return tuple(int(p) for p in match.group(1).split("."))


def parse_version(text: str) -> Version | None:
    """Return a :class:`Version` or ``None`` when the text does not start with a number."""
    try:
        return Version(text)
    except ValueError:
        return None
