"""The rule book in use: the bundled pack plus any user directories, ready to scan with."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gpudoctor.logs.scanner import PatternSpec, Scanner
from gpudoctor.rulebook import cache
from gpudoctor.rulebook.files import bundled_rules_dir, rule_files
from gpudoctor.rulebook.model import Rule


@dataclass(frozen=True)
class RuleBook:
    """A loaded, validated set of rules.

    ``cache_notes`` says why the rule cache could not be used or written, when it could not
    (a refused directory, a file that failed verification and was rebuilt); the command line
    prints them under ``-v``. A book loaded with ``examples=False`` has rules without their
    examples; :meth:`with_examples` loads the same book whole.
    """

    rules: tuple[Rule, ...]
    cache_notes: tuple[str, ...] = field(default=(), compare=False)
    extra_dirs: tuple[Path, ...] = field(default=(), compare=False)
    bundled: bool = field(default=True, compare=False)
    has_examples: bool = field(default=True, compare=False)

    def with_examples(self) -> RuleBook:
        """This book with its rules' examples (itself when it has them already)."""
        if self.has_examples:
            return self
        return load_rulebook(self.extra_dirs, bundled=self.bundled)

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


def load_rulebook(
    extra_dirs: Sequence[Path] = (), *, bundled: bool = True, examples: bool = True
) -> RuleBook:
    """Load the bundled pack (unless ``bundled`` is false) and the user's rule directories.

    ``examples=False`` skips building the rules' examples when the pack comes from the cache
    (what ``explain`` does: they are only for ``rules test`` and ``rules lint``).

    The pack comes from the rule cache when it holds this exact set of files
    (:mod:`gpudoctor.rulebook.cache`); otherwise from YAML, and is then cached.

    Raises :class:`gpudoctor.errors.RuleErrors` when any rule is invalid.
    """
    paths = ([bundled_rules_dir()] if bundled else []) + list(extra_dirs)
    notes: list[str] = []
    files = rule_files(paths)
    key = cache.cache_key(files)
    rules = cache.load_cached(key, files, notes, examples=examples) if key is not None else None
    has_examples = examples or rules is None
    if rules is None:
        from gpudoctor.rulebook.loader import load_rules  # YAML is parsed only on a cache miss

        rules = tuple(load_rules(paths).rules)
        # Cached only when no file changed while it was parsed: the key must name these bytes.
        if key is not None and cache.cache_key(rule_files(paths)) == key:
            cache.store(key, rules, notes)
    notes_once = tuple(dict.fromkeys(notes))  # a refused directory is met twice
    return RuleBook(rules, notes_once, tuple(extra_dirs), bundled, has_examples)
