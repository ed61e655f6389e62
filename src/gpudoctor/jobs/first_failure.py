"""The first failure of a job of several ranks, put first; what followed from it, marked.

One step after the engine's ranking (:func:`place_job`, called by
:func:`gpudoctor.pipeline.build_report`). It changes nothing for a log of one process. For a
job whose inputs name several ranks or nodes, it

1. gives every diagnosis the ranks and nodes its lines came from (the distinct ranks the
   scanner counted for the patterns behind it, not only the lines shown);
2. finds the first failure among the likely root causes (the diagnoses nothing explains):
   the one on the rank that torchelastic's "Root Cause (first observed failure)" names or on
   the node NCCL lost contact with, else the one whose first line is the earliest in time
   (:class:`Clock`), and puts it first;
3. marks every diagnosis the engine found to be explained by another (a consequence or a
   cascade) as a consequence of it, which text and Markdown collapse into one line;
4. with no root cause, names the rank torchrun saw fail or the node NCCL lost (their own logs
   were not given); failing those, collective timeouts make a hang or desync: the ranks
   c10d's desync report names, else the ranks known to the job (from file names, line
   prefixes and NCCL's world size) that never timed out: they did not reach the collective.

Which findings explain which stays the engine's call (the taxonomy's consequence causes and
the rules' ``explains``); this step only reads ``explained_by``.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from gpudoctor.engine import EXPLAINER_MIN_CONFIDENCE
from gpudoctor.jobs.pointers import (
    Pointer,
    desync_ranks,
    launcher_root_causes,
    nccl_peers,
    world_size,
)
from gpudoctor.logs.origin import Origin, format_time
from gpudoctor.logs.scanner import Event, PatternHits
from gpudoctor.report import Diagnosis, FirstFailure, JobSummary, Report
from gpudoctor.rulebook.book import RuleBook
from gpudoctor.rulebook.taxonomy import consequence_causes

ROOT_ROLES = frozenset({"root", "generic", "confirmation"})
"""Roles a first failure can have (a cascade, a fallback or advice cannot)."""
HANG_CAUSE = "nccl_failure"


@dataclass(frozen=True)
class _Placed:
    """A diagnosis with where its lines came from and its earliest line."""

    diagnosis: Diagnosis
    ranks: frozenset[int]
    nodes: frozenset[str]
    events: tuple[Event, ...]
    partial: bool = False
    """A pattern behind it saturated: past that, the scanner did not see every line's rank,
    so ``ranks`` may lack some (never holds one that did not match)."""

    def earliest(self, clock: Clock, rank: int | None = None) -> Event | None:
        """Its earliest line in time (on ``rank`` when given)."""
        events = [e for e in self.events if rank is None or e.rank == rank]
        return min(events, key=clock.when, default=None)


class Clock:
    """When lines were written: their own timestamp or, for a line without one (a traceback),
    the last timestamp its input showed before it among the lines the scanner kept (a progress
    line, a c10 warning): it was written then or later."""

    def __init__(self, hits: Mapping[str, PatternHits]) -> None:
        timed: dict[str, list[tuple[int, float]]] = {}
        for found in hits.values():
            for event in found.events():
                if event.time is not None:
                    timed.setdefault(event.source, []).append((event.line, event.time))
        self._lines = {source: sorted(points) for source, points in timed.items()}

    def time(self, event: Event) -> float | None:
        """The event's time, its own or the last one before it in its input."""
        if event.time is not None:
            return event.time
        points = self._lines.get(event.source, [])
        before = bisect_right(points, (event.line, float("inf")))
        return points[before - 1][1] if before else None

    def when(self, event: Event) -> tuple[int, float, tuple[int, int]]:
        """A sort key: lines with a known time first, by time; then the others, in reading
        order."""
        time = self.time(event)
        return (1, 0.0, event.order) if time is None else (0, time, event.order)

    def first_line(self, placed: _Placed) -> tuple[int, float, tuple[int, int]]:
        """When a diagnosis's first line was written; one from facts alone comes last."""
        event = placed.earliest(self)
        return (2, 0.0, (0, 0)) if event is None else self.when(event)


