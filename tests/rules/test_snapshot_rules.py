"""The snapshot rules (``rules/snapshot-*.yaml``) on every fake NVML scenario and with logs.

Each scenario is collected the way ``gpudoctor diagnose`` collects it (``GPUDOCTOR_FAKE_NVML``
set, ``collect_snapshot()``), then run through the whole pack with no logs. A scenario
describes the whole machine, so the host and the installed packages of the machine running
the tests cannot leak in (a CI container with a 64 MiB /dev/shm or ``ulimit -n 1024`` would
add leads): ``test_this_machine_does_not_leak_into_scenarios`` pins that.

Expected values come from the scenario files in ``src/gpudoctor/snapshot/scenarios/`` and the
fixture variants in ``tests/fixtures/snapshots/`` (made by its ``make_variants.py``).
"""

from __future__ import annotations

import resource
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from functools import partial
from pathlib import Path

import pytest

from gpudoctor.facts.machine import snapshot_facts
from gpudoctor.pipeline import LogInput, ScanResult, build_report, make_scanner, scan_logs
from gpudoctor.report import Diagnosis, Report
from gpudoctor.rulebook.book import RuleBook, load_rulebook
from gpudoctor.rulebook.model import Role
from gpudoctor.rulebook.selftest import run_examples
from gpudoctor.snapshot import collect_snapshot, load_snapshot, scenario_names

FIXTURES = Path(__file__).parents[1] / "fixtures" / "snapshots"
LOGS = FIXTURES / "logs"
FIXED_NOW = datetime(2024, 6, 3, 11, 45, 0, tzinfo=timezone.utc)

Facts = Mapping[str, object]


@pytest.fixture(scope="module")
def book() -> RuleBook:
    return load_rulebook()


@pytest.fixture
def scenario_facts(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], Facts]:
    """Collect a scenario as ``diagnose`` does (the variable set, ``collect_snapshot()``)."""

    def collect(name: str) -> Facts:
        monkeypatch.setenv("GPUDOCTOR_FAKE_NVML", name)
        return snapshot_facts(collect_snapshot(now=FIXED_NOW))

    return collect


def test_this_machine_does_not_leak_into_scenarios(
    monkeypatch: pytest.MonkeyPatch, scenario_facts: Callable[[str], Facts]
) -> None:
    # A hostile test machine: tiny limits, a CUDA_VISIBLE_DEVICES of its own.
    monkeypatch.setattr(resource, "getrlimit", lambda _which: (64, 64))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "7")
    monkeypatch.setenv("NCCL_DEBUG", "TRACE")
    for name in scenario_names():
        facts = scenario_facts(name)
        assert facts["ulimit_nofile_soft"] is not None and facts["ulimit_nofile_soft"] >= 4096
        assert facts["cuda_visible_devices"] != "7", name
        assert "NCCL_DEBUG" not in facts["nccl_env_vars"] or name in (
            "gpu-lost", "healthy-8xh100", "ecc-remap-pending",
        ), name  # fmt: skip


def fixture_facts(name: str) -> Facts:
    return snapshot_facts(load_snapshot(FIXTURES / f"{name}.json"))


def no_logs(book: RuleBook) -> ScanResult:
    return scan_logs([], make_scanner(book))


def with_logs(book: RuleBook, *names: str) -> ScanResult:
    logs = [LogInput(name, partial((LOGS / name).open, "rb")) for name in names]
    return scan_logs(logs, make_scanner(book))


def report(book: RuleBook, scan: ScanResult, facts: Facts | None) -> Report:
    return build_report(book, scan, facts)


def first(r: Report) -> Diagnosis:
    assert r.diagnoses, "expected a diagnosis"
    return r.diagnoses[0]


def by_rule(r: Report, rule: str) -> Diagnosis:
    found = [d for d in r.diagnoses if d.rule == rule]
    assert found, f"{rule} not in {[d.rule for d in r.diagnoses]}"
    return found[0]


