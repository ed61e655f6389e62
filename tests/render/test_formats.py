"""The registry of formats, and the JUnit and GitHub formats of a report.

Every format reached through the registry gives the same bytes as the golden files, and the
new formats of ``explain``/``diagnose`` are checked by parsing what they print.
"""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpudoctor.check import CheckOptions, CheckReport, CheckSource, run_checks
from gpudoctor.cli import main
from gpudoctor.pipeline import LogInput, diagnose
from gpudoctor.render.github import render_github
from gpudoctor.render.junit import render_junit
from gpudoctor.render.registry import (
    CHECK,
    FORMATS,
    REPORT,
    SNAPSHOT,
    RenderOptions,
    format_names,
    get_renderer,
)
from gpudoctor.render.styled import Styled
from gpudoctor.report import Evidence, Report, Threshold
from gpudoctor.rulebook.book import load_rulebook
from gpudoctor.snapshot import load_snapshot

TESTS = Path(__file__).parents[1]
FIXTURES = TESTS / "fixtures"
RENDER_GOLDEN = Path(__file__).parent / "golden"
CHECK_GOLDEN = TESTS / "check" / "golden"
SNAPSHOTS = TESTS / "snapshot" / "fixtures"
OOM_LOG = TESTS.parent / "examples" / "logs" / "pytorch-oom.log"


def report_for(log_name: str) -> Report:
    book = load_rulebook([FIXTURES / "rules" / "ranking"], bundled=False)
    path = FIXTURES / "logs" / "ranking" / log_name
    report = diagnose(book, [LogInput.from_path(path, log_name)])
    return dataclasses.replace(report, version="0.0.0-test")


def check_report(name: str) -> CheckReport:
    snapshot = load_snapshot(TESTS / "check" / "fixtures" / f"{name}.json")
    source = CheckSource("snapshot", f"{name}.json", snapshot.host.hostname)
    return run_checks(snapshot, CheckOptions(), source=source)


def test_each_kind_offers_its_formats() -> None:
    assert format_names(REPORT) == ("text", "json", "markdown", "junit", "github")
    assert format_names(CHECK) == ("text", "json", "junit", "github")
    assert format_names(SNAPSHOT) == ("json", "text")
    assert {name for (kind, name), f in FORMATS.items() if f.colour} == {"text"}
    with pytest.raises(KeyError):
        get_renderer(SNAPSHOT, "junit")


@pytest.mark.parametrize(
    ("log", "fmt", "golden"),
    [
        ("assert-then-illegal.log", "text", "assert-then-illegal.txt"),
        ("killed-with-dmesg.log", "text", "killed-with-dmesg.txt"),
        ("assert-then-illegal.log", "markdown", "assert-then-illegal.md"),
    ],
)
def test_report_formats_through_the_registry_match_golden(log: str, fmt: str, golden: str) -> None:
    styled = get_renderer(REPORT, fmt).render(report_for(log), RenderOptions(width=80))
    assert isinstance(styled, Styled)
    assert styled.plain() == (RENDER_GOLDEN / golden).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("fmt", "suffix"), [("text", ".txt"), ("junit", ".junit.xml"), ("github", ".github.txt")]
)
@pytest.mark.parametrize("case", ["misconfigured-container", "no-gpu", "driver525-runtime124"])
def test_check_formats_through_the_registry_match_golden(case: str, fmt: str, suffix: str) -> None:
    out = get_renderer(CHECK, fmt).render(check_report(case), RenderOptions(width=100))
    assert out.plain() == (CHECK_GOLDEN / f"{case}{suffix}").read_text(encoding="utf-8")


def test_snapshot_formats_through_the_registry() -> None:
    snapshot = load_snapshot(SNAPSHOTS / "gpu-lost.json")
    text = get_renderer(SNAPSHOT, "text").render(snapshot, RenderOptions(width=100)).plain()
    assert text == (SNAPSHOTS / "gpu-lost.render.txt").read_text(encoding="utf-8")
    data = json.loads(get_renderer(SNAPSHOT, "json").render(snapshot, RenderOptions()).plain())
    assert data["schema"] == "gpudoctor.snapshot/1"


def test_json_through_the_registry_is_the_contract() -> None:
    report = report_for("assert-then-illegal.log")
    data = json.loads(get_renderer(REPORT, "json").render(report, RenderOptions()).plain())
    assert data["schema"] == "gpudoctor.report/1"
    assert [d["rule"] for d in data["diagnoses"]] == [
        "t-kernel-assertion",
        "t-illegal-access",
        "t-async-advice",
    ]


def test_markdown_redaction_follows_the_option() -> None:
    report = report_for("assert-then-illegal.log")
    ev = dataclasses.replace(report.diagnoses[0].evidence[0], source="/home/alice/run.log")
    first = dataclasses.replace(report.diagnoses[0], evidence=(ev,))
    report = dataclasses.replace(report, diagnoses=(first, *report.diagnoses[1:]))
    renderer = get_renderer(REPORT, "markdown")
    assert "/home/<user>/" in renderer.render(report, RenderOptions()).plain()
    assert "/home/alice/" in renderer.render(report, RenderOptions(redact=False)).plain()


# --- JUnit ----------------------------------------------------------------------------------


def _cases(xml: str) -> dict[str, ET.Element]:
    root = ET.fromstring(xml)
    return {case.get("name", ""): case for case in root.iter("testcase")}


