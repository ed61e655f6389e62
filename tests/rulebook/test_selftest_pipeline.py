"""``rules test`` runs each example as ``explain`` runs a log, and checks named evidence;
``rules lint`` knows the facts examples give."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.errors import RuleErrors
from gpudoctor.rulebook.book import load_rulebook
from gpudoctor.rulebook.lint import lint_rules
from gpudoctor.rulebook.loader import load_rules
from gpudoctor.rulebook.selftest import run_examples

HEAD = """\
id: {id}
cause: {cause}
title: t
severity: error
role: root
confidence: 0.8
summary: 'step {{step}}'
fix: [f]
references: [https://example.org]
"""

OOM_STEP = (
    HEAD.format(id="t-oom-step", cause="gpu_oom")
    + """\
patterns:
  - id: oom
    regex: 'CUDA out of memory at step (?P<step>\\d+)'
    captures: {step: int}
examples:
  match:
    - text: |
        epoch 1
        CUDA out of memory at step 3
        CUDA out of memory at step 7
      {evidence}
  no_match: ['epoch 1']
"""
)


def _rule_file(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / "rules"
    folder.mkdir(exist_ok=True)
    rule_id = text.split("\n", 1)[0].removeprefix("id: ")
    (folder / f"{rule_id}.yaml").write_text(text)
    return folder


@pytest.mark.parametrize(
    ("evidence", "passes"),
    [
        ("evidence: 'CUDA out of memory at step 3'", True),
        ("evidence_line: 2", True),
        ("evidence: 'CUDA out of memory at step 7'", False),  # a line it matched, not the first
        ("evidence_line: 3", False),
    ],
)
def test_the_named_evidence_must_be_the_rules_first_line(
    tmp_path: Path, evidence: str, passes: bool
) -> None:
    folder = _rule_file(tmp_path, OOM_STEP.replace("{evidence}", evidence))
    book = load_rulebook([folder], bundled=False)
    (match, no_match) = run_examples(book.rules, book)
    assert match.fired and no_match.passed
    assert match.passed is passes
    if not passes:
        assert "evidence should be" in match.describe()


@pytest.mark.parametrize(
    ("evidence", "message"),
    [
        ("evidence: 'CUDA out of memory at step 9'", "is not a line of the example text"),
        ("evidence_line: 4", "is not a line of the text"),
        ("evidence_line: two", "must be a line number"),
    ],
)
def test_evidence_that_names_no_line_is_refused(
    tmp_path: Path, evidence: str, message: str
) -> None:
    folder = _rule_file(tmp_path, OOM_STEP.replace("{evidence}", evidence))
    with pytest.raises(RuleErrors, match=message):
        load_rules([folder])


def test_evidence_in_a_no_match_example_is_refused(tmp_path: Path) -> None:
    text = OOM_STEP.replace("{evidence}", "").replace(
        "no_match: ['epoch 1']", "no_match:\n    - {text: 'epoch 1', evidence: 'epoch 1'}"
    )
    with pytest.raises(RuleErrors, match="only makes sense"):
        load_rules([_rule_file(tmp_path, text)])


DRIVER_OLD = (
    HEAD.format(id="t-driver-old", cause="driver_cuda_mismatch")
    + """\
conditions: ['driver_too_old == True']
examples:
  match:
    - facts: {driver_version: '470.82.01', torch_version: '2.4.1+cu121'}
    - |
      | NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4 |
      PyTorch version: 2.4.1+cu121
  no_match:
    - facts: {driver_version: '550.90.07', torch_version: '2.4.1+cu121'}
"""
)


def test_examples_get_compat_verdicts_and_text_facts_as_explain_does(tmp_path: Path) -> None:
    # driver_too_old is never given: it is computed from the versions, read from the
    # example's facts or from its pasted nvidia-smi banner and collect_env line.
    folder = _rule_file(tmp_path, DRIVER_OLD)
    book = load_rulebook([folder], bundled=False)
    results = run_examples(book.rules, book)
    assert [(r.should_match, r.fired) for r in results] == [(True, True)] * 2 + [(False, False)]


def test_a_verdict_given_as_a_fact_is_recomputed_like_in_a_real_run(tmp_path: Path) -> None:
    text = DRIVER_OLD.replace(
        "facts: {driver_version: '470.82.01', torch_version: '2.4.1+cu121'}",
        "facts: {driver_too_old: true, torch_version: '2.4.1+cu121'}",
    )
    book = load_rulebook([_rule_file(tmp_path, text)], bundled=False)
    first = run_examples(book.rules, book)[0]
    assert not first.passed  # no driver version: a real run could not say "too old"


def test_lint_knows_the_facts_an_example_gives(tmp_path: Path) -> None:
    text = DRIVER_OLD.replace("driver_version: '550.90.07'", "driver_verison: '550.90.07'")
    rules = load_rules([_rule_file(tmp_path, text)]).rules
    found = [f for f in lint_rules(rules) if f.check == "unknown-example-fact"]
    assert len(found) == 1
    assert found[0].level == "error"
    assert '"driver_verison"' in found[0].message and '"driver_version"' in found[0].message
    assert found[0].location.line == 18  # the no_match example