def confident(r: Report, threshold: float = 0.5) -> list[str]:
    return [d.rule for d in r.diagnoses if d.confidence >= threshold]


def snapshot_rules(book: RuleBook) -> Sequence:
    return [r for r in book.rules if r.id.startswith("snapshot-")]


# --- the rules themselves ------------------------------------------------------------------


def test_snapshot_rules_are_facts_only_and_complete(book: RuleBook) -> None:
    rules = snapshot_rules(book)
    assert len(rules) >= 10
    for rule in rules:
        assert not rule.patterns, rule.id
        assert rule.conditions, rule.id
        assert rule.fix and rule.summary, rule.id
        if rule.role is not Role.ADVICE:
            assert rule.references, rule.id
        assert all(e.facts for e in (*rule.examples_match, *rule.examples_no_match)), rule.id


def test_snapshot_rule_examples_pass(book: RuleBook) -> None:
    failed = [r.describe() for r in run_examples(snapshot_rules(book)) if not r.passed]
    assert failed == []


def test_snapshot_rules_stay_silent_on_logs_alone(book: RuleBook) -> None:
    for scan in (no_logs(book), with_logs(book, "dataloader-bus-error.log", "killed.log")):
        r = report(book, scan, None)
        assert [d.rule for d in r.diagnoses if d.rule.startswith("snapshot-")] == []


# --- every scenario alone -------------------------------------------------------------------


def test_every_scenario_is_covered() -> None:
    assert set(scenario_names()) == set(EXPECTED_FIRST) | set(NOTHING_CONFIDENT)


EXPECTED_FIRST = {
    # scenario: (cause, rule, lowest confidence)
    "gpu-lost": ("xid_hardware", "snapshot-gpu-lost", 0.9),
    "throttled-thermal": ("thermal_power", "snapshot-thermal-power", 0.5),
    "ecc-remap-pending": ("xid_hardware", "snapshot-ecc-memory-error", 0.75),
    "memory-held-by-other": (
        "gpu_memory_held_by_other_process",
        "snapshot-gpu-memory-held",
        0.5,
    ),
    "driver-mismatch": ("driver_cuda_mismatch", "snapshot-driver-library-mismatch", 0.85),
}
NOTHING_CONFIDENT = ("healthy-8xh100", "no-driver", "consumer-notsupported")


@pytest.mark.parametrize("name", sorted(EXPECTED_FIRST))
def test_problem_scenario_yields_its_cause_first(
    name: str, book: RuleBook, scenario_facts: Callable[[str], Facts]
) -> None:
    cause, rule, lowest = EXPECTED_FIRST[name]
    top = first(report(book, no_logs(book), scenario_facts(name)))
    assert (top.cause, top.rule) == (cause, rule)
    assert top.confidence >= lowest
    assert top.fix and top.references


@pytest.mark.parametrize("name", NOTHING_CONFIDENT)
def test_quiet_scenario_yields_nothing_confident(
    name: str, book: RuleBook, scenario_facts: Callable[[str], Facts]
) -> None:
    r = report(book, no_logs(book), scenario_facts(name))
    assert confident(r) == []
    # and nothing but advice: no alarm on a healthy node, a laptop or a desktop card
    assert [d.rule for d in r.diagnoses if d.role != "advice"] == []


def test_healthy_node_yields_no_diagnosis_at_all(
    book: RuleBook, scenario_facts: Callable[[str], Facts]
) -> None:
    assert report(book, no_logs(book), scenario_facts("healthy-8xh100")).diagnoses == ()


def test_no_driver_is_advice_only(book: RuleBook, scenario_facts: Callable[[str], Facts]) -> None:
    r = report(book, no_logs(book), scenario_facts("no-driver"))
    assert [(d.rule, d.role, d.severity) for d in r.diagnoses] == [
        ("snapshot-nvml-no-driver", "advice", "info")
    ]
    assert "DriverNotLoaded" in r.diagnoses[0].summary


