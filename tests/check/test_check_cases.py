"""Table-driven: every recorded snapshot, the status each check must give, and what the
reason must say. Expected values come from the issue and NVIDIA's / PyTorch's published
compatibility facts, not from running the checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from gpudoctor.check import CHECKS, CheckReport, Status

P, W, F, S = Status.PASS, Status.WARN, Status.FAIL, Status.SKIP
ORDER = (
    "nvml",
    "gpus",
    "gpu-health",
    "driver-runtime",
    "gpu-arch",
    "cuda-visible-devices",
    "cuda-majors",
    "ld-library-path",
    "shm",
    "nofile",
    "persistence-mode",
)


@dataclass(frozen=True)
class Case:
    fixture: str
    statuses: tuple[Status, ...]  # in ORDER
    says: dict[str, tuple[str, ...]] = field(default_factory=dict)  # check id -> substrings
    failed: bool = False
    failed_strict: bool = False


CASES = [
    # R470 reports CUDA 11.4; CUDA 12.x needs at least 525.60.13 (minor-version floor):
    # cudaErrorInsufficientDriver (35).
    Case(
        "driver470-torch-cu121",
        (P, P, P, F, P, P, P, P, P, P, P),
        {"driver-runtime": ("470.182.03", "11.4", "525.60.13", "cudaErrorInsufficientDriver")},
        failed=True,
        failed_strict=True,
    ),
    # 525.60.13 is the CUDA 12.x minor-version floor; 12.4 needs 550.54.14 for full support:
    # runs, but PTX JIT fails (222). A warning: passes, fails only with --strict.
    Case(
        "driver525-runtime124",
        (P, P, P, W, P, P, P, P, P, P, P),
        {"driver-runtime": ("minor-version", "PTX", "550.54.14", "222")},
        failed=False,
        failed_strict=True,
    ),
    # 550.54.15 >= 550.54.14 (CUDA 12.4 toolkit driver); A100 (sm_80) is in the cu124 list.
    Case("driver550-cu124", (P,) * 11, {"gpu-arch": ("sm_80",)}),
    # RTX 5090 is compute capability 12.0; torch 2.6 cu124 compiles sm_50..sm_90 only:
    # "no kernel image is available for execution on the device" (209).
    Case(
        "rtx5090-torch26-cu124",
        (P, P, P, P, F, P, P, P, P, P, P),
        {"gpu-arch": ("sm_120", "no kernel image"), "persistence-mode": ("off",)},
        failed=True,
        failed_strict=True,
    ),
    # K80 is sm_37, dropped from the CUDA 12 builds of torch 2.x; its last driver (R470)
    # cannot run CUDA 12.1 either.
    Case(
        "k80-torch2",
        (P, P, P, F, F, P, P, P, P, P, P),
        {"gpu-arch": ("sm_37", "no kernel image"), "driver-runtime": ("470.256.02",)},
        failed=True,
        failed_strict=True,
    ),
    # No driver, no --require-gpu: GPU checks skip with the reason, static checks still run.
    Case(
        "no-gpu",
        (S, S, S, S, S, P, P, P, P, P, S),
        {"nvml": ("--require-gpu", "Driver Not Loaded")},
    ),
    # 64 MiB /dev/shm (Docker's default), ulimit -n 1024, a CUDA 11.8 toolkit first on
    # LD_LIBRARY_PATH with CUDA 12 wheels, cuBLAS for 11 and 12, CUDA_VISIBLE_DEVICES=0,8 on
    # a one-GPU machine.
    Case(
        "misconfigured-container",
        (P, P, P, P, P, F, W, W, F, W, P),
        {
            "cuda-visible-devices": ("8",),
            "cuda-majors": ("nvidia-cublas", "11", "12"),
            "ld-library-path": ("/usr/local/cuda-11.8/lib64", "CUDA 11"),
            "shm": ("64.00 MiB", "Bus error"),
            "nofile": ("1024",),
        },
        failed=True,
        failed_strict=True,
    ),
]


def test_order_is_the_registry() -> None:
    assert tuple(CHECKS) == ORDER


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.fixture)
def test_case(case: Case, run) -> None:  # type: ignore[no-untyped-def]
    report: CheckReport = run(case.fixture)
    got = {r.id: r.status for r in report.results}
    assert got == dict(zip(ORDER, case.statuses, strict=True))
    by_id = {r.id: r for r in report.results}
    for check_id, needles in case.says.items():
        result = by_id[check_id]
        text = " ".join((result.reason, result.fix or "", *result.details))
        for needle in needles:
            assert needle in text, f"{check_id}: {needle!r} not in {text!r}"
    assert report.failed() is case.failed
    assert report.failed(strict=True) is case.failed_strict


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.fixture)
def test_every_non_pass_has_a_reason_and_every_problem_a_fix(case: Case, run) -> None:  # type: ignore[no-untyped-def]
    for result in run(case.fixture).results:
        assert result.reason
        if result.status in (Status.WARN, Status.FAIL):
            assert result.fix, result.id


def test_minor_version_compat_lists_the_ptx_caveat(run) -> None:  # type: ignore[no-untyped-def]
    result = next(r for r in run("driver525-runtime124").results if r.id == "driver-runtime")
    assert any("caveat" in d and "PTX" in d for d in result.details)


def test_require_gpu_turns_the_missing_driver_into_a_failure(run) -> None:  # type: ignore[no-untyped-def]
    report = run("no-gpu", require_gpu=True)
    nvml = report.results[0]
    assert nvml.status is Status.FAIL
    assert "modprobe nvidia" in (nvml.fix or "")
    assert report.failed()


@pytest.mark.parametrize(("expect", "status"), [(8, Status.PASS), (4, Status.FAIL)])
def test_expect_gpus(run, expect: int, status: Status) -> None:  # type: ignore[no-untyped-def]
    result = next(r for r in run("driver550-cu124", expect_gpus=expect).results if r.id == "gpus")
    assert result.status is status
    if status is Status.FAIL:
        assert "expected 4 GPUs" in result.reason


def test_all_skipped_only_when_nothing_could_be_judged(run) -> None:  # type: ignore[no-untyped-def]
    assert not run("no-gpu").all_skipped
