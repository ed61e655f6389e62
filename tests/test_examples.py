"""The bundled examples give the reports checked in beside them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpudoctor.cli import main

ROOT = Path(__file__).parents[1]
EXAMPLES = ROOT / "examples"
UPDATE = os.environ.get("GPUDOCTOR_UPDATE_GOLDEN") == "1"

CASES = {
    "pytorch-oom": ["examples/logs/pytorch-oom.log"],
    "device-assert": ["examples/logs/device-assert.log"],
    "driver-too-old": ["examples/logs/driver-too-old.log"],
    "dataloader-bus-error": ["examples/logs/dataloader-bus-error.log"],
    "host-oom-killed": ["examples/logs/host-oom-killed.log"],
    "ddp-nccl-timeout-after-oom": ["examples/logs/ddp/rank0.log", "examples/logs/ddp/rank3.log"],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_example_report_is_current(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(main, ["explain", "--no-color", "--width", "100", *CASES[name]])
    assert result.exit_code == 0, result.output
    expected = EXAMPLES / "reports" / f"{name}.txt"
    if UPDATE:
        expected.write_text(result.stdout, encoding="utf-8")
    assert result.stdout == expected.read_text(encoding="utf-8")


def test_every_example_log_is_covered() -> None:
    logs = {str(p.relative_to(ROOT)) for p in (EXAMPLES / "logs").rglob("*.log")}
    assert logs == {f for files in CASES.values() for f in files}
