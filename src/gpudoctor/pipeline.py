"""From inputs to a report: read and scan every log, gather facts, run the engine.

This is the one place where the stages of the data flow meet. :func:`diagnose` is the core
call behind ``explain``, ``diagnose`` (and ``run``): the commands in :mod:`gpudoctor.cli`
open the inputs, call it and print what it returns.
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from gpudoctor.engine import evaluate, likely_cause_found, rank
from gpudoctor.facts.assemble import assemble_facts
from gpudoctor.jobs import pointers
from gpudoctor.jobs.first_failure import place_job
from gpudoctor.logs.origin import Origin, file_origin
from gpudoctor.logs.prefixes import scan_peeled
from gpudoctor.logs.reader import Block, InputStats, TailKeeper, read_blocks
from gpudoctor.logs.scanner import PatternHits, Scanner
from gpudoctor.logs.structure import structure_facts, structure_patterns
from gpudoctor.logs.structure.series import last_progress_lines
from gpudoctor.logs.structure.tracebacks import last_success_lines
from gpudoctor.logs.wraps import add_events, scan_wrapped
from gpudoctor.report import InputSummary, Report
from gpudoctor.rulebook.book import RuleBook

if TYPE_CHECKING:
    from gpudoctor.jobs.snapshots import NodeSnapshot
    from gpudoctor.snapshot.model import Snapshot


@dataclass(frozen=True)
class LogInput:
    """A log to read: its display name and how to open it as bytes."""

    name: str
    open: Callable[[], BinaryIO]
    kind: str = "log"
    origin: Origin | None = None
    """Where the input comes from when its name does not say (a snapshot's kernel log)."""
    size: int | None = None
    """Its size in bytes as stored, when known (to share inputs out between processes)."""

    @classmethod
    def from_path(cls, path: Path, name: str | None = None) -> LogInput:
        """A log file (plain or gzip), opened only when it is scanned."""

        def opener() -> BinaryIO:
            return open(path, "rb")

        try:
            size: int | None = path.stat().st_size
        except OSError:  # reported when it is opened
            size = None
        return cls(name or str(path), opener, size=size)

    @classmethod
    def from_text(
        cls, name: str, text: str, kind: str = "log", origin: Origin | None = None
    ) -> LogInput:
        """A log held in memory as text."""
        data = text.encode("utf-8")
        return cls(name, lambda: io.BytesIO(data), kind, origin, len(data))

    @property
    def where(self) -> Origin:
        """The rank and node its name (or its given origin) names."""
        named = file_origin(self.name)
        return named if self.origin is None else named.over(self.origin)


@dataclass(frozen=True)
class ScanResult:
    """What scanning every log produced."""

    hits: Mapping[str, PatternHits]
    inputs: tuple[InputSummary, ...]
    origins: tuple[Origin, ...] = ()
    """Where each input comes from, as its name (or snapshot) says."""

    @property
    def readable(self) -> int:
        """How many inputs could be read at all."""
        return sum(1 for i in self.inputs if i.error is None)


def make_scanner(book: RuleBook) -> Scanner:
    """A scanner for the book's patterns, the structure readers' patterns and the lines that
    point at a job's ranks (:mod:`gpudoctor.jobs.pointers`), in one pass."""
    return Scanner([*book.pattern_specs(), *structure_patterns(), *pointers.PATTERNS])


PREFILTER_BYTES = 32 << 10
"""Logs holding at most this many bytes in all are scanned with a set of only the patterns
whose literals occur in them (:meth:`~gpudoctor.logs.scanner.Scanner.keep_only_present`):
looking for the literals costs less than compiling every pattern up to about this size."""


TAIL_RESCAN_BYTES = 64 << 10
"""The last bytes of a log longer than :data:`PREFILTER_BYTES` whose lines behind a tool's
prefix are read again without it (:mod:`gpudoctor.logs.prefixes`): where a job failed, at a
bounded cost."""


PARALLEL_BYTES = 128 << 20
"""Several logs holding at least this many bytes in all are scanned in several processes
(:func:`gpudoctor.parallel.map_in_processes`); below it, starting them (each compiles again
what it takes out of its sets) costs about what it saves (``bench/many_inputs.py``)."""


def scan_logs(
    logs: Sequence[LogInput], scanner: Scanner, *, first_index: int = 0, parallel: bool = True
) -> ScanResult:
    """Read and scan each log in turn; an unreadable log is recorded, not fatal.

    The first :data:`PREFILTER_BYTES` are held back until it is known whether the logs are
    short enough for the prefilter; past that, everything streams. A scanner compiled
    already (one reused across many texts) is used as it is. Several files of
    :data:`PARALLEL_BYTES` or more in all are shared out among processes (unless
    ``parallel`` is false), one stretch of consecutive logs each, and their hits merged:
    the same events and counts, except that a pattern that saturates in one pass may be
    counted exactly in stretches (such counts are lower bounds either way). ``first_index``
    is the index of ``logs[0]`` among all inputs.
    """
    if parallel and not scanner.compiled and _worth_processes(logs):
        return _scan_in_processes(logs, scanner)
    # None once the logs are too long for the prefilter
    held: list[tuple[int, list[Block]]] | None = None if scanner.compiled else []
    held_bytes = 0
    summaries = []
    for index, log in enumerate(logs, start=first_index):
        stats = InputStats(name=log.name, kind=log.kind)
        blocks: list[Block] = []
        error = None
        try:
            with log.open() as stream:
                stream_blocks = read_blocks(stream, stats)
                if held is not None:
                    for block in stream_blocks:
                        blocks.append(block)
                        held_bytes += len(block.data)
                        if held_bytes > PREFILTER_BYTES:
                            break
                    else:
                        stream_blocks = iter(())
                    if held_bytes > PREFILTER_BYTES:
                        for earlier, earlier_blocks in held:
                            origin = logs[earlier - first_index].origin
                            scanner.scan(earlier_blocks, input_index=earlier, origin=origin)
                        held = None
                if held is None:
                    tail = TailKeeper(TAIL_RESCAN_BYTES)
                    scanner.scan(
                        tail.through(itertools.chain(blocks, stream_blocks)),
                        input_index=index,
                        origin=log.origin,
                    )
                    blocks = []
                    # the end of a long log, where it failed: its lines behind a tool's prefix
                    add_events(scanner, scan_peeled(scanner, tail.tail(), index, log.origin))
        except OSError as exc:
            error = exc.strerror or str(exc)
        if held is not None:
            held.append((index, blocks))  # what was read before an error is scanned too
        summaries.append(
            InputSummary(kind=log.kind, name=log.name, error=error)
            if error is not None
            else InputSummary(
                kind=log.kind,
                name=log.name,
                lines=stats.lines,
                bytes=stats.bytes_read,
                warnings=tuple(stats.warnings),
            )
        )
    if held is not None:
        scanner.keep_only_present(block.data for _, blocks in held for block in blocks)
        for index, blocks in held:
            scanner.scan(blocks, input_index=index, origin=logs[index - first_index].origin)
        for index, blocks in held:  # a short log is a paste: read its wrapped messages too,
            origin = logs[index - first_index].origin  # and its lines behind a tool's prefix
            add_events(scanner, scan_wrapped(scanner, blocks, index, origin))
            add_events(scanner, scan_peeled(scanner, blocks, index, origin))
    return ScanResult(
        hits=scanner.hits, inputs=tuple(summaries), origins=tuple(log.where for log in logs)
    )


def _worth_processes(logs: Sequence[LogInput]) -> bool:
    # Only inputs of known size (files, texts): standard input cannot be read by a worker,
    # whose stdin multiprocessing points at /dev/null.
    if len(logs) < 2 or any(log.size is None for log in logs):
        return False
    if sum(log.size or 0 for log in logs) < PARALLEL_BYTES:
        return False
    from gpudoctor import parallel

    return parallel.can_fork_workers()


def _scan_in_processes(logs: Sequence[LogInput], scanner: Scanner) -> ScanResult:
    """:func:`scan_logs` over stretches of consecutive logs in worker processes, merged as
    one pass would have found them (a pattern that saturated in one pass may be counted
    exactly in stretches: counts of saturated patterns are lower bounds either way)."""
    from gpudoctor import parallel

    workers = parallel.usable_cpus()
    stretches = parallel.contiguous_groups([log.size or 0 for log in logs], workers)
    scanner.compile(threads=1)  # once, before the workers fork: they share the compiled sets

    def scan_stretch(bounds: tuple[int, int]) -> ScanResult:
        start, stop = bounds
        part = scan_logs(logs[start:stop], scanner.fresh(), first_index=start, parallel=False)
        found = {key: hits for key, hits in part.hits.items() if hits.count}
        return ScanResult(found, part.inputs)  # only what was found travels back

    parts = parallel.map_in_processes(scan_stretch, stretches, workers)
    hits = {
        key: PatternHits.merged([part.hits[key] for part in parts if key in part.hits])
        for key in scanner.hits
    }
    inputs = tuple(summary for part in parts for summary in part.inputs)
    return ScanResult(hits, inputs, tuple(log.where for log in logs))


def build_report(
    book: RuleBook,
    scan: ScanResult,
    snapshot_facts: Mapping[str, object] | None = None,
    extra_inputs: Sequence[InputSummary] = (),
    observed_facts: Mapping[str, object] | None = None,
    fact_nodes: Mapping[str, str] | None = None,
) -> Report:
    """Run the engine over scanned events and all facts, and assemble the report; a job of
    several ranks or nodes is then read as one (:func:`~gpudoctor.jobs.first_failure.place_job`).
    ``fact_nodes`` names the node of each snapshot fact when several snapshots were merged.
    """
    lines = [summary.lines for summary in scan.inputs]
    facts = assemble_facts(structure_facts(scan.hits, lines), snapshot_facts, observed_facts)
    findings = evaluate(book.rules_that_may_fire(scan.hits, facts), scan.hits, facts, lines)
    if not likely_cause_found(findings):
        from gpudoctor.similar import resemblance_findings  # only when no rule found a cause

        findings += resemblance_findings(book, scan.hits, facts, findings)
    report = Report(
        inputs=(*scan.inputs, *extra_inputs),
        diagnoses=tuple(
            rank(findings, last_success_lines(scan.hits), last_progress_lines(scan.hits))
        ),
        facts=dict(facts),
        fact_nodes=dict(fact_nodes or {}),
    )
    return place_job(report, scan.hits, book, scan.origins, fact_nodes)


def kernel_log_input(snapshot: Snapshot, node: str | None = None) -> LogInput | None:
    """The snapshot's kernel log events as one more log to scan (Xid, NVRM, oom-kill lines);
    with ``node`` (one snapshot of several), named after it and its lines placed on it."""
    text = "".join(event.line.rstrip("\n") + "\n" for event in snapshot.kernel_log.events)
    if not text:
        return None
    source = snapshot.kernel_log.source or "kernel log"
    if node is None:
        return LogInput.from_text(f"kernel log ({source})", text, kind="kernel")
    name = f"kernel log of {node} ({source})"
    return LogInput.from_text(name, text, kind="kernel", origin=Origin(node=node))


def snapshot_inputs(snapshot: Snapshot, name: str) -> list[InputSummary]:
    """How the report lists a snapshot and the sources it could or could not read."""
    summaries = [InputSummary(kind="snapshot", name=name)]
    for source in snapshot.sources:
        summaries.append(
            InputSummary(
                kind="source", name=source.name, error=None if source.ok else source.reason
            )
        )
    return summaries


def diagnose(
    book: RuleBook,
    logs: Sequence[LogInput],
    snapshot: Snapshot | None = None,
    snapshot_name: str = "",
    observed_facts: Mapping[str, object] | None = None,
    snapshots: Sequence[NodeSnapshot] = (),
) -> Report:
    """The report for some logs and, optionally, a snapshot of the machine (or ``snapshots``:
    one per node of a job, merged by :mod:`gpudoctor.jobs.snapshots`).

    The snapshot adds its kernel log as one more input, its facts, and its sources to the
    report's inputs. ``observed_facts`` (an exit status, a run's timeline: see
    :func:`~gpudoctor.facts.assemble.assemble_facts`) win over what the logs say. An
    unreadable or empty log is recorded in the report's inputs (an
    ``error``, or the reader's warning :data:`~gpudoctor.logs.reader.EMPTY_INPUT`), never raised.
    """
    inputs = list(logs)
    facts = None
    extra: list[InputSummary] = []
    if snapshots:
        return _diagnose_nodes(book, inputs, snapshots, observed_facts)
    if snapshot is not None:
        kernels, facts, extra = _snapshot_parts(snapshot, snapshot_name or "snapshot")
        inputs.extend(kernels)
    scan = scan_logs(inputs, make_scanner(book))
    return build_report(book, scan, facts, extra, observed_facts)


def _snapshot_parts(
    snapshot: Snapshot, name: str, node: str | None = None
) -> tuple[list[LogInput], Mapping[str, object], list[InputSummary]]:
    """What a snapshot adds to a diagnosis: its kernel log as an input (none when empty),
    its facts, and the report's lines for it and its sources."""
    from gpudoctor.facts.machine import snapshot_facts

    kernel = kernel_log_input(snapshot, node)
    kernels = [] if kernel is None else [kernel]
    return kernels, snapshot_facts(snapshot), snapshot_inputs(snapshot, name)


def _diagnose_nodes(
    book: RuleBook,
    inputs: list[LogInput],
    snapshots: Sequence[NodeSnapshot],
    observed_facts: Mapping[str, object] | None,
) -> Report:
    """:func:`diagnose` with the snapshots of several nodes."""
    from gpudoctor.jobs.snapshots import merge_facts

    per_node: list[tuple[str, Mapping[str, object]]] = []
    extra: list[InputSummary] = []
    for item in snapshots:
        kernels, facts, summaries = _snapshot_parts(item.snapshot, item.name, item.node)
        inputs.extend(kernels)
        per_node.append((item.node, facts))
        extra.extend(summaries)
    facts, fact_nodes = merge_facts(per_node)
    scan = scan_logs(inputs, make_scanner(book))
    return build_report(book, scan, facts, extra, observed_facts, fact_nodes)


def explain_text(text: str, book: RuleBook, name: str = "log") -> Report:
    """The report for one log given as a string (for tests, benchmarks and examples)."""
    return diagnose(book, [LogInput.from_text(name, text)])