def test_junit_one_testcase_per_diagnosis_failures_by_threshold() -> None:
    # assert-then-illegal: t-kernel-assertion (error, 0.95), t-illegal-access (error, 0.45),
    # t-async-advice (advice).
    report = report_for("assert-then-illegal.log")
    xml = render_junit(report, Threshold(None, 0.5))
    root = ET.fromstring(xml)
    assert root.get("tests") == "3"
    assert root.get("failures") == "1"
    cases = _cases(xml)
    assert list(cases) == ["t-kernel-assertion", "t-illegal-access", "t-async-advice"]
    failure = cases["t-kernel-assertion"].find("failure")
    assert failure is not None
    assert failure.get("type") == "device_side_assert"
    assert "assert-then-illegal.log:3: RuntimeError: CUDA error" in (failure.text or "")
    assert "fix 1: Check the labels." in (failure.text or "")
    assert cases["t-illegal-access"].find("failure") is None
    assert (cases["t-async-advice"].findtext("system-out") or "").startswith("hint: ")


def test_junit_counts_all_causes_at_a_low_confidence_floor() -> None:
    xml = render_junit(report_for("assert-then-illegal.log"), Threshold(None, 0.4))
    assert ET.fromstring(xml).get("failures") == "2"


def test_junit_fail_on_critical_has_no_failures() -> None:
    xml = render_junit(report_for("assert-then-illegal.log"), Threshold(frozenset({"critical"})))
    assert ET.fromstring(xml).get("failures") == "0"


def test_junit_survives_control_characters_from_a_log() -> None:
    report = report_for("killed-with-dmesg.log")
    ev = Evidence(source="t.log", line=3, text="bad \x00\x07 byte \x1b[0m & <tag>")
    first = dataclasses.replace(report.diagnoses[0], evidence=(ev,))
    xml = render_junit(dataclasses.replace(report, diagnoses=(first,)), Threshold())
    failure = ET.fromstring(xml).find(".//failure")
    assert failure is not None
    assert "bad \\x00\\x07 byte \\x1b[0m & <tag>" in (failure.text or "")


def test_junit_of_an_empty_report_is_valid() -> None:
    root = ET.fromstring(render_junit(Report(inputs=(), diagnoses=())))
    assert root.get("tests") == "0"


# --- GitHub annotations ---------------------------------------------------------------------


def test_github_annotations_by_role_and_threshold() -> None:
    lines = render_github(report_for("assert-then-illegal.log"), Threshold(None, 0.5))
    lines_list = lines.splitlines()
    assert [line.split(" ", 1)[0] for line in lines_list[:3]] == [
        "::error",
        "::warning",
        "::notice",
    ]
    assert lines_list[0].startswith(
        "::error title=gpudoctor #1%3A Kernel assertion (device_side_assert%2C confidence 0.95)::"
    )
    assert "%0AFix:%0A  1. Check the labels." in lines_list[0]
    assert lines_list[-1] == "gpudoctor: 2 possible causes found, 1 reported as errors"


def test_github_log_text_cannot_start_a_command() -> None:
    report = report_for("killed-with-dmesg.log")
    ev = Evidence(source="t.log", line=1, text="50% done\n::add-mask::secret\r::error::forged")
    first = dataclasses.replace(report.diagnoses[0], evidence=(ev,))
    out = render_github(dataclasses.replace(report, diagnoses=(first,)))
    lines = out.splitlines()
    assert len(lines) == 2
    assert not any(line.startswith("::add-mask") or "::forged" in line[:9] for line in lines)
    assert "50%25 done%0A::add-mask::secret%0D::error::forged" in lines[0]


def test_github_reports_inputs_not_read() -> None:
    report = Report(
        inputs=(
            dataclasses.replace(
                report_for("killed.log").inputs[0], error="Permission denied", lines=None
            ),
        ),
        diagnoses=(),
    )
    lines = render_github(report).splitlines()
    assert lines == [
        "::warning title=gpudoctor%3A input not read::Permission denied",
        "gpudoctor: no known failure signature was found",
    ]


# --- through the command line ---------------------------------------------------------------


def test_explain_junit_and_github_formats() -> None:
    runner = CliRunner()
    junit = runner.invoke(main, ["explain", "--format", "junit", str(OOM_LOG)])
    assert junit.exit_code == 0
    assert _cases(junit.stdout)["torch-cuda-oom"].find("failure") is not None
    github = runner.invoke(main, ["explain", "--format", "github", str(OOM_LOG)])
    assert github.stdout.startswith("::error title=gpudoctor #1%3A PyTorch ran out of GPU memory")
    strict = ["explain", "--format", "junit", "--fail-on", "critical", str(OOM_LOG)]
    critical = runner.invoke(main, strict)
    assert critical.exit_code == 0
    assert ET.fromstring(critical.stdout).get("failures") == "0"
    failing = runner.invoke(
        main, ["explain", "--format", "github", "--fail-on", "error", str(OOM_LOG)]
    )
    assert failing.exit_code == 1


def test_diagnose_offers_the_same_formats() -> None:
    snapshot = SNAPSHOTS / "healthy-8xh100.json"
    args = ["diagnose", "--snapshot", str(snapshot), "--log", str(OOM_LOG), "--format", "junit"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    root = ET.fromstring(result.stdout)
    names = [p.get("name") for p in root.iter("property")]
    assert {"log", "snapshot", "source"} <= set(names)
