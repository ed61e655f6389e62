"""``gpudoctor rules lint``: rules that load but look wrong, as a registry of named checks.

Errors that stop a rule from loading come from the loader. The checks here look at rules that
did load. :data:`CHECKS` maps each check's stable id to its function, whose docstring is its
documentation (``gpudoctor rules lint --list-checks``); ``--disable ID`` turns one off. Checks
in :data:`ERROR_CHECKS` find rules that would silently never work (a name nobody defines reads
as ``None`` at run time, so the condition is simply false): their findings are errors. The
others are warnings, errors only under ``--strict``. Every finding names its check.

The shape of regexes (literal text, anchors, backtracking) is read by
:mod:`gpudoctor.rulebook.regex_shape`.
"""

from __future__ import annotations

import ast
import unicodedata
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from gpudoctor.errors import SourceLocation
from gpudoctor.rulebook.conditions import (
    BASE_FUNCTIONS,
    COMPOUND_FUNCTIONS,
    PATTERN_FUNCTIONS,
    Evaluator,
    names_in,
)
from gpudoctor.rulebook.expression_limits import syntax_tree
from gpudoctor.rulebook.model import MatchMode, Pattern, Role, Rule
from gpudoctor.rulebook.regex_shape import (
    backtracking_problems,
    costly_leading_repeat,
    is_anchored,
    literal_runs,
    longest_literal,
    named_groups,
)
from gpudoctor.templates import template_names

MIN_LITERAL = 6
"""A pattern must contain a literal run at least this long (or be anchored to a whole line)."""

GENERIC_WORDS = {
    "error", "failed", "failure", "fatal", "exception", "warning", "killed", "abort", "aborted",
    "crash", "crashed", "timeout", "nan", "inf", "died",
}  # fmt: skip


@dataclass(frozen=True)
class LintFinding:
    """One problem one check found in one rule."""

    location: SourceLocation
    message: str
    check: str
    level: str = "warning"
    """``"warning"`` or ``"error"``."""

    def __str__(self) -> str:
        return f"{self.location}: {self.level}: {self.message} [{self.check}]"


@dataclass(frozen=True)
class Problem:
    """What a check function reports: where, and what is wrong."""

    location: SourceLocation
    message: str


class RuleView:
    """A rule with what its checks need to know about it, computed once."""

    def __init__(self, rule: Rule, fact_names: frozenset[str]) -> None:
        self.rule = rule
        self.fact_names = fact_names
        self.top = SourceLocation(rule.path, 1, 1)

    @cached_property
    def captures(self) -> dict[str, set[str]]:
        """Named groups of each pattern, by pattern id."""
        return {p.id: named_groups(p.regex) for p in self.rule.patterns}

    @cached_property
    def defined(self) -> frozenset[str]:
        """Every name an expression or template of this rule may read."""
        names = set(self.fact_names) | set(self.rule.derived)
        for groups in self.captures.values():
            names |= groups
        return frozenset(names)

    def expressions(self) -> Iterator[tuple[str, str]]:
        """(where it is, expression) for every condition, ``adjust.when`` and ``derived``."""
        for condition in self.rule.conditions:
            yield "condition", condition
        for adjustment in self.rule.adjust:
            yield "adjust", adjustment.when
        for name, expression in self.rule.derived.items():
            yield f'derived "{name}"', expression

    @cached_property
    def _lines(self) -> list[str]:
        from gpudoctor.rulebook.files import RuleFileError, read_rule_text

        try:
            return read_rule_text(Path(self.rule.path)).splitlines()
        except (RuleFileError, OSError):
            return []

    def locate(self, expression: str, word: str = "") -> SourceLocation:
        """Where ``expression`` (and ``word`` in it) is written in the rule file, as near as
        can be found; the top of the file otherwise."""
        first = expression.strip().splitlines()[0] if expression.strip() else ""
        for number, line in enumerate(self._lines, start=1):
            column = line.find(first) if first else -1
            if column >= 0:
                inner = line.find(word, column) if word else -1
                return SourceLocation(self.rule.path, number, (inner if inner >= 0 else column) + 1)
        return self.top


Check = Callable[[RuleView], Iterator[Problem]]


