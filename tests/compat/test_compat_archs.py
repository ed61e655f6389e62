"""Compiled architectures vs. compute capability; expectations from torch_builds.md."""

from __future__ import annotations

import pytest

from gpudoctor.compat import (
    ArchList,
    ArchStatus,
    arch_supported,
    parse_compute_capability,
    torch_compiled_archs,
)
from gpudoctor.version_numbers import Version

NATIVE = ArchStatus.NATIVE
PTX_JIT = ArchStatus.PTX_JIT
UNSUPPORTED = ArchStatus.UNSUPPORTED


@pytest.mark.parametrize(
    ("cc", "torch_version", "flavour", "expected", "via"),
    [
        ("8.0", "2.4.1+cu121", None, NATIVE, "sm_80"),  # A100
        ("8.6", "2.4.1+cu121", None, NATIVE, "sm_86"),  # RTX 3090
        ("8.9", "2.4.1+cu121", None, NATIVE, "sm_86"),  # RTX 4090 runs the closest cubin
        ("9.0", "2.4.1+cu121", None, NATIVE, "sm_90"),  # H100
        ("12.0", "2.6.0+cu124", None, UNSUPPORTED, None),  # RTX 5090 on cu124
        ("12.0", "2.6.0", "cu126", UNSUPPORTED, None),  # RTX 50xx with cu126 or older
        ("12.0", "2.7.1+cu128", None, NATIVE, "sm_120"),
        ("10.0", "2.6.0+cu126", None, UNSUPPORTED, None),  # B200 with cu126
        ("10.3", "2.11.0", None, NATIVE, "sm_100"),  # B300 on 2.11 cu130
        ("3.7", "2.4.1", None, UNSUPPORTED, None),  # K80 on 2.x cu121
        ("3.7", "2.5.1+cu124", None, UNSUPPORTED, None),
        ("3.7", "2.1.0+cu118", None, NATIVE, "sm_37"),  # last sm_37 wheels are cu118
        ("7.0", "2.11.0+cu128", None, UNSUPPORTED, None),  # V100, Volta dropped again
        ("7.0", "2.10.0+cu128", None, NATIVE, "sm_70"),
        ("7.0", "2.11.0", None, UNSUPPORTED, None),  # cu130 starts at 7.5
        ("6.1", "2.8.0+cu128", None, UNSUPPORTED, None),  # GTX 1080 on cu128
        ("6.1", "2.8.0+cu126", None, NATIVE, "sm_60"),
        ("7.5", "2.11.0", None, NATIVE, "sm_75"),  # T4 on the 2.11 PyPI wheel
    ],
)
def test_torch_builds_on_gpus(
    cc: str, torch_version: str, flavour: str | None, expected: ArchStatus, via: str | None
) -> None:
    archs = torch_compiled_archs(torch_version, flavour)
    assert archs is not None
    result = arch_supported(cc, archs)
    assert result.status is expected
    assert result.via == via
    assert result.reason


def test_unsupported_names_no_kernel_image_and_a_fix() -> None:
    archs = torch_compiled_archs("2.6.0+cu124", None)
    assert archs is not None
    result = arch_supported("12.0", archs)
    assert result.runs is False
    assert "no kernel image is available" in result.reason
    assert "209" in result.reason
    assert result.fix is not None and "sm_120" in result.fix


@pytest.mark.parametrize(
    ("cc", "arch_list", "expected", "via"),
    [
        # PTX is JIT-compiled for any capability at or above it.
        ("12.0", "sm_75 sm_80 sm_86 sm_90 compute_90", PTX_JIT, "compute_90"),
        ("9.0", "sm_60 sm_70 sm_80 sm_89 compute_90", PTX_JIT, "compute_90"),  # TF 2.20 list
        ("13.0", "sm_75 sm_80 sm_90 sm_100 sm_120 compute_120", PTX_JIT, "compute_120"),
        ("8.6", "sm_80 compute_80", NATIVE, "sm_80"),  # SASS wins over PTX
        ("7.5", "sm_80 compute_80", UNSUPPORTED, None),  # PTX does not run on older GPUs
        # Cubins run only within a major and on the same or a newer minor.
        ("8.0", "sm_86", UNSUPPORTED, None),
        ("9.0", "sm_80 sm_86", UNSUPPORTED, None),
        # Arch-specific "a" variants run only on exactly that capability.
        ("9.0", "sm_90a", NATIVE, "sm_90a"),
        ("10.0", "sm_90a", UNSUPPORTED, None),
        ("10.3", "sm_100a", UNSUPPORTED, None),
        ("10.0", "compute_90a", UNSUPPORTED, None),
        # Family-specific "f" variants run within their family (sm_100f on 10.0/10.3).
        ("10.3", "sm_100f", NATIVE, "sm_100f"),
        ("12.0", "sm_100f", UNSUPPORTED, None),
        ("12.1", "sm_120f", NATIVE, "sm_120f"),
        # PyTorch's exceptions: 8.0/8.6 cubins do not cover 8.7, 10.0 does not cover 10.1.
        ("8.7", "sm_80 sm_86", UNSUPPORTED, None),
        ("10.1", "sm_100", UNSUPPORTED, None),
    ],
)
def test_binary_compatibility_rule(
    cc: str, arch_list: str, expected: ArchStatus, via: str | None
) -> None:
    result = arch_supported(cc, ArchList.from_strings(arch_list))
    assert (result.status, result.via) == (expected, via)


def test_ptx_needs_a_driver_new_enough_for_it() -> None:
    # CUDA 12.8 PTX needs the 12.8 toolkit driver (570.26); 550 refuses it (error 222).
    archs = ArchList.from_strings("sm_80 sm_90 compute_90", cuda=Version("12.8"))
    old = arch_supported("12.0", archs, driver=Version("550.54.14"))
    assert old.status is UNSUPPORTED
    assert "222" in old.reason
    new = arch_supported("12.0", archs, driver=Version("570.124.06"))
    assert new.status is PTX_JIT


def test_arch_list_from_strings() -> None:
    archs = ArchList.from_strings("sm_75 sm_80, compute_120 bogus sm_90a")
    assert archs.sass == ("sm_75", "sm_80", "sm_90a")
    assert archs.ptx == ("compute_120",)
    assert archs.all == ("sm_75", "sm_80", "sm_90a", "compute_120")
    assert ArchList.from_strings(["sm_37", "compute_37"]).ptx == ("compute_37",)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("8.6", "8.6"), ("86", "8.6"), ("sm_120", "12.0"), ("12.0", "12.0"), ("x", None)],
)
def test_parse_compute_capability(text: str, expected: str | None) -> None:
    parsed = parse_compute_capability(text)
    assert (str(parsed) if parsed is not None else None) == expected


def test_invalid_compute_capability() -> None:
    with pytest.raises(ValueError):
        arch_supported("eight", ArchList.from_strings("sm_80"))
