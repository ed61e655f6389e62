"""PyTorch/TensorFlow/JAX build lookups and mixed CUDA majors; values from torch_builds.md."""

from __future__ import annotations

import pytest

from gpudoctor.compat import (
    cuda_major_conflicts,
    flavour_cuda_version,
    jax_plugin_for,
    tf_build_for,
    torch_builds_supporting,
    torch_compiled_archs,
    torch_cuda_flavour,
)
from gpudoctor.version_numbers import Version


@pytest.mark.parametrize(
    ("version", "flavour"),
    [
        ("2.4.1+cu121", "cu121"),
        ("2.1.0+cu118", "cu118"),
        ("2.1.0+cu121.with.pypi.cudnn", "cu121"),
        # Plain versions come from PyPI, which ships one flavour per release.
        ("1.13.1", "cu117"),
        ("2.0.1", "cu117"),
        ("2.3.1", "cu121"),
        ("2.4.1", "cu121"),
        ("2.5.1", "cu124"),
        ("2.6.0", "cu124"),
        ("2.7.1", "cu126"),
        ("2.8.0", "cu128"),
        ("2.10.0", "cu128"),
        ("2.11.0", "cu130"),
        ("2.14.0", "cu130"),
        # Not official CUDA wheels, or unknown.
        ("2.4.1+cpu", None),
        ("2.3.0+rocm6.0", None),
        ("2.4.0a0+3bcc3cddb5.nv24.07", None),
        ("9.9.9", None),
        ("garbage", None),
    ],
)
def test_torch_cuda_flavour(version: str, flavour: str | None) -> None:
    assert torch_cuda_flavour(version) == flavour


@pytest.mark.parametrize(
    ("flavour", "cuda"),
    [("cu121", "12.1"), ("cu102", "10.2"), ("cu130", "13.0"), ("cu92", "9.2"), ("cpu", None)],
)
def test_flavour_cuda_version(flavour: str, cuda: str | None) -> None:
    found = flavour_cuda_version(flavour)
    assert (str(found) if found is not None else None) == cuda


@pytest.mark.parametrize(
    ("version", "flavour", "sass", "ptx"),
    [
        ("2.11.0", None, "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120", ""),
        ("2.4.1", "cu124", "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90", ""),
        ("2.4.1+cu118", None, "sm_37 sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90", ""),
        ("2.8.0", "cu129", "sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120", "compute_120"),
        ("2.8.0", None, "sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120", ""),
        ("2.13.0", "cu132", "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120", "compute_120"),
        ("1.12.1+cu102", None, "sm_37 sm_50 sm_60 sm_70", ""),
    ],
)
def test_torch_compiled_archs(version: str, flavour: str | None, sass: str, ptx: str) -> None:
    archs = torch_compiled_archs(version, flavour)
    assert archs is not None
    assert archs.sass == tuple(sass.split())
    assert archs.ptx == tuple(ptx.split())


def test_torch_compiled_archs_records_cuda_and_uncertainty() -> None:
    archs = torch_compiled_archs("2.7.1+cu128", None)
    assert archs is not None
    assert archs.cuda == Version("12.8")
    assert archs.uncertain  # 2.7 cu128 comes from a third-party report
    certain = torch_compiled_archs("2.11.0", None)
    assert certain is not None and not certain.uncertain


@pytest.mark.parametrize(
    ("version", "flavour"),
    [("2.4.1", "cu130"), ("3.0.0", "cu130"), ("2.4.1+cpu", None), ("nonsense", "cu121")],
)
def test_torch_compiled_archs_unknown(version: str, flavour: str | None) -> None:
    assert torch_compiled_archs(version, flavour) is None


def test_torch_builds_supporting_blackwell_start_with_cu128() -> None:
    builds = torch_builds_supporting("12.0")
    assert builds[0] == "2.7+cu128"
    assert "2.6+cu124" not in builds


@pytest.mark.parametrize(
    ("version", "cuda", "cudnn"),
    [
        ("2.16.1", "12.3", "8.9"),
        ("2.15.0", "12.2", "8.9"),
        ("2.14.1", "11.8", "8.7"),
        ("2.12.0", "11.8", "8.6"),
        ("2.10.1", "11.2", "8.1"),
        ("2.4.0", "11.0", "8.0"),
        ("2.18.0", "12.5", "9.3"),
        ("1.15.5", "10.0", "7.4"),
    ],
)
def test_tf_build_for(version: str, cuda: str, cudnn: str) -> None:
    build = tf_build_for(version)
    assert build is not None
    assert (str(build.cuda), build.cudnn) == (cuda, cudnn)


def test_tf_build_inferred_rows_are_marked() -> None:
    build = tf_build_for("2.20.0")
    assert build is not None and build.inferred
    assert tf_build_for("3.0.0") is None


def test_jax_plugins() -> None:
    cuda12 = jax_plugin_for("jax-cuda12-plugin")
    assert cuda12 is not None
    assert cuda12.cuda_major == 12
    assert cuda12.min_driver_linux == Version("525.60.13")
    assert cuda12.min_compute_capability == "5.2"
    cuda13 = jax_plugin_for("jax_cuda13_pjrt")
    assert cuda13 is not None and cuda13.cuda_major == 13
    assert cuda13.min_compute_capability == "7.5"
    assert jax_plugin_for("jaxlib") is None


def test_two_majors_of_one_library_conflict() -> None:
    conflicts = cuda_major_conflicts(
        [
            ("nvidia-cublas-cu11", Version("11.11.3.6")),
            ("nvidia_cublas_cu12", Version("12.1.3.1")),
            ("nvidia-cudnn-cu12", Version("9.1.0.70")),
            ("torch", Version("2.4.1")),
        ]
    )
    assert len(conflicts) == 1
    assert conflicts[0].library == "nvidia-cublas"
    assert conflicts[0].majors == (11, 12)
    assert "site-packages/nvidia/" in conflicts[0].reason
    assert conflicts[0].fix


def test_unsuffixed_cuda13_wheels_conflict_with_cu12() -> None:
    conflicts = cuda_major_conflicts(
        [
            ("nvidia-cuda-runtime-cu12", Version("12.8.90")),
            ("nvidia-cuda-runtime", Version("13.0.96")),
            ("nvidia-cudnn-cu12", "9.10.2.21"),
            ("nvidia-cudnn-cu13", "9.19.0.56"),
        ]
    )
    assert [(c.library, c.majors) for c in conflicts] == [
        ("nvidia-cuda-runtime", (12, 13)),
        ("nvidia-cudnn", (12, 13)),
    ]


def test_one_major_is_no_conflict() -> None:
    assert (
        cuda_major_conflicts(
            [
                ("nvidia-cublas-cu12", Version("12.8.4.1")),
                ("nvidia-cuda-runtime-cu12", Version("12.8.90")),
                ("nvidia-cufft", "not a version"),
            ]
        )
        == []
    )