def test_consumer_card_only_gets_persistence_advice(
    book: RuleBook, scenario_facts: Callable[[str], Facts]
) -> None:
    r = report(book, no_logs(book), scenario_facts("consumer-notsupported"))
    assert [(d.rule, d.role) for d in r.diagnoses] == [("snapshot-persistence-mode-off", "advice")]


def test_gpu_lost_summary_names_the_gpu(
    book: RuleBook, scenario_facts: Callable[[str], Facts]
) -> None:
    top = first(report(book, no_logs(book), scenario_facts("gpu-lost")))
    assert "1 GPU(s) (index 2: GPU is lost)" in top.summary
    assert "Xid 79" in top.summary
    assert top.severity == "critical"


def test_thermal_summary_uses_the_scenario_values(
    book: RuleBook, scenario_facts: Callable[[str], Facts]
) -> None:
    r = report(book, no_logs(book), scenario_facts("throttled-thermal"))
    top = first(r)
    assert "GPU(s) 1 throttled (hardware slowdown, thermal slowdown)" in top.summary
    assert "89 °C, 0 °C from its slowdown threshold" in top.summary
    # the training job still runs on both GPUs: only a weak lead that memory is held elsewhere
    held = by_rule(r, "snapshot-gpu-memory-held")
    assert held.confidence < 0.5 < top.confidence


def test_ecc_summary_counts_errors_and_xids(
    book: RuleBook, scenario_facts: Callable[[str], Facts]
) -> None:
    r = report(book, no_logs(book), scenario_facts("ecc-remap-pending"))
    top = first(r)
    assert "2 uncorrectable ECC error(s)" in top.summary
    assert "row remap pending" in top.summary
    assert "Xid 63, 94" in top.summary
    # Xid 63/94 belong to the ECC rule, not to the generic Xid rules
    assert [d.rule for d in r.diagnoses] == ["snapshot-ecc-memory-error"]


def test_memory_held_summary_names_the_holder(
    book: RuleBook, scenario_facts: Callable[[str], Facts]
) -> None:
    r = report(book, no_logs(book), scenario_facts("memory-held-by-other"))
    top = first(r)
    assert "pid 31337" in top.summary and "95%" in top.summary and "38.00 GiB" in top.summary
    # the container's 64 MiB /dev/shm is a lead below it
    shm = by_rule(r, "snapshot-shm-small")
    assert shm.confidence < 0.5 and "64.00 MiB" in shm.summary


# --- fixture variants alone -----------------------------------------------------------------


def test_application_xids_are_a_lead_that_does_not_blame_hardware(book: RuleBook) -> None:
    r = report(book, no_logs(book), fixture_facts("xid-app-fault"))
    assert [(d.rule, d.cause) for d in r.diagnoses] == [
        ("snapshot-xid-app-fault", "illegal_memory_access")
    ]
    assert r.diagnoses[0].confidence < 0.5
    assert "xid_hardware" not in {d.cause for d in r.diagnoses}


def test_fatal_xid_names_the_catalogue_action(book: RuleBook) -> None:
    top = first(report(book, no_logs(book), fixture_facts("xid-nvlink")))
    assert (top.rule, top.cause) == ("snapshot-xid-fatal", "xid_hardware")
    assert "Xid 74 — NVLink error" in top.summary
    assert "45" not in top.summary  # the clean-up Xid is not listed as a fault


def test_weak_signs_stay_leads(book: RuleBook) -> None:
    r = report(book, no_logs(book), fixture_facts("degraded-leads"))
    assert confident(r) == []
    assert [d.rule for d in r.diagnoses] == [
        "snapshot-pcie-link-degraded",
        "snapshot-nofile-limit-low",
        "snapshot-persistence-mode-off",
    ]


def test_cgroup_oom_kills_alone(book: RuleBook) -> None:
    top = first(report(book, no_logs(book), fixture_facts("cgroup-oom")))
    assert (top.rule, top.cause) == ("snapshot-host-oom-kills", "host_oom")
    assert "3 OOM kill(s)" in top.summary and "(python)" in top.summary


# --- logs and snapshot together -------------------------------------------------------------


