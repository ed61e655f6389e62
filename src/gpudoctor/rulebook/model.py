"""Typed, frozen model of a rule. The loader builds these from YAML; nothing else does."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

from gpudoctor.errors import SourceLocation
from gpudoctor.logs.scanner import CaptureType


class Role(enum.Enum):
    """What a firing rule means for the ranking.

    * ``root``: a cause in its own right;
    * ``cascade``: a symptom that usually follows from another failure (NCCL timeouts after a
      rank died); explained by (ranked below) any likely finding of another cause that is
      neither a cascade nor a consequence cause, listed in ``explains`` or not;
    * ``confirmation``: evidence that backs a root of the same cause (the kernel's oom-kill
      line behind ``Killed``); merged into that root when it fired, standing alone otherwise;
    * ``advice``: boilerplate worth a hint but never a cause ("CUDA kernel errors might be
      asynchronously reported");
    * ``generic``: a cause recognised by a general signature (an error code of the CUDA stack
      or an Xid from NVIDIA's catalogues, whatever program printed it); folded into a
      ``root`` or ``cascade`` of the same cause when one fired, a root of its own otherwise;
    * ``fallback``: names the terminal error for what it is (an exception, a signal, an exit
      code) when nothing else explains the crash: dropped as soon as another rule finds a
      likely cause, folded into any other finding of its own cause.
    """

    ROOT = "root"
    CASCADE = "cascade"
    CONFIRMATION = "confirmation"
    ADVICE = "advice"
    GENERIC = "generic"
    FALLBACK = "fallback"


class Severity(enum.Enum):
    """How bad the finding is for the job, highest first."""

    CRITICAL = "critical"
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class MatchMode(enum.Enum):
    """Whether any one of a rule's patterns is enough, or all must occur."""

    ANY = "any"
    ALL = "all"


@dataclass(frozen=True)
class Pattern:
    """A named RE2 regular expression matched against single log lines."""

    id: str
    regex: str
    ignore_case: bool = False
    captures: Mapping[str, CaptureType] = field(default_factory=dict)
    location: SourceLocation | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Adjustment:
    """Moves the confidence by ``by`` when the expression ``when`` holds."""

    when: str
    by: float
    reason: str


@dataclass(frozen=True)
class Example:
    """A text (and optional facts) that must or must not make the rule fire.

    A ``match`` example may also name the line that must be the rule's first evidence line
    (the one its captures and summary come from): ``evidence`` by its text (compared without
    surrounding blanks) or ``evidence_line`` by its 1-based number in ``text``.
    """

    text: str
    facts: Mapping[str, object] = field(default_factory=dict)
    location: SourceLocation | None = field(default=None, compare=False)
    evidence: str | None = None
    evidence_line: int | None = None


@dataclass(frozen=True)
class Rule:
    """One diagnosis rule, as written in ``rules/<id>.yaml``."""

    id: str
    cause: str
    title: str
    severity: Severity
    role: Role
    confidence: float
    summary: str
    explanation: str
    fix: tuple[str, ...]
    references: tuple[str, ...]
    patterns: tuple[Pattern, ...] = ()
    match: MatchMode = MatchMode.ANY
    conditions: tuple[str, ...] = ()
    derived: Mapping[str, str] = field(default_factory=dict)
    adjust: tuple[Adjustment, ...] = ()
    explains: tuple[str, ...] = ()
    examples_match: tuple[Example, ...] = ()
    examples_no_match: tuple[Example, ...] = ()
    path: str = ""

    def pattern_key(self, pattern: Pattern) -> str:
        """The scanner key of one of this rule's patterns."""
        return f"{self.id}/{pattern.id}"
