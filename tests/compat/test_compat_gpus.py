"""GPU name lookups; compute capabilities from NVIDIA's table as restated in torch_builds.md."""

from __future__ import annotations

import pytest

from gpudoctor.compat import (
    compute_capability_for_gpu,
    forward_compat_possible,
    is_datacenter_gpu,
    lookup_gpu,
)
from gpudoctor.compat.tables import gpu_table


@pytest.mark.parametrize(
    ("name", "cc", "datacenter"),
    [
        ("NVIDIA H100 80GB HBM3", "9.0", True),
        ("NVIDIA GeForce RTX 5090", "12.0", False),
        ("Tesla K80", "3.7", True),
        ("NVIDIA A100-SXM4-40GB", "8.0", True),
        ("NVIDIA GeForce RTX 2080 Ti", "7.5", False),
        ("Tesla V100-SXM2-16GB", "7.0", True),
        ("Tesla T4", "7.5", True),
        ("NVIDIA L4", "8.9", True),
        ("NVIDIA L40S", "8.9", True),
        ("NVIDIA A10", "8.6", True),
        ("NVIDIA A30", "8.0", True),
        ("NVIDIA A2", "8.6", True),
        ("NVIDIA GeForce RTX 3090", "8.6", False),
        ("NVIDIA GeForce RTX 4090", "8.9", False),
        ("NVIDIA RTX A6000", "8.6", False),
        ("NVIDIA RTX 6000 Ada Generation", "8.9", False),
        ("Quadro RTX 6000", "7.5", False),
        ("NVIDIA T1000", "7.5", False),
        ("NVIDIA H200", "9.0", True),
        ("NVIDIA GH200 480GB", "9.0", True),
        ("NVIDIA H20", "9.0", True),
        ("NVIDIA B200", "10.0", True),
        ("NVIDIA GB300", "10.3", True),
        ("NVIDIA GB10", "12.1", False),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0", True),
        ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "12.0", False),
        ("NVIDIA GeForce RTX 5090 Laptop GPU", "12.0", False),
        ("Tesla P100-PCIE-16GB", "6.0", True),
        ("Tesla P40", "6.1", True),
        ("NVIDIA GeForce GTX 1080 Ti", "6.1", False),
        ("NVIDIA GeForce GTX 1660 SUPER", "7.5", False),
        ("NVIDIA TITAN RTX", "7.5", False),
        ("NVIDIA TITAN V", "7.0", False),
        ("NVIDIA TITAN Xp", "6.1", False),
        ("GeForce GTX TITAN X", "5.2", False),
        ("Tesla M60", "5.2", True),
        ("GeForce GTX 750 Ti", "5.0", False),
        ("Tesla K40m", "3.5", True),
        ("  nvidia_geforce_rtx_3090  ", "8.6", False),
    ],
)
def test_known_gpu_names(name: str, cc: str, datacenter: bool) -> None:
    assert compute_capability_for_gpu(name) == cc
    assert is_datacenter_gpu(name) is datacenter


@pytest.mark.parametrize(
    "name",
    [
        "",
        "NVIDIA GeForce GT 710",
        "AMD Radeon RX 7900 XTX",
        "Intel(R) UHD Graphics 630",
        "NVIDIA A800-SXM4-80GB",
        "NVIDIA Graphics Device",
    ],
)
def test_unknown_gpu_names(name: str) -> None:
    assert compute_capability_for_gpu(name) is None
    assert is_datacenter_gpu(name) is None
    assert forward_compat_possible(name) is None


@pytest.mark.parametrize(
    ("name", "possible"),
    [
        ("NVIDIA A100-SXM4-40GB", True),  # datacenter
        ("NVIDIA H100 80GB HBM3", True),
        ("NVIDIA Jetson AGX Orin", True),  # Jetson
        ("NVIDIA GeForce RTX 3090", False),  # consumer: error 804
        ("NVIDIA GeForce RTX 5090", False),
        ("NVIDIA RTX A6000", None),  # only unnamed NGC-Server-Ready RTX SKUs
    ],
)
def test_forward_compat_possible(name: str, possible: bool | None) -> None:
    assert forward_compat_possible(name) is possible


def test_every_example_is_claimed_by_its_own_pattern() -> None:
    # Order matters (first match wins): an example caught by an earlier pattern is a bug.
    for entry in gpu_table().gpus:
        for example in entry.examples:
            assert lookup_gpu(example) is entry, example
