"""Checks on the CUDA libraries a job will load: two CUDA majors of one NVIDIA library
installed side by side (``cuda-majors``), and ``LD_LIBRARY_PATH`` entries from another CUDA
major that the dynamic loader searches before the wheels' own copies (``ld-library-path``).

The wheels' libraries are named after their package version's major
(``nvidia-cudnn-cu12`` 8.9.2 ships ``libcudnn.so.8``, ``nvidia-cusolver-cu12`` 11.4.5
``libcusolver.so.11``). A folder on ``LD_LIBRARY_PATH`` holding a file of the same name,
built for another CUDA major, shadows it. Live runs list the folders; a snapshot from
another node only has the path, so there the CUDA version in the path name
(``/usr/local/cuda-11.8/lib64``) is all there is to go on.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpudoctor.check.context import CheckContext
from gpudoctor.check.model import CheckResult, Status, worst
from gpudoctor.snapshot.model import VersionsInfo
from gpudoctor.version_numbers import parse_version

if TYPE_CHECKING:
    pass

#: Wheel component → the library file base name it ships.
_LIBRARIES = {
    "cuda-runtime": ("libcudart",),
    "cublas": ("libcublas", "libcublasLt"),
    "cudnn": ("libcudnn",),
    "nccl": ("libnccl",),
    "cufft": ("libcufft",),
    "curand": ("libcurand",),
    "cusolver": ("libcusolver",),
    "cusparse": ("libcusparse",),
    "cusparselt": ("libcusparseLt",),
    "nvjitlink": ("libnvJitLink",),
    "cuda-nvrtc": ("libnvrtc",),
    "cuda-cupti": ("libcupti",),
}
_PATH_CUDA = re.compile(r"cuda[-_]?(\d{1,2})(?:\.\d+)?(?![\d.])", re.IGNORECASE)
_CUDART = re.compile(r"^libcudart\.so\.(\d+)")


def check_cuda_majors(ctx: CheckContext) -> CheckResult:
    """No NVIDIA library is installed for two CUDA majors at once."""
    check_id, title = "cuda-majors", "One CUDA major per NVIDIA library"
    packages = ctx.snapshot.versions.cuda_packages
    if not packages:
        return CheckResult(check_id, title, Status.PASS, "No NVIDIA CUDA wheels are installed.")
    from gpudoctor.compat import cuda_major_conflicts

    conflicts = cuda_major_conflicts([(p.name, p.version) for p in packages])
    if not conflicts:
        majors = sorted({p.cuda_major for p in packages if p.cuda_major is not None})
        listed = ", ".join(map(str, majors)) or "unknown"
        return CheckResult(
            check_id,
            title,
            Status.PASS,
            f"{len(packages)} NVIDIA wheel(s), all for CUDA {listed}.",
        )
    return CheckResult(
        check_id,
        title,
        Status.WARN,
        " ".join(c.reason for c in conflicts),
        conflicts[0].fix,
        tuple(
            f"{c.library}: CUDA {', '.join(map(str, c.majors))} "
            f"({', '.join(f'{n} {v}' for n, v in c.packages)})"
            for c in conflicts
        ),
    )


def wheel_library_files(versions: VersionsInfo) -> dict[str, tuple[str, int | None]]:
    """``{"libcudnn.so.8": ("nvidia-cudnn-cu12", 12), ...}`` for the installed wheels."""
    files: dict[str, tuple[str, int | None]] = {}
    for package in versions.cuda_packages:
        version = parse_version(package.version)
        if version is None:
            continue
        for base in _LIBRARIES.get(package.component, ()):
            files.setdefault(f"{base}.so.{version.major}", (package.name, package.cuda_major))
    return files


def _wheel_majors(versions: VersionsInfo) -> set[int]:
    """The CUDA majors the installed software runs on: the CUDA frameworks' majors, else the
    runtime wheels', else every NVIDIA wheel's (a stray second major does not count)."""
    frameworks = {
        parsed.major
        for f in versions.frameworks
        if f.is_cuda_build and (parsed := parse_version(f.cuda_version or "")) is not None
    }
    if frameworks:
        return frameworks
    packages = versions.cuda_packages
    runtimes = {p.cuda_major for p in packages if p.component == "cuda-runtime"}
    found = runtimes or {p.cuda_major for p in packages}
    return {m for m in found if m is not None}


def _folder_major(folder: str, names: Sequence[str] | None) -> int | None:
    for name in sorted(names or ()):
        match = _CUDART.match(name)
        if match:
            return int(match.group(1))
    found = _PATH_CUDA.findall(folder)
    return int(found[-1]) if found else None


def check_ld_library_path(ctx: CheckContext) -> CheckResult:
    """``LD_LIBRARY_PATH`` does not put another CUDA major ahead of the wheels' libraries."""
    check_id, title = "ld-library-path", "LD_LIBRARY_PATH does not shadow the CUDA wheels"
    value = ctx.snapshot.environment.get("LD_LIBRARY_PATH", "")
    folders = [f for f in value.split(":") if f.strip()]
    if not folders:
        return CheckResult(check_id, title, Status.PASS, "LD_LIBRARY_PATH is not set.")
    versions = ctx.snapshot.versions
    majors = _wheel_majors(versions)
    if not majors:
        return CheckResult(
            check_id, title, Status.PASS, "No CUDA wheel or CUDA framework build to shadow."
        )
    wheel_files = wheel_library_files(versions)
    wheels = "/".join(map(str, sorted(majors)))
    statuses: list[Status] = []
    details: list[str] = []
    problems: list[str] = []
    bad_folders: list[str] = []
    for folder in folders:
        names = ctx.list_dir(folder) if ctx.list_dir is not None else None
        major = _folder_major(folder, names)
        shadowed = sorted(
            f
            for f, (_, wheel_major) in wheel_files.items()
            if names is not None and f in names and wheel_major != major
        )
        if major is None or major in majors:
            statuses.append(Status.PASS)
            what = f"CUDA {major}" if major is not None else "no CUDA major seen"
            details.append(f"{folder}: {what}")
            continue
        bad_folders.append(folder)
        if shadowed:
            statuses.append(Status.FAIL)
            owners = ", ".join(sorted({wheel_files[f][0] for f in shadowed}))
            details.append(f"{folder}: CUDA {major}, shadows {', '.join(shadowed)}")
            problems.append(
                f"{folder} (CUDA {major}) holds {', '.join(shadowed)}, the same file names as "
                f"the CUDA {wheels} wheels ({owners}); the dynamic loader takes them first, "
                "which shows as 'undefined symbol' or CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH."
            )
        else:
            statuses.append(Status.WARN)
            seen = "its files" if names is not None else "its name"
            details.append(f"{folder}: CUDA {major} (from {seen})")
            problems.append(
                f"{folder} is CUDA {major} (from {seen}) while the installed wheels are CUDA "
                f"{wheels}: libraries loaded by name (libcudart.so, libcudnn.so) can come from "
                "it instead of the wheels."
            )
    status = worst(statuses)
    if status is Status.PASS:
        return CheckResult(
            check_id,
            title,
            status,
            f"No LD_LIBRARY_PATH entry is from another CUDA major than the wheels' ({wheels}).",
            None,
            tuple(details),
        )
    return CheckResult(
        check_id,
        title,
        status,
        " ".join(problems),
        f"Remove {', '.join(bad_folders)} from LD_LIBRARY_PATH for this job (the wheels bring "
        f"their own CUDA libraries), or point it at a CUDA {wheels} installation.",
        tuple(details),
    )
