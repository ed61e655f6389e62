"""Renderers of check reports: golden JUnit, GitHub and text outputs (fixed width, no
colour), JUnit validity, GitHub escaping, the JSON contract.

Set ``GPUDOCTOR_UPDATE_GOLDEN=1`` to rewrite the golden files, then review the diff.
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from gpudoctor.check import CHECK_SCHEMA
from gpudoctor.render.check_github import escape_data, escape_property, render_check_github
from gpudoctor.render.check_json import render_check_json
from gpudoctor.render.check_junit import render_check_junit
from gpudoctor.render.check_text import render_check_text

UPDATE = os.environ.get("GPUDOCTOR_UPDATE_GOLDEN") == "1"
GOLDEN_CASES = ["misconfigured-container", "no-gpu", "driver525-runtime124"]


def check_golden(golden_dir: Path, name: str, text: str) -> None:
    path = golden_dir / name
    if UPDATE:
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("case", GOLDEN_CASES)
def test_junit_golden(case: str, run, golden_dir: Path) -> None:  # type: ignore[no-untyped-def]
    check_golden(golden_dir, f"{case}.junit.xml", render_check_junit(run(case)))


@pytest.mark.parametrize("case", GOLDEN_CASES)
def test_github_golden(case: str, run, golden_dir: Path) -> None:  # type: ignore[no-untyped-def]
    check_golden(golden_dir, f"{case}.github.txt", render_check_github(run(case)))


@pytest.mark.parametrize("case", GOLDEN_CASES)
def test_text_golden(case: str, run, golden_dir: Path) -> None:  # type: ignore[no-untyped-def]
    check_golden(golden_dir, f"{case}.txt", render_check_text(run(case), 100).plain())


def test_junit_is_valid_and_counts(run) -> None:  # type: ignore[no-untyped-def]
    report = run("misconfigured-container")
    root = ET.fromstring(render_check_junit(report))
    assert root.tag == "testsuites"
    suite = root.find("testsuite")
    assert suite is not None
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == [r.id for r in report.results]
    assert suite.get("tests") == "11"
    assert suite.get("failures") == "2" == str(len(suite.findall("testcase/failure")))
    by_name = {c.get("name"): c for c in cases}
    shm = by_name["shm"].find("failure")
    assert shm is not None and "64.00 MiB" in (shm.get("message") or "")
    warned = by_name["nofile"]
    assert warned.find("failure") is None and warned.find("skipped") is None
    assert (warned.findtext("system-out") or "").startswith("WARNING: ")


def test_junit_skips(run) -> None:  # type: ignore[no-untyped-def]
    root = ET.fromstring(render_check_junit(run("no-gpu")))
    skipped = root.findall(".//testcase/skipped")
    assert len(skipped) == 6 and root.get("skipped") == "6"


def test_github_escaping() -> None:
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_property("a: b, c%") == "a%3A b%2C c%25"


def test_github_commands(run) -> None:  # type: ignore[no-untyped-def]
    lines = render_check_github(run("misconfigured-container")).splitlines()
    assert sum(line.startswith("::error title=") for line in lines) == 2
    assert sum(line.startswith("::warning title=") for line in lines) == 3
    assert any(line.startswith("::notice title=") for line in lines)  # persistence advice
    assert all("\n" not in line and "\r" not in line for line in lines)
    assert lines[-1] == "gpudoctor check: 6 passed, 3 warnings, 2 failed, 0 skipped"


def test_json_contract(run) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(render_check_json(run("driver525-runtime124")))
    assert data["schema"] == CHECK_SCHEMA == "gpudoctor.check/1"
    assert data["outcome"] == "warn"
    assert data["summary"] == {"pass": 10, "warn": 1, "fail": 0, "skip": 0}
    assert data["source"]["kind"] == "snapshot"
    first = data["checks"][0]
    assert set(first) == {"id", "title", "status", "reason", "fix", "details"}
    driver = next(c for c in data["checks"] if c["id"] == "driver-runtime")
    assert driver["status"] == "warn" and "PTX" in driver["reason"]
