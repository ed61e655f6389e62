"""Typed, frozen records for the bundled compatibility tables (``compat/data/*.yaml``).

Nothing here reads files; :mod:`gpudoctor.compat.tables` builds these records from the
YAML and validates them. Versions are :class:`~gpudoctor.units.Version` objects so that
``525.60.13 < 525.85.12`` compares numerically.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from gpudoctor.version_numbers import Version


@dataclass(frozen=True)
class TableMeta:
    """Identity of one data table: its name, version and the documents it restates."""

    name: str
    version: str
    sources: tuple[str, ...]
    file: str


# --- cuda_driver.yaml ---------------------------------------------------------------


@dataclass(frozen=True)
class ToolkitDriver:
    """One CUDA toolkit release and the driver that fully supports it ("Table 3")."""

    cuda: Version
    release: str
    ga: bool
    linux: Version | None
    windows: Version | None
    note: str | None


@dataclass(frozen=True)
class MinorCompatFloor:
    """The lowest driver that runs any toolkit of one CUDA major (minor-version compat)."""

    major: int
    linux: Version
    windows: Version
    uncertain: bool
    note: str | None


@dataclass(frozen=True)
class ErrorCaveat:
    """Something minor-version compatibility does not give, and the error it shows as."""

    error: int | None
    name: str | None
    text: str | None
    caveat: str


@dataclass(frozen=True)
class CudaDriverTable:
    """``cuda_driver.yaml``: toolkit → driver, per-major floors and their caveats."""

    meta: TableMeta
    toolkits: tuple[ToolkitDriver, ...]
    minor_version_compat: tuple[MinorCompatFloor, ...]
    no_minor_version_compat_note: str
    minor_version_compat_caveats: tuple[ErrorCaveat, ...]


# --- driver_branches.yaml -----------------------------------------------------------


@dataclass(frozen=True)
class DriverBranch:
    """A driver branch (``R525`` is ``branch=525``) and the newest CUDA it supports."""

    branch: int
    max_cuda: Version
    confirmed: str | None
    note: str | None


@dataclass(frozen=True)
class DriverBranchTable:
    """``driver_branches.yaml``: branches in ascending order."""

    meta: TableMeta
    last_known_driver_major: int
    branches: tuple[DriverBranch, ...]


# --- gpu_compute_capability.yaml ----------------------------------------------------


class GpuCategory(str, Enum):
    """Product family of a GPU, as far as CUDA compatibility cares."""

    DATACENTER = "datacenter"
    GEFORCE = "geforce"
    WORKSTATION = "workstation"
    JETSON = "jetson"


@dataclass(frozen=True)
class GpuEntry:
    """One name pattern and the compute capability and category of the GPUs it matches."""

    pattern: re.Pattern[str]
    cc: str
    category: GpuCategory
    examples: tuple[str, ...]
    note: str | None


@dataclass(frozen=True)
class GpuTable:
    """``gpu_compute_capability.yaml``: patterns, most specific first."""

    meta: TableMeta
    normalisation: str
    gpus: tuple[GpuEntry, ...]


# --- forward_compat.yaml ------------------------------------------------------------


@dataclass(frozen=True)
class ForwardCompatError:
    """An error that signals a broken forward-compatibility deployment (803, 804)."""

    code: int
    name: str
    driver_name: str
    text: str
    meaning: str


@dataclass(frozen=True)
class CompatPackage:
    """A ``cuda-compat-X-Y`` package and the installed driver branches it may be used on."""

    cuda: Version
    compatible: frozenset[int]
    not_needed: frozenset[int]


@dataclass(frozen=True)
class ForwardCompatTable:
    """``forward_compat.yaml``: supported GPU categories, errors and the package matrix."""

    meta: TableMeta
    supported_categories: frozenset[GpuCategory]
    unknown_categories: frozenset[GpuCategory]
    unsupported_categories: frozenset[GpuCategory]
    categories_note: str
    package: str
    install_dir: str
    loader_note: str
    caveats: tuple[str, ...]
    errors: tuple[ForwardCompatError, ...]
    base_branches: tuple[int, ...]
    packages: tuple[CompatPackage, ...]


# --- torch_builds.yaml --------------------------------------------------------------


@dataclass(frozen=True)
class TorchRelease:
    """A PyTorch release (``"2.4"``) and the CUDA flavours published for it."""

    release: str
    date: str
    stable: tuple[str, ...]
    experimental: tuple[str, ...]
    pypi_default: str
    pypi_default_verified: bool
    note: str | None

    @property
    def flavours(self) -> tuple[str, ...]:
        """Every CUDA flavour of the release, stable first."""
        return self.stable + self.experimental


@dataclass(frozen=True)
class TorchArchEntry:
    """The architectures compiled into some (release, flavour) wheels."""

    releases: tuple[str, ...]
    flavours: tuple[str, ...]
    sass: tuple[str, ...]
    ptx: tuple[str, ...]
    how_known: str
    uncertain: bool
    note: str | None


@dataclass(frozen=True)
class SassExclusion:
    """A compute capability a cubin does not run on despite the same-major rule."""

    sass: str
    not_on: tuple[str, ...]
    note: str | None


@dataclass(frozen=True)
class TorchBuildsTable:
    """``torch_builds.yaml``: releases, compiled architectures and cubin exceptions."""

    meta: TableMeta
    releases: tuple[TorchRelease, ...]
    arch_lists: tuple[TorchArchEntry, ...]
    sass_exclusions: tuple[SassExclusion, ...]
    unsuffixed_cuda_versioned_wheels: tuple[str, ...]


# --- tf_builds.yaml / jax_builds.yaml -----------------------------------------------


@dataclass(frozen=True)
class TfBuild:
    """The CUDA and cuDNN some TensorFlow releases were built and tested with."""

    releases: tuple[str, ...]
    cuda: Version
    cudnn: str
    inferred: bool
    note: str | None


@dataclass(frozen=True)
class TfBuildsTable:
    """``tf_builds.yaml``."""

    meta: TableMeta
    notes: tuple[str, ...]
    builds: tuple[TfBuild, ...]


@dataclass(frozen=True)
class JaxPlugin:
    """A JAX CUDA plugin distribution and what its CUDA major needs."""

    package: str
    pjrt: str
    cuda_major: int
    min_driver_linux: Version | None
    min_compute_capability: str | None
    inferred: bool
    note: str | None


@dataclass(frozen=True)
class JaxBuildsTable:
    """``jax_builds.yaml``."""

    meta: TableMeta
    notes: tuple[str, ...]
    plugins: tuple[JaxPlugin, ...]
