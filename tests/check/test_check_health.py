"""``check`` and ``diagnose`` agree about a GPU's health on the same machine scenarios."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from gpudoctor.check import CheckOptions, Status, run_checks
from gpudoctor.facts.machine import snapshot_facts
from gpudoctor.pipeline import build_report, make_scanner, scan_logs
from gpudoctor.rulebook.book import load_rulebook
from gpudoctor.snapshot import Snapshot

# scenario -> (gpu-health status, words of the reason, the rule diagnose fires)
AGREE = {
    "ecc-remap-pending": (
        Status.FAIL,
        ("2 uncorrectable ECC error(s)", "row remap pending a GPU reset"),
        "snapshot-ecc-memory-error",
    ),
    "throttled-thermal": (
        Status.WARN,
        ("GPU(s) 1 throttled (hardware slowdown, thermal slowdown)",),
        "snapshot-thermal-power",
    ),
    "healthy-8xh100": (Status.PASS, ("8 GPU(s)",), None),
    "consumer-notsupported": (Status.PASS, ("1 GPU(s)",), None),
    "memory-held-by-other": (Status.PASS, ("2 GPU(s)",), None),
}


@pytest.mark.parametrize("name", sorted(AGREE))
def test_check_and_diagnose_agree(name: str, scenario: Callable[[str], Snapshot]) -> None:
    status, words, rule = AGREE[name]
    snapshot = scenario(name)
    report = run_checks(snapshot, CheckOptions())
    health = next(r for r in report.results if r.id == "gpu-health")
    assert health.status is status, health.reason
    for word in words:
        assert word in health.reason
    book = load_rulebook()
    diagnosed = build_report(book, scan_logs([], make_scanner(book)), snapshot_facts(snapshot))
    health_rules = {"snapshot-ecc-memory-error", "snapshot-thermal-power"}
    fired = [d.rule for d in diagnosed.diagnoses if d.rule in health_rules]
    assert fired == ([rule] if rule else [])
    if rule:
        assert health.fix and health.details == (f"{rule}: {health.reason}",)


def test_ecc_fails_the_run(scenario: Callable[[str], Snapshot]) -> None:
    report = run_checks(scenario("ecc-remap-pending"), CheckOptions())
    assert report.failed()


def test_throttling_fails_only_strict(scenario: Callable[[str], Snapshot]) -> None:
    report = run_checks(scenario("throttled-thermal"), CheckOptions())
    assert not report.failed() and report.failed(strict=True)


def test_skips_without_nvml(scenario: Callable[[str], Snapshot]) -> None:
    report = run_checks(scenario("no-driver"), CheckOptions())
    health = next(r for r in report.results if r.id == "gpu-health")
    assert health.status is Status.SKIP and "DriverNotLoaded" in health.reason


def test_a_scenario_is_never_judged_by_this_machine_s_disk(
    scenario: Callable[[str], Snapshot],
) -> None:
    def forbidden(path: str) -> list[str]:
        raise AssertionError(f"listed {path} on this machine")

    env = {"LD_LIBRARY_PATH": "/usr/local/cuda-11.8/lib64"}
    snapshot = dataclasses.replace(scenario("healthy-8xh100"), environment=env)
    report = run_checks(snapshot, CheckOptions(), list_dir=forbidden)
    ld = next(r for r in report.results if r.id == "ld-library-path")
    assert ld.status is Status.WARN and "from its name" in ld.reason