def literal_width(text: str) -> int:
    """How much a literal says, in terminal columns: a wide (CJK) character counts two, as it
    carries a word where a Latin letter carries a letter ("已杀死", Killed, is 6)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def context_literal(regex: str) -> int:
    """How many literal columns (:func:`literal_width`) the pattern has besides its generic
    words."""
    return sum(
        literal_width(r.strip())
        for r in literal_runs(regex)
        if r.strip().lower().strip(" :`'\"") not in GENERIC_WORDS
    )


def _is_specific(pattern: Pattern) -> bool:
    literal = longest_literal(pattern.regex).strip()
    return is_anchored(pattern.regex) or literal_width(literal) >= MIN_LITERAL


def _where(view: RuleView, pattern: Pattern) -> SourceLocation:
    return pattern.location or view.top


def check_generic_pattern(view: RuleView) -> Iterator[Problem]:
    """A pattern so generic it would fire on healthy logs: no literal text of at least
    6 columns (:func:`literal_width`) and not anchored to the start or end of the line. A
    pattern beside a specific one in a ``match: all`` rule only adds context (an epoch
    counter) and passes."""
    rule = view.rule
    gated = rule.match is MatchMode.ALL and any(_is_specific(p) for p in rule.patterns)
    for pattern in rule.patterns:
        literal = longest_literal(pattern.regex).strip()
        if literal_width(literal) < MIN_LITERAL and not is_anchored(pattern.regex) and not gated:
            yield Problem(
                _where(view, pattern),
                f'pattern "{pattern.id}" is too generic: its longest literal text is '
                f'"{literal}"; anchor it or add the message\'s own words',
            )


def check_generic_word(view: RuleView) -> Iterator[Problem]:
    """A pattern that rests on a generic word ("error", "failed", "Killed" …) with too little
    other literal text and no anchor."""
    rule = view.rule
    gated = rule.match is MatchMode.ALL and any(_is_specific(p) for p in rule.patterns)
    for pattern in rule.patterns:
        literal = longest_literal(pattern.regex).strip()
        if (
            (literal_width(literal) >= MIN_LITERAL or gated)
            and literal.lower().strip(" :`'\"") in GENERIC_WORDS
            and not is_anchored(pattern.regex)
            and context_literal(pattern.regex) < MIN_LITERAL
        ):
            yield Problem(
                _where(view, pattern),
                f'pattern "{pattern.id}" rests on the generic word "{literal}"',
            )


def check_backtracking(view: RuleView) -> Iterator[Problem]:
    """A pattern that would backtrack catastrophically in a backtracking engine (Python ``re``,
    PCRE, Java): nested quantifiers such as ``(a+)+``, or a repeated alternation whose branches
    can match alike such as ``(\\w|\\d)+``. RE2 runs it in linear time, but rules are copied
    into other tools, and such a construct is almost always an accident."""
    for pattern in view.rule.patterns:
        for problem in dict.fromkeys(backtracking_problems(pattern.regex)):
            yield Problem(
                _where(view, pattern),
                f'pattern "{pattern.id}" has {problem}; RE2 runs it in linear time, but it '
                "would backtrack catastrophically in other engines and is usually a mistake",
            )


def check_costly_leading_repeat(view: RuleView) -> Iterator[Problem]:
    """A pattern that begins, before any literal text, with a counted repetition of a broad
    class such as ``\\w[\\w ]{0,40}?``: in the one RE2 set that scans every log, a pattern
    that may start at any character and count dozens more keeps that many states alive at every
    position, and slows the scan of every log (one such pattern cost the pack a tenth of its
    speed). Start the pattern at its literal text and take what comes before from a fact (the
    exception message) or leave it out."""
    for pattern in view.rule.patterns:
        repeat = costly_leading_repeat(pattern.regex)
        if repeat:
            yield Problem(
                _where(view, pattern),
                f'pattern "{pattern.id}" begins with a counted repetition {repeat} of a broad '
                "class before any literal text, which slows the one-pass scan of every log; "
                "start it at its literal text",
            )


def check_no_references(view: RuleView) -> Iterator[Problem]:
    """A rule (other than ``advice``) without ``references`` to the official documentation."""
    if not view.rule.references and view.rule.role is not Role.ADVICE:
        yield Problem(view.top, "no references: link the official documentation")


def check_explains_itself(view: RuleView) -> Iterator[Problem]:
    """A rule whose ``explains`` names its own id or its own cause."""
    if view.rule.id in view.rule.explains or view.rule.cause in view.rule.explains:
        yield Problem(view.top, "a rule cannot explain itself or its own cause")


def check_unknown_template_name(view: RuleView) -> Iterator[Problem]:
    """A ``{name}`` in the summary, explanation or a fix step that no pattern captures, no
    ``derived`` defines and no fact source produces: it would always print as
    "(name unknown)"."""
    rule = view.rule
    for what, template in (
        ("summary", rule.summary),
        ("explanation", rule.explanation),
        *(("fix", step) for step in rule.fix),
    ):
        missing = template_names(template) - view.defined
        if missing:
            names = ", ".join(sorted(missing))
            first = sorted(missing)[0]
            yield Problem(
                view.locate(template, "{" + first),
                f"{what} uses {names}, which no pattern captures, no derived defines and no "
                "fact source produces",
            )


def check_unknown_name(view: RuleView) -> Iterator[Problem]:
    """A name read by a condition, an ``adjust`` or a ``derived`` expression that is neither a
    fact, nor a capture of one of the rule's patterns, nor a ``derived`` value: it would always
    be ``None``, so the rule would silently never fire (or never adjust)."""
    for what, expression in view.expressions():
        for name in sorted(names_in(expression) - view.defined):
            yield Problem(
                view.locate(expression, name),
                f'{what} reads "{name}", which is no fact, no capture and no derived value'
                f"{_suggest(name, view.defined)}",
            )


def check_fires_on_nothing(view: RuleView) -> Iterator[Problem]:
    """A rule without patterns whose conditions hold when no fact it reads is known: the
    engine evaluates such a rule only when one of its facts is known
    (:meth:`gpudoctor.rulebook.index.RuleEntry.may_fire`), so it would never fire, though
    it reads as if it fired on every log."""
    rule = view.rule
    if rule.patterns or not rule.conditions:
        return
    evaluator = Evaluator({})
    for name, expression in rule.derived.items():
        evaluator.set(name, evaluator.value(expression))
    if all(evaluator.holds(condition) for condition in rule.conditions):
        yield Problem(
            view.locate(rule.conditions[0]),
            "the conditions hold when every fact they read is unknown; a rule without "
            "patterns must need a known fact (test one: x != None and ...)",
        )


def check_unknown_function(view: RuleView) -> Iterator[Problem]:
    """A call to a function conditions do not have (the list is in
    :mod:`gpudoctor.rulebook.conditions`): the expression would always fail, so be false."""
    known = {*BASE_FUNCTIONS, *PATTERN_FUNCTIONS, *COMPOUND_FUNCTIONS}
    for what, expression in view.expressions():
        for call in _calls(expression):
            if isinstance(call.func, ast.Name) and call.func.id not in known:
                yield Problem(
                    view.locate(expression, call.func.id),
                    f'{what} calls "{call.func.id}", which is not a condition function'
                    f"{_suggest(call.func.id, known)}",
                )


def check_unknown_pattern_id(view: RuleView) -> Iterator[Problem]:
    """``matched``, ``count``, ``only``, ``first``, ``last``, ``followed_by`` or ``at_end``
    given something other than quoted ids of the rule's own patterns, or ``first``/``last``
    asked for a capture that pattern does not have: the answer would always be false, 0 or
    ``None``."""
    for what, expression in view.expressions():
        for call in _calls(expression):
            if not (isinstance(call.func, ast.Name) and call.func.id in PATTERN_FUNCTIONS):
                continue
            name = call.func.id
            problem = _pattern_call_problem(view, call)
            if problem:
                yield Problem(view.locate(expression, name + "("), f"{what}: {name}(): {problem}")


def check_unknown_example_fact(view: RuleView) -> Iterator[Problem]:
    """A fact given to an example that no fact source produces (see ``gpudoctor rules
    facts``): the example tests a situation no real run can be in."""
    rule = view.rule
    for example in (*rule.examples_match, *rule.examples_no_match):
        for name in sorted(set(example.facts) - view.fact_names):
            yield Problem(
                example.location or view.top,
                f'an example gives the fact "{name}", which no fact source produces'
                f"{_suggest(name, view.fact_names)}",
            )


def _pattern_call_problem(view: RuleView, call: ast.Call) -> str | None:
    arguments = [a.value if isinstance(a, ast.Constant) else None for a in call.args]
    name = call.func.id  # type: ignore[attr-defined]
    wanted = 2 if name in ("first", "last", "followed_by") else 1
    ids = arguments if name in ("only", "followed_by") else arguments[:1]
    if name == "only":
        if not call.args or call.keywords:
            return "takes one or more quoted pattern ids"
    elif len(call.args) != wanted or call.keywords:
        return f"takes {wanted} quoted argument(s)"
    for pattern_id in ids:
        if not isinstance(pattern_id, str):
            return "the pattern id must be written in quotes"
        if pattern_id not in view.captures:
            known = ", ".join(sorted(view.captures)) or "none"
            return f'no pattern "{pattern_id}" in this rule (its patterns: {known})'
    pattern_id = str(arguments[0])
    if name in ("first", "last"):
        capture = arguments[1]
        if not isinstance(capture, str):
            return "the capture name must be written in quotes"
        if capture not in view.captures[pattern_id]:
            return f'pattern "{pattern_id}" has no capture "{capture}"'
    return None


def _calls(expression: str) -> list[ast.Call]:
    try:
        tree = syntax_tree(expression)
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        return []
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)]


def _suggest(word: str, choices: Collection[str]) -> str:
    import difflib

    close = difflib.get_close_matches(word, list(choices), n=1)
    return f' (did you mean "{close[0]}"?)' if close else ""


CHECKS: dict[str, Check] = {
    "generic-pattern": check_generic_pattern,
    "generic-word": check_generic_word,
    "backtracking": check_backtracking,
    "costly-leading-repeat": check_costly_leading_repeat,
    "no-references": check_no_references,
    "explains-itself": check_explains_itself,
    "unknown-template-name": check_unknown_template_name,
    "unknown-name": check_unknown_name,
    "unknown-function": check_unknown_function,
    "fires-on-nothing": check_fires_on_nothing,
    "unknown-pattern-id": check_unknown_pattern_id,
    "unknown-example-fact": check_unknown_example_fact,
}
"""Every lint check by its stable id; the function's docstring documents it."""

