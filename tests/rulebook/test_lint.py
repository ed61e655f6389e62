"""``gpudoctor rules lint``: its checks (generic patterns, backtracking traps, missing
references, names nobody defines), their ids, and turning them off."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from gpudoctor.cli import main
from gpudoctor.rulebook.book import load_rulebook
from gpudoctor.rulebook.lint import CHECKS, ERROR_CHECKS, lint_rules, literal_width
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


@pytest.mark.parametrize("regex", [r"error", r"\d+ fail", r"(?i)oom", r"\d+ 错误"])
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


def test_a_wide_character_counts_two_columns_of_literal() -> None:
    # "已杀死" (Killed, in a Chinese locale) is three characters and six columns
    assert messages(make_rule(r"\d+ 已杀死")) == []
    assert literal_width("已杀死") == 6 and literal_width("Killed") == 6


def test_backtracking_warning_names_the_pattern() -> None:
    (message,) = messages(make_rule(r"Watchdog caught (\w+\s?)+ timeout"))
    assert 'pattern "p0"' in message and "backtrack" in message


def test_a_costly_leading_repeat_is_flagged_with_its_count() -> None:
    (finding,) = lint_rules([make_rule(r"(?P<what>\w[\w ]{0,30}?) is not supported on this GPU")])
    assert finding.check == "costly-leading-repeat" and finding.level == "warning"
    assert "{0,30}" in finding.message


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


def test_every_finding_names_its_check_and_level() -> None:
    (finding,) = lint_rules([make_rule(r"Watchdog caught (\w+\s?)+ timeout")])
    assert finding.check == "backtracking" and finding.level == "warning"
    assert str(finding).startswith('rules/sample.yaml:1:1: warning: pattern "p0" has nested')
    assert str(finding).endswith(" [backtracking]")


def test_a_disabled_check_reports_nothing() -> None:
    rule = make_rule(r"error", references=())
    assert {f.check for f in lint_rules([rule])} == {"generic-pattern", "no-references"}
    assert [f.check for f in lint_rules([rule], disabled={"no-references"})] == ["generic-pattern"]
    with pytest.raises(KeyError):
        lint_rules([rule], disabled={"no-such-check"})


def test_every_check_is_documented() -> None:
    for check_id, function in CHECKS.items():
        assert function.__doc__ and len(function.__doc__.split()) >= 8, check_id
    assert set(ERROR_CHECKS) <= set(CHECKS)


RULE = """\
id: t-names
cause: gpu_oom
title: t
severity: error
role: root
confidence: 0.5
patterns:
  - id: oom
    regex: 'CUDA out of memory at step (?P<step>\\d+)'
  - id: epoch
    regex: '^epoch (?P<n>\\d+)'
derived:
  late: 'last("epoch", "n") != None and last("epoch", "n") > 3'
conditions:
  - {condition}
