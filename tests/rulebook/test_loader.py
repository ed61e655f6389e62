"""The rule loader: valid packs load, every mistake is reported at path:line:col."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from gpudoctor.errors import RuleErrors
from gpudoctor.logs.scanner import CaptureType
from gpudoctor.rulebook import files as files_module
from gpudoctor.rulebook.files import MAX_RULE_FILE_BYTES, bundled_rules_dir
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
    # every file became a rule, each with the id of its file name
    files = {p.stem for p in bundled_rules_dir().glob("*.yaml")}
    assert len(files) > 50
    own = [r.id for r in result.rules if "catalogues" not in Path(r.path).parts]
    assert sorted(own) == sorted(files)


def test_yaml_aliases_are_refused_at_the_anchor() -> None:
    assert messages("alias-bomb.yaml") == [
        "15:14: YAML anchors and aliases (&name, *name) are not allowed here; write the value out"
    ]


def test_a_symlink_to_a_device_is_not_a_regular_file(tmp_path: Path) -> None:
    link = tmp_path / "zero.yaml"
    link.symlink_to("/dev/zero")
    rule, errors = load_rule_file(link)
    assert rule is None
    assert [f"{e.location}: {e.message}" for e in errors] == [f"{link}:1:1: not a regular file"]


def test_a_fifo_is_refused_without_hanging(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)  # nobody writes to it: a blocking open would wait forever
    started = time.monotonic()
    _, errors = load_rule_file(fifo)
    assert [e.message for e in errors] == ["not a regular file"]
    assert time.monotonic() - started < 5


def test_a_rule_file_over_the_size_cap_is_refused_unread(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    with big.open("wb") as file:
        file.truncate(MAX_RULE_FILE_BYTES + 1)  # sparse: nothing to read if it were read
    _, errors = load_rule_file(big)
    assert [e.message for e in errors] == ["rule file larger than 1 MiB"]
    just_fits = tmp_path / "fits.yaml"
    just_fits.write_text("#" * (MAX_RULE_FILE_BYTES - 1) + "\n")
    _, errors = load_rule_file(just_fits)
    assert [e.message for e in errors] == ["empty rule file"]


def test_an_unreadable_rule_file_is_reported_without_its_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("token: hunter2-secret\n")
    link = tmp_path / "secret.yaml"
    link.symlink_to(secret)
    real_open = os.open

    def refuse(path: object, flags: int, *args: object) -> int:
        # Tests run as root here, where chmod 000 does not stop a read: refuse like the kernel.
        if Path(str(path)) == link:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(files_module.os, "open", refuse)
    _, errors = load_rule_file(link)
    assert [e.message for e in errors] == ["unreadable (permission denied)"]
    monkeypatch.undo()
    # Readable but not a rule: the loader's errors never quote the text either.
    _, errors = load_rule_file(link)
    assert errors and all("hunter2" not in e.message for e in errors)


def test_example_facts_with_a_list_as_key_is_a_located_error(tmp_path: Path) -> None:
    rule = tmp_path / "r.yaml"
    rule.write_text(
        "id: r\ncause: gpu_oom\ntitle: t\nseverity: error\nrole: root\nconfidence: 0.5\n"
        "patterns:\n  - id: p\n    regex: 'x'\nsummary: s\nfix: [f]\n"
        "references: [https://example.org]\n"
        "examples:\n  match:\n    - text: 'x'\n      facts: {a: 0, [], b: false}\n"
        "  no_match: ['y']\n"
    )
    with pytest.raises(RuleErrors) as caught:
        load_rules([rule])
    first = caught.value.errors[0]
    assert str(first) == f"{rule}:16:21: found unhashable key"


def test_an_unknown_yaml_tag_is_a_located_error(tmp_path: Path) -> None:
    rule = tmp_path / "r.yaml"
    rule.write_text(
        "id: r\ncause: gpu_oom\ntitle: t\nseverity: error\nrole: root\nconfidence: 0.5\n"
        "patterns:\n  - id: !engine p\n    regex: 'x'\nsummary: s\nfix: [f]\n"
        "references: [https://example.org]\n"
        "examples:\n  match: ['x']\n  no_match: ['y']\n"
    )
    with pytest.raises(RuleErrors) as caught:
        load_rules([rule])
    assert str(caught.value.errors[0]).startswith(f"{rule}:8:")
    assert "!engine" in str(caught.value.errors[0])