ERROR_CHECKS = frozenset(
    {
        "unknown-name",
        "unknown-function",
        "unknown-pattern-id",
        "unknown-example-fact",
        "fires-on-nothing",
    }
)
"""Checks whose findings are errors: the rule would silently never work as written."""


def describe_checks() -> list[tuple[str, str, str]]:
    """(id, level, documentation as plain text) for every check."""
    rows = []
    for check_id, function in CHECKS.items():
        doc = " ".join((function.__doc__ or "").split()).replace("``", "")
        doc = doc.replace(":mod:", "")
        rows.append((check_id, level_of(check_id), doc))
    return rows


def level_of(check_id: str) -> str:
    """``"error"`` or ``"warning"``."""
    return "error" if check_id in ERROR_CHECKS else "warning"


def lint_rules(
    rules: Sequence[Rule],
    *,
    disabled: Collection[str] = (),
    fact_names: frozenset[str] | None = None,
) -> list[LintFinding]:
    """Every finding of every enabled check for every rule in ``rules``.

    Raises ``KeyError`` for a disabled id that is not in :data:`CHECKS`.
    """
    for check_id in disabled:
        if check_id not in CHECKS:
            raise KeyError(check_id)
    if fact_names is None:
        from gpudoctor.facts.registry import known_fact_names

        fact_names = known_fact_names()
    findings: list[LintFinding] = []
    for rule in rules:
        view = RuleView(rule, fact_names)
        for check_id, check in CHECKS.items():
            if check_id in disabled:
                continue
            findings.extend(
                LintFinding(p.location, p.message, check_id, level_of(check_id))
                for p in check(view)
            )
    return findings
