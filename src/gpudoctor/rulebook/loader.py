"""Loads rule files into :class:`~gpudoctor.rulebook.model.Rule` objects.

Every mistake is reported as ``path:line:col: message``: a file that is not a regular file,
is unreadable or too large, YAML syntax, anchors and aliases, unknown and duplicate keys,
missing fields, wrong types, invalid RE2 patterns, captures that are not groups of their
pattern, invalid or unbounded condition expressions, unknown causes, duplicate rule ids,
``explains`` entries that name neither a rule nor a cause. :func:`load_rules` raises on the
first problem for API callers; ``collect=True`` returns all of them for ``gpudoctor rules lint``.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import re2
import yaml

from gpudoctor import yamlnodes as yn
from gpudoctor.errors import RuleError, RuleErrors, SourceLocation
from gpudoctor.logs.scanner import CaptureType, compile_pattern
from gpudoctor.rulebook.conditions import syntax_error
from gpudoctor.rulebook.files import RuleFileError, read_rule_text, rule_files
from gpudoctor.rulebook.model import (
    Adjustment,
    Example,
    MatchMode,
    Pattern,
    Role,
    Rule,
    Severity,
)
from gpudoctor.rulebook.taxonomy import causes

_ID_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

_RULE_KEYS = {
    "id", "cause", "title", "severity", "role", "confidence", "patterns", "match",
    "conditions", "derived", "adjust", "explains", "summary", "explanation", "fix",
    "references", "examples",
}  # fmt: skip
_REQUIRED = ("id", "cause", "title", "severity", "role", "confidence", "summary", "fix")
_PATTERN_KEYS = {"id", "regex", "ignore_case", "captures"}
_ADJUST_KEYS = {"when", "by", "reason"}
_EXAMPLE_KEYS = {"text", "facts", "evidence", "evidence_line"}


@dataclass
class LoadResult:
    """Rules that loaded, and every error met on the way."""

    rules: list[Rule] = field(default_factory=list)
    errors: list[RuleError] = field(default_factory=list)


def load_rules(paths: Sequence[Path], *, collect: bool = False) -> LoadResult:
    """Load every rule file under ``paths`` and check the pack as a whole.

    Raises :class:`RuleErrors` on any error unless ``collect`` is true, in which case the
    errors are returned with whatever rules did load.
    """
    result = LoadResult()
    for file in rule_files(paths):
        rules, errors = load_file(file)
        result.errors.extend(errors)
        result.rules.extend(rules)
    result.errors.extend(_pack_errors(result.rules))
    if result.errors and not collect:
        raise RuleErrors(result.errors)
    return result


def _pack_errors(rules: list[Rule]) -> list[RuleError]:
    errors: list[RuleError] = []
    first_by_id: dict[str, Rule] = {}
    for rule in rules:
        if rule.id in first_by_id:
            errors.append(
                RuleError(
                    SourceLocation(rule.path, 1, 1),
                    f'duplicate rule id "{rule.id}" (also in {first_by_id[rule.id].path})',
                )
            )
        else:
            first_by_id[rule.id] = rule
    known = set(first_by_id) | set(causes())
    for rule in rules:
        for target in rule.explains:
            if target not in known:
                errors.append(
                    RuleError(
                        SourceLocation(rule.path, 1, 1),
                        f'explains "{target}", which is neither a rule id nor a cause',
                    )
                )
    return errors


def load_file(path: Path) -> tuple[list[Rule], list[RuleError]]:
    """Load one file of the pack: a rule file gives one rule, a catalogue (a top-level
    ``catalogue:`` key, see :mod:`gpudoctor.rulebook.catalogues`) one rule per entry. Returns
    the rules (none when the file has errors) and the errors."""
    root, errors = _compose_file(path)
    if root is None:
        return [], errors
    from gpudoctor.rulebook import catalogues  # imports this module

    if catalogues.is_catalogue(root):
        return catalogues.load_catalogue(root, str(path))
    rule, errors = _parse_rule(root, path)
    return ([rule] if rule is not None else []), errors


def load_rule_file(path: Path) -> tuple[Rule | None, list[RuleError]]:
    """Load one rule file; returns the rule (``None`` when it has errors) and the errors."""
    root, errors = _compose_file(path)
    if root is None:
        return None, errors
    return _parse_rule(root, path)


def _compose_file(path: Path) -> tuple[yaml.Node | None, list[RuleError]]:
    name = str(path)
    try:
        text = read_rule_text(path)
    except RuleFileError as exc:
        return None, [RuleError(SourceLocation(name, 1, 1), str(exc))]
    try:
        root = yn.compose(text, name, aliases=False)
    except yn.NodeError as exc:
        return None, [RuleError(exc.location, exc.message)]
    if root is None:
        return None, [RuleError(SourceLocation(name, 1, 1), "empty rule file")]
    return root, []


def _parse_rule(root: yaml.Node, path: Path) -> tuple[Rule | None, list[RuleError]]:
    parser = _RuleParser(str(path))
    rule = parser.parse(root, expected_id=path.stem)
    return (rule if not parser.errors else None), parser.errors


class _RuleParser:
    def __init__(self, path: str) -> None:
        self.path = path
        self.errors: list[RuleError] = []

    def error(self, node: yaml.Node, message: str) -> None:
        self.errors.append(RuleError(yn.location(self.path, node), message))

    def parse(self, root: yaml.Node, expected_id: str) -> Rule | None:
        try:
            entries = {e.key: e for e in yn.mapping_entries(root, self.path, "a rule")}
        except yn.NodeError as exc:
            self.errors.append(RuleError(exc.location, exc.message))
            return None
        for key, entry in entries.items():
            if key not in _RULE_KEYS:
                self.error(entry.key_node, f'unknown key "{key}"{_suggest(key, _RULE_KEYS)}')
        for key in _REQUIRED:
            if key not in entries:
                self.error(root, f'missing required key "{key}"')
        if "patterns" not in entries and "conditions" not in entries:
            self.error(root, 'a rule needs "patterns", "conditions" or both')
        values: dict[str, object] = {}
        for key, entry in entries.items():
            if key not in _RULE_KEYS:
                continue
            try:
                values[key] = getattr(self, f"_field_{key}")(entry.value)
            except yn.NodeError as exc:
                self.errors.append(RuleError(exc.location, exc.message))
        rule_id = values.get("id")
        if isinstance(rule_id, str) and rule_id != expected_id:
            self.error(
                entries["id"].value, f'id "{rule_id}" must match the file name "{expected_id}"'
            )
        self._check_examples_present(root, values)
        if self.errors:
            return None
        examples = values.get("examples", ((), ()))
        assert isinstance(examples, tuple)
        return Rule(
            id=str(values["id"]),
            cause=str(values["cause"]),
            title=str(values["title"]),
            severity=values["severity"],  # type: ignore[arg-type]
            role=values["role"],  # type: ignore[arg-type]
            confidence=float(values["confidence"]),  # type: ignore[arg-type]
            summary=str(values["summary"]),
            explanation=str(values.get("explanation", "")),
            fix=values["fix"],  # type: ignore[arg-type]
            references=values.get("references", ()),  # type: ignore[arg-type]
            patterns=values.get("patterns", ()),  # type: ignore[arg-type]
            match=values.get("match", MatchMode.ANY),  # type: ignore[arg-type]
            conditions=values.get("conditions", ()),  # type: ignore[arg-type]
            derived=values.get("derived", {}),  # type: ignore[arg-type]
            adjust=values.get("adjust", ()),  # type: ignore[arg-type]
            explains=values.get("explains", ()),  # type: ignore[arg-type]
            examples_match=examples[0],
            examples_no_match=examples[1],
            path=self.path,
        )

    def _check_examples_present(self, root: yaml.Node, values: dict[str, object]) -> None:
        examples = values.get("examples")
        if not isinstance(examples, tuple):
            if not any(e.location == yn.location(self.path, root) for e in self.errors):
                self.error(root, 'missing "examples" with at least one "match" and one "no_match"')
            return
        if not examples[0] or not examples[1]:
            self.error(root, 'examples need at least one "match" and one "no_match" text')

    # One method per key: each returns the typed value or raises NodeError.

    def _text(self, node: yaml.Node, what: str) -> str:
        value = yn.scalar(node, self.path, what, str)
        assert isinstance(value, str)
        if not value.strip():
            raise yn.NodeError(yn.location(self.path, node), f"{what} must not be empty")
        return value

    def _field_id(self, node: yaml.Node) -> str:
        value = self._text(node, '"id"')
        if not _ID_RE.match(value):
            raise yn.NodeError(
                yn.location(self.path, node),
                f'id "{value}" must be lower-case letters, digits and dashes',
            )
        return value

    def _field_cause(self, node: yaml.Node) -> str:
        value = self._text(node, '"cause"')
        if value not in causes():
            raise yn.NodeError(
                yn.location(self.path, node),
                f'unknown cause "{value}"{_suggest(value, causes())}',
            )
        return value

    def _field_title(self, node: yaml.Node) -> str:
        return self._text(node, '"title"')

    def _field_summary(self, node: yaml.Node) -> str:
        return self._text(node, '"summary"')

    def _field_explanation(self, node: yaml.Node) -> str:
        return self._text(node, '"explanation"')

    def _field_severity(self, node: yaml.Node) -> Severity:
        return _enum(Severity, self._text(node, '"severity"'), node, self.path)

    def _field_role(self, node: yaml.Node) -> Role:
        return _enum(Role, self._text(node, '"role"'), node, self.path)

    def _field_match(self, node: yaml.Node) -> MatchMode:
        return _enum(MatchMode, self._text(node, '"match"'), node, self.path)

    def _field_confidence(self, node: yaml.Node) -> float:
        value = yn.scalar(node, self.path, '"confidence"', (int, float))
        assert isinstance(value, (int, float))
        if not 0.0 <= float(value) <= 1.0:
            raise yn.NodeError(yn.location(self.path, node), '"confidence" must be within [0, 1]')
        return float(value)

    def _strings(self, node: yaml.Node, what: str) -> tuple[str, ...]:
        return tuple(
            self._text(item, f"each item of {what}")
            for item in yn.sequence_items(node, self.path, what)
        )

    def _field_fix(self, node: yaml.Node) -> tuple[str, ...]:
        steps = self._strings(node, '"fix"')
        if not steps:
            raise yn.NodeError(yn.location(self.path, node), '"fix" needs at least one step')
        return steps

    def _field_references(self, node: yaml.Node) -> tuple[str, ...]:
        refs = self._strings(node, '"references"')
        for item, ref in zip(yn.sequence_items(node, self.path, ""), refs, strict=True):
            if not ref.startswith(("https://", "http://")):
                raise yn.NodeError(yn.location(self.path, item), "references must be URLs")
        return refs

    def _field_explains(self, node: yaml.Node) -> tuple[str, ...]:
        return self._strings(node, '"explains"')

    def _expression(self, node: yaml.Node, what: str) -> str:
        expression = self._text(node, what)
        problem = syntax_error(expression)
        if problem:
            raise yn.NodeError(yn.location(self.path, node), f"{what}: {problem}")
        return expression

    def _field_conditions(self, node: yaml.Node) -> tuple[str, ...]:
        return tuple(
            self._expression(item, "a condition")
            for item in yn.sequence_items(node, self.path, '"conditions"')
        )

    def _field_derived(self, node: yaml.Node) -> dict[str, str]:
        derived: dict[str, str] = {}
        for entry in yn.mapping_entries(node, self.path, '"derived"'):
            if not _NAME_RE.match(entry.key):
                raise yn.NodeError(
                    yn.location(self.path, entry.key_node),
                    f'derived name "{entry.key}" must be an identifier',
                )
            derived[entry.key] = self._expression(entry.value, f'derived "{entry.key}"')
        return derived

    def _field_adjust(self, node: yaml.Node) -> tuple[Adjustment, ...]:
        adjustments = []
        for item in yn.sequence_items(node, self.path, '"adjust"'):
            entries = self._entries(item, "an adjustment", _ADJUST_KEYS, ("when", "by", "reason"))
            by = yn.scalar(entries["by"].value, self.path, '"by"', (int, float))
            assert isinstance(by, (int, float))
            if not -1.0 <= float(by) <= 1.0:
                raise yn.NodeError(
                    yn.location(self.path, entries["by"].value), '"by" must be within [-1, 1]'
                )
            adjustments.append(
                Adjustment(
                    when=self._expression(entries["when"].value, '"when"'),
                    by=float(by),
                    reason=self._text(entries["reason"].value, '"reason"'),
                )
            )
        return tuple(adjustments)

    def _entries(
        self, node: yaml.Node, what: str, allowed: set[str], required: Sequence[str]
    ) -> dict[str, yn.Entry]:
        entries = {e.key: e for e in yn.mapping_entries(node, self.path, what)}
        for key, entry in entries.items():
            if key not in allowed:
                raise yn.NodeError(
                    yn.location(self.path, entry.key_node),
                    f'unknown key "{key}" in {what}{_suggest(key, allowed)}',
                )
        for key in required:
            if key not in entries:
                raise yn.NodeError(yn.location(self.path, node), f'{what} needs "{key}"')
        return entries

    def _field_patterns(self, node: yaml.Node) -> tuple[Pattern, ...]:
        patterns: list[Pattern] = []
        for item in yn.sequence_items(node, self.path, '"patterns"'):
            try:
                patterns.append(self._pattern(item, {p.id for p in patterns}))
            except yn.NodeError as exc:
                self.errors.append(RuleError(exc.location, exc.message))
        if not patterns and not self.errors:
            raise yn.NodeError(yn.location(self.path, node), '"patterns" must not be empty')
        return tuple(patterns)

    def _pattern(self, node: yaml.Node, taken: set[str]) -> Pattern:
        entries = self._entries(node, "a pattern", _PATTERN_KEYS, ("id", "regex"))
        pattern_id = self._text(entries["id"].value, 'pattern "id"')
        if not _NAME_RE.match(pattern_id):
            raise yn.NodeError(
                yn.location(self.path, entries["id"].value),
                f'pattern id "{pattern_id}" must be an identifier (letters, digits, _)',
            )
        if pattern_id in taken:
            raise yn.NodeError(
                yn.location(self.path, entries["id"].value), f'duplicate pattern id "{pattern_id}"'
            )
        regex_node = entries["regex"].value
        regex = self._text(regex_node, '"regex"')
        ignore_case = False
        if "ignore_case" in entries:
            flag = yn.scalar(entries["ignore_case"].value, self.path, '"ignore_case"', bool)
            ignore_case = bool(flag)
        try:
            compiled = compile_pattern(regex, ignore_case=ignore_case)
        except re2.error as exc:
            message = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else exc
            raise yn.NodeError(
                yn.location(self.path, regex_node), f"invalid RE2 regex: {message}"
            ) from exc
        groups = {(g.decode() if isinstance(g, bytes) else g) for g in compiled.groupindex}
        captures: dict[str, CaptureType] = {}
        if "captures" in entries:
            for entry in yn.mapping_entries(entries["captures"].value, self.path, '"captures"'):
                if entry.key not in groups:
                    raise yn.NodeError(
                        yn.location(self.path, entry.key_node),
                        f'capture "{entry.key}" is not a named group (?P<{entry.key}>...) '
                        "of the regex",
                    )
                captures[entry.key] = _enum(
                    CaptureType, self._text(entry.value, "a capture type"), entry.value, self.path
                )
        return Pattern(
            id=pattern_id,
            regex=regex,
            ignore_case=ignore_case,
            captures=captures,
            location=yn.location(self.path, regex_node),
        )

    def _field_examples(self, node: yaml.Node) -> tuple[tuple[Example, ...], tuple[Example, ...]]:
        entries = self._entries(node, '"examples"', {"match", "no_match"}, ())
        found: dict[str, tuple[Example, ...]] = {}
        for key in ("match", "no_match"):
            if key in entries:
                items = yn.sequence_items(entries[key].value, self.path, f'"examples.{key}"')
                found[key] = tuple(self._example(item, key == "match") for item in items)
        return found.get("match", ()), found.get("no_match", ())

    def _example(self, node: yaml.Node, match: bool) -> Example:
        where = yn.location(self.path, node)
        if isinstance(node, yaml.ScalarNode):
            return Example(text=self._text(node, "an example"), location=where)
        entries = self._entries(node, "an example", _EXAMPLE_KEYS, ())
        text = self._text(entries["text"].value, "an example text") if "text" in entries else ""
        facts: dict[str, object] = {}
        if "facts" in entries:
            value = yn.plain(entries["facts"].value, self.path)
            if not isinstance(value, dict):
                raise yn.NodeError(
                    yn.location(self.path, entries["facts"].value), '"facts" must be a mapping'
                )
            facts = {str(k): v for k, v in value.items()}
        if not text and not facts:
            raise yn.NodeError(where, 'an example needs "text", "facts" or both')
        evidence, evidence_line = self._example_evidence(entries, text, match)
        return Example(
            text=text,
            facts=facts,
            location=where,
            evidence=evidence,
            evidence_line=evidence_line,
        )

    def _example_evidence(
        self, entries: dict[str, yn.Entry], text: str, match: bool
    ) -> tuple[str | None, int | None]:
        """The ``evidence`` / ``evidence_line`` of a ``match`` example, checked against its
        text: one of them at most, naming a line the text has."""
        given = [key for key in ("evidence", "evidence_line") if key in entries]
        if not given:
            return None, None
        node = entries[given[0]].value
        here = yn.location(self.path, node)
        if not match:
            raise yn.NodeError(here, f'"{given[0]}" only makes sense in a "match" example')
        if len(given) > 1:
            raise yn.NodeError(here, 'give "evidence" or "evidence_line", not both')
        lines = text.splitlines()
        value = yn.plain(node)
        if given[0] == "evidence_line":
            if isinstance(value, bool) or not isinstance(value, int):
                raise yn.NodeError(here, '"evidence_line" must be a line number')
            if not 1 <= value <= len(lines):
                raise yn.NodeError(here, f'"evidence_line" {value} is not a line of the text')
            return None, value
        if not isinstance(value, str) or not value.strip():
            raise yn.NodeError(here, '"evidence" must be the text of a line of the example')
        if value.strip() not in (line.strip() for line in lines):
            raise yn.NodeError(here, '"evidence" is not a line of the example text')
        return value.strip(), None


_E = TypeVar("_E", bound=enum.Enum)


def _enum(kind: type[_E], value: str, node: yaml.Node, path: str) -> _E:
    try:
        return kind(value)
    except ValueError:
        allowed = ", ".join(str(m.value) for m in kind)
        raise yn.NodeError(yn.location(path, node), f'"{value}" is not one of: {allowed}') from None


def _suggest(word: str, choices: Iterable[str]) -> str:
    import difflib

    close = difflib.get_close_matches(word, list(choices), n=1)
    return f' (did you mean "{close[0]}"?)' if close else ""
