"""The ``gpu-arch`` check: can the installed frameworks run kernels on these GPUs?

Each GPU's compute capability (from NVML, else from its name) is compared with the
architectures the framework was compiled for: an official PyTorch wheel's list from the
compatibility tables, TensorFlow's from its ``build_info.py``, a JAX CUDA plugin's minimum
capability. A cubin (SASS) for the GPU or PTX the driver can JIT passes; neither fails with
"no kernel image is available for execution on the device". Builds whose list is not known
(source builds, CuPy) are listed in the details and not judged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpudoctor.check.context import CheckContext
from gpudoctor.check.model import CheckResult, Status, worst
from gpudoctor.snapshot.model import FrameworkInfo, GpuInfo
from gpudoctor.version_numbers import Version, parse_version

if TYPE_CHECKING:
    from gpudoctor.compat import ArchList

CHECK_ID = "gpu-arch"
TITLE = "GPU architectures covered by the frameworks"


@dataclass(frozen=True)
class _Item:
    status: Status
    line: str
    reason: str | None = None
    fix: str | None = None


@dataclass(frozen=True)
class _GpuGroup:
    name: str
    cc: str
    indices: tuple[int, ...]

    @property
    def label(self) -> str:
        return f"GPU {','.join(map(str, self.indices))} {self.name} (sm_{self.cc.replace('.', '')})"


def _gpu_groups(gpus: tuple[GpuInfo, ...]) -> tuple[list[_GpuGroup], list[str]]:
    from gpudoctor.compat import compute_capability_for_gpu, parse_compute_capability

    groups: dict[tuple[str, str], list[int]] = {}
    unknown: list[str] = []
    for gpu in gpus:
        name = gpu.name or "unknown GPU"
        given = parse_compute_capability(gpu.compute_capability or "")
        cc = str(given) if given is not None else compute_capability_for_gpu(name)
        if cc is None:
            unknown.append(f"GPU {gpu.index} {name}: compute capability unknown, not judged")
            continue
        groups.setdefault((name, cc), []).append(gpu.index)
    return [_GpuGroup(n, c, tuple(i)) for (n, c), i in groups.items()], unknown


def _torch_archs(fw: FrameworkInfo) -> tuple[ArchList | None, str]:
    from gpudoctor.compat import flavour_cuda_version, torch_compiled_archs, torch_cuda_flavour

    version = fw.version or ""
    official = torch_cuda_flavour(version)
    built = parse_version(fw.cuda_version or "")
    if official is not None and built is not None:
        official_cuda = flavour_cuda_version(official)
        if official_cuda is None or official_cuda != Version(f"{built.major}.{built.minor}"):
            # Built for another CUDA than the official wheel of that version: not a PyPI or
            # download.pytorch.org wheel, so its compiled list is not in the tables.
            official = None
    archs = torch_compiled_archs(version, official) if official is not None else None
    if archs is None:
        return None, f"torch {version}: compiled architectures unknown (not an official wheel)"
    return archs, f"torch {version}"


def _framework_archs(fw: FrameworkInfo) -> tuple[ArchList | None, str]:
    from gpudoctor.compat import ArchList

    if fw.name == "torch":
        return _torch_archs(fw)
    label = f"{fw.name} {fw.version or ''}".strip()
    if fw.compute_capabilities:
        cuda = parse_version(fw.cuda_version or "")
        return ArchList.from_strings(fw.compute_capabilities, cuda=cuda), label
    return None, f"{label}: compiled architectures unknown"


def _judge_archs(label: str, archs: ArchList, group: _GpuGroup, driver: Version | None) -> _Item:
    from gpudoctor.compat import ArchStatus, arch_supported, torch_builds_supporting

    verdict = arch_supported(group.cc, archs, driver=driver)
    where = f"{label} on {group.label}"
    if verdict.status is ArchStatus.NATIVE:
        return _Item(Status.PASS, f"{where}: native ({verdict.via})")
    if verdict.status is ArchStatus.PTX_JIT:
        return _Item(Status.PASS, f"{where}: PTX JIT ({verdict.via})", None, verdict.fix)
    fix = verdict.fix
    if label.startswith("torch"):
        builds = torch_builds_supporting(group.cc)
        if len(builds) > 1:
            fix = (
                f"{fix} Official PyTorch builds with {group.cc} kernels include {builds[0]} "
                f"(oldest) and {builds[-1]} (newest)."
            )
        elif builds:
            fix = f"{fix} The official PyTorch build with {group.cc} kernels is {builds[0]}."
    note = " (compiled list from the tables, marked uncertain there)" if archs.uncertain else ""
    return _Item(
        Status.FAIL,
        f"{where}: no kernel image{note}",
        f"{label} on {group.label}: {verdict.reason}",
        fix,
    )


def _jax_items(fw: FrameworkInfo, groups: list[_GpuGroup]) -> list[_Item]:
    from gpudoctor.compat import jax_plugin_for, parse_compute_capability

    items: list[_Item] = []
    for dist in (fw.distribution or "").split(","):
        plugin = jax_plugin_for(dist) if dist else None
        if plugin is None or plugin.min_compute_capability is None:
            continue
        floor = parse_compute_capability(plugin.min_compute_capability)
        for group in groups:
            cc = parse_compute_capability(group.cc)
            if floor is None or cc is None:
                continue
            where = f"{plugin.package} on {group.label}"
            if cc >= floor:
                items.append(_Item(Status.PASS, f"{where}: supported (>= {floor})"))
            else:
                items.append(
                    _Item(
                        Status.FAIL,
                        f"{where}: below the minimum {floor}",
                        f"{where}: JAX's CUDA {plugin.cuda_major} plugin needs compute "
                        f"capability {floor} or newer.",
                        "Use a GPU the plugin supports, or an older JAX release.",
                    )
                )
    return items


def check_gpu_arch(ctx: CheckContext) -> CheckResult:
    """Every GPU's compute capability is covered by each framework's compiled code."""
    cuda_frameworks = [f for f in ctx.snapshot.versions.frameworks if f.is_cuda_build]
    if not cuda_frameworks:
        return CheckResult(
            CHECK_ID, TITLE, Status.SKIP, "No CUDA build of torch, TensorFlow or JAX installed."
        )
    skip = ctx.gpu_skip_reason()
    if skip is not None:
        return CheckResult(CHECK_ID, TITLE, Status.SKIP, f"{skip}.")
    groups, details = _gpu_groups(ctx.usable_gpus)
    driver = parse_version(ctx.snapshot.driver.driver_version or "")
    items: list[_Item] = []
    for fw in cuda_frameworks:
        if fw.name == "jax":
            items.extend(_jax_items(fw, groups))
            continue
        archs, label = _framework_archs(fw)
        if archs is None:
            details.append(label)
            continue
        items.extend(_judge_archs(label, archs, g, driver) for g in groups)
    all_details = tuple([i.line for i in items] + details)
    if not items:
        return CheckResult(
            CHECK_ID,
            TITLE,
            Status.SKIP,
            "No installed framework's compiled architectures are known.",
            None,
            all_details,
        )
    status = worst(i.status for i in items)
    if status is Status.PASS:
        jit = [i for i in items if i.fix]
        reason = "Every GPU runs the installed frameworks' kernels" + (
            " (some only through PTX JIT, which slows the first start)." if jit else " natively."
        )
        return CheckResult(
            CHECK_ID, TITLE, status, reason, jit[0].fix if jit else None, all_details
        )
    bad = [i for i in items if i.status is status]
    return CheckResult(
        CHECK_ID,
        TITLE,
        status,
        " ".join(i.reason or i.line for i in bad),
        " ".join(dict.fromkeys(i.fix for i in bad if i.fix)) or None,
        all_details,
    )
