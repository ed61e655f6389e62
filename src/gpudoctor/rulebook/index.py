"""What a run needs to know of a rule before it needs the rule itself.

A short ``explain`` touches few of the pack's rules: only those whose lines occur in the log,
and those without patterns whose facts are known. An :class:`RuleEntry` holds just enough to
decide that (the rule's scanner patterns, with the literals the scanner's prefilter looks
for, and the facts a rule without patterns reads), so that the rule cache can rebuild the
other rules only when something asks for them. Computing an entry parses every regex and
expression of the rule (slow: about 0.1 ms a pattern); the rule cache stores entries.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gpudoctor.logs.scanner import CaptureType, PatternSpec
from gpudoctor.rulebook.conditions import names_in
from gpudoctor.rulebook.model import Rule

_CAPTURE_TYPES = {m.value: m for m in CaptureType}


class EntryError(ValueError):
    """The data is not an entry as :func:`entry_to_data` writes it."""


@dataclass(frozen=True)
class RuleEntry:
    """A rule's id and file, its scanner patterns, and, for a rule without patterns, the facts
    its conditions and derived values read."""

    id: str
    path: str
    patterns: tuple[PatternSpec, ...]
    fact_names: frozenset[str]

    def may_fire(self, hit_keys: frozenset[str], facts: Mapping[str, object]) -> bool:
        """Whether the rule can fire on a scan that found ``hit_keys`` and on ``facts``.

        A rule with patterns needs one of them found; a rule without needs one fact it reads
        to be known (not ``None``): on facts nobody measured no condition of the pack holds,
        and a lint check keeps it so.
        """
        if self.patterns:
            return any(p.key in hit_keys for p in self.patterns)
        return any(facts.get(name) is not None for name in self.fact_names)


def entry_of(rule: Rule) -> RuleEntry:
    """The entry of a rule, computed from it (its patterns in the form they are scanned in:
    :func:`as_pasted`)."""
    from gpudoctor.rulebook.regex_shape import required_literals  # not needed on a cache hit

    specs = tuple(
        PatternSpec(
            rule.pattern_key(p),
            regex,
            p.ignore_case,
            p.captures,
            _as_bytes(required_literals(regex)),
        )
        for p in rule.patterns
        for regex in (as_pasted(p.regex),)
    )
    return RuleEntry(rule.id, rule.path, specs, facts_read(rule) if not specs else frozenset())


_TYPOGRAPHIC_APOSTROPHE = "\u2019"  # RIGHT SINGLE QUOTATION MARK


def as_pasted(regex: str) -> str:
    """``regex`` as it must read a pasted log: a contraction's apostrophe ("don't", "can't")
    also as the typographic one (U+2019) that word processors, chat apps and some issue
    editors put in its place. (An alternation, not a character class: the scanner's RE2 reads
    bytes, and U+2019 is three of them in UTF-8.)"""
    return regex.replace("n't", f"n(?:'|{_TYPOGRAPHIC_APOSTROPHE})t")


def facts_read(rule: Rule) -> frozenset[str]:
    """The fact names a rule's conditions and derived values read (its derived names aside)."""
    expressions = (*rule.conditions, *rule.derived.values())
    names = frozenset().union(*(names_in(e) for e in expressions))
    return names - set(rule.derived)


def _as_bytes(literals: tuple[str, ...] | None) -> tuple[bytes, ...] | None:
    return None if literals is None else tuple(literal.encode() for literal in literals)


def entry_to_data(entry: RuleEntry) -> list[object]:
    """The entry as JSON-ready data: ``[id, path, patterns, fact_names]``."""
    patterns = [
        [
            spec.key,
            spec.regex,
            spec.ignore_case,
            {name: kind.value for name, kind in spec.captures.items()},
            None if spec.literals is None else [lit.decode() for lit in spec.literals],
        ]
        for spec in entry.patterns
    ]
    return [entry.id, entry.path, patterns, sorted(entry.fact_names)]


def entry_from_data(data: object) -> RuleEntry:
    """Rebuild an entry from :func:`entry_to_data`'s output; raises :class:`EntryError`."""
    if type(data) is not list or len(data) != 4:
        raise EntryError("an entry is not a list of 4")
    rule_id, path, patterns, fact_names = data
    if type(rule_id) is not str or type(path) is not str or type(patterns) is not list:
        raise EntryError("an entry's id, path or patterns have the wrong type")
    if type(fact_names) is not list or not all(type(n) is str for n in fact_names):
        raise EntryError("an entry's fact names are not strings")
    return RuleEntry(rule_id, path, tuple(_spec(p) for p in patterns), frozenset(fact_names))


def _spec(data: object) -> PatternSpec:
    # Checked in one expression per field: this runs for every pattern at every start.
    if type(data) is not list or len(data) != 5:
        raise EntryError("a pattern entry is not a list of 5")
    key, regex, ignore_case, captures, literals = data
    if type(key) is not str or type(regex) is not str or type(ignore_case) is not bool:
        raise EntryError("a pattern entry's key, regex or ignore_case has the wrong type")
    if type(captures) is not dict:
        raise EntryError("a pattern entry's captures are not an object")
    if captures:
        try:
            captures = {name: _CAPTURE_TYPES[value] for name, value in captures.items()}
        except (KeyError, TypeError):
            raise EntryError("a pattern entry's captures are not capture types") from None
    if literals is not None:
        if type(literals) is not list or not all(type(x) is str for x in literals):
            raise EntryError("a pattern entry's literals are not strings")
        literals = tuple([x.encode() for x in literals])
    return PatternSpec(key, regex, ignore_case, captures, literals)
