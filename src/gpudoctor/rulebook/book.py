"""The rule book in use: the bundled pack plus any user directories, ready to scan with."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gpudoctor.logs.scanner import PatternSpec, Scanner
from gpudoctor.rulebook import cache
from gpudoctor.rulebook.files import bundled_rules_dir, rule_files
from gpudoctor.rulebook.model import Rule


@dataclass(frozen=True)
class RuleBook:
    """A loaded, validated set of rules."""

    rules: tuple[Rule, ...]

    def pattern_specs(self) -> list[PatternSpec]:
        """One scanner pattern per rule pattern, keyed ``rule-id/pattern-id``."""
        return [
            PatternSpec(rule.pattern_key(p), p.regex, p.ignore_case, p.captures)
            for rule in self.rules
            for p in rule.patterns
        ]

    def scanner(self) -> Scanner:
        """A fresh scanner for every pattern of the book."""
        return Scanner(self.pattern_specs())

    def get(self, rule_id: str) -> Rule | None:
        """The rule with this id, if any."""
        return next((r for r in self.rules if r.id == rule_id), None)


def load_rulebook(extra_dirs: Sequence[Path] = (), *, bundled: bool = True) -> RuleBook:
    """Load the bundled pack (unless ``bundled`` is false) and the user's rule directories.

    Raises :class:`gpudoctor.errors.RuleErrors` when any rule is invalid.
    """
    paths = ([bundled_rules_dir()] if bundled else []) + list(extra_dirs)
    files = rule_files(paths)
    key = cache.cache_key(files)
    rules = cache.load_cached(key)
    if rules is None:
        from gpudoctor.rulebook.loader import load_rules  # YAML is parsed only on a cache miss

        rules = tuple(load_rules(paths).rules)
        cache.store(key, rules)
    return RuleBook(rules)
