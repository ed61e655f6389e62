"""``gpudoctor rules test``: every rule's examples must (or must not) make it fire."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

from gpudoctor.engine import evaluate_rule
from gpudoctor.logs.reader import InputStats, read_blocks
from gpudoctor.logs.scanner import PatternSpec, Scanner
from gpudoctor.rulebook.model import Example, Rule


@dataclass(frozen=True)
class ExampleResult:
    """The outcome of one example of one rule."""

    rule: Rule
    example: Example
    should_match: bool
    fired: bool

    @property
    def passed(self) -> bool:
        return self.fired == self.should_match

    def describe(self) -> str:
        """One line saying where the example is and what went wrong."""
        where = str(self.example.location) if self.example.location else self.rule.path
        expected = "fire" if self.should_match else "not fire"
        first = self.example.text.strip().splitlines()[0] if self.example.text.strip() else ""
        return f"{where}: {self.rule.id} should {expected} on: {first[:100]}"


def fires_on(rule: Rule, example: Example) -> bool:
    """Whether ``rule`` fires on the example's text and facts alone."""
    scanner = Scanner(
        [
            PatternSpec(rule.pattern_key(p), p.regex, p.ignore_case, p.captures)
            for p in rule.patterns
        ]
    )
    stats = InputStats(name="example")
    scanner.scan(read_blocks(io.BytesIO(example.text.encode("utf-8")), stats))
    return evaluate_rule(rule, scanner.hits, dict(example.facts)) is not None


def run_examples(rules: Sequence[Rule]) -> list[ExampleResult]:
    """Run every example of every rule."""
    results = []
    for rule in rules:
        for example in rule.examples_match:
            results.append(ExampleResult(rule, example, True, fires_on(rule, example)))
        for example in rule.examples_no_match:
            results.append(ExampleResult(rule, example, False, fires_on(rule, example)))
    return results
