"""What the job will see: CUDA_VISIBLE_DEVICES applied to NVML's GPUs, and GPUs asked for
(``--expect-gpus``, ``--require-gpu``) never satisfied by a machine where NVML cannot load."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gpudoctor.check import CheckContext, CheckOptions, Status, run_checks
from gpudoctor.check.gpus import check_gpus, check_nvml
from gpudoctor.check.visible import visible_devices
from gpudoctor.snapshot import Snapshot, load_snapshot

FIXTURES = Path(__file__).parent / "fixtures"
# driver550-cu124: 8 GPUs, indices 0-7, UUIDs GPU-4a1e5b2c-..., GPU-7f0c2a9e-..., ...


def snap(name: str = "driver550-cu124", cvd: str | None = None) -> Snapshot:
    snapshot = load_snapshot(FIXTURES / f"{name}.json")
    env = {} if cvd is None else {"CUDA_VISIBLE_DEVICES": cvd}
    return dataclasses.replace(snapshot, environment=env)


def ctx(snapshot: Snapshot, **options: object) -> CheckContext:
    return CheckContext(snapshot, CheckOptions(**options))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "indices", "invalid"),
    [
        (None, (0, 1, 2, 3, 4, 5, 6, 7), None),
        ("0,1", (0, 1), None),
        ("3, 1", (3, 1), None),  # CUDA's order, spaces allowed
        ("GPU-7f0c2a9e", (1,), None),  # a unique UUID prefix
        ("7f0c2a9e-13b4", (1,), None),  # ... also without GPU-
        ("0,0,1", (0, 1), None),  # one device named twice
        ("", (), ""),
        ("-1", (), "-1"),
        ("1,-1,2", (1,), "-1"),  # CUDA stops at the first invalid entry
        ("0,8,1", (0,), "8"),
        ("GPU-ffff", (), "GPU-ffff"),
    ],
)
def test_visible_devices(value: str | None, indices: tuple[int, ...], invalid: str | None) -> None:
    visible = visible_devices(value, snap().gpus)
    assert (visible.indices, visible.invalid, visible.count) == (indices, invalid, len(indices))


def test_mig_entries_count_as_devices() -> None:
    visible = visible_devices("MIG-1b2c3d4e-0000-1111-2222-333344445555", snap().gpus)
    assert (visible.count, visible.invalid) == (1, None)


def test_count_says_both_numbers() -> None:
    result = check_gpus(ctx(snap(cvd="0,1"), expect_gpus=2))
    assert result.status is Status.PASS
    assert result.reason.startswith(
        "2 of 8 GPUs visible to the job (CUDA_VISIBLE_DEVICES=0,1): 2x NVIDIA A100"
    )


def test_expect_gpus_counts_what_the_job_sees() -> None:
    result = check_gpus(ctx(snap(cvd="0,1"), expect_gpus=8))
    assert result.status is Status.FAIL
    assert "expected 8 GPUs, the job would see 2" in result.reason
    assert "2 of 8 GPUs visible to the job (CUDA_VISIBLE_DEVICES=0,1)" in result.reason
    assert check_gpus(ctx(snap(), expect_gpus=8)).status is Status.PASS


def test_every_gpu_hidden_warns_or_fails_when_gpus_are_required() -> None:
    assert check_gpus(ctx(snap(cvd=""))).status is Status.WARN
    assert check_gpus(ctx(snap(cvd="-1"), require_gpu=True)).status is Status.FAIL


@pytest.mark.parametrize("options", [{"expect_gpus": 2}, {"require_gpu": True}])
def test_asking_for_gpus_fails_where_nvml_cannot_load(options: dict[str, object]) -> None:
    report = run_checks(snap("no-gpu"), CheckOptions(**options))  # type: ignore[arg-type]
    statuses = {r.id: r.status for r in report.results}
    assert statuses["nvml"] is Status.FAIL
    assert statuses["gpus"] is Status.FAIL
    assert report.failed()


def test_without_asking_a_machine_without_driver_skips() -> None:
    assert check_nvml(ctx(snap("no-gpu"))).status is Status.SKIP
    assert check_gpus(ctx(snap("no-gpu"))).status is Status.SKIP
    # expecting no GPU on a CPU machine is met
    assert check_nvml(ctx(snap("no-gpu"), expect_gpus=0)).status is Status.SKIP
    assert check_gpus(ctx(snap("no-gpu"), expect_gpus=0)).status is Status.PASS