def test_small_shm_confirms_a_dataloader_bus_error(book: RuleBook) -> None:
    scan = with_logs(book, "dataloader-bus-error.log")
    alone = first(report(book, scan, None))
    combined = report(book, scan, fixture_facts("docker-small-shm"))
    top = first(combined)
    assert alone.cause == top.cause == "shm_exhausted"
    assert top.confidence > alone.confidence
    assert any("confirmed by snapshot-shm-small" in n for n in top.notes)
    # merged, not listed twice
    assert [d.rule for d in combined.diagnoses].count("snapshot-shm-small") == 0


def test_large_shm_adds_nothing_to_a_dataloader_bus_error(
    book: RuleBook, scenario_facts: Callable[[str], Facts]
) -> None:
    scan = with_logs(book, "dataloader-bus-error.log")
    top = first(report(book, scan, scenario_facts("healthy-8xh100")))
    assert top.cause == "shm_exhausted"
    assert not any("snapshot-shm-small" in n for n in top.notes)


def test_oom_with_memory_held_by_other_ranks_the_holder_first(
    book: RuleBook, scenario_facts: Callable[[str], Facts]
) -> None:
    r = report(
        book, with_logs(book, "oom-other-process.log"), scenario_facts("memory-held-by-other")
    )
    top = first(r)
    assert top.cause == "gpu_memory_held_by_other_process"
    assert any("confirmed by snapshot-gpu-memory-held" in n for n in top.notes)
    assert top.facts.get("max_other_process_memory_fraction") == 0.95


def test_bare_oom_with_memory_held_by_other_keeps_the_holder_as_a_likely_cause(
    book: RuleBook, scenario_facts: Callable[[str], Facts]
) -> None:
    # A bare "CUDA error: out of memory" has no numbers: the OOM rule cannot tell whose memory
    # it was, and the snapshot cannot tell a stranger from a surviving rank of the same job,
    # so both stay in the report (which one ranks first is the OOM rules' call).
    r = report(book, with_logs(book, "oom-bare.log"), scenario_facts("memory-held-by-other"))
    assert r.diagnoses[0].cause in ("gpu_oom", "gpu_memory_held_by_other_process")
    assert by_rule(r, "snapshot-gpu-memory-held").confidence >= 0.5


def test_xid_13_confirms_an_illegal_memory_access(book: RuleBook) -> None:
    scan = with_logs(book, "illegal-memory-access.log")
    alone = first(report(book, scan, None))
    top = first(report(book, scan, fixture_facts("xid-app-fault")))
    assert alone.cause == top.cause == "illegal_memory_access"
    assert top.confidence > alone.confidence
    assert any("confirmed by snapshot-xid-app-fault" in n for n in top.notes)


def test_nvlink_xid_explains_an_nccl_timeout(book: RuleBook) -> None:
    r = report(book, with_logs(book, "nccl-watchdog-timeout.log"), fixture_facts("xid-nvlink"))
    top = first(r)
    assert top.cause == "xid_hardware"
    nccl = [d for d in r.diagnoses if d.cause == "nccl_failure"]
    assert nccl and all(d.explained_by for d in nccl)


def test_lost_gpu_explains_an_nccl_timeout(
    book: RuleBook, scenario_facts: Callable[[str], Facts]
) -> None:
    r = report(book, with_logs(book, "nccl-watchdog-timeout.log"), scenario_facts("gpu-lost"))
    assert first(r).rule == "snapshot-gpu-lost"
    assert all(d.explained_by for d in r.diagnoses if d.cause == "nccl_failure")


def test_cgroup_oom_kills_confirm_killed(book: RuleBook) -> None:
    scan = with_logs(book, "killed.log")
    alone = first(report(book, scan, None))
    top = first(report(book, scan, fixture_facts("cgroup-oom")))
    assert alone.cause == top.cause == "host_oom"
    assert top.confidence > alone.confidence
    assert any("confirmed by snapshot-host-oom-kills" in n for n in top.notes)
