"""Installed frameworks and NVIDIA wheels, read from a fixture site-packages without imports."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gpudoctor.snapshot.model import CudaPackage
from gpudoctor.snapshot.versions import (
    collect_environment,
    collect_versions,
    module_constants,
    tensorflow_build_info,
)


@pytest.fixture
def site(fixtures_dir: Path) -> list[str]:
    return [str(fixtures_dir / "site-packages")]


def test_frameworks_read_without_importing(site: list[str]) -> None:
    before = set(sys.modules)
    info = collect_versions(paths=site)
    assert not {"torch", "tensorflow", "jax", "cupy"} & (set(sys.modules) - before)
    frameworks = {f.name: f for f in info.frameworks}
    torch = frameworks["torch"]
    assert torch.version == "2.4.1+cu121"
    assert torch.cuda_version == "12.1"
    assert torch.is_cuda_build is True
    assert torch.source == "torch/version.py"
    tf = frameworks["tensorflow"]
    assert tf.version == "2.16.1"
    assert tf.cuda_version == "12.3"
    assert tf.cudnn_version == "8"
    assert tf.is_cuda_build is True
    assert tf.compute_capabilities == ("sm_50", "sm_60", "sm_70", "sm_80", "compute_90")
    jax = frameworks["jax"]
    assert jax.version == "0.4.30"
    assert jax.cuda_version == "12"
    assert jax.distribution == "jax,jax-cuda12-pjrt,jax-cuda12-plugin"
    cupy = frameworks["cupy"]
    assert (cupy.version, cupy.cuda_version) == ("13.2.0", "12")


def test_cuda_packages(site: list[str]) -> None:
    info = collect_versions(paths=site)
    assert info.cuda_packages == (
        CudaPackage("nvidia-cublas-cu12", "12.1.3.1", "cublas", 12),
        CudaPackage("nvidia-cuda-runtime", "13.0.96", "cuda-runtime", 13),
        CudaPackage("nvidia-cuda-runtime-cu12", "12.1.105", "cuda-runtime", 12),
        CudaPackage("nvidia-cudnn-cu12", "9.1.0.70", "cudnn", 12),
        CudaPackage("nvidia-nccl-cu12", "2.20.5", "nccl", 12),
    )


def test_empty_site(tmp_path: Path) -> None:
    info = collect_versions(paths=[str(tmp_path)])
    assert info.frameworks == ()
    assert info.cuda_packages == ()
    assert info.python_version


def test_module_constants_parses_literals_only() -> None:
    consts = module_constants("a = 1\nb: str = 'x'\nc = f()\nimport os\n")
    assert consts == {"a": 1, "b": "x"}
    assert module_constants("this is not python") == {}


def test_old_tensorflow_build_info() -> None:
    info = tensorflow_build_info("cuda_version_number = '10.0'\ncudnn_version_number = '7'\n")
    assert info == {"cuda_version_number": "10.0", "cudnn_version_number": "7"}


def test_environment_selection() -> None:
    env = {
        "CUDA_VISIBLE_DEVICES": "1,0",
        "NCCL_P2P_DISABLE": "1",
        "TORCH_NCCL_BLOCKING_WAIT": "1",
        "HOME": "/home/alice",
        "PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:128",
    }
    assert collect_environment(env) == {
        "CUDA_VISIBLE_DEVICES": "1,0",
        "NCCL_P2P_DISABLE": "1",
        "PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:128",
        "TORCH_NCCL_BLOCKING_WAIT": "1",
    }
