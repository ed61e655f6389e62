"""From inputs to a report: read and scan every log, gather facts, run the engine.

This is the one place where the stages of the data flow meet; ``cli.py`` calls it and
prints what it returns.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import BinaryIO

from gpudoctor.engine import evaluate, rank
from gpudoctor.facts.assemble import assemble_facts
from gpudoctor.facts.pasted import TEXT_FACT_PATTERNS, facts_from_hits
from gpudoctor.logs.reader import InputStats, read_blocks
from gpudoctor.logs.scanner import PatternHits, Scanner
from gpudoctor.report import InputSummary, Report
from gpudoctor.rulebook.book import RuleBook


@dataclass(frozen=True)
class LogInput:
    """A log to read: its display name and how to open it as bytes."""

    name: str
    open: Callable[[], BinaryIO]
    kind: str = "log"


@dataclass(frozen=True)
class ScanResult:
    """What scanning every log produced."""

    hits: Mapping[str, PatternHits]
    inputs: tuple[InputSummary, ...]

    @property
    def readable(self) -> int:
        """How many inputs could be read at all."""
        return sum(1 for i in self.inputs if i.error is None)


def make_scanner(book: RuleBook) -> Scanner:
    """A scanner for the book's patterns and the text-fact patterns, in one pass."""
    return Scanner([*book.pattern_specs(), *TEXT_FACT_PATTERNS])


def scan_logs(logs: Sequence[LogInput], scanner: Scanner) -> ScanResult:
    """Read and scan each log in turn; an unreadable log is recorded, not fatal."""
    summaries = []
    for index, log in enumerate(logs):
        stats = InputStats(name=log.name, kind=log.kind)
        try:
            with log.open() as stream:
                scanner.scan(read_blocks(stream, stats), input_index=index)
        except OSError as exc:
            summaries.append(
                InputSummary(kind=log.kind, name=log.name, error=exc.strerror or str(exc))
            )
            continue
        summaries.append(
            InputSummary(
                kind=log.kind,
                name=log.name,
                lines=stats.lines,
                bytes=stats.bytes_read,
                warnings=tuple(stats.warnings),
            )
        )
    return ScanResult(hits=scanner.hits, inputs=tuple(summaries))


def build_report(
    book: RuleBook,
    scan: ScanResult,
    snapshot_facts: Mapping[str, object] | None = None,
    extra_inputs: Sequence[InputSummary] = (),
) -> Report:
    """Run the engine over scanned events and all facts, and assemble the report."""
    facts = assemble_facts(facts_from_hits(scan.hits), snapshot_facts)
    findings = evaluate(book.rules, scan.hits, facts)
    return Report(
        inputs=(*scan.inputs, *extra_inputs),
        diagnoses=tuple(rank(findings)),
        facts=dict(facts),
    )


def explain_text(text: str, book: RuleBook, name: str = "log") -> Report:
    """The report for one log given as a string (for tests, benchmarks and examples)."""
    import io

    data = text.encode("utf-8")
    scan = scan_logs([LogInput(name, lambda: io.BytesIO(data))], make_scanner(book))
    return build_report(book, scan)
