"""Two CUDA majors of the same NVIDIA library installed side by side.

NVIDIA's runtime wheels for CUDA 12 and 13 (and 11) share the ``site-packages/nvidia/``
namespace, so ``nvidia-cublas-cu11`` next to ``nvidia-cublas-cu12`` — typically one
framework built for each — can make a framework load the other's libraries (symptoms:
``CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH``, "undefined symbol",
``libcudart.so.12: cannot open shared object file``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from gpudoctor.compat.tables import torch_builds_table
from gpudoctor.version_numbers import Version

__all__ = ["CudaMajorConflict", "cuda_major_conflicts", "library_cuda_major"]

_SUFFIXED = re.compile(r"^(nvidia-[a-z0-9-]+?)-cu(\d{2})$")


@dataclass(frozen=True)
class CudaMajorConflict:
    """One NVIDIA library installed for more than one CUDA major.

    Attributes:
        library: the library without its CUDA suffix (``"nvidia-cublas"``).
        majors: the CUDA majors found, ascending (``(11, 12)``).
        packages: ``(distribution, version)`` pairs involved.
        reason: one or two sentences for a human.
        fix: what to do.
    """

    library: str
    majors: tuple[int, ...]
    packages: tuple[tuple[str, str], ...]
    reason: str
    fix: str


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name.strip()).lower()


def library_cuda_major(distribution: str, version: Version | str) -> tuple[str, int] | None:
    """``("nvidia-cublas-cu12", ...)`` → ``("nvidia-cublas", 12)``.

    CUDA 13 wheels have no suffix (``nvidia-cuda-runtime`` 13.0.96, ``nvidia-cublas`` 13.1);
    for the ones whose version follows the CUDA version the major comes from the version.
    Other distributions give ``None``.
    """
    name = _normalise(distribution)
    match = _SUFFIXED.match(name)
    if match is not None:
        return match.group(1), int(match.group(2))
    if name in torch_builds_table().unsuffixed_cuda_versioned_wheels:
        parsed = version if isinstance(version, Version) else Version(version)
        return name, parsed.major
    return None


def cuda_major_conflicts(runtimes: Sequence[tuple[str, Version | str]]) -> list[CudaMajorConflict]:
    """Find NVIDIA libraries installed for two or more CUDA majors.

    Args:
        runtimes: installed ``(distribution name, version)`` pairs, e.g. from
            ``importlib.metadata``; unrelated distributions are ignored.

    Returns:
        One conflict per library, sorted by library name; empty when there is none.
    """
    found: dict[str, dict[int, list[tuple[str, str]]]] = {}
    for distribution, version in runtimes:
        try:
            identified = library_cuda_major(distribution, version)
        except ValueError:
            continue
        if identified is None:
            continue
        library, major = identified
        found.setdefault(library, {}).setdefault(major, []).append((distribution, str(version)))
    conflicts = []
    for library in sorted(found):
        by_major = found[library]
        if len(by_major) < 2:
            continue
        majors = tuple(sorted(by_major))
        packages = tuple(pair for major in majors for pair in by_major[major])
        listed = ", ".join(f"{name} {version}" for name, version in packages)
        conflicts.append(
            CudaMajorConflict(
                library=library,
                majors=majors,
                packages=packages,
                reason=(
                    f"{library} is installed for CUDA {_join(majors)} ({listed}). "
                    "These wheels share "
                    "the site-packages/nvidia/ namespace, so a framework can load the other "
                    "major's libraries (CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH, undefined "
                    "symbol, or 'cannot open shared object file')."
                ),
                fix=(
                    "Keep one CUDA major per environment: uninstall the wheels of the major no "
                    "installed framework needs, or give each framework its own virtual "
                    "environment."
                ),
            )
        )
    return conflicts


def _join(majors: tuple[int, ...]) -> str:
    names = [str(m) for m in majors]
    return ", ".join(names[:-1]) + " and " + names[-1]
