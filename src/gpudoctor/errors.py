"""Exception types shared across gpudoctor.

Every error a user can cause carries enough context (a path, often a line and column) for
the command line (:mod:`gpudoctor.cli`) to print one clear line and pick the documented
exit code.
"""

from __future__ import annotations


class GpudoctorError(Exception):
    """Base class for every error gpudoctor raises on purpose."""


class OutputError(GpudoctorError):
    """The output could not be written (a full disk, a missing directory)."""


class SourceLocation:
    """A position in a text file, 1-based, printed as ``path:line:col``."""

    __slots__ = ("column", "line", "path")

    def __init__(self, path: str, line: int, column: int) -> None:
        self.path = path
        self.line = line
        self.column = column

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SourceLocation) and (
            (self.path, self.line, self.column) == (other.path, other.line, other.column)
        )

    def __hash__(self) -> int:
        return hash((self.path, self.line, self.column))

    def __repr__(self) -> str:
        return f"SourceLocation({self.path!r}, {self.line}, {self.column})"


class RuleError(GpudoctorError):
    """A rule file cannot be loaded; ``location`` says where."""

    def __init__(self, location: SourceLocation, message: str) -> None:
        super().__init__(f"{location}: {message}")
        self.location = location
        self.message = message


class RuleErrors(GpudoctorError):
    """Several rule errors collected in one lint run."""

    def __init__(self, errors: list[RuleError]) -> None:
        super().__init__("\n".join(str(e) for e in errors))
        self.errors = errors


class SnapshotError(GpudoctorError):
    """A saved snapshot cannot be used (unreadable, invalid, or from a newer schema)."""
