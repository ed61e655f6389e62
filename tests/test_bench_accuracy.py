"""bench/accuracy.py: calibration bands and the no-diagnosis threshold."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "bench"))

import accuracy


def _outcome(label: str, *ranked: tuple[str, float]) -> accuracy.Outcome:
    return accuracy.Outcome("c", label, frozenset([label]), tuple(ranked))


def test_calibration_counts_the_top_diagnosis_of_each_band() -> None:
    rows = accuracy.calibration(
        [
            _outcome("gpu_oom", ("gpu_oom", 0.95)),
            _outcome("host_oom", ("gpu_oom", 0.92), ("host_oom", 0.5)),
            _outcome("nccl_failure", ("nccl_failure", 0.3)),
            _outcome("gpu_oom"),  # no diagnosis: in no band
        ]
    )
    assert rows == [("< 0.3", 0, 0), ("0.3-0.5", 1, 1), ("0.5-0.7", 0, 0), ("0.7-0.9", 0, 0),
                    (">= 0.9", 2, 1)]  # fmt: skip


def test_no_diagnosis_threshold_fails_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "a.yaml").write_text("id: a\nlabel: gpu_oom\nlog: 'all is well'\n")
    (cases / "b.yaml").write_text(
        "id: b\nlabel: gpu_oom\nlog: 'torch.OutOfMemoryError: CUDA out of memory. "
        "Tried to allocate 2.00 GiB'\n"
    )
    assert accuracy.main([str(tmp_path), "--max-no-diagnosis", "0.6"]) == 0
    assert accuracy.main([str(tmp_path), "--max-no-diagnosis", "0.4"]) == 1
    out = capsys.readouterr().out
    assert "crash logs with no diagnosis: 1/2 = 50.0%" in out
    assert "FAILED: no diagnosis 50.0% > 40%" in out
