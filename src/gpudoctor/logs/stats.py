"""What was read from one input: counts and warnings, filled in while it is read."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class InputStats:
    """What was read from one input, filled in while it is read.

    ``bytes_read`` counts the text read, after decompression and before any re-encoding
    (a UTF-16 log counts its UTF-16 bytes). ``formats`` names the layers that were taken off,
    outermost first (``["gzip", "tar"]``), and ``encoding`` the text encoding found (of the
    last member read, for archives).
    """

    name: str
    kind: str = "log"
    lines: int = 0
    bytes_read: int = 0
    cut_lines: int = 0
    compressed: bool = False
    encoding: str = "utf-8"
    formats: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def warn(self, source: str, message: str) -> None:
        """Record a warning about ``source`` (the input, or a member of it)."""
        self.warnings.append(f"{source}: {message}")
