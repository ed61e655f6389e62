"""Single checks on edited snapshots: CUDA_VISIBLE_DEVICES forms, LD_LIBRARY_PATH on disk,
the /dev/shm and ulimit thresholds, lost GPUs, and a crashing check."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gpudoctor.check import CheckContext, CheckOptions, Status, list_dir, run_checks
from gpudoctor.check import runner as check_runner
from gpudoctor.check.gpus import check_cuda_visible_devices, check_gpus
from gpudoctor.check.host import check_nofile, check_shm
from gpudoctor.check.libraries import check_ld_library_path
from gpudoctor.snapshot import CudaPackage, Snapshot, load_snapshot

FIXTURES = Path(__file__).parent / "fixtures"
GiB = 1 << 30
MiB = 1 << 20


def snap(name: str = "driver550-cu124") -> Snapshot:
    return load_snapshot(FIXTURES / f"{name}.json")


def ctx(snapshot: Snapshot, **options: object) -> CheckContext:
    return CheckContext(snapshot, CheckOptions(**options))  # type: ignore[arg-type]


def with_env(snapshot: Snapshot, **env: str) -> Snapshot:
    return dataclasses.replace(snapshot, environment=env)


@pytest.mark.parametrize(
    ("value", "status", "needle"),
    [
        ("0,1,7", Status.PASS, "3 existing"),
        ("GPU-4a1e5b2c", Status.PASS, "1 existing"),  # a unique UUID prefix
        ("", Status.FAIL, "hides every GPU"),
        ("-1", Status.FAIL, "hides every GPU"),
        ("9", Status.FAIL, "sees no GPU"),
        ("1,9,2", Status.FAIL, "sees only 1"),
        ("GPU-00000000", Status.FAIL, "GPU-00000000"),
    ],
)
def test_cuda_visible_devices(value: str, status: Status, needle: str) -> None:
    result = check_cuda_visible_devices(ctx(with_env(snap(), CUDA_VISIBLE_DEVICES=value)))
    assert result.status is status
    assert needle in result.reason


def test_cuda_visible_devices_without_gpu_is_skipped() -> None:
    result = check_cuda_visible_devices(ctx(with_env(snap("no-gpu"), CUDA_VISIBLE_DEVICES="0")))
    assert result.status is Status.SKIP


def _cuda_dir(root: Path, name: str, files: list[str]) -> Path:
    folder = root / name / "lib64"
    folder.mkdir(parents=True)
    for file in files:
        (folder / file).write_bytes(b"")
    return folder


def _with_cusolver(snapshot: Snapshot) -> Snapshot:
    versions = dataclasses.replace(
        snapshot.versions,
        cuda_packages=(
            *snapshot.versions.cuda_packages,
            CudaPackage("nvidia-cusolver-cu12", "11.4.5.107", "cusolver", 12),
        ),
    )
    return dataclasses.replace(snapshot, versions=versions)


def test_ld_library_path_same_file_name_from_another_major_fails(tmp_path: Path) -> None:
    # CUDA 11.8's cuSOLVER is libcusolver.so.11, like the CUDA 12 wheel's cuSOLVER 11.4.
    folder = _cuda_dir(tmp_path, "toolkit", ["libcudart.so.11.0", "libcusolver.so.11"])
    snapshot = with_env(_with_cusolver(snap()), LD_LIBRARY_PATH=str(folder))
    result = check_ld_library_path(CheckContext(snapshot, CheckOptions(), list_dir))
    assert result.status is Status.FAIL
    assert "libcusolver.so.11" in result.reason
    assert str(folder) in (result.fix or "")


def test_ld_library_path_same_major_on_disk_passes(tmp_path: Path) -> None:
    folder = _cuda_dir(tmp_path, "cuda-12.4", ["libcudart.so.12", "libcusolver.so.11"])
    snapshot = with_env(_with_cusolver(snap()), LD_LIBRARY_PATH=f"{folder}:")
    result = check_ld_library_path(CheckContext(snapshot, CheckOptions(), list_dir))
    assert result.status is Status.PASS


def test_ld_library_path_from_another_node_judges_the_path_name() -> None:
    snapshot = with_env(snap(), LD_LIBRARY_PATH="/opt/cuda-11.8/lib64:/usr/lib")
    result = check_ld_library_path(ctx(snapshot))
    assert result.status is Status.WARN
    assert "/opt/cuda-11.8/lib64" in result.reason


def test_ld_library_path_unset_passes() -> None:
    assert check_ld_library_path(ctx(with_env(snap()))).status is Status.PASS


def _host(snapshot: Snapshot, **values: object) -> Snapshot:
    return dataclasses.replace(snapshot, host=dataclasses.replace(snapshot.host, **values))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("size", "status"),
    [
        (64 * MiB, Status.FAIL),
        (512 * MiB, Status.WARN),
        (2 * GiB, Status.PASS),
        (None, Status.SKIP),
    ],
)
def test_shm_thresholds(size: int | None, status: Status) -> None:
    assert check_shm(ctx(_host(snap(), shm_total_bytes=size))).status is status


def test_shm_threshold_is_an_option() -> None:
    small = _host(snap(), shm_total_bytes=512 * MiB)
    assert check_shm(ctx(small, min_shm_bytes=256 * MiB)).status is Status.PASS


@pytest.mark.parametrize(
    ("soft", "status"),
    [(256, Status.FAIL), (1024, Status.WARN), (65536, Status.PASS), (None, Status.SKIP)],
)
def test_nofile_thresholds(soft: int | None, status: Status) -> None:
    snapshot = _host(snap(), ulimit_nofile_soft=soft, ulimit_nofile_hard=1048576)
    assert check_nofile(ctx(snapshot)).status is status


def test_nofile_fix_names_a_low_hard_limit() -> None:
    snapshot = _host(snap(), ulimit_nofile_soft=1024, ulimit_nofile_hard=2048)
    result = check_nofile(ctx(snapshot))
    assert "hard limit 2048" in (result.fix or "")


def test_lost_gpu_fails() -> None:
    snapshot = snap()
    gpus = list(snapshot.gpus)
    gpus[3] = dataclasses.replace(gpus[3], status="lost", name=None)
    result = check_gpus(ctx(dataclasses.replace(snapshot, gpus=tuple(gpus))))
    assert result.status is Status.FAIL
    assert "GPU 3 fell off the bus" in result.reason


def test_a_crashing_check_fails_instead_of_passing(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(_: CheckContext) -> None:
        raise RuntimeError("boom")

    monkeypatch.setitem(check_runner.CHECKS, "shm", broken)  # type: ignore[arg-type]
    result = next(r for r in run_checks(snap()).results if r.id == "shm")
    assert result.status is Status.FAIL
    assert "RuntimeError: boom" in result.reason
