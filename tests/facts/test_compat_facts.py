"""Derived compatibility facts, the inputs rule conditions see."""

from __future__ import annotations

from typing import Any

import pytest

from gpudoctor.facts.compat import COMPAT_FACT_NAMES, compat_facts
from gpudoctor.version_numbers import Version


def test_all_names_present_and_unknown_without_input() -> None:
    out = compat_facts({})
    assert set(out) == set(COMPAT_FACT_NAMES)
    assert all(value is None for value in out.values())


@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        # torch cu121 on an R470 driver: CUDA 12 needs >= 525.60.13.
        (
            {"driver_version": "470.82.01", "torch_version": "2.4.1+cu121"},
            {
                "driver_supports_torch_cuda": False,
                "driver_torch_cuda_status": "unsupported",
                "driver_min_for_torch_cuda": "530.30.02",
                "driver_too_old": True,
                "driver_max_cuda_version": "11.4",
                "torch_cuda_flavour": "cu121",
            },
        ),
        # torch 2.5.1 from PyPI (cu124) on R470.
        (
            {"driver_version": "470.141.03", "torch_version": "2.5.1"},
            {"driver_too_old": True, "torch_cuda_flavour": "cu124"},
        ),
        # Above the 12.x floor, below 12.4's toolkit driver.
        (
            {
                "driver_version": "525.60.13",
                "torch_version": "2.4.1+cu124",
                "torch_cuda_version": "12.4",
            },
            {
                "driver_supports_torch_cuda": True,
                "driver_torch_cuda_status": "minor_version_compat",
                "driver_min_for_torch_cuda": "550.54.14",
                "driver_too_old": False,
                "driver_runtime_minor_compat": True,
            },
        ),
        (
            {"driver_version": "550.54.14", "torch_cuda_version": "12.4"},
            {
                "driver_supports_torch_cuda": True,
                "driver_torch_cuda_status": "full",
                "driver_too_old": False,
                "driver_runtime_minor_compat": False,
            },
        ),
        # A CUDA 13 runtime wheel next to torch cu121 on R535: 13.x needs >= 580.
        (
            {
                "driver_version": "535.104.05",
                "torch_version": "2.4.1+cu121",
                "cuda_runtime_versions": ["12.1.105", "13.0.96"],
            },
            {"driver_supports_torch_cuda": True, "driver_too_old": True},
        ),
        # Only the driver's CUDA version is known.
        (
            {"driver_cuda_version": "12.2", "torch_version": "2.4.1+cu121"},
            {"driver_torch_cuda_status": "full", "driver_too_old": False},
        ),
        (
            {"driver_cuda_version": "11.4", "torch_version": "2.4.1+cu121"},
            {"driver_torch_cuda_status": "unsupported", "driver_too_old": True},
        ),
        (
            {"driver_cuda_version": "12.0", "torch_cuda_version": "12.4"},
            {"driver_torch_cuda_status": "minor_version_compat", "driver_too_old": False},
        ),
        # A runtime newer than the tables: cannot say "too old" nor "fine".
        (
            {"driver_version": "580.65.06", "cuda_runtime_versions": ["14.0.10"]},
            {"driver_too_old": None, "driver_max_cuda_version": "13.0"},
        ),
    ],
)
def test_driver_facts(facts: dict[str, Any], expected: dict[str, object]) -> None:
    out = compat_facts(facts)
    for name, value in expected.items():
        assert out[name] == value, name


@pytest.mark.parametrize(
    ("facts", "supported", "unsupported"),
    [
        (
            {"torch_version": "2.6.0+cu124", "gpu_names": ["NVIDIA GeForce RTX 5090"]},
            False,
            ["sm_120"],
        ),
        ({"torch_version": "2.4.1+cu121", "gpu_names": ["NVIDIA A100-SXM4-40GB"]}, True, []),
        ({"torch_version": "2.4.1", "gpu_names": ["Tesla K80", "Tesla K80"]}, False, ["sm_37"]),
        (
            {"torch_version": "2.6.0+cu124", "gpu_compute_capabilities": ["8.6", "12.0"]},
            False,
            ["sm_120"],
        ),
        # One GPU unknown: nothing unsupported found, but not all GPUs checked.
        (
            {
                "torch_version": "2.4.1+cu121",
                "gpu_names": ["NVIDIA A100-SXM4-40GB", "NVIDIA Graphics Device"],
            },
            None,
            [],
        ),
    ],
)
def test_arch_facts(facts: dict[str, Any], supported: bool | None, unsupported: list[str]) -> None:
    out = compat_facts(facts)
    assert out["torch_arch_supported"] is supported
    assert out["unsupported_gpu_archs"] == unsupported
    assert isinstance(out["torch_compiled_archs"], list)


def test_torch_compiled_archs_fact() -> None:
    out = compat_facts({"torch_version": "2.11.0"})
    assert out["torch_compiled_archs"] == ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]
    assert out["torch_arch_supported"] is None  # no GPU known


def test_ptx_jit_fact() -> None:
    out = compat_facts({"torch_version": "2.12.0", "gpu_compute_capabilities": ["13.0"]})
    assert out["torch_arch_supported"] is True
    assert out["torch_arch_needs_ptx_jit"] is True


def test_non_official_build_has_no_arch_list() -> None:
    # A plain version whose CUDA differs from PyPI's flavour is a source/conda build.
    out = compat_facts({"torch_version": "2.4.1", "torch_cuda_version": "12.4"})
    assert out["torch_cuda_flavour"] == "cu124"
    assert out["torch_compiled_archs"] is None


def test_cpu_build_has_no_cuda_facts() -> None:
    out = compat_facts({"torch_version": "2.4.1+cpu", "driver_version": "550.54.14"})
    assert out["torch_cuda_flavour"] is None
    assert out["driver_supports_torch_cuda"] is None
    assert out["driver_too_old"] is None


def test_garbage_input_does_not_raise() -> None:
    out = compat_facts(
        {
            "driver_version": "n/a",
            "driver_cuda_version": 12,
            "torch_version": None,
            "cuda_runtime_versions": "12.1",
            "gpu_names": [None, 3, ""],
            "gpu_compute_capabilities": ["x"],
            "os": "plan9",
        }
    )
    assert all(value is None for value in out.values())


@pytest.mark.parametrize(
    ("names", "forward", "datacenter"),
    [
        (["NVIDIA A100-SXM4-40GB", "NVIDIA H100 80GB HBM3"], True, True),
        (["NVIDIA A100-SXM4-40GB", "NVIDIA GeForce RTX 3090"], False, False),
        (["NVIDIA RTX A6000"], None, False),
        ([], None, None),
    ],
)
def test_gpu_facts(names: list[str], forward: bool | None, datacenter: bool | None) -> None:
    out = compat_facts({"gpu_names": names})
    assert out["gpu_forward_compat_possible"] is forward
    assert out["gpu_is_datacenter"] is datacenter


def test_arch_list_read_from_the_binary_wins() -> None:
    # A source build for the RTX 5090 that the version string cannot reveal.
    out = compat_facts(
        {
            "torch_version": "2.6.0a0+git1234",
            "torch_cuda_version": "12.8",
            "torch_arch_list": "sm_80 sm_90 sm_120",
            "gpu_names": ["NVIDIA GeForce RTX 5090"],
        }
    )
    assert out["torch_compiled_archs"] == ["sm_80", "sm_90", "sm_120"]
    assert out["torch_arch_supported"] is True


def test_typed_version_captures_are_accepted() -> None:
    out = compat_facts({"driver_version": Version("470.82.01"), "torch_cuda_version": "12.1"})
    assert out["driver_too_old"] is True
