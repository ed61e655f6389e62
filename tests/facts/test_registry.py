"""The fact registry: every fact a source produces is declared, and every declaration of the
snapshot and compat sources is produced by some bundled scenario."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpudoctor.cli import main
from gpudoctor.facts import compat, machine
from gpudoctor.facts.assemble import assemble_facts
from gpudoctor.facts.registry import FactConflict, collect, known_fact_names, registry
from gpudoctor.facts.spec import FactSpec
from gpudoctor.logs.structure import READERS, structure_facts
from gpudoctor.pipeline import LogInput, make_scanner, scan_logs
from gpudoctor.rulebook.book import load_rulebook
from gpudoctor.snapshot import collect_snapshot
from gpudoctor.snapshot.scenario import scenario_names

FIXTURES = Path(__file__).parent.parent / "fixtures" / "logs"

# Declared snapshot facts that no bundled scenario fills in yet (no scenario has TensorFlow,
# JAX or CuPy installed, nor an OOM kill naming its victim). The test below fails when this
# list is wrong in either direction, so it can only shrink.
NOT_IN_ANY_SCENARIO = {
    "cupy_cuda_version", "jax_cuda_major", "jax_version", "kernel_oom_killed_names",
    "tensorflow_cuda_version", "tensorflow_version",
}  # fmt: skip


def _scenario_facts() -> list[dict[str, object]]:
    return [
        dict(machine.snapshot_facts(collect_snapshot(env={"GPUDOCTOR_FAKE_NVML": name})))
        for name in scenario_names()
    ]


def _known(value: object) -> bool:
    return value is not None and value != []


def test_there_are_scenarios_to_learn_from() -> None:
    assert len(scenario_names()) >= 8


def test_every_snapshot_fact_is_declared_and_declared_facts_are_produced() -> None:
    declared = {spec.name for spec in machine.FACTS}
    produced: set[str] = set()
    for facts in _scenario_facts():
        assert set(facts) == declared  # every key always present, nothing undeclared
        produced |= {name for name, value in facts.items() if _known(value)}
    assert declared - produced == NOT_IN_ANY_SCENARIO


def test_every_compat_verdict_is_declared_and_produced_by_some_scenario() -> None:
    declared = {spec.name for spec in compat.FACTS}
    produced: set[str] = set()
    for facts in _scenario_facts():
        verdicts = compat.compat_facts(facts)
        assert set(verdicts) == declared
        # an empty list is a verdict ("no unsupported architecture"); None is "unknown"
        produced |= {name for name, value in verdicts.items() if value is not None}
    assert produced == declared


def test_assembled_facts_of_every_scenario_are_registered() -> None:
    known = known_fact_names()
    for facts in _scenario_facts():
        assert set(assemble_facts({}, facts)) <= known


def _text_facts(path: Path) -> dict[str, object]:
    scan = scan_logs([LogInput.from_path(path)], make_scanner(load_rulebook([])))
    return structure_facts(scan.hits)


def test_facts_read_from_pasted_text_are_declared() -> None:
    found = _text_facts(FIXTURES / "gpu" / "smi_busy_context_oom.log")
    assert {"driver_version", "smi_processes_count", "smi_unaccounted_memory_fraction_max"} <= set(
        found
    )
    declared = {spec.name for reader in READERS for spec in reader.FACTS}
    assert set(found) <= declared


def test_every_log_fixture_gives_only_declared_facts() -> None:
    declared = {spec.name for reader in READERS for spec in reader.FACTS}
    logs = sorted(FIXTURES.rglob("*.log"))
    assert logs
    for path in logs:
        undeclared = set(_text_facts(path)) - declared
        assert not undeclared, (path.name, undeclared)


def test_every_reader_declares_facts_with_its_source() -> None:
    for reader in READERS:
        assert reader.FACTS, reader.__name__
        assert all(isinstance(spec, FactSpec) and spec.doc for spec in reader.FACTS)


def test_registry_merges_sources_of_one_name() -> None:
    driver = registry()["driver_version"]
    assert set(driver.sources) == {"snapshot", "pasted text"}
    assert driver.type == "str|None"
    assert registry()["smi_gpu_memory_used_bytes"].unit == "bytes"


def test_conflicting_types_are_refused() -> None:
    a = FactSpec("gpu_count", "int|None", "-", "snapshot", "GPUs")
    b = FactSpec("gpu_count", "list[str]", "-", "pasted text", "GPU names")
    with pytest.raises(FactConflict, match="gpu_count"):
        collect([a, b])
    same = FactSpec("gpu_count", "int", "-", "pasted text", "GPU rows")
    assert collect([a, same])["gpu_count"].sources == ("snapshot", "pasted text")


def test_a_name_that_is_not_an_identifier_is_refused() -> None:
    with pytest.raises(FactConflict, match="identifier"):
        collect([FactSpec("gpu-count", "int", "-", "snapshot", "GPUs")])


def test_rules_facts_command_lists_every_fact() -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["rules", "facts", "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert {row["name"] for row in rows} == known_fact_names()
    lost = next(row for row in rows if row["name"] == "gpu_lost_count")
    assert lost["type"] == "int|None" and lost["sources"] == ["snapshot"]
    assert "GPU is lost" in lost["doc"]["snapshot"]  # the nvidia-smi equivalent is kept


def test_rules_facts_markdown_is_a_table() -> None:
    result = CliRunner().invoke(main, ["rules", "facts", "--format", "markdown"])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0] == "| fact | type | unit | source | meaning |"
    row = next(line for line in lines if line.startswith("| `max_gpu_temp_c`"))
    assert row.count(" | ") == 4 and "°C" in row
    assert "| `driver_version` | `str\\|None` |" in result.output