def job_origins(
    hits: Mapping[str, PatternHits], inputs: Iterable[Origin]
) -> tuple[set[int], set[str]]:
    """Every rank and node the scanned lines and the inputs' names show."""
    ranks: set[int] = set()
    nodes: set[str] = set()
    for found in hits.values():
        ranks |= found.ranks
        nodes |= found.nodes
    for origin in inputs:
        if origin.rank is not None:
            ranks.add(origin.rank)
        if origin.node is not None:
            nodes.add(origin.node)
    return ranks, nodes


def place_job(
    report: Report,
    hits: Mapping[str, PatternHits],
    book: RuleBook,
    inputs: Sequence[Origin] = (),
    fact_nodes: Mapping[str, str] | None = None,
) -> Report:
    """The report with its job read as one (see the module doc); unchanged for one process.

    ``inputs`` are the origins of the inputs as their names (or snapshots) give them;
    ``fact_nodes`` the node each snapshot fact came from, when there were several snapshots.
    """
    ranks, nodes = job_origins(hits, inputs)
    size = world_size(hits)
    if len(ranks) < 2 and len(nodes) < 2 and (size or 0) < 2:
        return report
    placed = [_place(d, hits, book, fact_nodes or {}) for d in report.diagnoses]
    roots = [
        p
        for p in placed
        if p.diagnosis.is_cause
        and not p.diagnosis.explained_by
        and p.diagnosis.role in ROOT_ROLES
        and p.diagnosis.cause not in consequence_causes()
        and p.diagnosis.confidence >= EXPLAINER_MIN_CONFIDENCE
    ]
    first: _Placed | None = None
    failure: FirstFailure | None = None
    clock = Clock(hits)
    pointers = launcher_root_causes(hits)
    peers = nccl_peers(hits)
    for pointer in [*pointers, *peers]:
        first = next((p for p in roots if _points_at(pointer, p)), None)
        if first is not None:
            failure = _failure(first, pointer.how, pointer.rank, clock)
            break
    if first is None and roots:
        first = min(roots, key=clock.first_line)
        failure = _failure(first, "earliest", None, clock)
    hang = False
    timed_out: set[int] = set()
    missing: set[int] = set()
    if first is None:
        waiting = [
            p for p in placed if p.diagnosis.cause == HANG_CAUSE and p.diagnosis.role == "cascade"
        ]
        timed_out = {r for p in waiting for r in p.ranks}
        # Ranks of timed-out lines past the scanner's saturation were not all seen: the ranks
        # "missing" from them would be guesses, so none are named.
        complete = not any(p.partial for p in waiting)
        # A rank that left (a peer NCCL lost, a worker torchrun saw fail) is not a hang, whatever
        # the others then waited for; its own log, not given here, has the cause.
        named = next(iter([*peers, *pointers]), None)
        if named is not None:
            event = named.event
            failure = FirstFailure(
                named.how, rank=named.rank, node=named.node, source=event.source, line=event.line
            )
        else:
            hang = bool(timed_out)
            failure, missing = _hang_failure(
                timed_out, ranks, size, desync_ranks(hits), complete=complete
            )
            if failure is not None and failure.how == "missing":
                failure = _with_its_log(failure, report, inputs)
    diagnoses = _ordered(placed, first)
    return replace(
        report,
        diagnoses=tuple(diagnoses),
        job=JobSummary(
            ranks=tuple(sorted(ranks)),
            nodes=tuple(sorted(nodes)),
            first_failure=failure,
            hang=hang,
            timed_out=tuple(sorted(timed_out)),
            missing=tuple(sorted(missing)),
            world_size=size,
        ),
    )


def _points_at(pointer: Pointer, placed: _Placed) -> bool:
    """Whether a diagnosis's lines came from the rank (or node) a pointer names."""
    if pointer.rank is not None:
        return pointer.rank in placed.ranks
    return pointer.node is not None and pointer.node in placed.nodes


