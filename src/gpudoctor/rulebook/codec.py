"""Rules as plain JSON data and back, for the rule cache.

:func:`rule_to_data` turns a :class:`~gpudoctor.rulebook.model.Rule` into lists, dicts, strings
and numbers, and :func:`rule_from_data` rebuilds it. Every record is a list of its fields in
the order of :data:`RULE_FIELDS` (and of the other ``*_FIELDS``): without repeated key names
the pack parses about a third faster, and this runs at every start. Enums are stored by value,
source locations as ``[line, column]`` in the rule's own file (or ``null``).

Decoding is strict: a record of the wrong length, a value of the wrong type or an unknown enum
value raises :class:`CodecError`, so that data that is not exactly what this version wrote is
never half-trusted.
"""

from __future__ import annotations

import enum
from typing import TypeVar

from gpudoctor.errors import SourceLocation
from gpudoctor.logs.scanner import CaptureType
from gpudoctor.rulebook.model import Adjustment, Example, MatchMode, Pattern, Role, Rule, Severity

RULE_FIELDS = (
    "id", "cause", "title", "severity", "role", "confidence", "summary", "explanation", "fix",
    "references", "patterns", "match", "conditions", "derived", "adjust", "explains",
    "examples_match", "examples_no_match", "path",
)  # fmt: skip
PATTERN_FIELDS = ("id", "regex", "ignore_case", "captures", "location")
ADJUSTMENT_FIELDS = ("when", "by", "reason")
EXAMPLE_FIELDS = ("text", "facts", "location", "evidence", "evidence_line")

_STR_FIELDS = ("id", "cause", "title", "summary", "explanation", "path")
_STR_LIST_FIELDS = ("fix", "references", "conditions", "explains")
_SEVERITIES = {m.value: m for m in Severity}
_ROLES = {m.value: m for m in Role}
_MATCH_MODES = {m.value: m for m in MatchMode}
_CAPTURE_TYPES = {m.value: m for m in CaptureType}
_M = TypeVar("_M", bound=enum.Enum)


class CodecError(ValueError):
    """The data is not a rule as :func:`rule_to_data` writes it."""


def rule_to_data(rule: Rule) -> list[object]:
    """The rule as JSON-ready data (see the module docstring)."""
    return [
        rule.id,
        rule.cause,
        rule.title,
        rule.severity.value,
        rule.role.value,
        rule.confidence,
        rule.summary,
        rule.explanation,
        list(rule.fix),
        list(rule.references),
        [_pattern_to_data(p) for p in rule.patterns],
        rule.match.value,
        list(rule.conditions),
        dict(rule.derived),
        [[a.when, a.by, a.reason] for a in rule.adjust],
        list(rule.explains),
        [_example_to_data(e) for e in rule.examples_match],
        [_example_to_data(e) for e in rule.examples_no_match],
        rule.path,
    ]


def rule_from_data(data: object, *, examples: bool = True) -> Rule:
    """Rebuild a rule from :func:`rule_to_data`'s output; raises :class:`CodecError`.

    With ``examples`` false the rule's examples are left out (``explain`` never reads them,
    and they are most of what there is to build).
    """
    # Written for speed (list comprehensions, no per-field calls): it runs at every start.
    fields = dict(zip(RULE_FIELDS, _record(data, len(RULE_FIELDS), "rule"), strict=True))
    for name in _STR_FIELDS:
        if type(fields[name]) is not str:
            raise CodecError(f"a rule's {name} is not a string")
    path: str = fields["path"]  # type: ignore[assignment]
    for name in _STR_LIST_FIELDS:
        fields[name] = _strs(fields[name])
    derived = fields["derived"]
    if type(derived) is not dict:
        raise CodecError("a rule's derived values are not an object")
    _strs(list(derived.values()))
    return Rule(
        severity=_member(_SEVERITIES, fields.pop("severity")),
        role=_member(_ROLES, fields.pop("role")),
        confidence=_number(fields.pop("confidence")),
        patterns=tuple([_pattern(p, path) for p in _list(fields.pop("patterns"))]),
        match=_member(_MATCH_MODES, fields.pop("match")),
        adjust=tuple([_adjustment(a) for a in _list(fields.pop("adjust"))]),
        examples_match=_examples(fields.pop("examples_match"), path, examples),
        examples_no_match=_examples(fields.pop("examples_no_match"), path, examples),
        **fields,  # type: ignore[arg-type]  # the str, tuple[str] and dict fields checked above
    )


