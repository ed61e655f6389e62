"""The rule loader: valid packs load, every mistake is reported at path:line:col."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.errors import RuleErrors
from gpudoctor.logs.scanner import CaptureType
from gpudoctor.rulebook.files import bundled_rules_dir
from gpudoctor.rulebook.loader import load_rule_file, load_rules
from gpudoctor.rulebook.model import MatchMode, Role, Severity

FIXTURES = Path(__file__).parents[1] / "fixtures"
BAD = FIXTURES / "bad_rules"
RANKING = FIXTURES / "rules" / "ranking"


def messages(name: str) -> list[str]:
    _, errors = load_rule_file(BAD / name)
    assert errors, f"{name} should not load"
    return [f"{e.location.line}:{e.location.column}: {e.message}" for e in errors]


def test_fixture_pack_loads_typed() -> None:
    rules = {r.id: r for r in load_rules([RANKING]).rules}
    oom_kill = rules["t-oom-kill"]
    assert oom_kill.role is Role.CONFIRMATION
    assert oom_kill.severity is Severity.ERROR
    assert oom_kill.match is MatchMode.ANY
    assert oom_kill.patterns[0].captures == {"pid": CaptureType.INT}
    assert oom_kill.patterns[0].location is not None
    assert oom_kill.patterns[0].location.line == 9
    gpu_lost = rules["t-gpu-lost"]
    assert gpu_lost.patterns == ()
    assert gpu_lost.examples_match[0].facts == {"gpu_lost_count": 1}


def test_unknown_key_with_suggestion() -> None:
    assert messages("unknown-key.yaml") == [
        '4:1: unknown key "severty" (did you mean "severity"?)',
        '1:1: missing required key "severity"',
    ]


def test_duplicate_key_is_rejected() -> None:
    assert messages("duplicate-key.yaml") == ['12:1: duplicate key "title" (first at line 3)']


def test_invalid_regex_points_at_the_regex() -> None:
    (message,) = messages("bad-regex.yaml")
    assert message.startswith("9:12: invalid RE2 regex:")


def test_unknown_cause_with_suggestion() -> None:
    assert messages("unknown-cause.yaml") == [
        '2:8: unknown cause "gpu_ooom" (did you mean "gpu_oom"?)'
    ]


def test_yaml_syntax_error_has_location() -> None:
    (message,) = messages("bad-yaml.yaml")
    assert message.startswith("4:")
    assert "invalid YAML" in message


def test_bad_condition_and_confidence_both_reported() -> None:
    found = messages("bad-condition.yaml")
    assert '6:13: "confidence" must be within [0, 1]' in found
    assert any(m.startswith("8:5: a condition: invalid expression") for m in found)


def test_capture_must_name_a_group() -> None:
    (message,) = messages("bad-capture.yaml")
    assert message.startswith('10:16: capture "requested" is not a named group')


def test_id_must_match_file_name_and_examples_are_required() -> None:
    found = messages("wrong-name.yaml")
    assert '1:5: id "not-the-file-name" must match the file name "wrong-name"' in found
    assert '1:1: examples need at least one "match" and one "no_match" text' in found


def test_load_rules_raises_with_every_error_and_collect_returns_them() -> None:
    with pytest.raises(RuleErrors) as caught:
        load_rules([BAD])
    assert len(caught.value.errors) >= 8
    assert all(str(BAD) in str(e.location) for e in caught.value.errors)
    collected = load_rules([BAD], collect=True)
    assert collected.rules == []
    assert len(collected.errors) == len(caught.value.errors)


def test_duplicate_ids_across_directories(tmp_path: Path) -> None:
    other = tmp_path / "copy"
    other.mkdir()
    (other / "t-killed.yaml").write_text((RANKING / "t-killed.yaml").read_text())
    result = load_rules([RANKING, other], collect=True)
    assert [e.message for e in result.errors] == [
        f'duplicate rule id "t-killed" (also in {RANKING / "t-killed.yaml"})'
    ]


def test_explains_must_name_rule_or_cause(tmp_path: Path) -> None:
    text = (RANKING / "t-device-assert.yaml").read_text()
    (tmp_path / "t-device-assert.yaml").write_text(
        text.replace("explains: [illegal_memory_access]", "explains: [no-such-rule]")
    )
    result = load_rules([tmp_path], collect=True)
    assert [e.message for e in result.errors] == [
        'explains "no-such-rule", which is neither a rule id nor a cause'
    ]


def test_bundled_pack_loads_cleanly() -> None:
    result = load_rules([bundled_rules_dir()], collect=True)
    assert result.errors == []
    assert len(result.rules) >= 1
