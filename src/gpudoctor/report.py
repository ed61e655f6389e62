"""The report: what gpudoctor concluded, as plain data that every renderer reads.

``Report.to_dict()`` is the JSON contract (``"schema": "gpudoctor.report/1"``): later versions
add keys, never remove or rename them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gpudoctor import __version__

REPORT_SCHEMA = "gpudoctor.report/1"

FactValue = bool | int | float | str | list[object] | None


@dataclass(frozen=True)
class Evidence:
    """One thing the diagnosis rests on: a log line, or a fact with its value."""

    source: str
    line: int | None = None
    text: str = ""
    fact: str | None = None
    value: FactValue = None

    def to_dict(self) -> dict[str, object]:
        if self.fact is not None:
            return {"source": self.source, "fact": self.fact, "value": self.value}
        return {"source": self.source, "line": self.line, "text": self.text}


@dataclass(frozen=True)
class Diagnosis:
    """One ranked cause with its evidence, confidence and fix."""

    rank: int
    rule: str
    cause: str
    role: str
    severity: str
    confidence: float
    title: str
    summary: str
    explanation: str
    evidence: tuple[Evidence, ...]
    matches: int
    facts: Mapping[str, FactValue]
    fix: tuple[str, ...]
    references: tuple[str, ...]
    explained_by: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    matches_at_least: bool = False
    """``matches`` is a lower bound (a pattern matched too many lines to count them all)."""

    @property
    def is_cause(self) -> bool:
        """Advice is shown but is never a cause."""
        return self.role != "advice"

    def to_dict(self) -> dict[str, object]:
        return {
            "rank": self.rank,
            "rule": self.rule,
            "cause": self.cause,
            "role": self.role,
            "severity": self.severity,
            "confidence": round(self.confidence, 2),
            "title": self.title,
            "summary": self.summary,
            "explanation": self.explanation,
            "evidence": [e.to_dict() for e in self.evidence],
            "matches": self.matches,
            "matches_at_least": self.matches_at_least,
            "facts": dict(self.facts),
            "fix": list(self.fix),
            "references": list(self.references),
            "explained_by": list(self.explained_by),
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class InputSummary:
    """One input that was read (or could not be), for the report's ``inputs``."""

    kind: str
    name: str
    lines: int | None = None
    bytes: int | None = None
    warnings: tuple[str, ...] = ()
    error: str | None = None

    @property
    def empty(self) -> bool:
        """The input was read and held nothing at all (an empty file, an empty pipe)."""
        return self.error is None and self.bytes == 0

    def to_dict(self) -> dict[str, object]:
        data: dict[str, object] = {"kind": self.kind, "name": self.name}
        if self.lines is not None:
            data["lines"] = self.lines
        if self.bytes is not None:
            data["bytes"] = self.bytes
        if self.warnings:
            data["warnings"] = list(self.warnings)
        if self.error is not None:
            data["error"] = self.error
        return data


@dataclass(frozen=True)
class Threshold:
    """Which diagnoses count as failures (``--fail-on`` and ``--min-confidence``).

    A diagnosis counts when it is a cause (advice never counts), its confidence is at least
    ``min_confidence`` and, when ``severities`` is given, its severity is one of them (the
    severities at or above ``--fail-on``). ``severities=None`` counts causes of any severity:
    the JUnit and GitHub formats use it when ``--fail-on`` is ``never``.
    """

    severities: frozenset[str] | None = None
    min_confidence: float = 0.5

    def counts(self, diagnosis: Diagnosis) -> bool:
        """Whether ``diagnosis`` is a failure under this threshold."""
        return (
            diagnosis.is_cause
            and diagnosis.confidence >= self.min_confidence
            and (self.severities is None or diagnosis.severity in self.severities)
        )


@dataclass(frozen=True)
class GpuReading:
    """One GPU at one moment of a ``gpudoctor run`` job. ``None``: that value could not be read."""

    index: int
    memory_used_bytes: int | None = None
    memory_total_bytes: int | None = None
    utilization_pct: int | None = None
    temperature_c: int | None = None
    power_w: float | None = None
    clock_event_reasons: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {
            "index": self.index,
            "memory_used_bytes": self.memory_used_bytes,
            "memory_total_bytes": self.memory_total_bytes,
            "utilization_pct": self.utilization_pct,
            "temperature_c": self.temperature_c,
            "power_w": self.power_w,
            "clock_event_reasons": list(self.clock_event_reasons),
        }


@dataclass(frozen=True)
class RunSample:
    """The machine ``t`` seconds after a ``gpudoctor run`` job started (one timeline point)."""

    t: float
    gpus: tuple[GpuReading, ...] = ()
    tree_rss_bytes: int | None = None
    host_available_bytes: int | None = None
    host_total_bytes: int | None = None
    swap_free_bytes: int | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "t": self.t,
            "gpus": [g.to_dict() for g in self.gpus],
            "tree_rss_bytes": self.tree_rss_bytes,
            "host_available_bytes": self.host_available_bytes,
            "host_total_bytes": self.host_total_bytes,
            "swap_free_bytes": self.swap_free_bytes,
        }


@dataclass(frozen=True)
class Report:
    """Everything one run of ``explain`` or ``diagnose`` concluded."""

    inputs: tuple[InputSummary, ...]
    diagnoses: tuple[Diagnosis, ...]
    facts: Mapping[str, FactValue] = field(default_factory=dict)
    version: str = __version__
    timeline: tuple[RunSample, ...] = ()
    """The samples of a ``gpudoctor run`` job, oldest first (empty for other commands)."""

    @property
    def causes(self) -> tuple[Diagnosis, ...]:
        """Diagnoses that are causes (advice left out)."""
        return tuple(d for d in self.diagnoses if d.is_cause)

    def to_dict(self) -> dict[str, object]:
        data: dict[str, object] = {
            "schema": REPORT_SCHEMA,
            "gpudoctor": self.version,
            "inputs": [i.to_dict() for i in self.inputs],
            "diagnoses": [d.to_dict() for d in self.diagnoses],
            "facts": {k: v for k, v in sorted(self.facts.items()) if v is not None},
        }
        if self.timeline:
            data["timeline"] = [s.to_dict() for s in self.timeline]
        return data
