"""``gpudoctor rules lint`` warnings: generic patterns, backtracking traps, missing references."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.rulebook.book import load_rulebook
from gpudoctor.rulebook.lint import (
    backtracking_problems,
    is_anchored,
    lint_rules,
    longest_literal,
)
from gpudoctor.rulebook.loader import load_rules
from gpudoctor.rulebook.model import Pattern, Role, Rule, Severity


def make_rule(*regexes: str, references: tuple[str, ...] = ("https://example.org/doc",)) -> Rule:
    return Rule(
        id="sample",
        cause="host_oom",
        title="sample",
        severity=Severity.ERROR,
        role=Role.ROOT,
        confidence=0.5,
        summary="sample",
        explanation="",
        fix=("do something",),
        references=references,
        patterns=tuple(Pattern(id=f"p{i}", regex=r) for i, r in enumerate(regexes)),
        path="rules/sample.yaml",
    )


def messages(rule: Rule) -> list[str]:
    return [w.message for w in lint_rules([rule])]


def test_the_bundled_pack_has_no_warnings() -> None:
    rules = load_rulebook().rules
    assert [str(w) for w in lint_rules(rules)] == []


def test_a_specific_message_is_fine() -> None:
    assert messages(make_rule(r"Cannot re-initialize CUDA in forked subprocess")) == []


@pytest.mark.parametrize("regex", [r"error", r"\d+ fail", r"(?i)oom"])
def test_short_patterns_are_too_generic(regex: str) -> None:
    (message,) = messages(make_rule(regex))
    assert "too generic" in message


@pytest.mark.parametrize("regex", [r"Killed", r"\w+ failed", r"(?:Exception)"])
def test_generic_words_without_anchor_are_flagged(regex: str) -> None:
    found = messages(make_rule(regex))
    assert any("generic" in m for m in found), found


@pytest.mark.parametrize(
    "regex",
    [
        r"(?:^|[\]\s])Killed[\s`]*$",  # bare "Killed" at the end of a line
        r"^zsh: killed\s+\S",
        r": line \d+:\s+\d+ Killed\s+\S",  # enough context besides the generic word
    ],
)
def test_anchored_or_contextual_generic_words_pass(regex: str) -> None:
    assert messages(make_rule(regex)) == []


def test_group_openers_are_not_literal_text() -> None:
    assert longest_literal(r"(?P<name>ab)(?:cd)") in {"ab", "cd"}
    assert is_anchored(r"(?i)^foo")
    assert is_anchored(r"foo$")
    assert not is_anchored(r"foo\$")


@pytest.mark.parametrize(
    "regex",
    [
        r"(a+)+b",
        r"(\w+\s?)*x",
        r"(.*a){3,}",
        r"([a-z]+)*$",
        r"(?P<n>\d+)+",
    ],
)
def test_nested_quantifiers_are_flagged(regex: str) -> None:
    assert any("nested quantifiers" in p for p in backtracking_problems(regex))


@pytest.mark.parametrize("regex", [r"(\w|\d)+", r"(a|ab)*c", r"(?:x|xy){2,}", r"(?:[a-z]|\w)+"])
def test_overlapping_alternations_under_a_quantifier_are_flagged(regex: str) -> None:
    assert any("alternation" in p for p in backtracking_problems(regex))


@pytest.mark.parametrize(
    "regex",
    [
        r"(?:\s+(?:sm|compute)_\d+)*",  # each repeat is followed by something different
        r"(?:[^,]+,)*",
        r"(?:\d+\.)+\d+",
        r"(?:foo|bar)+",
        r"(a|b){1}",
        r"DataLoader worker \(pid\(?s?\)? (?P<pid>[\d, ]+)\) exited unexpectedly",
    ],
)
def test_safe_repetitions_pass(regex: str) -> None:
    assert backtracking_problems(regex) == []


def test_backtracking_warning_names_the_pattern() -> None:
    (message,) = messages(make_rule(r"Watchdog caught (\w+\s?)+ timeout"))
    assert 'pattern "p0"' in message and "backtrack" in message


def test_missing_references_are_flagged() -> None:
    rule = make_rule(r"Cannot re-initialize CUDA in forked subprocess", references=())
    assert messages(rule) == ["no references: link the official documentation"]


def test_summary_names_without_a_capture_are_flagged() -> None:
    rule = make_rule(r"Killed process (?P<pid>\d+)")
    rule = Rule(**{**rule.__dict__, "summary": "process {pid} of {user} was killed"})
    (message,) = messages(rule)
    assert "user" in message and "pid" not in message.split("uses")[1].split(",")[0]


def test_a_rule_explaining_its_own_cause_is_flagged() -> None:
    rule = make_rule(r"Cannot re-initialize CUDA in forked subprocess")
    rule = Rule(**{**rule.__dict__, "explains": ("host_oom",)})
    assert messages(rule) == ["a rule cannot explain itself or its own cause"]


def test_generic_context_pattern_is_fine_beside_a_specific_one(tmp_path: Path) -> None:
    rule = tmp_path / "t-gated.yaml"
    rule.write_text(
        "id: t-gated\ncause: gpu_memory_leak\ntitle: t\nseverity: error\nrole: root\n"
        "confidence: 0.4\nmatch: all\npatterns:\n"
        "  - id: oom\n    regex: 'CUDA out of memory'\n"
        "  - id: epoch\n    regex: 'epoch (?P<n>\\d+)'\n"
        "summary: s\nfix: [f]\nreferences: [https://example.org]\n"
        "examples: {match: ['epoch 1 CUDA out of memory'], no_match: ['x']}\n"
    )
    rules = load_rules([tmp_path]).rules
    assert lint_rules(rules) == []
    alone = rule.read_text().replace("match: all\n", "")
    rule.write_text(alone)
    messages = [w.message for w in lint_rules(load_rules([tmp_path]).rules)]
    assert any('pattern "epoch" is too generic' in m for m in messages)