summary: s
fix: [f]
references: [https://example.org]
examples: {{match: ['CUDA out of memory at step 1'], no_match: ['x']}}
"""


def name_findings(tmp_path: Path, condition: str) -> list[str]:
    path = tmp_path / "t-names.yaml"
    path.write_text(RULE.format(condition=condition))
    rules = load_rules([path]).rules
    found = lint_rules(rules, fact_names=frozenset({"gpu_temperature", "driver_version"}))
    return [f"{f.location.line}:{f.location.column}: {f.level}: {f.message} [{f.check}]"
            for f in found]  # fmt: skip


@pytest.mark.parametrize(
    "condition",
    [
        "'step > 0 and late'",  # a capture and a derived value
        "'gpu_temperature == None or gpu_temperature > 80'",  # a fact
        '\'matched("epoch") and count("oom") >= 1 and first("oom", "step") < 9\'',
        '\'only("oom") or only("epoch", "oom")\'',
        '\'followed_by("oom", "epoch")\'',
        "'at_end(\"oom\")'",
        "'any(x > 3 for x in [step]) and version(driver_version) >= version(\"525\")'",
    ],
)
def test_known_names_pass(tmp_path: Path, condition: str) -> None:
    assert name_findings(tmp_path, condition) == []


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        (
            "'gpu_temprature > 80'",
            '15:6: error: condition reads "gpu_temprature", which is no fact, no capture and no '
            'derived value (did you mean "gpu_temperature"?) [unknown-name]',
        ),
        (
            "'verison(driver_version) > 1'",
            '15:6: error: condition calls "verison", which is not a condition function '
            '(did you mean "version"?) [unknown-function]',
        ),
        (
            "'matched(\"oomm\")'",
            '15:6: error: condition: matched(): no pattern "oomm" in this rule '
            "(its patterns: epoch, oom) [unknown-pattern-id]",
        ),
        (
            '\'last("epoch", "step") > 1\'',
            '15:6: error: condition: last(): pattern "epoch" has no capture "step" '
            "[unknown-pattern-id]",
        ),
        (
            '\'only("oom", "epok")\'',
            '15:6: error: condition: only(): no pattern "epok" in this rule '
            "(its patterns: epoch, oom) [unknown-pattern-id]",
        ),
        (
            '\'followed_by("oom", "epok")\'',
            '15:6: error: condition: followed_by(): no pattern "epok" in this rule '
            "(its patterns: epoch, oom) [unknown-pattern-id]",
        ),
        (
            "'followed_by(\"oom\")'",
            "15:6: error: condition: followed_by(): takes 2 quoted argument(s) "
            "[unknown-pattern-id]",
        ),
        (
            "'at_end(\"epok\")'",
            '15:6: error: condition: at_end(): no pattern "epok" in this rule '
            "(its patterns: epoch, oom) [unknown-pattern-id]",
        ),
        (
            "'only()'",
            "15:6: error: condition: only(): takes one or more quoted pattern ids "
            "[unknown-pattern-id]",
        ),
        (
            "'count(oom) > 1'",
            "15:6: error: condition: count(): the pattern id must be written in quotes "
            "[unknown-pattern-id]",
        ),
    ],
)
def test_unknown_names_are_errors_at_their_line(
    tmp_path: Path, condition: str, expected: str
) -> None:
    assert expected in name_findings(tmp_path, condition)


def test_cli_lint_ids_disable_and_list(tmp_path: Path) -> None:
    path = tmp_path / "t-names.yaml"
    path.write_text(RULE.format(condition="'gpu_temprature > 80'"))
    runner = CliRunner()
    failing = runner.invoke(main, ["rules", "lint", str(path)])
    assert failing.exit_code == 2
    assert "[unknown-name]" in failing.stdout
    assert failing.stdout.strip().endswith("1 rule checked: 1 error, 0 warnings")
    quiet = runner.invoke(main, ["rules", "lint", "--disable", "unknown-name", str(path)])
    assert quiet.exit_code == 0, quiet.output
    path.write_text(
        RULE.format(condition="'step > 1'").replace("references: [https://example.org]\n", "")
    )
    warned = runner.invoke(main, ["rules", "lint", str(path)])
    assert warned.exit_code == 0 and "[no-references]" in warned.stdout
    strict = runner.invoke(main, ["rules", "lint", "--strict", str(path)])
    assert strict.exit_code == 2
    both_off = ["--strict", "--disable", "no-references", "--disable", "unknown-name"]
    assert runner.invoke(main, ["rules", "lint", *both_off, str(path)]).exit_code == 0
    listed = runner.invoke(main, ["rules", "lint", "--list-checks"])
    assert listed.exit_code == 0
    lines = {line.split()[0]: line.split()[1] for line in listed.stdout.splitlines()}
    assert lines["unknown-name"] == "error" and lines["backtracking"] == "warning"
    typo = runner.invoke(main, ["rules", "lint", "--disable", "unknown-nam"])
    assert typo.exit_code == 2 and 'did you mean "unknown-name"' in typo.stderr