def _place(
    diagnosis: Diagnosis,
    hits: Mapping[str, PatternHits],
    book: RuleBook,
    fact_nodes: Mapping[str, str],
) -> _Placed:
    """A diagnosis with the ranks, nodes and lines of the patterns behind it: its rule's or,
    when those say nothing of where, those of the rules folded into it (the engine folds only
    rules of its cause) whose lines it shows. A cascade folded into another (torchrun's report
    into the watchdog timeouts) does not add the launcher's ranks to the timed-out ones."""
    rule = book.get(diagnosis.rule)
    own = [rule.pattern_key(p) for p in rule.patterns] if rule is not None else []
    ranks, nodes, events = _gather(hits, own)
    partial = any(hits[key].saturated for key in own if key in hits)
    shown = {(e.source, e.line) for e in diagnosis.evidence if e.fact is None}
    if shown and not ranks and not nodes:
        keys = [
            key
            for key, found in hits.items()
            if found.count and any((e.source, e.line) in shown for e in found.events())
        ]
        # Only the few rules whose lines it shows are built (a cached book builds rules on
        # demand); structure readers' and pointers' keys name no rule.
        folded = set()
        for rule_id in {key.split("/", 1)[0] for key in keys} - {diagnosis.rule}:
            other = book.get(rule_id)
            if other is not None and other.cause == diagnosis.cause:
                folded.add(rule_id)
        shown_keys = [key for key in keys if key.split("/", 1)[0] in folded]
        ranks, nodes, more = _gather(hits, shown_keys)
        events = events + more
        partial = any(hits[key].saturated for key in shown_keys)
    nodes |= {fact_nodes[e.fact] for e in diagnosis.evidence if e.fact and e.fact in fact_nodes}
    return _Placed(diagnosis, frozenset(ranks), frozenset(nodes), tuple(events), partial)


def _gather(
    hits: Mapping[str, PatternHits], keys: Iterable[str]
) -> tuple[set[int], set[str], list[Event]]:
    """The distinct ranks and nodes, and the kept lines, of some patterns."""
    ranks: set[int] = set()
    nodes: set[str] = set()
    events: list[Event] = []
    for key in keys:
        found = hits.get(key)
        if found is None or not found.count:
            continue
        ranks |= found.ranks
        nodes |= found.nodes
        events.extend(found.events())
    return ranks, nodes, events


def _failure(first: _Placed, how: str, rank: int | None, clock: Clock) -> FirstFailure:
    event = first.earliest(clock, rank) or first.earliest(clock)
    if event is None:  # a diagnosis from snapshot facts alone
        node = next(iter(sorted(first.nodes)), None)
        return FirstFailure(how, rule=first.diagnosis.rule, rank=rank, node=node)
    return FirstFailure(
        how,
        rule=first.diagnosis.rule,
        rank=event.rank if rank is None else rank,
        node=event.node,
        source=event.source,
        line=event.line,
        time=None if event.time is None else format_time(event.time),
    )


def _with_its_log(failure: FirstFailure, report: Report, inputs: Sequence[Origin]) -> FirstFailure:
    """A missing rank's failure with the input that is its own log, when one is (its last
    lines say where it stopped)."""
    # The report lists the scanned inputs first, in the order of their origins; a snapshot's
    # entries follow them.
    for summary, origin in zip(report.inputs, inputs, strict=False):
        if origin.rank == failure.rank and origin.rank is not None:
            return replace(failure, source=summary.name, node=failure.node or origin.node)
    return failure


def _hang_failure(
    timed_out: set[int],
    ranks: set[int],
    size: int | None,
    desync: list[Pointer],
    *,
    complete: bool = True,
) -> tuple[FirstFailure | None, set[int]]:
    """With no root cause: the ranks that did not arrive, and the first failure they make.
    Without a desync report, ranks are inferred missing only from a ``complete`` count of
    the ranks that timed out."""
    if desync:
        missing = {p.rank for p in desync if p.rank is not None}
        event = desync[0].event
        return FirstFailure("desync", rank=min(missing), source=event.source, line=event.line), (
            missing
        )
    missing = set()
    if timed_out and complete:
        known = ranks | set(range(size or 0))
        missing = known - timed_out
    if missing:
        return FirstFailure("missing", rank=min(missing)), missing
    return None, missing


def _ordered(placed: list[_Placed], first: _Placed | None) -> list[Diagnosis]:
    """The diagnoses with the first failure first, consequences marked, ranks renumbered."""
    order = placed if first is None else [first, *(p for p in placed if p is not first)]
    result = []
    for number, item in enumerate(order, start=1):
        d = item.diagnosis
        consequence_of = None
        if first is not None and d.is_cause and d.explained_by and item is not first:
            root = first.diagnosis.rule
            consequence_of = root if root in d.explained_by else d.explained_by[0]
        result.append(
            replace(
                d,
                rank=number,
                ranks=tuple(sorted(item.ranks)),
                nodes=tuple(sorted(item.nodes)),
                consequence_of=consequence_of,
            )
        )
    return result
