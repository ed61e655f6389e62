"""The result model of ``gpudoctor check``: one :class:`CheckResult` per check, in a report.

A check never raises and never prints: it returns a result whose :class:`Status` is
``pass``, ``warn``, ``fail`` or ``skip``, with a human ``reason``, a ``fix`` (``None`` when
nothing needs doing) and optional ``details`` (one line per item judged: a runtime, a GPU,
a library). A skip is data, not an exception: its reason says why it could not be judged.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum

#: The JSON schema id of ``gpudoctor check --format json``.
CHECK_SCHEMA = "gpudoctor.check/1"


class Status(str, Enum):
    """The outcome of one check."""

    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"


# Worst first: how item verdicts fold into one check's status.
_SEVERITY = {Status.FAIL: 3, Status.WARN: 2, Status.PASS: 1, Status.SKIP: 0}


def worst(statuses: Iterable[Status]) -> Status:
    """The most severe status (fail > warn > pass > skip); ``skip`` for none."""
    return max(statuses, key=_SEVERITY.__getitem__, default=Status.SKIP)


@dataclass(frozen=True)
class CheckResult:
    """What one check found.

    Attributes:
        id: stable identifier (``driver-runtime``), the JUnit test case name.
        title: a short human title (``Driver supports the CUDA runtimes``).
        status: pass, warn, fail or skip.
        reason: one or two sentences saying what was seen.
        fix: what to do, or ``None`` when nothing needs doing. A pass may carry a fix as
            advice (persistence mode off).
        details: one line per item judged, in a stable order.
    """

    id: str
    title: str
    status: Status
    reason: str
    fix: str | None = None
    details: tuple[str, ...] = ()


@dataclass(frozen=True)
class CheckOptions:
    """What the caller expects of the machine.

    Attributes:
        require_gpu: a missing driver or GPU is a failure instead of a skip.
        expect_gpus: the number of usable GPUs NVML must see, if given.
        min_shm_bytes: ``/dev/shm`` below this is a warning.
        min_nofile: a soft ``ulimit -n`` below this is a warning.
    """

    require_gpu: bool = False
    expect_gpus: int | None = None
    min_shm_bytes: int = 1 << 30
    min_nofile: int = 4096


@dataclass(frozen=True)
class CheckSource:
    """Where the machine facts came from: ``live`` (this machine) or ``snapshot`` (a file)."""

    kind: str
    path: str | None = None
    hostname: str | None = None
    nvml_backend: str | None = None


@dataclass(frozen=True)
class CheckReport:
    """Every check's result, in run order, with the source and options they were run with."""

    results: tuple[CheckResult, ...]
    source: CheckSource
    options: CheckOptions = field(default_factory=CheckOptions)

    def count(self, status: Status) -> int:
        """How many results have ``status``."""
        return sum(1 for r in self.results if r.status is status)

    @property
    def outcome(self) -> Status:
        """The worst status of any result (``skip`` when every check was skipped)."""
        return worst(r.status for r in self.results)

    def failed(self, *, strict: bool = False) -> bool:
        """True if a check failed, or (``strict``) a check warned."""
        if self.count(Status.FAIL):
            return True
        return strict and self.count(Status.WARN) > 0

    @property
    def all_skipped(self) -> bool:
        """True when no check could be judged at all (nothing was collected)."""
        return all(r.status is Status.SKIP for r in self.results)

    def summary(self) -> str:
        """``"7 passed, 1 warning, 0 failed, 2 skipped"``."""
        warned = self.count(Status.WARN)
        return (
            f"{self.count(Status.PASS)} passed, {warned} warning{'s' if warned != 1 else ''}, "
            f"{self.count(Status.FAIL)} failed, {self.count(Status.SKIP)} skipped"
        )