def _examples(data: object, path: str, wanted: bool) -> tuple[Example, ...]:
    items = _list(data)
    return tuple([_example(e, path) for e in items]) if wanted else ()


def _pattern_to_data(pattern: Pattern) -> list[object]:
    captures = {name: kind.value for name, kind in pattern.captures.items()}
    location = _location_to_data(pattern.location)
    return [pattern.id, pattern.regex, pattern.ignore_case, captures, location]


def _example_to_data(example: Example) -> list[object]:
    location = _location_to_data(example.location)
    return [example.text, dict(example.facts), location, example.evidence, example.evidence_line]


def _location_to_data(location: SourceLocation | None) -> list[int] | None:
    return None if location is None else [location.line, location.column]


def _pattern(data: object, path: str) -> Pattern:
    pattern_id, regex, ignore_case, captures, location = _record(data, 5, "pattern")
    if type(pattern_id) is not str or type(regex) is not str or type(ignore_case) is not bool:
        raise CodecError("a pattern's id, regex or ignore_case has the wrong type")
    if type(captures) is not dict:
        raise CodecError("a pattern's captures are not an object")
    return Pattern(
        id=pattern_id,
        regex=regex,
        ignore_case=ignore_case,
        captures={name: _member(_CAPTURE_TYPES, kind) for name, kind in captures.items()},
        location=_location(location, path),
    )


def _adjustment(data: object) -> Adjustment:
    when, by, reason = _record(data, 3, "adjustment")
    if type(when) is not str or type(reason) is not str:
        raise CodecError("an adjustment's when or reason is not a string")
    return Adjustment(when=when, by=_number(by), reason=reason)


def _example(data: object, path: str) -> Example:
    text, facts, location, evidence, evidence_line = _record(data, 5, "example")
    if type(text) is not str or type(facts) is not dict:
        raise CodecError("an example's text or facts have the wrong type")
    if not (evidence is None or type(evidence) is str):
        raise CodecError("an example's evidence is not a string")
    if not (evidence_line is None or type(evidence_line) is int):
        raise CodecError("an example's evidence_line is not an integer")
    return Example(
        text=text,
        facts=facts,
        location=_location(location, path),
        evidence=evidence,
        evidence_line=evidence_line,
    )


def _location(data: object, path: str) -> SourceLocation | None:
    if data is None:
        return None
    line, column = _record(data, 2, "location")
    if type(line) is not int or type(column) is not int:
        raise CodecError("a location is not [line, column]")
    return SourceLocation(path, line, column)


def _record(data: object, size: int, what: str) -> list[object]:
    if type(data) is not list or len(data) != size:
        raise CodecError(f"a {what} is not a list of {size} fields")
    return data


def _list(data: object) -> list[object]:
    if type(data) is not list:
        raise CodecError(f"expected a list, got {type(data).__name__}")
    return data


def _strs(data: object) -> tuple[str, ...]:
    for item in _list(data):
        if type(item) is not str:
            raise CodecError("expected a list of strings")
    return tuple(data)  # type: ignore[arg-type]


def _number(data: object) -> float:
    if type(data) is not float and type(data) is not int:
        raise CodecError(f"expected a number, got {type(data).__name__}")
    return float(data)


def _member(members: dict[str, _M], value: object) -> _M:
    member = members.get(value) if type(value) is str else None
    if member is None:
        raise CodecError(f"{value!r} is not one of {sorted(members)}")
    return member
