"""Framework builds: which CUDA a PyTorch/TensorFlow/JAX install targets and for which GPUs.

PyTorch versions carry the CUDA flavour as a local label (``"2.4.1+cu121"``); a plain
``"2.4.1"`` comes from PyPI, which hosts one flavour per release (``pypi_default`` in
``torch_builds.yaml``). Builds with another local label (``+cpu``, ``+rocm6.1``, NGC's
``2.4.0a0+3bcc3cd.nv24.07``) are not official CUDA wheels: gpudoctor does not guess their
flavour.
"""

from __future__ import annotations

import re

from gpudoctor.compat.archs import ArchList, ArchStatus, arch_supported
from gpudoctor.compat.model import JaxPlugin, TfBuild, TorchArchEntry
from gpudoctor.compat.tables import jax_builds_table, tf_builds_table, torch_builds_table
from gpudoctor.version_numbers import Version, parse_version_parts

__all__ = [
    "flavour_cuda_version",
    "flavour_for_cuda",
    "jax_plugin_for",
    "tf_build_for",
    "torch_builds_supporting",
    "torch_compiled_archs",
    "torch_cuda_flavour",
    "torch_release",
]

_CUDA_LOCAL = re.compile(r"^cu(\d{2,3})(?![0-9])")
_FLAVOUR = re.compile(r"^cu(\d{1,2})(\d)$")


def _split_local(version: str) -> tuple[str, str | None]:
    base, sep, local = version.strip().partition("+")
    return base, (local.lower() if sep else None)


def torch_release(torch_version: str) -> str | None:
    """The release key, major.minor: ``"2.4.1+cu121"`` → ``"2.4"``; ``None`` if unparsable."""
    parts = parse_version_parts(_split_local(torch_version)[0])
    if parts is None or len(parts) < 2:
        return None
    return f"{parts[0]}.{parts[1]}"


def torch_cuda_flavour(torch_version_string: str) -> str | None:
    """The CUDA flavour of a PyTorch version string.

    ``"2.4.1+cu121"`` → ``"cu121"``; a plain ``"2.4.1"`` (PyPI) → the flavour PyPI ships for
    that release (``"cu121"``). ``None`` for CPU/ROCm/vendor builds, unknown releases and
    unparsable text.
    """
    base, local = _split_local(torch_version_string)
    if local is not None:
        match = _CUDA_LOCAL.match(local)
        return f"cu{match.group(1)}" if match else None
    release = torch_release(base)
    for entry in torch_builds_table().releases:
        if entry.release == release:
            return entry.pypi_default
    return None


def flavour_cuda_version(flavour: str) -> Version | None:
    """``"cu121"`` → ``Version("12.1")``, ``"cu102"`` → ``10.2``; ``None`` if not a flavour."""
    match = _FLAVOUR.match(flavour.strip().lower())
    if match is None:
        return None
    return Version(f"{int(match.group(1))}.{match.group(2)}")


def flavour_for_cuda(cuda: Version) -> str:
    """``Version("12.1")`` (or ``12.1.105``) → ``"cu121"``."""
    return f"cu{cuda.major}{cuda.minor}"


def _arch_entry(release: str, flavour: str) -> TorchArchEntry | None:
    for entry in torch_builds_table().arch_lists:
        if release in entry.releases and flavour in entry.flavours:
            return entry
    return None


def torch_compiled_archs(torch_version: str, cuda_flavour: str | None) -> ArchList | None:
    """The architectures compiled into an official PyTorch Linux x86_64 wheel.

    Args:
        torch_version: ``"2.6.0"`` or ``"2.6.0+cu124"``.
        cuda_flavour: ``"cu124"``; ``None`` to take it from ``torch_version``.

    Returns:
        The list (``cuda`` set to the flavour's CUDA, ``uncertain``/``note`` from the
        table), or ``None`` when the release/flavour pair is not in the table. A list read
        from the installed binary is always better than this one.
    """
    flavour = cuda_flavour or torch_cuda_flavour(torch_version)
    release = torch_release(torch_version)
    if flavour is None or release is None:
        return None
    entry = _arch_entry(release, flavour.lower())
    if entry is None:
        return None
    note = f"torch {release} {flavour}: {entry.how_known}"
    if entry.note:
        note = f"{note}. {entry.note}"
    return ArchList(
        sass=entry.sass,
        ptx=entry.ptx,
        cuda=flavour_cuda_version(flavour),
        uncertain=entry.uncertain,
        note=note,
    )


def torch_builds_supporting(compute_capability: str) -> tuple[str, ...]:
    """Official PyTorch builds (``"2.7+cu128"``) whose kernels run natively on the GPU.

    Oldest release first; useful for the fix of an "unsupported GPU" verdict.
    """
    found: list[tuple[tuple[int, ...], str]] = []
    for entry in torch_builds_table().arch_lists:
        archs = ArchList(sass=entry.sass, ptx=entry.ptx)
        if arch_supported(compute_capability, archs).status is not ArchStatus.NATIVE:
            continue
        for release in entry.releases:
            key = parse_version_parts(release) or (0,)
            found.extend((key, f"{release}+{flavour}") for flavour in entry.flavours)
    return tuple(name for _, name in sorted(found))


def tf_build_for(tf_version: str) -> TfBuild | None:
    """The tested CUDA/cuDNN of a TensorFlow version (``"2.16.1"`` → CUDA 12.3, cuDNN 8.9)."""
    parts = parse_version_parts(tf_version)
    if parts is None or len(parts) < 2:
        return None
    release = f"{parts[0]}.{parts[1]}"
    for build in tf_builds_table().builds:
        if release in build.releases:
            return build
    return None


def jax_plugin_for(distribution: str) -> JaxPlugin | None:
    """The JAX CUDA plugin record for a distribution name (``"jax-cuda12-plugin"``).

    The PJRT companion (``"jax_cuda12_pjrt"``) is recognised too; names are compared after
    PEP 503 normalisation.
    """
    name = re.sub(r"[-_.]+", "-", distribution.strip()).lower()
    for plugin in jax_builds_table().plugins:
        if name in (plugin.package, plugin.pjrt):
            return plugin
    return None
