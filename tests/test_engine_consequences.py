"""Consequence causes and cascades are explained by any likely cause, without a list."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.pipeline import LogInput, build_report, make_scanner, scan_logs
from gpudoctor.report import Report
from gpudoctor.rulebook.book import load_rulebook
from gpudoctor.rulebook.taxonomy import causes, consequence_causes

RULE = """\
id: {id}
cause: {cause}
title: {id}
severity: error
role: {role}
confidence: {confidence}
patterns:
  - id: line
    regex: '^{line}$'
{explains}summary: {id} fired.
fix: [Look at it.]
references: [https://example.org/{id}]
examples:
  match: ['{line}']
  no_match: ['not {line}']
"""


def _explain(tmp_path: Path, rules: list[dict[str, object]], text: str) -> Report:
    folder = tmp_path / "rules"
    folder.mkdir(parents=True)
    for rule in rules:
        fields = {"role": "root", "explains": "", **rule}
        (folder / f"{rule['id']}.yaml").write_text(RULE.format(**fields))
    book = load_rulebook([folder], bundled=False)
    return build_report(book, scan_logs([LogInput.from_text("t", text)], make_scanner(book)))


KILLED = {"id": "t-killed", "cause": "host_oom", "confidence": 0.7, "line": "Killed"}
APP = {"id": "t-app", "cause": "app_exception", "confidence": 0.4, "line": "ValueError: x"}
NCCL = {"id": "t-nccl", "cause": "nccl_failure", "confidence": 0.6, "line": "NCCL timeout"}
NATIVE = {"id": "t-abort", "cause": "segfault_native", "confidence": 0.6, "line": "Aborted"}


def test_the_taxonomy_marks_consequences_among_its_causes() -> None:
    marked = consequence_causes()
    assert {"nccl_failure", "app_exception", "jupyter_kernel_died"} <= marked
    assert marked <= set(causes())
    assert not {"gpu_oom", "host_oom", "xid_hardware", "illegal_memory_access"} & marked


def test_a_likely_cause_explains_a_consequence_it_does_not_list(tmp_path: Path) -> None:
    report = _explain(tmp_path, [KILLED, NCCL], "NCCL timeout\nKilled\n")
    assert [d.rule for d in report.causes] == ["t-killed", "t-nccl"]
    nccl = report.causes[1]
    assert nccl.explained_by == ("t-killed",)
    assert nccl.confidence == pytest.approx(0.3)


def test_a_weak_lead_explains_no_consequence(tmp_path: Path) -> None:
    weak = {**KILLED, "confidence": 0.4}
    report = _explain(tmp_path, [weak, NCCL], "NCCL timeout\nKilled\n")
    assert [(d.rule, d.explained_by) for d in report.causes] == [("t-nccl", ()), ("t-killed", ())]


def test_consequences_do_not_explain_each_other_unless_listed(tmp_path: Path) -> None:
    report = _explain(tmp_path, [NCCL, NATIVE], "Aborted\nNCCL timeout\n")
    assert all(d.explained_by == () for d in report.causes)
    listed = {**NCCL, "explains": "explains: [t-abort]\n"}
    report = _explain(tmp_path / "listed", [listed, NATIVE], "NCCL timeout\nAborted\n")
    assert [(d.rule, d.explained_by) for d in report.causes] == [
        ("t-nccl", ()),
        ("t-abort", ("t-nccl",)),
    ]


def test_an_earlier_failure_of_any_cause_explains_the_native_crash_after_it(tmp_path: Path) -> None:
    report = _explain(tmp_path, [NCCL, NATIVE], "NCCL timeout\nAborted\n")
    assert [(d.rule, d.explained_by) for d in report.causes] == [
        ("t-nccl", ()),
        ("t-abort", ("t-nccl",)),
    ]
    likely_app = {**APP, "confidence": 0.5}
    report = _explain(tmp_path / "app", [likely_app, NATIVE], "ValueError: x\nAborted\n")
    assert report.causes[0].rule == "t-app"
    # a weak lead before it explains nothing
    report = _explain(tmp_path / "weak", [APP, NATIVE], "ValueError: x\nAborted\n")
    assert [(d.rule, d.explained_by) for d in report.causes] == [("t-abort", ()), ("t-app", ())]


def test_an_earlier_consequence_that_lists_its_explainer_stays_the_root(tmp_path: Path) -> None:
    nccl = {**NCCL, "explains": "explains: [host_oom]\n"}
    report = _explain(tmp_path, [KILLED, nccl], "NCCL timeout\nKilled\n")
    assert report.causes[0].rule == "t-nccl" and report.causes[0].explained_by == ()
    assert report.causes[1].explained_by == ("t-nccl",)


def test_a_consequence_that_lists_its_explainer_is_the_root_even_later(tmp_path: Path) -> None:
    # a listing is a rule's own knowledge and outweighs the implicit reading and the order:
    # an impossible allocation size explains the out-of-memory line it was found on
    nccl = {**NCCL, "explains": "explains: [host_oom]\n"}
    report = _explain(tmp_path, [KILLED, nccl], "Killed\nNCCL timeout\n")
    assert [(d.rule, d.explained_by) for d in report.causes] == [
        ("t-nccl", ()),
        ("t-killed", ("t-nccl",)),
    ]


def test_two_findings_that_list_each_other_leave_the_earlier_the_root(tmp_path: Path) -> None:
    nccl = {**NCCL, "explains": "explains: [host_oom]\n"}
    killed = {**KILLED, "explains": "explains: [nccl_failure]\n"}
    report = _explain(tmp_path, [killed, nccl], "Killed\nNCCL timeout\n")
    assert [(d.rule, d.explained_by) for d in report.causes] == [
        ("t-killed", ()),
        ("t-nccl", ("t-killed",)),
    ]


def test_a_cascade_ranks_below_any_likely_cause(tmp_path: Path) -> None:
    cascade = {"id": "t-cascade", "cause": "host_oom", "confidence": 0.8, "line": "cascade",
               "role": "cascade"}  # fmt: skip
    root = {"id": "t-thermal", "cause": "thermal_power", "confidence": 0.5, "line": "hot"}
    report = _explain(tmp_path, [cascade, root], "cascade\nhot\n")
    assert [(d.rule, d.explained_by) for d in report.causes] == [
        ("t-thermal", ()),
        ("t-cascade", ("t-thermal",)),
    ]


def test_a_cascade_alone_explains_no_consequence(tmp_path: Path) -> None:
    cascade = {"id": "t-cascade", "cause": "host_oom", "confidence": 0.8, "line": "cascade",
               "role": "cascade"}  # fmt: skip
    report = _explain(tmp_path, [cascade, APP], "cascade\nValueError: x\n")
    assert all(d.explained_by == () for d in report.causes)
