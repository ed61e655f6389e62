"""Driver vs. CUDA runtime verdicts; expected values from cuda_driver_compat.md."""

from __future__ import annotations

import pytest

from gpudoctor.compat import (
    RuntimeStatus,
    driver_supports_runtime,
    max_cuda_for_driver,
    minimum_driver_for,
    minor_compat_floor,
)
from gpudoctor.version_numbers import Version

FULL = RuntimeStatus.FULL
MINOR = RuntimeStatus.MINOR_VERSION_COMPAT
UNSUPPORTED = RuntimeStatus.UNSUPPORTED
UNKNOWN = RuntimeStatus.UNKNOWN


@pytest.mark.parametrize(
    ("driver", "runtime", "os", "expected"),
    [
        # 12.x family floor is 525.60.13: R470 cannot run any CUDA 12 runtime.
        ("470.82.01", "12.1", "linux", UNSUPPORTED),
        ("470.141.03", "12.4", "linux", UNSUPPORTED),
        # Above the 12.x floor but below 12.4's toolkit driver 550.54.14.
        ("525.60.13", "12.4", "linux", MINOR),
        ("550.54.14", "12.4", "linux", FULL),
        ("550.54.14", "12.4.127", "linux", FULL),  # a runtime wheel's version
        ("550.120", "12.8", "linux", MINOR),  # 12.8 GA needs 570.26
        ("570.26", "12.8", "linux", FULL),
        ("535.104.05", "12.2", "linux", FULL),
        ("525.85.12", "11.8", "linux", FULL),  # backward compatibility
        ("590.48.01", "12.1", "linux", FULL),
        # 13.x: floor 580, 13.0 GA 580.65.06; S3's example runs 13.4 apps on 580.65.06.
        ("580.65.06", "13.0", "linux", FULL),
        ("580.65.06", "13.2", "linux", MINOR),
        ("580.65.06", "13.4", "linux", MINOR),
        ("575.57.08", "13.0", "linux", UNSUPPORTED),
        # 11.x: floor 450.80.02 (11.1-11.8); 11.0 GA needs only 450.51.05.
        ("450.80.02", "11.8", "linux", MINOR),
        ("450.51.05", "11.0", "linux", FULL),
        ("450.51.05", "11.1", "linux", UNSUPPORTED),
        # 10.x has no minor-version compatibility.
        ("418.39", "10.2", "linux", UNSUPPORTED),
        ("440.33", "10.2", "linux", FULL),
        # No 12.7 toolkit exists; R565 reports 12.7.
        ("565.57.01", "12.7", "linux", FULL),
        ("560.35.03", "12.7", "linux", MINOR),
        # Newer than the tables.
        ("580.65.06", "13.9", "linux", UNKNOWN),
        ("580.65.06", "14.0", "linux", UNKNOWN),
        # Windows numbers differ (12.4 GA 551.61, 12.0 GA 527.41, 12.x floor 528.33).
        ("551.61", "12.4", "windows", FULL),
        ("546.12", "12.4", "windows", MINOR),
        ("527.41", "12.0", "windows", FULL),
        ("472.50", "12.0", "win32", UNSUPPORTED),
    ],
)
def test_driver_supports_runtime(
    driver: str, runtime: str, os: str, expected: RuntimeStatus
) -> None:
    result = driver_supports_runtime(Version(driver), Version(runtime), os=os)
    assert result.status is expected
    assert result.reason
    if expected in (MINOR, UNSUPPORTED):
        assert result.fix


def test_minor_version_compat_carries_ptx_and_api_caveats() -> None:
    result = driver_supports_runtime(Version("525.60.13"), Version("12.4"))
    assert result.status is MINOR
    assert result.runs is True
    assert str(result.full_support_driver) == "550.54.14"
    assert str(result.minor_compat_floor) == "525.60.13"
    caveats = " ".join(result.caveats)
    assert "cudaErrorUnsupportedPtxVersion" in caveats and "222" in caveats
    assert "cudaErrorCallRequiresNewerDriver" in caveats and "36" in caveats
    assert "222" in result.reason


def test_unsupported_names_error_35_and_the_fix() -> None:
    result = driver_supports_runtime(Version("470.82.01"), Version("12.1"))
    assert result.runs is False
    assert "cudaErrorInsufficientDriver" in result.reason
    assert result.fix is not None and "530.30.02" in result.fix


def test_unknown_runtime_says_tables_are_older() -> None:
    result = driver_supports_runtime(Version("580.65.06"), Version("14.0"))
    assert result.runs is None
    assert "newer than gpudoctor's tables" in result.reason


def test_reported_driver_cuda_overrides_tables() -> None:
    # A driver newer than the tables that itself reports CUDA 13.5.
    result = driver_supports_runtime(
        Version("620.10"), Version("13.5"), driver_cuda=Version("13.5")
    )
    assert result.status is FULL


def test_unknown_os_is_an_error() -> None:
    with pytest.raises(ValueError, match="darwin"):
        driver_supports_runtime(Version("550.54.14"), Version("12.4"), os="darwin")


@pytest.mark.parametrize(
    ("driver", "max_cuda"),
    [
        ("410.48", "10.0"),
        ("418.39", "10.1"),
        ("450.80.02", "11.0"),
        ("470.141.03", "11.4"),
        ("510.73.08", "11.6"),
        ("525.60.13", "12.0"),
        ("528.49", "12.0"),  # Windows
        ("535.104.05", "12.2"),
        ("550.54.14", "12.4"),
        ("565.57.01", "12.7"),
        ("566.36", "12.7"),  # Windows
        ("575.57.08", "12.9"),
        ("580.65.06", "13.0"),
        ("590.48.01", "13.1"),
        ("595.45.04", "13.2"),
        ("610.43.02", "13.3"),
        ("615.10", "13.4"),
        ("616.00", "13.4"),
    ],
)
def test_max_cuda_for_driver(driver: str, max_cuda: str) -> None:
    assert max_cuda_for_driver(Version(driver)) == Version(max_cuda)


@pytest.mark.parametrize("driver", ["396.26", "384.81", "700.12"])
def test_max_cuda_outside_the_tables(driver: str) -> None:
    assert max_cuda_for_driver(Version(driver)) is None


@pytest.mark.parametrize(
    ("runtime", "os", "expected"),
    [
        ("12.4", "linux", "550.54.14"),
        ("12.4.127", "linux", "550.54.14"),
        ("12.4", "windows", "551.61"),
        ("11.8", "linux", "520.61.05"),
        ("12.0", "linux", "525.60.13"),
        ("13.0", "linux", "580.65.06"),
        ("13.3", "linux", "610.43.02"),
        # No exact driver published: the branch that reports that CUDA version.
        ("13.4", "linux", "615"),
        ("13.0", "windows", "580"),
        ("12.7", "linux", "565"),
        ("14.0", "linux", None),
    ],
)
def test_minimum_driver_for(runtime: str, os: str, expected: str | None) -> None:
    found = minimum_driver_for(Version(runtime), os=os)
    assert (str(found) if found is not None else None) == expected


@pytest.mark.parametrize(
    ("runtime", "os", "expected"),
    [
        ("11.8", "linux", "450.80.02"),
        ("11.8", "windows", "452.39"),
        ("12.4", "linux", "525.60.13"),
        ("12.4", "windows", "528.33"),
        ("13.2", "linux", "580"),
        ("10.2", "linux", None),
    ],
)
def test_minor_compat_floor(runtime: str, os: str, expected: str | None) -> None:
    found = minor_compat_floor(Version(runtime), os=os)
    assert (str(found) if found is not None else None) == expected
