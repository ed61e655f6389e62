"""``gpudoctor snapshot``, ``diagnose`` and ``explain --snapshot`` through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpudoctor.cli import main
from gpudoctor.cli.options import parse_duration

SNAPSHOT_FIXTURES = Path(__file__).parent / "snapshot" / "fixtures"
OOM_LINE = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
    "capacity of 79.19 GiB of which 1.06 GiB is free.\n"
)


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def test_snapshot_without_driver_is_clean(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUDOCTOR_FAKE_NVML", "no-driver")
    result = runner.invoke(main, ["snapshot"])
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["schema"] == "gpudoctor.snapshot/1"
    assert data["driver"]["status"] == "no_driver"
    assert data["gpus"] == []
    assert "NVML unavailable (no_driver)" in result.stderr


def test_real_snapshot_on_this_machine_never_crashes(runner: CliRunner) -> None:
    result = runner.invoke(main, ["snapshot", "--format", "text"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("gpudoctor snapshot of ")
    assert result.exception is None


def test_snapshot_to_file_then_explain_with_it(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUDOCTOR_FAKE_NVML", "gpu-lost")
    target = tmp_path / "snap.json"
    written = runner.invoke(main, ["snapshot", "-o", str(target)])
    assert written.exit_code == 0
    assert written.stdout == ""
    assert f"snapshot written to {target}" in written.stderr
    monkeypatch.delenv("GPUDOCTOR_FAKE_NVML")
    log = tmp_path / "train.log"
    log.write_text(OOM_LINE)
    result = runner.invoke(
        main, ["explain", "--snapshot", str(target), "--format", "json", str(log)]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {"kind": "snapshot", "name": str(target)} in data["inputs"]
    assert data["facts"]["gpu_lost_count"] == 1
    assert "xid_hardware" in [d["cause"] for d in data["diagnoses"]]


def test_diagnose_with_saved_snapshot_and_glob(runner: CliRunner, tmp_path: Path) -> None:
    for rank in range(3):
        (tmp_path / f"rank{rank}.log").write_text(f"rank {rank} step 10\n")
    (tmp_path / "rank2.log").write_text(OOM_LINE)
    result = runner.invoke(
        main,
        [
            "diagnose",
            "--snapshot",
            str(SNAPSHOT_FIXTURES / "healthy-8xh100.json"),
            "--log",
            str(tmp_path / "rank*.log"),
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    names = [i["name"] for i in data["inputs"] if i["kind"] == "log"]
    assert names == [str(tmp_path / f"rank{r}.log") for r in range(3)]
    assert data["diagnoses"][0]["cause"] == "gpu_oom"
    assert data["diagnoses"][0]["evidence"][0]["source"] == str(tmp_path / "rank2.log")


def test_diagnose_live_fake_scenario_reads_kernel_log(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUDOCTOR_FAKE_NVML", "gpu-lost")
    result = runner.invoke(main, ["diagnose", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    kinds = {i["kind"] for i in data["inputs"]}
    assert {"snapshot", "kernel"} <= kinds
    assert data["diagnoses"][0]["cause"] == "xid_hardware"


def test_unknown_scenario_is_a_usage_error(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUDOCTOR_FAKE_NVML", "no-such-scenario")
    result = runner.invoke(main, ["snapshot"])
    assert result.exit_code == 2
    assert "healthy-8xh100" in result.stderr
    assert result.stdout == ""


def test_newer_snapshot_schema_is_refused_clearly(runner: CliRunner, tmp_path: Path) -> None:
    data = json.loads((SNAPSHOT_FIXTURES / "healthy-8xh100.json").read_text())
    data["schema"] = "gpudoctor.snapshot/2"
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps(data))
    result = runner.invoke(main, ["diagnose", "--snapshot", str(newer)])
    assert result.exit_code == 2
    assert "newer" in result.stderr
    assert str(newer) in result.stderr


def test_garbage_snapshot_is_refused_clearly(runner: CliRunner, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\x00\x01 not json")
    log = tmp_path / "t.log"
    log.write_text("x\n")
    result = runner.invoke(main, ["explain", "--snapshot", str(bad), str(log)])
    assert result.exit_code == 2
    assert str(bad) in result.stderr
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("text", "seconds"), [("30m", 1800), ("2h", 7200), ("1d", 86400), ("45s", 45)]
)
def test_parse_duration(text: str, seconds: int) -> None:
    duration = parse_duration(text)
    assert duration is not None
    assert duration.total_seconds() == seconds


def test_since_boot_and_bad_duration(runner: CliRunner) -> None:
    assert parse_duration("boot") is None
    result = runner.invoke(main, ["snapshot", "--since", "yesterday"])
    assert result.exit_code == 2
    assert "not a duration" in result.stderr
