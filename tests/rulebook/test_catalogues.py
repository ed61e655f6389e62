"""Catalogues: YAML lists of error codes become one generic rule per entry at load time."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.engine import evaluate_rule
from gpudoctor.errors import RuleErrors
from gpudoctor.pipeline import LogInput, make_scanner, scan_logs
from gpudoctor.rulebook.book import RuleBook
from gpudoctor.rulebook.files import bundled_rules_dir
from gpudoctor.rulebook.loader import load_file, load_rules
from gpudoctor.rulebook.model import Role, Severity
from gpudoctor.rulebook.selftest import run_examples

FIXTURES = Path(__file__).parents[1] / "fixtures" / "catalogues"
DEMO = FIXTURES / "demo-errors.yaml"


def demo_rules() -> dict[str, object]:
    rules, errors = load_file(DEMO)
    assert errors == []
    return {r.id: r for r in rules}


def test_one_rule_per_entry_with_defaults_and_overrides() -> None:
    rules = demo_rules()
    assert sorted(rules) == ["demo-errors-bad-address", "demo-errors-device-gone"]
    bad = rules["demo-errors-bad-address"]
    gone = rules["demo-errors-device-gone"]
    assert bad.cause == "illegal_memory_access"  # type: ignore[attr-defined]
    assert bad.role is Role.GENERIC  # type: ignore[attr-defined]
    assert bad.severity is Severity.ERROR  # type: ignore[attr-defined]
    assert bad.confidence == 0.6  # type: ignore[attr-defined]
    assert gone.confidence == 0.7  # type: ignore[attr-defined]
    assert bad.fix == ("Run the demo under compute-sanitizer.",)  # type: ignore[attr-defined]
    assert gone.fix == ("Check the kernel log for Xid lines.",)  # type: ignore[attr-defined]
    assert bad.summary == "A demo kernel read memory outside its buffers."  # type: ignore[attr-defined]
    assert "Demo library status codes" in bad.explanation  # type: ignore[attr-defined]
    assert bad.references == ("https://example.org/demo/status-codes",)  # type: ignore[attr-defined]
    assert bad.title == "demoErrorBadAddress (17): the demo kernel touched (bad) memory"  # type: ignore[attr-defined]
    assert gone.title == "The demo device is gone"  # type: ignore[attr-defined]
    assert bad.path == str(DEMO)  # type: ignore[attr-defined]


def test_templates_apply_only_with_their_placeholders() -> None:
    rules = demo_rules()
    bad = rules["demo-errors-bad-address"]
    gone = rules["demo-errors-device-gone"]
    assert [p.id for p in bad.patterns] == ["name", "text", "number"]  # type: ignore[attr-defined]
    assert bad.patterns[0].regex == r"\b(?:demoErrorBadAddress|DEMO_BAD_ADDRESS)\b"  # type: ignore[attr-defined]
    assert bad.patterns[1].regex == r"the demo kernel touched \(bad\) memory"  # type: ignore[attr-defined]
    assert bad.patterns[2].regex == r"demo error(?: code)?[ =:]+17\b"  # type: ignore[attr-defined]
    assert [p.regex for p in gone.patterns] == [r"\bdemoErrorDeviceGone\b"]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("rule_id", "text", "fires"),
    [
        ("demo-errors-bad-address", "ERROR: DEMO_BAD_ADDRESS: in kernel foo", True),
        ("demo-errors-bad-address", "what: the demo kernel touched (bad) memory", True),
        ("demo-errors-bad-address", "demo error: 17", True),
        ("demo-errors-bad-address", "demo error: 171", False),
        ("demo-errors-bad-address", "demoErrorBadAddressLater", False),
        ("demo-errors-device-gone", "demoErrorBadAddress", False),
        ("demo-errors-device-gone", "status=demoErrorDeviceGone", True),
    ],
)
def test_generated_rules_fire_on_their_signatures(rule_id: str, text: str, fires: bool) -> None:
    rule = demo_rules()[rule_id]
    book = RuleBook((rule,))  # type: ignore[arg-type]
    scan = scan_logs([LogInput.from_text("example", text)], make_scanner(book))
    assert (evaluate_rule(rule, scan.hits, {}) is not None) is fires  # type: ignore[arg-type]


def test_examples_are_generated_and_given_ones_kept() -> None:
    bad = demo_rules()["demo-errors-bad-address"]
    match = [e.text for e in bad.examples_match]  # type: ignore[attr-defined]
    no_match = [e.text for e in bad.examples_no_match]  # type: ignore[attr-defined]
    assert match == [
        "demoErrorBadAddress",
        "DEMO_BAD_ADDRESS",
        "the demo kernel touched (bad) memory",
        "RuntimeError: demo error code 17 in step 3",
    ]
    assert no_match == ["demoErrorBadAddressX", "demoErrorDeviceGone", "demo error code 170"]
    results = run_examples(list(demo_rules().values()))  # type: ignore[arg-type]
    assert results and all(r.passed for r in results)


def test_load_rules_dispatches_catalogues_beside_rule_files(tmp_path: Path) -> None:
    (tmp_path / "catalogues").mkdir()
    (tmp_path / "catalogues" / "demo-errors.yaml").write_text(DEMO.read_text())
    ids = {r.id for r in load_rules([tmp_path]).rules}
    assert ids == {"demo-errors-bad-address", "demo-errors-device-gone"}


def errors_of(name: str) -> list[str]:
    rules, errors = load_file(FIXTURES / "bad" / name)
    assert rules == []
    return [f"{e.location.line}:{e.location.column}: {e.message}" for e in errors]


def test_entry_errors_are_reported_at_their_place() -> None:
    assert errors_of("entry-problems.yaml") == [
        '12:5: unknown key "colour" in an entry',
        '19:12: unknown cause "gpu_om" (did you mean "gpu_oom"?)',
        '13:5: an entry needs "fix" (or "fixes.nan_blowup")',
    ]


def test_template_errors_are_reported_at_the_template() -> None:
    [message] = errors_of("bad-template.yaml")
    assert message.startswith("4:5: invalid RE2 regex for entry one")
    assert errors_of("no-placeholder.yaml") == [
        "4:5: a match template needs {name}, {text}, {framed_text} or {number}"
    ]


def test_catalogue_errors_stop_the_pack_unless_collected(tmp_path: Path) -> None:
    (tmp_path / "x.yaml").write_text((FIXTURES / "bad" / "no-placeholder.yaml").read_text())
    with pytest.raises(RuleErrors):
        load_rules([tmp_path])
    assert len(load_rules([tmp_path], collect=True).errors) == 1


def test_aliases_are_refused_in_catalogues_too(tmp_path: Path) -> None:
    path = tmp_path / "alias.yaml"
    path.write_text(
        "catalogue: a\ntitle: t\nfixes:\n  gpu_oom: &f ['x']\nentries:\n"
        "  - {id: b, names: [demoB], cause: gpu_oom, meaning: m, fix: *f,"
        " severity: error, confidence: 0.5}\n"
    )
    rules, errors = load_file(path)
    assert rules == [] and "aliases" in errors[0].message


def test_bundled_catalogues_generate_generic_rules() -> None:
    folder = bundled_rules_dir() / "catalogues"
    rules = load_rules([folder]).rules
    assert len(rules) >= 30
    assert all(r.role in (Role.GENERIC, Role.CASCADE, Role.ROOT) for r in rules)
    assert all(r.references for r in rules)
