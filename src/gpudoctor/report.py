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
    ranks: tuple[int, ...] = ()
    """The ranks its lines came from (a job of several ranks: :mod:`gpudoctor.jobs`)."""
    nodes: tuple[str, ...] = ()
    """The nodes its lines (or its snapshot facts) came from."""
    consequence_of: str | None = None
    """The rule of the job's first failure when this is one of its consequences: text and
    Markdown collapse it into one line."""

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
            **({"ranks": list(self.ranks)} if self.ranks else {}),
            **({"nodes": list(self.nodes)} if self.nodes else {}),
            **({"consequence_of": self.consequence_of} if self.consequence_of else {}),
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
class FirstFailure:
    """Where a job of several ranks first failed, and how gpudoctor knows."""

    how: str
    """``earliest`` (the earliest fatal line in time), ``launcher`` (the rank named in
    torchelastic's "Root Cause (first observed failure)"), ``desync`` (the ranks c10d's desync
    report names), ``peer`` (the node NCCL lost contact with) or ``missing`` (the ranks that
    never reached the collective the others timed out in)."""
    rule: str | None = None
    rank: int | None = None
    node: str | None = None
    source: str | None = None
    line: int | None = None
    time: str | None = None
    """As the line wrote it (``11-26 14:02:11.250``); ``None`` when it has no timestamp."""

    def to_dict(self) -> dict[str, object]:
        data: dict[str, object] = {"how": self.how}
        for name in ("rule", "rank", "node", "source", "line", "time"):
            value = getattr(self, name)
            if value is not None:
                data[name] = value
        return data


@dataclass(frozen=True)
class JobSummary:
    """A job of several ranks or nodes read as one: who took part, who failed first."""

    ranks: tuple[int, ...]
    nodes: tuple[str, ...]
    first_failure: FirstFailure | None = None
    hang: bool = False
    """Ranks timed out in a collective, no likely root cause was found, no peer left and
    torchrun named no failed rank: a hang or a desync."""
    timed_out: tuple[int, ...] = ()
    missing: tuple[int, ...] = ()
    """Ranks that did not reach the collective the others timed out in."""
    world_size: int | None = None

    def to_dict(self) -> dict[str, object]:
        data: dict[str, object] = {"ranks": list(self.ranks), "nodes": list(self.nodes)}
        if self.world_size is not None:
            data["world_size"] = self.world_size
        if self.first_failure is not None:
            data["first_failure"] = self.first_failure.to_dict()
        data["hang"] = self.hang
        if self.timed_out:
            data["timed_out"] = list(self.timed_out)
        if self.missing:
            data["missing"] = list(self.missing)
        return data


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
    job: JobSummary | None = None
    """Set when the inputs came from several ranks or nodes."""
    fact_nodes: Mapping[str, str] = field(default_factory=dict)
    """With several snapshots: the node each fact was taken from."""
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
            **({"job": self.job.to_dict()} if self.job is not None else {}),
            **({"fact_nodes": dict(sorted(self.fact_nodes.items()))} if self.fact_nodes else {}),
        }
        if self.timeline:
            data["timeline"] = [s.to_dict() for s in self.timeline]
        return data
