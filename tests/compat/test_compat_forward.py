"""cuda-compat package matrix (cuda_driver_compat.md §3) and the forward-compat hint."""

from __future__ import annotations

import pytest

from gpudoctor.compat import CompatPackageStatus, compat_package_status, driver_supports_runtime
from gpudoctor.version_numbers import Version

C = CompatPackageStatus.COMPATIBLE
NA = CompatPackageStatus.NOT_NEEDED
X = CompatPackageStatus.UNSUPPORTED
UNKNOWN = CompatPackageStatus.UNKNOWN


@pytest.mark.parametrize(
    ("package", "driver", "expected"),
    [
        ("13.4", "535.104.05", C),
        ("13.4", "615.20", NA),
        ("13.0", "570.124.06", C),
        ("13.0", "580.65.06", NA),
        ("13.0", "590.48.01", X),  # an older compat package on a newer driver
        ("12.8", "535.104.05", C),
        ("12.8", "580.65.06", X),
        ("12.4", "535.54.03", C),
        ("12.2", "535.54.03", NA),
        ("13.0", "550.54.14", X),  # new-feature branch: never a target
        ("13.0", "470.82.01", X),  # end-of-life branch
        ("11.8", "535.54.03", UNKNOWN),  # not in the matrix
    ],
)
def test_compat_package_status(package: str, driver: str, expected: CompatPackageStatus) -> None:
    assert compat_package_status(Version(package), Version(driver)) is expected


def test_unsupported_fix_mentions_cuda_compat_only_where_it_applies() -> None:
    on_ltsb = driver_supports_runtime(Version("535.104.05"), Version("13.0"))
    assert on_ltsb.fix is not None and "cuda-compat-13-0" in on_ltsb.fix
    on_eol = driver_supports_runtime(Version("470.82.01"), Version("12.1"))
    assert on_eol.fix is not None and "cuda-compat" not in on_eol.fix
