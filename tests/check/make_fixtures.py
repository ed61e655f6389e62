"""Regenerate the checked-in ``gpudoctor check`` snapshot fixtures.

Each fixture starts from a fake NVML scenario collected with the snapshot model, then has its
driver, GPU names, versions, host or environment edited into the case it records. Run
``python tests/check/make_fixtures.py`` after changing a case here, review the diff and check
the files in; the tests read the JSON files, never this script.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from gpudoctor.snapshot import (
    CudaPackage,
    DriverInfo,
    FrameworkInfo,
    GpuInfo,
    ScenarioSource,
    Snapshot,
    VersionsInfo,
    collect_snapshot,
)

FIXTURES = Path(__file__).parent / "fixtures"
FIXED_NOW = datetime(2026, 11, 2, 9, 30, 0, tzinfo=timezone.utc)


def _scenario(name: str) -> Snapshot:
    return collect_snapshot(source=ScenarioSource(name), now=FIXED_NOW, read_kernel_log=False)


def _base() -> Snapshot:
    return _scenario("healthy-8xh100")


def _driver(snap: Snapshot, version: str, cuda: str) -> DriverInfo:
    return dataclasses.replace(
        snap.driver, driver_version=version, cuda_driver_version=cuda, nvml_version=f"x.{version}"
    )


def _gpus(snap: Snapshot, count: int, name: str, cc: str) -> tuple[GpuInfo, ...]:
    return tuple(
        dataclasses.replace(g, name=name, compute_capability=cc) for g in snap.gpus[:count]
    )


def _torch(version: str, cuda: str | None) -> FrameworkInfo:
    return FrameworkInfo(
        name="torch",
        version=version,
        cuda_version=cuda,
        is_cuda_build=cuda is not None,
        distribution="torch",
        source="torch/version.py",
    )


def _runtime(version: str) -> CudaPackage:
    major = int(version.split(".")[0])
    return CudaPackage(f"nvidia-cuda-runtime-cu{major}", version, "cuda-runtime", major)


def _versions(*items: FrameworkInfo | CudaPackage) -> VersionsInfo:
    return VersionsInfo(
        python_version="3.11.9",
        frameworks=tuple(i for i in items if isinstance(i, FrameworkInfo)),
        cuda_packages=tuple(i for i in items if isinstance(i, CudaPackage)),
    )


def driver470_torch_cu121() -> Snapshot:
    """Driver 470 (CUDA 11.4) with torch built for CUDA 12.1: the runtime cannot start."""
    s = _base()
    return dataclasses.replace(
        s,
        driver=_driver(s, "470.182.03", "11.4"),
        gpus=_gpus(s, 4, "Tesla V100-SXM2-32GB", "7.0"),
        versions=_versions(_torch("2.3.1+cu121", "12.1"), _runtime("12.1.105")),
    )


def driver525_runtime124() -> Snapshot:
    """Driver 525.60.13 (CUDA 12.0) with CUDA 12.4 wheels: minor-version compatibility."""
    s = _base()
    return dataclasses.replace(
        s,
        driver=_driver(s, "525.60.13", "12.0"),
        versions=_versions(_torch("2.6.0+cu124", "12.4"), _runtime("12.4.127")),
    )


def driver550_cu124() -> Snapshot:
    """Driver 550.54.15 (CUDA 12.4) with torch cu124 on A100s: everything passes."""
    s = _base()
    return dataclasses.replace(
        s,
        driver=_driver(s, "550.54.15", "12.4"),
        gpus=_gpus(s, 8, "NVIDIA A100-SXM4-80GB", "8.0"),
        versions=_versions(_torch("2.5.1+cu124", "12.4"), _runtime("12.4.127")),
    )


def rtx5090_torch26_cu124() -> Snapshot:
    """A Blackwell GeForce card (sm_120) with torch 2.6 cu124, which has no sm_120 kernels."""
    s = _base()
    gpu = dataclasses.replace(
        _gpus(s, 1, "NVIDIA GeForce RTX 5090", "12.0")[0], persistence_mode=False
    )
    return dataclasses.replace(
        s,
        driver=_driver(s, "570.124.04", "12.8"),
        gpus=(gpu,),
        versions=_versions(_torch("2.6.0+cu124", "12.4"), _runtime("12.4.127")),
    )


def k80_torch2() -> Snapshot:
    """Tesla K80 (sm_37) on its last driver branch (R470) with a modern torch 2.x build."""
    s = _base()
    return dataclasses.replace(
        s,
        driver=_driver(s, "470.256.02", "11.4"),
        gpus=_gpus(s, 2, "Tesla K80", "3.7"),
        versions=_versions(_torch("2.4.1+cu121", "12.1"), _runtime("12.1.105")),
    )


def no_gpu() -> Snapshot:
    """A CPU-only CI runner: no NVIDIA driver, a CPU build of torch."""
    s = _scenario("no-driver")
    base = _base()
    host = dataclasses.replace(base.host, hostname="ci-runner-3", cpu_count=4)
    return dataclasses.replace(
        s,
        host=host,
        versions=_versions(_torch("2.13.0+cpu", None)),
        environment={},
        sources=(),
    )


def misconfigured_container() -> Snapshot:
    """A container with Docker's 64 MiB /dev/shm, ulimit -n 1024, a CUDA 11.8 toolkit on
    LD_LIBRARY_PATH, cuBLAS for CUDA 11 and 12, and CUDA_VISIBLE_DEVICES naming GPU 8."""
    s = _scenario("consumer-notsupported")
    base = _base()
    host = dataclasses.replace(
        base.host,
        hostname="train-pod-0",
        shm_total_bytes=64 << 20,
        shm_used_bytes=0,
        shm_free_bytes=64 << 20,
        ulimit_nofile_soft=1024,
        ulimit_nofile_hard=1048576,
        in_container=True,
        container_runtime="docker",
    )
    versions = _versions(
        _torch("2.4.1+cu121", "12.1"),
        _runtime("12.1.105"),
        CudaPackage("nvidia-cublas-cu11", "11.11.3.6", "cublas", 11),
        CudaPackage("nvidia-cublas-cu12", "12.1.3.1", "cublas", 12),
        CudaPackage("nvidia-cudnn-cu12", "8.9.2.26", "cudnn", 12),
    )
    return dataclasses.replace(
        s,
        host=host,
        versions=versions,
        environment={
            "CUDA_VISIBLE_DEVICES": "0,8",
            "LD_LIBRARY_PATH": "/usr/local/cuda-11.8/lib64:/usr/local/nvidia/lib64",
        },
        sources=(),
    )


CASES: dict[str, Callable[[], Snapshot]] = {
    "driver470-torch-cu121": driver470_torch_cu121,
    "driver525-runtime124": driver525_runtime124,
    "driver550-cu124": driver550_cu124,
    "rtx5090-torch26-cu124": rtx5090_torch26_cu124,
    "k80-torch2": k80_torch2,
    "no-gpu": no_gpu,
    "misconfigured-container": misconfigured_container,
}


def main() -> None:
    """Write ``fixtures/<case>.json`` for every case."""
    FIXTURES.mkdir(exist_ok=True)
    for name, build in CASES.items():
        path = FIXTURES / f"{name}.json"
        path.write_text(build().to_json(), encoding="utf-8")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
