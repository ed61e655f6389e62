"""``gpudoctor rules lint``: rules that load but look wrong.

Errors (a rule that cannot load) come from the loader. Warnings, here, flag what is legal but
likely a mistake: a pattern so generic it would fire on healthy logs, a nested quantifier (RE2
runs it in linear time, but it is almost always an accident), a rule without references.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from gpudoctor.errors import SourceLocation
from gpudoctor.rulebook.model import Role, Rule

MIN_LITERAL = 6
"""A pattern must contain a literal run at least this long (or be anchored to a whole line)."""

GENERIC_WORDS = {"error", "failed", "failure", "fatal", "exception", "warning", "killed", "abort"}
_NESTED_QUANTIFIER = re.compile(r"\((?:[^()\\]|\\.)*[+*](?:[^()\\]|\\.)*\)[+*{]")
_META = re.compile(r"\\[dDwWsSbB]|\\.|\[[^\]]*\]|[.^$|?*+(){}]")


@dataclass(frozen=True)
class LintWarning:
    """A rule that loads but looks wrong."""

    location: SourceLocation
    message: str

    def __str__(self) -> str:
        return f"{self.location}: warning: {self.message}"


def longest_literal(regex: str) -> str:
    """The longest run of plain characters in a regex (escapes and classes break runs)."""
    runs = _META.split(regex)
    return max((r for r in runs), key=len, default="")


def lint_rules(rules: Sequence[Rule]) -> list[LintWarning]:
    """Warnings for every rule in ``rules``."""
    warnings: list[LintWarning] = []
    for rule in rules:
        top = SourceLocation(rule.path, 1, 1)
        for pattern in rule.patterns:
            where = pattern.location or top
            literal = longest_literal(pattern.regex).strip()
            anchored = pattern.regex.startswith("^") and pattern.regex.endswith("$")
            if len(literal) < MIN_LITERAL and not anchored:
                warnings.append(
                    LintWarning(
                        where,
                        f'pattern "{pattern.id}" is too generic: its longest literal text is '
                        f'"{literal}"; anchor it or add the message\'s own words',
                    )
                )
            elif literal.lower().strip(" :") in GENERIC_WORDS and not anchored:
                warnings.append(
                    LintWarning(
                        where,
                        f'pattern "{pattern.id}" rests on the generic word "{literal}"',
                    )
                )
            if _NESTED_QUANTIFIER.search(pattern.regex):
                warnings.append(
                    LintWarning(
                        where,
                        f'pattern "{pattern.id}" nests quantifiers ((a+)+); RE2 runs it in '
                        "linear time, but it would backtrack catastrophically elsewhere and is "
                        "usually a mistake",
                    )
                )
        if not rule.references and rule.role is not Role.ADVICE:
            warnings.append(LintWarning(top, "no references: link the official documentation"))
        if rule.id in rule.explains or rule.cause in rule.explains:
            warnings.append(LintWarning(top, "a rule cannot explain itself or its own cause"))
    return warnings
