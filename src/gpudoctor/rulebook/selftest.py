"""``gpudoctor rules test``: every rule's examples must (or must not) make it fire.

An example runs through the same pipeline as ``gpudoctor explain``: its text is scanned with
every pattern of the whole rule book and the structure readers in one pass, its facts join the
facts read from the text as a snapshot's would (so the compatibility verdicts are computed
from both), and the engine evaluates every rule. The rule fires when the engine finds it among
the firing rules; for a ``match`` example that names its ``evidence`` (or ``evidence_line``),
that line must also be the rule's first evidence line, the one its captures come from, and
the rule's summary must be complete: no field of it may print as "(name unknown)" (a summary
words a value its format may lack away, with a derived text).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpudoctor.engine import Finding, evaluate
from gpudoctor.facts.assemble import assemble_facts
from gpudoctor.logs.scanner import PatternHits
from gpudoctor.logs.structure import structure_facts
from gpudoctor.pipeline import LogInput, make_scanner, scan_logs
from gpudoctor.rulebook.book import RuleBook
from gpudoctor.rulebook.model import Example, Rule
from gpudoctor.templates import unknown_fields


@dataclass(frozen=True)
class ExampleResult:
    """The outcome of one example of one rule."""

    rule: Rule
    example: Example
    should_match: bool
    fired: bool
    evidence: str | None = None
    """The rule's first evidence line when it fired on a text (``None`` otherwise)."""
    unknown: tuple[str, ...] = ()
    """The summary's fields that printed as "(name unknown)" when it fired."""

    @property
    def evidence_ok(self) -> bool:
        """Whether the line the example names as evidence is the rule's first evidence."""
        expected = expected_evidence(self.example)
        return expected is None or (self.evidence or "").strip() == expected

    @property
    def passed(self) -> bool:
        return self.fired == self.should_match and (
            not self.fired or (self.evidence_ok and not self.unknown)
        )

    def describe(self) -> str:
        """One line saying where the example is and what went wrong."""
        where = str(self.example.location) if self.example.location else self.rule.path
        expected = "fire" if self.should_match else "not fire"
        first = self.example.text.strip().splitlines()[0] if self.example.text.strip() else ""
        line = f"{where}: {self.rule.id} should {expected} on: {first[:100]}"
        if self.fired == self.should_match and not self.evidence_ok:
            line += f" (evidence should be {expected_evidence(self.example)!r}, "
            line += f"was {(self.evidence or '').strip()[:100]!r})"
        elif self.fired and self.unknown:
            line += f" (its summary prints {', '.join(self.unknown)} as unknown)"
        return line


def expected_evidence(example: Example) -> str | None:
    """The line an example names as the rule's first evidence, stripped, if it names one."""
    if example.evidence is not None:
        return example.evidence.strip()
    if example.evidence_line is not None:
        lines = example.text.splitlines()
        if 1 <= example.evidence_line <= len(lines):
            return lines[example.evidence_line - 1].strip()
        return ""  # out of range: no line can match
    return None


class ExampleRunner:
    """Runs examples through one book, reusing its scanner (compiled once) between them."""

    def __init__(self, book: RuleBook) -> None:
        self.book = book
        self._scanner = make_scanner(book)
        self._scanner.compile()  # every pattern: the prefilter would keep the first text's only

    def findings(self, example: Example) -> list[Finding]:
        """Every finding the engine makes on the example, as ``explain`` would on its text."""
        self._scanner.hits = {key: PatternHits() for key in self._scanner.hits}
        scan = scan_logs([LogInput.from_text("example", example.text)], self._scanner)
        lines = [summary.lines for summary in scan.inputs]
        facts = assemble_facts(structure_facts(scan.hits, lines), dict(example.facts))
        return evaluate(self.book.rules_that_may_fire(scan.hits, facts), scan.hits, facts, lines)

    def run(self, rule: Rule, example: Example, should_match: bool) -> ExampleResult:
        """Run one example of ``rule`` through the whole book."""
        finding = next((f for f in self.findings(example) if f.rule.id == rule.id), None)
        if finding is None:
            return ExampleResult(rule, example, should_match, False)
        evidence = finding.events[0].text if finding.events else None
        unknown = tuple(unknown_fields(rule.summary, finding.values))
        return ExampleResult(rule, example, should_match, True, evidence, unknown)


def run_examples(rules: Sequence[Rule], book: RuleBook | None = None) -> list[ExampleResult]:
    """Run every example of every rule in ``rules``, each through ``book`` (default: a book
    of ``rules`` alone; the CLI passes the whole pack the rules are used with)."""
    runner = ExampleRunner(book if book is not None else RuleBook(tuple(rules)))
    results = []
    for rule in rules:
        for example in rule.examples_match:
            results.append(runner.run(rule, example, True))
        for example in rule.examples_no_match:
            results.append(runner.run(rule, example, False))
    return results
