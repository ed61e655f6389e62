"""``gpudoctor check`` through click's CliRunner: exit codes, stdout and stderr apart."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from gpudoctor.check import Status
from gpudoctor.check import runner as check_runner
from gpudoctor.check.model import CheckResult
from gpudoctor.cli import main
from gpudoctor.cli.check import check

FIXTURES = Path(__file__).parent / "fixtures"
# Neutralise this machine's /dev/shm and ulimit, which the live tests would otherwise judge.
HOST_LENIENT = ["--min-shm", "1B", "--min-nofile", "1"]


def invoke(args: list[str], env: dict[str, str | None] | None = None) -> Result:
    base: dict[str, str | None] = {"GITHUB_ACTIONS": None, "GPUDOCTOR_FAKE_NVML": None}
    return CliRunner().invoke(check, args, env={**base, **(env or {})})


def fixture(name: str) -> str:
    return str(FIXTURES / f"{name}.json")


def test_check_is_a_command_of_main() -> None:
    result = CliRunner().invoke(main, ["check", "--snapshot", fixture("driver550-cu124")])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("driver550-cu124", 0),
        ("driver525-runtime124", 0),
        ("driver470-torch-cu121", 1),
        ("rtx5090-torch26-cu124", 1),
        ("k80-torch2", 1),
        ("no-gpu", 0),
    ],
)
def test_exit_codes(name: str, code: int) -> None:
    result = invoke(["--snapshot", fixture(name), "--no-color"])
    assert result.exit_code == code, result.output
    assert result.stdout.startswith("gpudoctor check: snapshot ")
    assert result.stderr == ""


def test_strict_fails_on_warnings() -> None:
    assert invoke(["--snapshot", fixture("driver525-runtime124")]).exit_code == 0
    assert invoke(["--snapshot", fixture("driver525-runtime124"), "--strict"]).exit_code == 1


def test_require_gpu_on_the_no_driver_scenario_fails() -> None:
    env = {"GPUDOCTOR_FAKE_NVML": "no-driver"}
    relaxed = invoke(["--format", "json", *HOST_LENIENT], env)
    assert relaxed.exit_code == 0, relaxed.output
    assert json.loads(relaxed.stdout)["checks"][0]["status"] == "skip"
    strict = invoke(["--format", "json", "--require-gpu", *HOST_LENIENT], env)
    assert strict.exit_code == 1
    nvml = json.loads(strict.stdout)["checks"][0]
    assert nvml["id"] == "nvml" and nvml["status"] == "fail"
    assert "Driver Not Loaded" in nvml["reason"]


def test_live_fake_healthy_node() -> None:
    env = {"GPUDOCTOR_FAKE_NVML": "healthy-8xh100"}
    result = invoke(["--format", "json", "--expect-gpus", "8"], env)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["source"]["kind"] == "live"
    assert data["source"]["nvml_backend"] == "fake:healthy-8xh100"
    statuses = {c["id"]: c["status"] for c in data["checks"]}
    assert set(statuses.values()) == {"pass"}
    gpus = next(c for c in data["checks"] if c["id"] == "gpus")
    assert "8" in gpus["reason"] and "H100" in gpus["reason"]
    assert invoke(["--expect-gpus", "4"], env).exit_code == 1


def test_unknown_fake_scenario_is_a_usage_error() -> None:
    result = invoke([], {"GPUDOCTOR_FAKE_NVML": "no-such-scenario"})
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith("gpudoctor: ")


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (None, "cannot read snapshot"),
        ("{not json", "invalid JSON"),
        ('{"schema": "gpudoctor.snapshot/2", "driver": {"status": "ok"}}', "newer gpudoctor"),
        ('{"schema": "gpudoctor.report/1"}', "not a gpudoctor snapshot"),
    ],
)
def test_bad_snapshot_files_are_one_line_usage_errors(
    tmp_path: Path, content: str | None, needle: str
) -> None:
    path = tmp_path / "snap.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    result = invoke(["--snapshot", str(path)])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1
    assert needle in result.stderr and str(path) in result.stderr


def test_auto_format_under_github_actions() -> None:
    result = invoke(["--snapshot", fixture("rtx5090-torch26-cu124")], {"GITHUB_ACTIONS": "true"})
    assert result.exit_code == 1
    assert any(line.startswith("::error title=") for line in result.stdout.splitlines())


def test_auto_format_off_a_terminal_is_plain_text() -> None:
    result = invoke(["--snapshot", fixture("driver550-cu124")])
    assert "\x1b[" not in result.stdout
    assert "PASS driver-runtime" in result.stdout


def test_color_can_be_forced() -> None:
    result = invoke(["--snapshot", fixture("driver550-cu124"), "--color"], {"NO_COLOR": None})
    assert "\x1b[" in result.stdout


def test_junit_to_a_file(tmp_path: Path) -> None:
    out = tmp_path / "check.xml"
    result = invoke(["--snapshot", fixture("k80-torch2"), "--format", "junit", "-o", str(out)])
    assert result.exit_code == 1
    assert result.stdout == ""
    root = ET.fromstring(out.read_text(encoding="utf-8"))
    assert root.get("failures") == "2"


def test_explain_data_lists_the_tables() -> None:
    text = invoke(["--explain-data"])
    assert text.exit_code == 0
    assert "cuda_driver" in text.stdout and "torch_builds" in text.stdout
    data = json.loads(invoke(["--explain-data", "--format", "json"]).stdout)
    names = [t["name"] for t in data["tables"]]
    assert "cuda_driver" in names and all(t["version"] and t["sources"] for t in data["tables"])


def test_bad_size_is_a_usage_error() -> None:
    result = invoke(["--min-shm", "lots"])
    assert result.exit_code == 2
    assert "not a size" in result.stderr


def test_nothing_checked_exits_3(monkeypatch: pytest.MonkeyPatch) -> None:
    def skipped(_: object) -> CheckResult:
        return CheckResult("shm", "shm", Status.SKIP, "not collected")

    monkeypatch.setattr(check_runner, "CHECKS", {"shm": skipped})
    result = invoke(["--snapshot", fixture("no-gpu")])
    assert result.exit_code == 3
    assert "nothing could be checked" in result.stderr
