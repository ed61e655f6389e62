"""Sizes and versions as they appear in logs."""

from __future__ import annotations

import pytest

from gpudoctor.units import format_size, parse_size
from gpudoctor.version_numbers import Version, parse_version


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2.00 GiB", 2 * 1024**3),
        ("20.00 MiB", 20 * 1024**2),
        ("512 KiB", 512 * 1024),
        ("1024 bytes", 1024),
        ("0 bytes", 0),
        ("3.5GB", int(3.5 * 1024**3)),
        ("14.94 GiB", round(14.94 * 1024**3)),
    ],
)
def test_parse_size(text: str, expected: int) -> None:
    assert parse_size(text) == expected


def test_parse_size_rejects_non_sizes() -> None:
    assert parse_size("lots") is None
    assert parse_size("") is None


@pytest.mark.parametrize(
    ("size", "text"),
    [(2 * 1024**3, "2.00 GiB"), (20 * 1024**2, "20.00 MiB"), (512, "512 bytes")],
)
def test_format_size_matches_pytorch(size: int, text: str) -> None:
    assert format_size(size) == text


def test_versions_compare_numerically() -> None:
    assert Version("12.10") > Version("12.4")
    assert Version("525.60.13") >= Version("525.60.13")
    assert Version("470.82.01") < "525.60.13"
    assert Version("12.4") == Version("12.4.0")
    assert Version("2.4.1+cu121").parts == (2, 4, 1)


def test_parse_version_none_for_garbage() -> None:
    assert parse_version("unknown") is None
    assert parse_version("v1.2") == Version("1.2")
