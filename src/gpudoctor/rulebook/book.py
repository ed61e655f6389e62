"""The rule book in use: the bundled pack plus any user directories, ready to scan with."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from gpudoctor.logs.scanner import PatternHits, PatternSpec, Scanner
from gpudoctor.rulebook import cache
from gpudoctor.rulebook.cache import CorruptRule
from gpudoctor.rulebook.files import bundled_rules_dir, rule_files
from gpudoctor.rulebook.index import RuleEntry, entry_of
from gpudoctor.rulebook.model import Rule

if TYPE_CHECKING:
    from gpudoctor.rulebook.signatures import Signature, SignatureIndex


class RuleBook:
    """A loaded, validated set of rules.

    ``cache_notes`` says why the rule cache could not be used or written, when it could not
    (a refused directory, a file that failed verification and was rebuilt); the command line
    prints them under ``-v``. A book loaded with ``examples=False`` has rules without their
    examples; :meth:`with_examples` loads the same book whole.

    A book read from the rule cache builds a rule only when something asks for it: the
    engine asks for :meth:`rules_that_may_fire`, ``rules list`` for all of :attr:`rules`.
    """

    def __init__(
        self,
        rules: Sequence[Rule] = (),
        *,
        cache_notes: tuple[str, ...] = (),
        extra_dirs: tuple[Path, ...] = (),
        bundled: bool = True,
        has_examples: bool = True,
        entries: tuple[RuleEntry, ...] | None = None,
        build: Callable[[int], Rule] | None = None,
        reload: Callable[[], RuleBook] | None = None,
        signatures: Callable[[], list[Signature]] | None = None,
    ) -> None:
        """A book of ``rules``; or, with ``entries`` and ``build`` (which makes the rule of
        entry ``i``, or raises :class:`~gpudoctor.rulebook.cache.CorruptRule`), of rules built
        when first needed. When building fails, the book becomes what ``reload`` returns.
        ``signatures`` gives the rules' signatures (:mod:`gpudoctor.rulebook.signatures`)
        without building them, when the cache holds them."""
        self._reload = reload
        self._signatures = signatures
        self._signature_index: SignatureIndex | None = None
        self.cache_notes = cache_notes
        self.extra_dirs = extra_dirs
        self.bundled = bundled
        self.has_examples = has_examples
        if entries is None or build is None:
            self._built: dict[int, Rule] = dict(enumerate(rules))
            self.entries = tuple(entry_of(rule) for rule in rules) if entries is None else entries
            self._build: Callable[[int], Rule] = self._built.__getitem__
        else:
            self._built = {}
            self.entries = entries
            self._build = build

    def _rules(self, indices: Callable[[], Iterable[int]]) -> tuple[Rule, ...]:
        """The rules at ``indices()``, built as needed; if one cannot be built, the book is
        reloaded and the indices asked for again."""
        try:
            return tuple(self._rule(i) for i in indices())
        except CorruptRule as exc:
            if self._reload is None:
                raise
            fresh = self._reload()
            self.entries, self._built, self._build = fresh.entries, fresh._built, fresh._build
            self._reload = None
            self.cache_notes = (f"rule cache not used ({exc}); rebuilt", *fresh.cache_notes)
            return tuple(self._rule(i) for i in indices())

    def _rule(self, index: int) -> Rule:
        rule = self._built.get(index)
        if rule is None:
            rule = self._built[index] = self._build(index)
        return rule

    @property
    def rules(self) -> tuple[Rule, ...]:
        """Every rule of the book, in load order."""
        return self._rules(lambda: range(len(self.entries)))

    def rules_that_may_fire(
        self, hits: Mapping[str, PatternHits], facts: Mapping[str, object]
    ) -> tuple[Rule, ...]:
        """The rules that a scan with these hits and these facts can make fire, in load
        order (:meth:`~gpudoctor.rulebook.index.RuleEntry.may_fire`)."""
        found = frozenset(key for key, h in hits.items() if h.count > 0)
        return self._rules(
            lambda: [i for i, entry in enumerate(self.entries) if entry.may_fire(found, facts)]
        )

    def with_examples(self) -> RuleBook:
        """This book with its rules' examples (itself when it has them already)."""
        if self.has_examples:
            return self
        return load_rulebook(self.extra_dirs, bundled=self.bundled)

    def rule_at(self, index: int) -> Rule:
        """The rule of entry ``index``."""
        return self._rules(lambda: [index])[0]

    def signature_index(self) -> SignatureIndex:
        """Every rule's example messages as words, to compare an unrecognised error with
        (made on first use: from the rule cache, else from the rules' examples)."""
        if self._signature_index is None:
            from gpudoctor.rulebook.signatures import SignatureIndex

            try:
                if self._signatures is None:
                    raise CorruptRule("no signatures in the cache")
                index = SignatureIndex(self._signatures())
            except CorruptRule as exc:
                if self._signatures is not None:
                    note = f"rule cache signatures not used ({exc}); computed from the rules"
                    self.cache_notes = (*self.cache_notes, note)
                index = SignatureIndex.from_rules(self.with_examples().rules)
            self._signature_index = index
        return self._signature_index

    def pattern_specs(self) -> list[PatternSpec]:
        """One scanner pattern per rule pattern, keyed ``rule-id/pattern-id``."""
        return [spec for entry in self.entries for spec in entry.patterns]

    def scanner(self) -> Scanner:
        """A fresh scanner for every pattern of the book."""
        return Scanner(self.pattern_specs())

    def get(self, rule_id: str) -> Rule | None:
        """The rule with this id, if any."""
        found = self._rules(lambda: [i for i, e in enumerate(self.entries) if e.id == rule_id])
        return found[0] if found else None


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
    pack = cache.load_cached(key, files, notes) if key is not None else None
    if pack is not None:
        return RuleBook(
            entries=pack.entries,
            build=lambda index: pack.rule(index, examples=examples),
            reload=lambda: _load_yaml(paths, key, extra_dirs, bundled, []),
            signatures=pack.signatures,
            cache_notes=tuple(dict.fromkeys(notes)),
            extra_dirs=tuple(extra_dirs),
            bundled=bundled,
            has_examples=examples,
        )
    return _load_yaml(paths, key, extra_dirs, bundled, notes)


def _load_yaml(
    paths: list[Path],
    key: str | None,
    extra_dirs: Sequence[Path],
    bundled: bool,
    notes: list[str],
) -> RuleBook:
    """The book parsed from its YAML files, and cached when ``key`` still names them."""
    from gpudoctor.rulebook.loader import load_rules  # YAML is parsed only on a cache miss

    rules = tuple(load_rules(paths).rules)
    entries = tuple(entry_of(rule) for rule in rules)
    # Cached only when no file changed while it was parsed: the key must name these bytes.
    if key is not None and cache.cache_key(rule_files(paths)) == key:
        cache.store(key, rules, entries, notes)
    notes_once = tuple(dict.fromkeys(notes))  # a refused directory is met twice
    return RuleBook(
        rules,
        entries=entries,
        cache_notes=notes_once,
        extra_dirs=tuple(extra_dirs),
        bundled=bundled,
    )
